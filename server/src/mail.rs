//! Mail to job owners (qsub `-m`/`-M`, pbs-reference section 2.2), as OpenPBS's
//! `svr_mailowner` sends it: mail points `a` (aborted), `b` (begun), `e` (ended), `n` (none),
//! default `a`, subjobs only with `j`; undeliverable output (`MAIL_OTHER`) always; recipients the `-M` list, else the owner (`user@submit_host`); the message
//! (`To:`, `Subject: PBS JOB <id>`, `PBS Job Id:`, `Job Name:`, the standard text, details)
//! goes to `sendmail -f adm -- <recipients>` on its stdin.
//!
//! Security (issue 12, item 1): sendmail runs as root, so a recipient must never read as one of
//! its options. Recipients were checked against `job::mail`'s grammar at submission and qalter;
//! here they are checked again (a row stored before that check is dropped, logged), `--`
//! always ends sendmail's options, and sendmail runs directly (never through a shell) with an
//! empty environment but `PATH`, in `/`.
//!
//! Owns: which notice gets which mail and its text ([`mail_for`], pure, snapshot-tested), and
//! the mail thread ([`Mailer`]) that runs sendmail. Must not: run sendmail on the store thread,
//! or retry (a failed mail is logged once and dropped).

use crate::notices::{copy_failed, format_used};
use crate::state::outbox::{Notice, NoticeKind};
use crate::state::Job;
use proto::exit_status::{
    JOB_EXEC_FAIL2, JOB_EXEC_KILL_CPUT, JOB_EXEC_KILL_MEM, JOB_EXEC_KILL_NCPUS_BURST, JOB_EXEC_KILL_NCPUS_SUM,
    JOB_EXEC_KILL_VMEM, JOB_EXEC_KILL_WALLTIME,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;

/// OpenPBS's default sender (`PBS_DEFAULT_MAIL`).
pub const MAIL_FROM: &str = "adm";

/// One mail to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    pub job_id: String,
    /// Which mail point (`a`, `b`, `e`), or `d` (deleted by another user) or `o` (output not
    /// delivered), which are always sent.
    pub point: char,
    pub recipients: Vec<String>,
    /// The whole message: headers, blank line, body.
    pub text: String,
}

/// The mail a notice calls for, if the job asked for it.
pub fn mail_for(notice: &Notice) -> Option<Mail> {
    let job = &notice.job;
    let (point, body) = match &notice.kind {
        NoticeKind::Started => ('b', "Begun execution".to_string()),
        NoticeKind::Ended => match job.exit_status.unwrap_or(0) {
            status if status < 0 => ('a', format!("Aborted by PBS Server \n{}", cannot_execute(status))),
            status => ('e', end_details(job, status)),
        },
        NoticeKind::Aborted => {
            let reason = job.comment.clone().unwrap_or_else(|| "Job aborted".to_string());
            ('a', format!("Aborted by PBS Server \n{reason}"))
        }
        // OpenPBS mails the owner, whatever the mail points, when someone else deletes a job.
        NoticeKind::Deleted { requestor } if requestor.split('@').next() != Some(job.owner.as_str()) => {
            ('d', format!("Job to be deleted at request of {requestor}"))
        }
        // OpenPBS mails a failed stage-out whatever the mail points (`MAIL_FORCE`).
        NoticeKind::CopyFailed { detail } => {
            ('o', format!("An error has occurred processing your job, see below.\n{}\n\n{detail}", copy_failed(job)))
        }
        NoticeKind::Deleted { .. }
        | NoticeKind::Queued
        | NoticeKind::Rerun
        | NoticeKind::Suspended
        | NoticeKind::Resumed => return None,
    };
    let forced = matches!(point, 'd' | 'o');
    if !forced && !wants(&job.spec.mail_points, point) {
        return None;
    }
    // OpenPBS mails about a subjob only if its array asked for it with `j` (unless forced).
    if !forced && matches!(job.id.array, Some(job::id::ArrayPart::Sub(_))) && !job.spec.mail_points.contains('j') {
        return None;
    }
    let recipients = recipients(job);
    let id = job.id.to_string();
    if recipients.is_empty() {
        tracing::warn!(job_id = %id, %point, "mail not sent: no valid recipient");
        return None;
    }
    let text = format!(
        "To: {}\nSubject: PBS JOB {id}\n\nPBS Job Id: {id}\nJob Name:   {}\n{body}\n",
        recipients.join(", "),
        job.spec.name
    );
    Some(Mail { job_id: id, point, recipients, text })
}

/// Whether the mail points ask for `point`: `n` none, empty = the default `a`.
fn wants(points: &str, point: char) -> bool {
    let points = if points.is_empty() { "a" } else { points };
    !points.contains('n') && points.contains(point)
}

/// `-M` recipients, else the owner as `user@submit_host`; only those `job::mail` deems
/// deliverable (the others are logged and dropped: `-be`, `$USER@site`).
fn recipients(job: &Job) -> Vec<String> {
    let given = if job.spec.mail_users.is_empty() {
        vec![format!("{}@{}", job.owner, job.spec.submit_host)]
    } else {
        job.spec.mail_users.clone()
    };
    let (valid, invalid): (Vec<String>, Vec<String>) =
        given.into_iter().partition(|address| job::mail::is_deliverable(address));
    if !invalid.is_empty() {
        tracing::warn!(job_id = %job.id, ?invalid, "mail recipients dropped: not user or user@host");
    }
    valid
}

/// Why a job ended with a negative status: the mom killed it for a limit (OpenPBS
/// `JOB_EXEC_KILL_*`, -24 to -29), or OpenPBS's texts for a job its mom could not execute.
fn cannot_execute(status: i32) -> String {
    let limit = match status {
        JOB_EXEC_KILL_NCPUS_BURST => Some("ncpus (burst)"),
        JOB_EXEC_KILL_NCPUS_SUM => Some("ncpus (sum)"),
        JOB_EXEC_KILL_VMEM => Some("vmem"),
        JOB_EXEC_KILL_MEM => Some("mem"),
        JOB_EXEC_KILL_CPUT => Some("cput"),
        JOB_EXEC_KILL_WALLTIME => Some("walltime"),
        _ => None,
    };
    match limit {
        Some(limit) => format!("Job killed: {limit} exceeded its limit\nExit_status={status}"),
        None if status == JOB_EXEC_FAIL2 => "Job cannot be executed\nSee job standard error file".to_string(),
        None => "Job cannot be executed\nSee Administrator for help".to_string(),
    }
}

/// `Execution terminated`, then `Exit_status=N` and one `resources_used.*` per line.
fn end_details(job: &Job, status: i32) -> String {
    let mut text = format!("Execution terminated\nExit_status={status}");
    for (name, value) in format_used(&job.used) {
        text.push_str(&format!("\nresources_used.{name}={value}"));
    }
    text
}

/// Sends mails on its own thread.
pub struct Mailer {
    sender: mpsc::Sender<Mail>,
}

impl Mailer {
    /// Starts the mail thread; `sendmail` `None` = no mailer on this host (each mail is logged
    /// as not sent).
    pub fn spawn(sendmail: Option<PathBuf>) -> std::io::Result<Mailer> {
        let (sender, receiver) = mpsc::channel::<Mail>();
        std::thread::Builder::new().name("mail".to_string()).spawn(move || {
            for mail in receiver {
                match &sendmail {
                    Some(path) => send(path, &mail),
                    None => tracing::warn!(
                        job_id = %mail.job_id,
                        point = %mail.point,
                        "mail could not be sent: no sendmail (start pbs_server with --sendmail <path>)"
                    ),
                }
            }
        })?;
        Ok(Mailer { sender })
    }

    /// Queues a mail (never blocks).
    pub fn send(&self, mail: Mail) {
        let _ = self.sender.send(mail);
    }
}

/// The command line `sendmail -f adm -- <recipients>`: no shell, `--` before the recipients,
/// an empty environment but `PATH`, run in `/`.
fn sendmail_command(sendmail: &std::path::Path, recipients: &[String]) -> Command {
    let mut command = Command::new(sendmail);
    command
        .arg("-f")
        .arg(MAIL_FROM)
        .arg("--")
        .args(recipients)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .current_dir("/");
    command
}

/// Runs `sendmail -f adm -- <recipients>` with the message on stdin; logs a failure.
fn send(sendmail: &std::path::Path, mail: &Mail) {
    let result = sendmail_command(sendmail, &mail.recipients)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(mail.text.as_bytes())?;
            }
            child.wait()
        });
    match result {
        Ok(status) if status.success() => {
            tracing::info!(job_id = %mail.job_id, point = %mail.point, to = %mail.recipients.join(" "), "mail sent")
        }
        Ok(status) => {
            tracing::warn!(job_id = %mail.job_id, %status, "mail could not be sent: {} failed", sendmail.display())
        }
        Err(error) => {
            tracing::warn!(job_id = %mail.job_id, %error, "mail could not be sent: cannot run {}", sendmail.display())
        }
    }
}

#[cfg(test)]
mod command_tests {
    use super::sendmail_command;
    use std::ffi::OsStr;

    #[test]
    fn recipients_come_after_the_end_of_options_and_the_environment_is_minimal() {
        let recipients = vec!["x@example.org".to_string(), "-be".to_string()];
        let command = sendmail_command(std::path::Path::new("/usr/sbin/sendmail"), &recipients);
        let args: Vec<&OsStr> = command.get_args().collect();
        assert_eq!(args, ["-f", "adm", "--", "x@example.org", "-be"]);
        let envs: Vec<_> = command.get_envs().collect();
        assert_eq!(envs, [(OsStr::new("PATH"), Some(OsStr::new("/usr/sbin:/usr/bin:/sbin:/bin")))]);
    }
}
