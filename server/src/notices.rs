//! The texts of a commit's notices: one server log line per job event in OpenPBS's words (what
//! `tracejob` shows), and the pieces the mail (`mail.rs`) and accounting (`accounting.rs`)
//! texts share. The notice sink `Shared` calls on the store thread (log line and mail) is
//! wired in `lib.rs` (`notice_sink`); accounting records are committed with the change
//! (`shared.rs`).
//!
//! Owns: the log texts ([`log_text`]), [`format_used`], [`copy_failed`]; all pure. Must not:
//! import `mail` or `shared` (they use these texts: a cycle) or touch server state.

use crate::state::outbox::{Notice, NoticeKind};
use job::duration::format_hms;
use proto::mom::ResourcesUsed;

/// `resources_used.*` as OpenPBS lists them (alphabetical): cpupercent, cput, mem, ncpus,
/// vmem, walltime.
pub fn format_used(used: &ResourcesUsed) -> Vec<(&'static str, String)> {
    let cpupercent = (used.cput_secs * 100).checked_div(used.walltime_secs).unwrap_or(0);
    vec![
        ("cpupercent", cpupercent.to_string()),
        ("cput", format_hms(used.cput_secs)),
        ("mem", format!("{}kb", used.mem_kb)),
        ("ncpus", used.ncpus.to_string()),
        ("vmem", format!("{}kb", used.vmem_kb)),
        ("walltime", format_hms(used.walltime_secs)),
    ]
}

/// The server log message of a notice (OpenPBS's texts where it has one).
pub fn log_text(notice: &Notice, server_name: &str) -> String {
    let job = &notice.job;
    match &notice.kind {
        NoticeKind::Queued => {
            let owner = format!("{}@{}", job.owner, job.spec.submit_host);
            format!(
                "Job Queued at request of {owner}, owner = {owner}, job name = {}, queue = {}",
                job.spec.name, job.queue
            )
        }
        NoticeKind::Started => format!(
            "Job Run at request of Scheduler@{server_name} on exec_vnode {}",
            job.exec_vnode().unwrap_or_default()
        ),
        NoticeKind::Ended => {
            let mut text = format!("Exit_status={}", job.exit_status.unwrap_or(0));
            for (name, value) in format_used(&job.used) {
                text.push_str(&format!(" resources_used.{name}={value}"));
            }
            text
        }
        NoticeKind::Deleted { requestor } => format!("Job to be deleted at request of {requestor}"),
        NoticeKind::Aborted => format!("Job aborted: {}", job.comment.as_deref().unwrap_or("by the server")),
        NoticeKind::Rerun => match &job.comment {
            Some(comment) => format!("Job Rerun: {comment}"),
            None => "Job Rerun".to_string(),
        },
        NoticeKind::Suspended => "Job suspended".to_string(),
        NoticeKind::Resumed => "Job resumed".to_string(),
        NoticeKind::CopyFailed { .. } => copy_failed(job),
    }
}

/// OpenPBS's `msg_obitnocpy`: `Post job file processing error; job <id> on host <exec_host>`.
pub fn copy_failed(job: &crate::state::Job) -> String {
    format!("Post job file processing error; job {} on host {}", job.id, job.exec_host().unwrap_or_default())
}

#[cfg(test)]
#[path = "notices_tests.rs"]
mod tests;
