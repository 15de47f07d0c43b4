//! Everything the server shows differently in the `torque` flavor (pbs-reference section 0):
//! the state letter of finished jobs (`C`), which finished jobs plain listings keep
//! (`keep_completed`), the walltime-overrun exit status (`-11`) and the unknown-job text.
//!
//! Owns: those mappings, in one place, so every display (qstat, accounting, mail) switches
//! together. Must not: change what is stored: jobs keep OpenPBS values (`F`, `-29`) and are
//! mapped only when shown.

use crate::state::Job;
use job::JobState;
use proto::error::{ErrorCode, RequestError};
use proto::exit_status::JOB_EXEC_KILL_WALLTIME;
use proto::{Flavor, ServerReply};

/// TORQUE's `JOB_EXEC_OVERLIMIT_WT`, shown in the `torque` flavor instead of OpenPBS's
/// `JOB_EXEC_KILL_WALLTIME` (what the mom reports and the store keeps).
pub const TORQUE_WALLTIME_EXCEEDED: i32 = -11;

/// TORQUE's default `keep_completed`: seconds a completed job stays in plain listings.
pub const DEFAULT_KEEP_COMPLETED: u64 = 300;

/// The letter `qstat` shows for a job state: finished jobs are `C` (completed) in TORQUE,
/// finished subjobs too (TORQUE has no `X`), and an array that has begun shows `R` (TORQUE
/// has no `B`; its array summary is running while a subjob runs).
pub fn state_letter(flavor: Flavor, state: JobState) -> char {
    match (flavor, state) {
        (Flavor::Torque, JobState::Finished | JobState::Expired) => 'C',
        (Flavor::Torque, JobState::Begun) => 'R',
        _ => state.letter(),
    }
}

/// The exit status as shown: TORQUE numbers a walltime overrun -11 where OpenPBS has -29
/// (pbs-reference 7.2). Every other value is the same in both.
pub fn shown_exit_status(flavor: Flavor, stored: i32) -> i32 {
    match (flavor, stored) {
        (Flavor::Torque, JOB_EXEC_KILL_WALLTIME) => TORQUE_WALLTIME_EXCEEDED,
        _ => stored,
    }
}

/// The attribute name of the exit status: `Exit_status` (OpenPBS) or `exit_status` (TORQUE).
pub fn exit_status_name(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::OpenPbs => "Exit_status",
        Flavor::Torque => "exit_status",
    }
}

/// A job's `Resource_List` as shown: TORQUE has no select/place, so the ones derived from a
/// `nodes=` request are left out in the torque flavor (qstat -f and the accounting records).
pub fn shown_resources(flavor: Flavor, job: &Job) -> impl Iterator<Item = (&str, &str)> {
    let from_nodes = flavor == Flavor::Torque && job.request.display.get("nodes").is_some();
    job.request.display.iter().filter(move |(name, _)| !(from_nodes && matches!(*name, "select" | "place")))
}

/// Whether a finished job still shows in listings without history (`-x`): never in OpenPBS;
/// in TORQUE for `keep_completed` seconds after it ended (0 = not at all). Other jobs always
/// show.
pub fn recently_completed(flavor: Flavor, job: &Job, now: i64, keep_completed: u64) -> bool {
    if !job.state().is_finished() || flavor != Flavor::Torque {
        return false;
    }
    let ended = job.times.obittime.unwrap_or(job.times.mtime);
    now.saturating_sub(ended) < i64::try_from(keep_completed).unwrap_or(i64::MAX)
}

/// A reply with its error texts in the flavor's words: TORQUE says `Unknown Job Id Error
/// 12.head` where OpenPBS says `Unknown Job Id 12.head` (same number, exit 153).
pub fn localize_reply(flavor: Flavor, reply: ServerReply) -> ServerReply {
    if flavor == Flavor::OpenPbs {
        return reply;
    }
    match reply {
        ServerReply::Jobs { server, jobs, errors, more, flavor } => {
            ServerReply::Jobs { server, jobs, errors: localize_errors(errors), more, flavor }
        }
        ServerReply::Rows { server, rows, errors, more, flavor } => {
            ServerReply::Rows { server, rows, errors: localize_errors(errors), more, flavor }
        }
        ServerReply::Nodes { nodes, errors } => ServerReply::Nodes { nodes, errors: localize_errors(errors) },
        ServerReply::Done { errors } => ServerReply::Done { errors: localize_errors(errors) },
        ServerReply::Error(error) => ServerReply::Error(localize_error(error)),
        other => other,
    }
}

fn localize_errors(errors: Vec<RequestError>) -> Vec<RequestError> {
    errors.into_iter().map(localize_error).collect()
}

/// One error in TORQUE's words, made from its kind and detail (`RequestError::detail`), never
/// by reading its text: the unknown-job text has `Error` before the id. Errors made without a
/// detail keep their text.
fn localize_error(error: RequestError) -> RequestError {
    match (error.code, error.detail.as_deref()) {
        (ErrorCode::UnknownJobId, Some(detail)) => {
            RequestError { message: format!("{} Error {detail}", error.code.text()), ..error }
        }
        _ => error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_jobs_are_c_only_in_torque() {
        assert_eq!(state_letter(Flavor::Torque, JobState::Finished), 'C');
        assert_eq!(state_letter(Flavor::OpenPbs, JobState::Finished), 'F');
        assert_eq!(state_letter(Flavor::Torque, JobState::Running), 'R');
        assert_eq!(state_letter(Flavor::Torque, JobState::Suspended), 'S');
    }

    #[test]
    fn torque_has_no_x_or_b() {
        assert_eq!(state_letter(Flavor::Torque, JobState::Expired), 'C');
        assert_eq!(state_letter(Flavor::Torque, JobState::Begun), 'R');
        assert_eq!(state_letter(Flavor::OpenPbs, JobState::Expired), 'X');
        assert_eq!(state_letter(Flavor::OpenPbs, JobState::Begun), 'B');
    }

    #[test]
    fn walltime_overrun_is_minus_11_only_in_torque() {
        assert_eq!(shown_exit_status(Flavor::Torque, -29), -11);
        assert_eq!(shown_exit_status(Flavor::OpenPbs, -29), -29);
        for status in [0, 1, 271, 265, -1, -11] {
            assert_eq!(shown_exit_status(Flavor::Torque, status), status);
        }
    }

    #[test]
    fn unknown_job_text_follows_the_flavor() {
        let error = RequestError::with_detail(ErrorCode::UnknownJobId, "12.head");
        let reply = |error: &RequestError| ServerReply::Done { errors: vec![error.clone()] };
        let texts = |reply: ServerReply| match reply {
            ServerReply::Done { errors } => errors.into_iter().map(|e| e.message).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(texts(localize_reply(Flavor::Torque, reply(&error))), ["Unknown Job Id Error 12.head"]);
        assert_eq!(texts(localize_reply(Flavor::OpenPbs, reply(&error))), ["Unknown Job Id 12.head"]);
        let other = RequestError::with_detail(ErrorCode::PermissionDenied, "12.head");
        assert_eq!(texts(localize_reply(Flavor::Torque, reply(&other))), ["Unauthorized Request 12.head"]);
        let ServerReply::Error(twice) = localize_reply(Flavor::Torque, ServerReply::Error(localize_error(error)))
        else {
            panic!()
        };
        assert_eq!(twice.message, "Unknown Job Id Error 12.head");
        let text_only = RequestError::new(ErrorCode::UnknownJobId, "Unknown Job Id 9.s");
        assert_eq!(texts(localize_reply(Flavor::Torque, reply(&text_only))), ["Unknown Job Id 9.s"], "text not read");
    }
}
