//! `SignalJob` (qsig): send a signal to a running job's session on its mother superior (sister
//! nodes hold no processes of a job here). The signal is given by name (`SIGUSR1`, `USR1`,
//! case-insensitive) or number; the default, chosen by qsig, is `SIGTERM`.
//!
//! OpenPBS's special names `suspend` and `resume` (operators and managers) stop and continue
//! the session (SIGSTOP / SIGCONT) and move the job between `R` and `S`; the job keeps its
//! nodes, and its mom does not count the suspended time against the walltime (only these:
//! a plain `STOP`, which the owner may send, leaves the walltime clock running); each move
//! records a `Suspended`/`Resumed` notice (accounting `z`/`r`). Other signals change no state
//! and persist nothing.
//!
//! As in OpenPBS, an array parent (`12[]`, once begun) or a subjob range (`12[1-3]`) signals
//! its subjobs that are running (see [`signal_text`]).

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::{JobEvent, JobState};
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

/// What a qsig asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalRequest {
    /// Send this signal number.
    Signal(i32),
    /// `suspend`: stop the job (state `S`).
    Suspend,
    /// `resume`: continue a suspended job (state `R`).
    Resume,
}

/// Parses qsig's `-s` value: `suspend`, `resume`, or a signal.
pub fn parse_request(text: &str) -> Result<SignalRequest, RequestError> {
    match text.trim() {
        "suspend" => Ok(SignalRequest::Suspend),
        "resume" => Ok(SignalRequest::Resume),
        _ => parse_signal(text).map(SignalRequest::Signal),
    }
}

/// Parses a signal as qsig gives it: a name with or without `SIG`, or a number 1..=64.
pub fn parse_signal(text: &str) -> Result<i32, RequestError> {
    let upper = text.trim().to_ascii_uppercase();
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
    now: i64,
    ids: &[String],
    signal: &str,
) -> ServerReply {
    let request = match parse_request(signal) {
        Ok(request) => request,
        Err(error) => return ServerReply::Error(error),
    };
    let errors = ids.iter().flat_map(|id| signal_text(state, out, requester, now, id, request)).collect();
    ServerReply::Done { errors }
}

/// qsig of one id: a job, or (OpenPBS `req_signaljob`) an array parent or a subjob range, which
/// reach their subjobs in the wanted state (running; suspended ones for `resume`, running ones
/// not suspended for `suspend`). A range with no such subjob is refused; a begun parent with
/// none is not.
fn signal_text(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
    request: SignalRequest,
) -> Vec<RequestError> {
    let keys = match state.array_targets(text) {
        None => return signal_one(state, out, requester, now, text, request).err().into_iter().collect(),
        Some(Err(error)) => return vec![error],
        Some(Ok(keys)) => keys,
    };
    let owner = keys.first().map(|key| state.jobs()[key].owner_uid);
    let operator_only = !matches!(request, SignalRequest::Signal(_));
    if owner.is_some_and(|owner| !state.may_modify(requester, owner))
        || (operator_only && !state.is_operator(requester))
    {
        return vec![RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {text}", ErrorCode::PermissionDenied.text()),
        )];
    }
    let wanted = |job_state: JobState| match request {
        SignalRequest::Signal(_) => matches!(job_state, JobState::Running | JobState::Suspended),
        SignalRequest::Suspend => job_state == JobState::Running,
        SignalRequest::Resume => job_state == JobState::Suspended,
    };
    let ids: Vec<String> = keys
        .iter()
        .filter(|key| wanted(state.jobs()[key].state()))
        .map(|key| state.jobs()[key].id.to_string())
        .collect();
    if ids.is_empty() && job::array::parse_range_id(text).is_some() {
        return vec![RequestError::with_detail(ErrorCode::BadState, text)];
    }
    ids.iter().filter_map(|id| signal_one(state, out, requester, now, id, request).err()).collect()
}

fn signal_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
    request: SignalRequest,
) -> Result<(), RequestError> {
    let (key, job) = state.find_job_entry(text)?;
    let id = job.id.clone();
    let operator_only = !matches!(request, SignalRequest::Signal(_));
    if !state.may_modify(requester, job.owner_uid) || (operator_only && !state.is_operator(requester)) {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    let (wanted, event, signal) = match request {
        SignalRequest::Signal(number) => (job.state(), None, number),
        SignalRequest::Suspend => (JobState::Running, Some(JobEvent::Suspend), libc::SIGSTOP),
        SignalRequest::Resume => (JobState::Suspended, Some(JobEvent::Resume), libc::SIGCONT),
    };
    match job.state() {
        JobState::Finished => return Err(RequestError::with_detail(ErrorCode::JobFinished, &id)),
        // Plain signals go to running and suspended jobs alike.
        JobState::Running | JobState::Suspended if job.state() == wanted => {}
        _ => return Err(RequestError::with_detail(ErrorCode::BadState, &id)),
    }
    let Some(mother) = job.exec.first().map(|share| share.node.clone()) else {
        return Err(RequestError::with_detail(ErrorCode::BadState, &id));
    };
    if request == SignalRequest::Resume && job.shares_released {
        // Suspended by the scheduler for a preemptor, which holds its resources now: as in
        // OpenPBS, the scheduler resumes it when they are free (`state/preempt.rs`).
        out.schedule = true;
        tracing::info!(job_id = %id, requestor = %requester.user, "resume left to the scheduler");
        return Ok(());
    }
    if let Some(event) = event {
        let job = state.transition(key, event, now).map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
        out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
        let kind = if event == JobEvent::Suspend { NoticeKind::Suspended } else { NoticeKind::Resumed };
        out.notice(kind, job, now);
    }
    // Only suspend/resume move the mom's walltime clock: a plain STOP from the owner must not.
    out.send(&mother, ServerToMom::SignalJob { job_id: id.to_string(), signal, suspend: event.is_some() });
    tracing::info!(job_id = %id, signal, ?request, requestor = %requester.user, "signal sent to job");
    Ok(())
}
