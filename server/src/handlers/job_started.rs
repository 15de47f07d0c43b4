//! `JobStarted` from a mother superior: record the session id of the job's top shell.

use crate::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreOp;

/// Handles the start report of `job_id`.
pub fn job_started(state: &mut ServerState, out: &mut Outbox, job_id: &str, session_id: i32) {
    let Ok(key) = state.find_job(job_id) else {
        tracing::warn!(job_id, "start report for an unknown job");
        return;
    };
    let job = state.jobs.get_mut(&key).expect("job exists");
    if job.state.is_active() {
        job.session_id = Some(session_id);
        out.persist(StoreOp::UpdateJob(job.clone()));
    }
}
