//! `JobEnded` from a mother superior: record the exit status and usage, finish the job, free
//! its nodes, tell the sisters, and acknowledge the obituary once it is committed (the mom
//! resends it until then, so an end is never lost).

use crate::outbox::{NoticeKind, Outbox};
use crate::state::ServerState;
use crate::store::StoreOp;
use proto::mom::JobObit;
use proto::ServerToMom;

/// Handles the end of a job reported by `node`.
pub fn job_ended(state: &mut ServerState, out: &mut Outbox, node: &str, obit: JobObit, now: i64) {
    let ack = ServerToMom::ObitAck { job_id: obit.job_id.clone() };
    let Ok(key) = state.find_job(&obit.job_id) else {
        tracing::warn!(job_id = %obit.job_id, node, "end report for an unknown job");
        out.send(node, ack);
        return;
    };
    if !state.jobs[&key].state.is_active() {
        // A resent obituary for a job already ended: acknowledge again.
        out.send(node, ack);
        return;
    }
    if state.jobs[&key].rerun_requested && !state.jobs[&key].delete_requested {
        super::rerun_job::requeue_killed_run(state, out, node, key, &obit, now);
        return;
    }
    let job = state.finish_job(key, obit.exit_status, now).expect("an active job may finish");
    job.used = obit.used;
    job.session_id = Some(obit.session_id).filter(|session| *session > 0).or(job.session_id);
    tracing::debug!(job_id = %job.id, exit_status = obit.exit_status, "job ended");
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.notice(NoticeKind::Ended, job, now);
    for share in job.exec.iter().skip(1) {
        out.send(&share.node, ServerToMom::EndJob { job_id: job.id.to_string() });
    }
    out.send(node, ack);
    out.schedule = true;
    crate::depend::job_changed(state, out, key, now);
}
