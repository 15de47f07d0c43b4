//! `GpuStatus` and `ShareRefused` from a mom: record each GPU's use as the mom reports it (the
//! scheduler hands out only GPUs reported free), and requeue a job a sister could not join
//! because one of its GPUs was no longer usable (the mother superior's equivalent is an end
//! report with `JOB_EXEC_RETRY`, handled in `job_ended.rs`).

use crate::state::node_gpus::apply_reports;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreOp;
use job::{JobEvent, JobState};
use proto::gpu::GpuReport;
use proto::ServerToMom;

/// Records `node`'s GPU reports, logs each change, and schedules again (a GPU may be free).
pub fn gpu_status(state: &mut ServerState, out: &mut Outbox, node: &str, reports: Vec<GpuReport>) {
    let Some(entry) = state.node_mut(node) else {
        tracing::warn!(node, "GPU status from an unknown node");
        return;
    };
    for (index, old, report) in apply_reports(&mut entry.gpus, reports) {
        let old = old.map_or("unknown", |state| state.word());
        let (new, reason) = (report.state.word(), report.reason.as_str());
        tracing::info!(node, gpu = index, uuid = %report.uuid, from = old, to = new, reason, "GPU use changed");
    }
    out.schedule = true;
}

/// A sister refused its share of run `run_count` of `job_id` (a report of another run or
/// from a node that holds no share is ignored): the job's run is killed on its mother superior
/// and the job goes back to the queue when that end is reported (as for qrerun).
pub fn share_refused(
    state: &mut ServerState,
    out: &mut Outbox,
    node: &str,
    job_id: &str,
    run_count: u32,
    reason: &str,
    now: i64,
) {
    let Ok((key, job)) = state.find_job_entry(job_id) else {
        tracing::warn!(node, job_id, "share refused for an unknown job");
        return;
    };
    let sister_here = job.is_current_share_of(node, run_count);
    if job.state() != JobState::Running || job.rerun_requested || job.delete_requested || !sister_here {
        tracing::info!(node, job_id, reason, "share refused for a job not running there; nothing to do");
        return;
    }
    let mother = job.exec[0].node.clone();
    let Ok(job) = state.transition(key, JobEvent::Exit, now) else {
        tracing::error!(node, job_id, "a running job cannot exit");
        return;
    };
    job.rerun_requested = true;
    job.comment = Some(format!("requeued: {node} could not take its share: {reason}"));
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.send(&mother, ServerToMom::RerunJob { job_id: job.id.to_string() });
    tracing::warn!(job_id = %job.id, node, reason, "sister refused its share; the job is requeued");
}
