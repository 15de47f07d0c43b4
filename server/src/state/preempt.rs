//! Carrying out the scheduler's preemption decisions: suspending or requeueing a running job
//! for a higher one, resuming a job suspended that way, and which way a job may be preempted
//! (`preempt_order`, the job's rerunnable flag). The accounting records and comments are
//! OpenPBS's.
//!
//! Must not know: how victims are chosen (`sched`), sockets, the store's tables.
//!
//! CONTRACT STUB (issue 16): nothing is preempted yet.

use super::outbox::Outbox;
use super::{Job, ServerState};
use job::JobKey;

/// How `job` may be preempted now, by `preempt_order` and its rerunnable flag; `None`: never.
pub fn preempt_how(state: &ServerState, job: &Job, now: i64) -> Option<sched::PreemptHow> {
    let _ = (state, job, now);
    None
}

/// Preempts the running job `key` for job `by`. Returns whether it was.
pub fn preempt_job(
    state: &mut ServerState,
    out: &mut Outbox,
    key: JobKey,
    how: sched::PreemptHow,
    by: JobKey,
    now: i64,
) -> bool {
    let _ = (state, out, key, how, by, now);
    false
}

/// Resumes the job `key` that preemption suspended, on the resources it holds. Returns whether
/// it was.
pub fn resume_job(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) -> bool {
    let _ = (state, out, key, now);
    false
}
