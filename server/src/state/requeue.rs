//! How a run ends other than by its job finishing, shared by the handlers that see it end:
//! a run killed by qrerun, refused by its mom (`JOB_EXEC_RETRY`) or whose stage-in failed is
//! requeued when its end report arrives (`handlers/job_ended.rs`); a job lost with its mother
//! superior, found when the mom registers again without it (`handlers/register_mom.rs`) or
//! when its node stays down (`handlers/node_fail.rs`), is requeued if rerunnable, else ended.

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::records::StoreOp;
use crate::state::ServerState;
use job::JobKey;
use proto::exit_status::JOB_EXEC_RERUN_MS_FAIL;
use proto::mom::JobObit;
use proto::ServerToMom;

/// The end of a run killed by qrerun: free the nodes, queue the job again (held if a hold was
/// set meanwhile), tell the sisters and acknowledge the end report.
pub fn requeue_killed_run(
    state: &mut ServerState,
    out: &mut Outbox,
    node: &str,
    key: JobKey,
    obit: &JobObit,
    now: i64,
) {
    let job = state.requeue_job(key, now).expect("an active job may be requeued");
    let sisters: Vec<String> = job.exec.iter().skip(1).map(|share| share.node.to_string()).collect();
    // The notice keeps the nodes of the killed run (the R record names them).
    out.notice(NoticeKind::Rerun, job, now);
    job.forget_run();
    tracing::info!(job_id = %job.id, exit_status = obit.exit_status, "killed run ended: job queued again");
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    for sister in sisters {
        out.send(&sister, ServerToMom::EndJob { job_id: job.id.to_string() });
    }
    out.send(node, ServerToMom::ObitAck { job_id: obit.job_id.clone() });
    out.schedule = true;
}

/// A job lost with its mother superior (`why`, for the comment): requeue it if rerunnable
/// (an interactive job never is), else end it with `JOB_EXEC_RERUN_MS_FAIL` (-20).
pub fn end_lost_job(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64, why: &str) {
    let Some(lost) = state.job(key) else { return };
    let rerun = lost.spec.rerunnable && lost.spec.interactive.is_none() && !lost.delete_requested;
    let job = if rerun {
        let Ok(job) = state.requeue_job(key, now) else { return };
        job.comment = Some(format!("requeued: {why}"));
        job
    } else {
        let Ok(job) = state.finish_job(key, JOB_EXEC_RERUN_MS_FAIL, now) else { return };
        job.comment = Some(format!("ended: {why}"));
        job
    };
    let sisters: Vec<String> = job.exec.iter().skip(1).map(|share| share.node.to_string()).collect();
    // The notice keeps the nodes of the run that is lost (the R record names them).
    out.notice(if rerun { NoticeKind::Rerun } else { NoticeKind::Aborted }, job, now);
    if rerun {
        job.forget_run();
    }
    tracing::warn!(job_id = %job.id, rerun, "job lost with its mom");
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    for sister in sisters {
        out.send(&sister, ServerToMom::EndJob { job_id: job.id.to_string() });
    }
}
