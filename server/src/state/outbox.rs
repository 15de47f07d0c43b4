//! What a handler wants done after it has changed the state: rows to persist, messages to
//! moms, notices of what happened to jobs (for the accounting log and mail), replies after
//! commit, a scheduling pass. The connection code carries these out in order: persist first,
//! and only after the commit send messages, notices and replies.

use crate::state::records::StoreOp;
use crate::state::Job;
use proto::ServerToMom;

/// What happened to a job, in the terms of the accounting log (pbs-reference section 9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeKind {
    /// `Q`: the job was queued (submitted).
    Queued,
    /// `S`: the job started on its nodes.
    Started,
    /// `E`: the job ended (its mom reported the end, or it was forced to end).
    Ended,
    /// `D`: deleted at the request of this user (`user@host`).
    Deleted { requestor: String },
    /// `A`: aborted by the server (e.g. a dependency that can never be met, a lost mom).
    Aborted,
    /// `R`: the job was requeued to run again.
    Rerun,
    /// `z` (OpenPBS only): the job was suspended (qsig -s suspend).
    Suspended,
    /// `r` (OpenPBS only): the suspended job was resumed (qsig -s resume).
    Resumed,
    /// The mother superior could not deliver the job's output (pbs-reference 10.5): a log
    /// line and a mail to the owner whatever the mail points, no accounting record. `detail`
    /// is OpenPBS's "Unable to copy file ..." text, one paragraph per file.
    CopyFailed { detail: String },
}

/// A notice: the kind, the job as it was right after the change, and when.
#[derive(Debug, Clone)]
pub struct Notice {
    pub kind: NoticeKind,
    pub job: Box<Job>,
    pub time: i64,
}

/// Effects recorded by a handler. Tests inspect it directly (no sockets, no database).
#[derive(Debug, Default)]
pub struct Outbox {
    pub persist: Vec<StoreOp>,
    /// Messages to moms by node name, sent after `persist` is committed.
    pub to_moms: Vec<(String, ServerToMom)>,
    /// What happened to jobs, handed to the accounting log and the mailer after the commit.
    pub notices: Vec<Notice>,
    /// Run the scheduler after this.
    pub schedule: bool,
}

impl Outbox {
    pub fn persist(&mut self, op: StoreOp) {
        self.persist.push(op);
    }

    pub fn send(&mut self, node: &str, message: ServerToMom) {
        self.to_moms.push((node.to_string(), message));
    }

    /// Records that `kind` happened to `job` (call after the change, with the changed job).
    pub fn notice(&mut self, kind: NoticeKind, job: &Job, time: i64) {
        self.notices.push(Notice { kind, job: Box::new(job.clone()), time });
    }
}
