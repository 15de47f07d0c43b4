//! `SignalJob` (qsig): send a signal to a running job's session on its mother superior (sister
//! nodes hold no processes of a job here). The signal is given by name (`SIGUSR1`, `USR1`,
//! case-insensitive) or number; the default, chosen by qsig, is `SIGTERM`.
//!
//! OpenPBS's special names `suspend` and `resume` are refused as not supported yet (minipbs has
//! no suspended state). Must not: change the job's state or persist anything.

use crate::outbox::Outbox;
use crate::state::{Requester, ServerState};
use job::JobState;
use proto::error::{ErrorCode, RequestError};
use proto::{ServerReply, ServerToMom};

/// Signal names and numbers (Linux).
const SIGNALS: &[(&str, i32)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ILL", libc::SIGILL),
    ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT),
    ("BUS", libc::SIGBUS),
    ("FPE", libc::SIGFPE),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("PWR", libc::SIGPWR),
    ("SYS", libc::SIGSYS),
];

/// Parses a signal as qsig gives it: a name with or without `SIG`, or a number 1..=64.
pub fn parse_signal(text: &str) -> Result<i32, RequestError> {
    let upper = text.trim().to_ascii_uppercase();
    if upper == "SUSPEND" || upper == "RESUME" {
        let message = format!(
            "{}: {text} is not supported yet by minipbs (no suspended state); send STOP or CONT instead",
            ErrorCode::InvalidRequest.text()
        );
        return Err(RequestError::new(ErrorCode::InvalidRequest, message));
    }
    let name = upper.strip_prefix("SIG").unwrap_or(&upper);
    let number = match name.parse::<i32>() {
        Ok(number) => Some(number).filter(|number| (1..=64).contains(number)),
        Err(_) => SIGNALS.iter().find(|(known, _)| *known == name).map(|(_, number)| *number),
    };
    number.ok_or_else(|| {
        RequestError::new(ErrorCode::UnknownSignal, format!("{} {text}", ErrorCode::UnknownSignal.text()))
    })
}

/// Handles qsig for every id; a bad signal refuses the whole request.
pub fn signal_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    ids: &[String],
    signal: &str,
) -> ServerReply {
    let number = match parse_signal(signal) {
        Ok(number) => number,
        Err(error) => return ServerReply::Error(error),
    };
    let errors = ids.iter().filter_map(|id| signal_one(state, out, requester, id, number).err()).collect();
    ServerReply::Done { errors }
}

fn signal_one(
    state: &ServerState,
    out: &mut Outbox,
    requester: &Requester,
    text: &str,
    signal: i32,
) -> Result<(), RequestError> {
    let key = state.find_job(text)?;
    let job = &state.jobs[&key];
    if !state.may_modify(requester, job.owner_uid) {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {}", ErrorCode::PermissionDenied.text(), job.id),
        ));
    }
    match job.state {
        JobState::Finished => return Err(RequestError::with_detail(ErrorCode::JobFinished, &job.id)),
        JobState::Running => {}
        _ => return Err(RequestError::with_detail(ErrorCode::BadState, &job.id)),
    }
    let Some(mother) = job.exec.first() else {
        return Err(RequestError::with_detail(ErrorCode::BadState, &job.id));
    };
    out.send(&mother.node, ServerToMom::SignalJob { job_id: job.id.to_string(), signal });
    tracing::info!(job_id = %job.id, signal, requestor = %requester.user, "signal sent to job");
    Ok(())
}
