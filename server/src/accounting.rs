//! The accounting log (pbs-reference section 9): one record per job event,
//! `MM/DD/YYYY HH:MM:SS;<type>;<id>;<message>`, appended to `server_priv/accounting/YYYYMMDD`
//! (local time, one file per day, as OpenPBS does).
//!
//! Owns: the record texts ([`record`], pure, snapshot-tested: the fields and their order of
//! OpenPBS's `acct_job`/`account_jobend`, TORQUE's in the torque flavor) and [`records`], the
//! records of one commit's notices, which `Shared::apply` stores in the same transaction as
//! the change they record (so a crash cannot lose them); `accounting_writer.rs` appends them
//! to the files. Must not: read or change server state.

use crate::config::Flavor;
use crate::notices::format_used;
use crate::state::outbox::{Notice, NoticeKind};
use crate::state::Job;
use pbslog::line::AccountingLine;
use pbslog::Tm;
use std::path::{Path, PathBuf};

/// The record type letter of a notice.
pub fn record_type(kind: &NoticeKind) -> char {
    match kind {
        NoticeKind::Queued => 'Q',
        NoticeKind::Started => 'S',
        NoticeKind::Ended => 'E',
        NoticeKind::Deleted { .. } => 'D',
        NoticeKind::Aborted => 'A',
        NoticeKind::Rerun => 'R',
        NoticeKind::Suspended => 'z',
        NoticeKind::Resumed => 'r',
        // Never recorded (`is_recorded`).
        NoticeKind::CopyFailed { .. } => 'E',
    }
}

/// Whether a notice has an accounting record in `flavor`: TORQUE has no `z`/`r` records, and
/// an output copy failure has none in either.
pub fn is_recorded(kind: &NoticeKind, flavor: Flavor) -> bool {
    !matches!(kind, NoticeKind::CopyFailed { .. })
        && (flavor != Flavor::Torque || !matches!(kind, NoticeKind::Suspended | NoticeKind::Resumed))
}

/// The accounting record of a notice, without the newline; `to_time` turns epoch seconds
/// into the broken-down time of the time stamp (local time in the server, UTC in tests).
pub fn record(notice: &Notice, flavor: Flavor, to_time: fn(i64) -> Tm) -> String {
    let job = &notice.job;
    let message = match &notice.kind {
        NoticeKind::Queued if flavor == Flavor::Torque => format!("queue={}", job.queue),
        NoticeKind::Queued => job_fields(job, false),
        NoticeKind::Started if flavor == Flavor::Torque => torque_job_fields(job).trim_end().to_string(),
        NoticeKind::Ended | NoticeKind::Rerun if flavor == Flavor::Torque => torque_end_message(job, notice.time),
        NoticeKind::Started => {
            let mut text = job_fields(job, true);
            text.push_str(&assigned(job));
            text
        }
        NoticeKind::Ended | NoticeKind::Rerun => end_message(job, notice.time),
        NoticeKind::Deleted { requestor } => format!("requestor={requestor}"),
        NoticeKind::Aborted => job.comment.clone().unwrap_or_default(),
        // OpenPBS's `log_suspend_resume_record`: the usage so far; nothing on resume.
        NoticeKind::Suspended => format_used(&job.used)
            .iter()
            .map(|(name, value)| format!("resources_used.{name}={value}"))
            .collect::<Vec<_>>()
            .join(" "),
        NoticeKind::Resumed | NoticeKind::CopyFailed { .. } => String::new(),
    };
    AccountingLine {
        date: to_time(notice.time).pbs_date(),
        record_type: record_type(&notice.kind).to_string(),
        id: job.id.to_string(),
        message,
    }
    .format()
}

/// OpenPBS's `acct_job`: every pair followed by one blank (so the text ends with a blank).
fn job_fields(job: &Job, started: bool) -> String {
    let mut text = format!("user={} group={} ", job.owner, job.group);
    if let Some(account) = &job.spec.account {
        text.push_str(&format!("account=\"{account}\" "));
    }
    text.push_str("project=_pbs_project_default ");
    text.push_str(&format!("jobname={} queue={} ", job.spec.name, job.queue));
    text.push_str(&format!("ctime={} qtime={} etime={} ", job.times.ctime, job.times.qtime, job.times.etime));
    if started {
        text.push_str(&format!("start={} ", job.times.stime.unwrap_or(0)));
    }
    if let Some(exec_host) = job.exec_host() {
        text.push_str(&format!("exec_host={exec_host} "));
    }
    if let Some(exec_vnode) = job.exec_vnode() {
        text.push_str(&format!("exec_vnode={exec_vnode} "));
    }
    for (name, value) in &job.request.display {
        text.push_str(&format!("Resource_List.{name}={} ", quoted(value)));
    }
    text
}

/// The `S` record's `resource_assigned.*`: the sums over the job's node shares.
fn assigned(job: &Job) -> String {
    let mem_kb: u64 = job.exec.iter().map(|share| share.mem_bytes / 1024).sum();
    let ncpus: usize = job.exec.iter().map(|share| share.slots.len()).sum();
    let ngpus: usize = job.exec.iter().map(|share| share.gpus.len()).sum();
    let mut text = String::new();
    if mem_kb > 0 {
        text.push_str(&format!("resource_assigned.mem={mem_kb}kb "));
    }
    text.push_str(&format!("resource_assigned.ncpus={ncpus} "));
    if ngpus > 0 {
        text.push_str(&format!("resource_assigned.ngpus={ngpus} "));
    }
    text
}

/// OpenPBS's `account_jobend`: the job fields, then `session`, `end`, `Exit_status`,
/// `resources_used.*` and `run_count`, separated by single blanks.
fn end_message(job: &Job, end: i64) -> String {
    let mut text = job_fields(job, true);
    text.push_str(&format!("session={} end={end}", job.session_id.unwrap_or(0)));
    text.push_str(&format!(" Exit_status={}", job.exit_status.unwrap_or(0)));
    for (name, value) in format_used(&job.used) {
        text.push_str(&format!(" resources_used.{name}={value}"));
    }
    text.push_str(&format!(" run_count={}", job.run_count));
    text
}

/// TORQUE's job fields of the `S` and `E` records (pbs-reference section 9): no project or
/// exec_vnode, `start_count` and `owner`, `exec_host` in TORQUE's form, the `Resource_List`
/// as TORQUE shows it. Every pair is followed by one blank.
fn torque_job_fields(job: &Job) -> String {
    let mut text = format!("user={} group={} ", job.owner, job.group);
    if let Some(account) = &job.spec.account {
        text.push_str(&format!("account={} ", quoted(account)));
    }
    text.push_str(&format!("jobname={} queue={} ", job.spec.name, job.queue));
    text.push_str(&format!("ctime={} qtime={} etime={} ", job.times.ctime, job.times.qtime, job.times.etime));
    text.push_str(&format!("start_count={} ", job.run_count));
    if let Some(start) = job.times.stime {
        text.push_str(&format!("start={start} "));
    }
    text.push_str(&format!("owner={}@{} ", job.owner, job.spec.submit_host));
    if let Some(exec_host) = job.exec_host_torque() {
        text.push_str(&format!("exec_host={exec_host} "));
    }
    for (name, value) in crate::flavor::shown_resources(Flavor::Torque, job) {
        text.push_str(&format!("Resource_List.{name}={} ", quoted(value)));
    }
    text
}

/// TORQUE's `E` record: the job fields, then `session`, the slot and node counts, `end`,
/// `Exit_status` (TORQUE's numbers, capital E as TORQUE writes it here too) and
/// `resources_used.*` without `cpupercent`/`ncpus`, with `energy_used`.
fn torque_end_message(job: &Job, end: i64) -> String {
    let mut text = torque_job_fields(job);
    let slots: usize = job.exec.iter().map(|share| share.slots.len()).sum();
    text.push_str(&format!("session={} ", job.session_id.unwrap_or(0)));
    text.push_str(&format!("total_execution_slots={slots} unique_node_count={} ", job.exec.len()));
    let status = crate::flavor::shown_exit_status(Flavor::Torque, job.exit_status.unwrap_or(0));
    text.push_str(&format!("end={end} Exit_status={status}"));
    for (name, value) in format_used(&job.used) {
        match name {
            "cpupercent" | "ncpus" => {}
            "mem" => text.push_str(&format!(" resources_used.energy_used=0 resources_used.mem={value}")),
            _ => text.push_str(&format!(" resources_used.{name}={value}")),
        }
    }
    text
}

/// OpenPBS's `cpy_quote_value`: a value with a blank is quoted (with `'` if it holds `"`).
fn quoted(value: &str) -> String {
    if !value.contains(' ') {
        value.to_string()
    } else if value.contains('"') {
        format!("'{value}'")
    } else {
        format!("\"{value}\"")
    }
}

/// The records of a commit's notices in `flavor`, as (time, line) in notice order; nothing
/// for the notices `flavor` does not record.
pub fn records(notices: &[Notice], flavor: Flavor) -> Vec<(i64, String)> {
    notices
        .iter()
        .filter(|notice| is_recorded(&notice.kind, flavor))
        .map(|notice| (notice.time, record(notice, flavor, Tm::local)))
        .collect()
}

/// The accounting directory under a server's state directory.
pub fn accounting_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("server_priv").join("accounting")
}
