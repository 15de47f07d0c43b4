//! Hold rules shared by qhold/qrls (`handlers/hold_job.rs`), qalter `-h`
//! (`handlers/alter_job.rs` and its array part) and dependencies (`depend.rs`, which sets `s`):
//! the letters of `Hold_Types` and their order, how a change merges into the current holds, who
//! may set which, and the state change a job's holds call for.
//!
//! The rule (OpenPBS's): letters `s o u p`, `n` for none; users set and clear only `u`, `o`
//! needs an operator, `s` and `p` a manager. A held running job keeps running with the hold
//! recorded and is requeued held (`H`) by qrerun or a lost mom (`requeue.rs`); a requeue is no
//! end, so its dependents stay as they are.

use super::submission::bad_value;
use super::Job;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};

/// The letters `Hold_Types` can hold, in the order OpenPBS prints them.
pub const HOLD_ORDER: &str = "soup";

/// `current` with the letters of `change` added (`hold`) or removed, in OpenPBS's order; `n`
/// when none is left. `n` in `change` changes nothing.
pub fn merge_holds(current: &str, change: &str, hold: bool) -> String {
    let merged: String =
        HOLD_ORDER.chars().filter(|kind| if change.contains(*kind) { hold } else { current.contains(*kind) }).collect();
    if merged.is_empty() {
        "n".to_string()
    } else {
        merged
    }
}

/// `-h`: adds the given holds (`u`, `o`, `s`), or with `n` clears the holds the requester may
/// clear. The letters a requester may set or clear are `allowed` (the same rule as qhold's:
/// `u` the owner, `o` an operator, `s` a manager); the order is qhold's ([`merge_holds`]).
pub fn new_holds(current: &str, given: &str, allowed: &str) -> Result<String, RequestError> {
    if given.is_empty() || !(given == "n" || given.chars().all(|c| "uos".contains(c))) {
        return Err(bad_value(format!("Hold_Types: {given}")));
    }
    if let Some(kind) = given.chars().find(|kind| *kind != 'n' && !allowed.contains(*kind)) {
        let who = if kind == 'o' { "an operator" } else { "a manager" };
        let message = format!("{} (hold {kind} needs {who})", ErrorCode::PermissionDenied.text());
        return Err(RequestError::new(ErrorCode::PermissionDenied, message));
    }
    Ok(if given == "n" { merge_holds(current, allowed, false) } else { merge_holds(current, given, true) })
}

/// The state change the job's holds call for: a queued job with a hold is held, a held job
/// without one is queued again.
pub fn hold_event(job: &Job) -> Option<JobEvent> {
    let held = job.hold_types != "n";
    match job.state() {
        JobState::Queued | JobState::Waiting if held => Some(JobEvent::Hold),
        JobState::Held if !held => Some(JobEvent::Release),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::merge_holds;

    #[test]
    fn holds_merge_in_openpbs_order() {
        assert_eq!(merge_holds("n", "u", true), "u");
        assert_eq!(merge_holds("u", "so", true), "sou");
        assert_eq!(merge_holds("sou", "o", false), "su");
        assert_eq!(merge_holds("u", "u", false), "n");
        assert_eq!(merge_holds("u", "n", true), "u");
        assert_eq!(merge_holds("n", "n", false), "n");
        assert_eq!(merge_holds("up", "up", false), "n");
    }
}
