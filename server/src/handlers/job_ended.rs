//! `JobEnded` from a mother superior: record the exit status and usage, finish the job, free
//! its nodes, tell the sisters, and acknowledge the obituary once it is committed (the mom
//! resends it until then, so an end is never lost). Output the mom could not deliver goes in
//! the job's comment and in a mail to the owner (pbs-reference 10.5). Only the mother superior
//! of the job's current run may end it (`Job::is_current_run_of`): any other end report (an
//! old run's, another node's) is acknowledged, logged and otherwise ignored.

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::requeue::requeue_killed_run;
use crate::state::ServerState;
use crate::store::JobProgress;
use proto::exit_status::JOB_EXEC_RETRY;
use proto::mom::{JobObit, Undelivered};
use proto::ServerToMom;

/// Runs a job may fail to start (`JOB_EXEC_RETRY`) before it is held (`s`): OpenPBS's
/// `check_failed_attempts`, a run count above twice `PBS_MAX_HOPCOUNT` (10).
pub const MAX_FAILED_STARTS: u32 = 20;

/// At most this much of the mom's stage-in failure goes into the job's comment.
const STAGEIN_REASON_CHARS: usize = 1024;

/// Handles the end of a job reported by `node`.
pub fn job_ended(state: &mut ServerState, out: &mut Outbox, node: &str, obit: JobObit, now: i64) {
    let ack = ServerToMom::ObitAck { job_id: obit.job_id.clone() };
    let Ok((key, job)) = state.find_job_entry(&obit.job_id) else {
        tracing::warn!(job_id = %obit.job_id, node, "end report for an unknown job");
        out.send(node, ack);
        return;
    };
    if !job.is_current_run_of(node, obit.run_count) {
        if job.state().is_active() {
            // A node back after node_fail_requeue, or any other mom: the job runs elsewhere
            // (or is a later run here). Acknowledged so the mom stops resending, else ignored.
            let mother = job.exec.first().map_or("", |share| share.node.as_str());
            tracing::warn!(job_id = %job.id, node, run = obit.run_count, current_run = job.run_count, mother,
                "end report of a run that is not the job's current one on its mother superior: ignored");
        }
        // Else a resent obituary for a job already ended: acknowledge again.
        out.send(node, ack);
        return;
    }
    let (rerun_requested, delete_requested) = (job.rerun_requested, job.delete_requested);
    if rerun_requested && !delete_requested {
        requeue_killed_run(state, out, node, key, &obit, now);
        return;
    }
    if let (Some(reason), false) = (&obit.stagein_failed, delete_requested) {
        // OpenPBS waits 30 minutes and retries (req_runjob.c post_stagein); here the job waits
        // on a user hold until its owner fixes the input and releases it (no retry loop).
        let Some(job) = state.job_mut(key) else { return };
        // Hold letters in OpenPBS's order (`soup`), `n` dropped.
        job.hold_types = "soup".chars().filter(|c| *c == 'u' || job.hold_types.contains(*c)).collect();
        let reason: String = reason.chars().take(STAGEIN_REASON_CHARS).collect();
        job.comment = Some(format!("Job held: stagein failed on {node}: {reason}"));
        requeue_killed_run(state, out, node, key, &obit, now);
        return;
    }
    if obit.exit_status == JOB_EXEC_RETRY && !delete_requested {
        // The mother superior did not start it (a GPU of the job was no longer free there).
        let Some(job) = state.job_mut(key) else { return };
        if job.run_count > MAX_FAILED_STARTS {
            // OpenPBS's check_failed_attempts: a system hold, so a node that can never start it
            // (a required cgroup it cannot make) does not retry it forever.
            job.hold_types = "soup".chars().filter(|c| *c == 's' || job.hold_types.contains(*c)).collect();
            job.comment = Some("job held, too many failed attempts to run".to_string());
        } else {
            job.comment = Some(format!("requeued: {node} could not start the job; it will be retried"));
        }
        requeue_killed_run(state, out, node, key, &obit, now);
        return;
    }
    let job = state.finish_job(key, obit.exit_status, now).expect("an active job may finish");
    job.used = obit.used;
    job.session_id = Some(obit.session_id).filter(|session| *session > 0).or(job.session_id);
    tracing::debug!(job_id = %job.id, exit_status = obit.exit_status, "job ended");
    if obit.mem_exceeded {
        job.comment = Some(mem_exceeded_comment(node));
    }
    if !obit.undelivered.is_empty() {
        job.comment = Some(undelivered_comment(&obit.undelivered, node));
    }
    out.persist(JobProgress::op(job));
    out.notice(NoticeKind::Ended, job, now);
    if !obit.undelivered.is_empty() {
        out.notice(NoticeKind::CopyFailed { detail: copy_failure_text(&obit.undelivered) }, job, now);
    }
    for share in job.exec.iter().skip(1) {
        out.send(&share.node, ServerToMom::EndJob { job_id: job.id.to_string() });
    }
    out.send(node, ack);
    out.schedule = true;
    crate::state::depend::job_changed(state, out, key, now);
}

/// The job's comment when the kernel killed a process of it for its memory: the OpenPBS cgroup
/// hook's `Cgroup mem limit exceeded` (which it writes to the job's stderr and
/// `resources_used.diag_messages`), with the node.
pub fn mem_exceeded_comment(node: &str) -> String {
    format!("Job exceeded its memory limit: Cgroup mem limit exceeded on {node}")
}

/// The job's comment: where its output is (`Post job file processing error; output retained
/// on node1 in: /var/spool/.../undelivered/1.head.OU`).
pub fn undelivered_comment(undelivered: &[Undelivered], node: &str) -> String {
    let kept: Vec<&str> = undelivered.iter().map(|file| file.kept.as_str()).filter(|kept| !kept.is_empty()).collect();
    if kept.is_empty() {
        return "Post job file processing error; the output could not be kept".to_string();
    }
    format!("Post job file processing error; output retained on {node} in: {}", kept.join(", "))
}

/// OpenPBS's stage-out failure text, one paragraph per file: `Unable to copy file <spool> to
/// <dest>`, the copy's error between `*** error from copy` and `*** end error output`, and
/// `Output retained on that host in: <path>`.
pub fn copy_failure_text(undelivered: &[Undelivered]) -> String {
    let paragraphs: Vec<String> = undelivered
        .iter()
        .map(|file| {
            let mut text = format!(
                "Unable to copy file {} to {}\n*** error from copy\n{}\n*** end error output",
                file.spool, file.dest, file.error
            );
            if !file.kept.is_empty() {
                text.push_str(&format!("\nOutput retained on that host in: {}", file.kept));
            }
            text
        })
        .collect();
    paragraphs.join("\n\n")
}
