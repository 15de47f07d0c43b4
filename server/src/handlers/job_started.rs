//! `JobStarted` from a mother superior: record the session id of the job's top shell. Only a
//! report of the current run from its mother superior counts (`Job::is_current_run_of`).

use crate::state::outbox::Outbox;
use crate::state::ServerState;
use crate::store::JobProgress;

/// Handles the start report of run `run_count` of `job_id` from `node`.
pub fn job_started(
    state: &mut ServerState,
    out: &mut Outbox,
    node: &str,
    job_id: &str,
    session_id: i32,
    run_count: u32,
) {
    let Some(job) = state.find_job(job_id).ok().and_then(|key| state.job_mut(key)) else {
        tracing::warn!(job_id, "start report for an unknown job");
        return;
    };
    if job.is_current_run_of(node, run_count) {
        // A mom repeats its starts after each registration (a new head may not have them):
        // the same report again writes nothing, and a lost one is written again, so the
        // session id costs no fsync of its own (issue 19: a commit per job less).
        if job.session_id != Some(session_id) {
            job.session_id = Some(session_id);
            out.persist_lazily(JobProgress::op(job));
        }
    } else {
        tracing::info!(
            job_id,
            node,
            run = run_count,
            current_run = job.run_count,
            "start report of another run: ignored"
        );
    }
}
