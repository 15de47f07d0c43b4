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
    /// How many of `persist` (counted from the start) were recorded with
    /// [`Outbox::persist_lazily`].
    lazy_ops: usize,
}

impl Outbox {
    /// Appends what `later` (a scheduling pass run right after, in the same turn of the state
    /// lock) wants done, after this outbox's own effects. `later`'s lazy rows become ordinary:
    /// they ride this commit.
    pub fn absorb(&mut self, later: Outbox) {
        self.persist.extend(later.persist);
        self.to_moms.extend(later.to_moms);
        self.notices.extend(later.notices);
        self.schedule |= later.schedule;
    }

    pub fn persist(&mut self, op: StoreOp) {
        self.persist.push(op);
    }

    /// Persists `op` without a transaction of its own when nothing else is to be done (see
    /// [`Outbox::is_lazy`]). Only for what nobody is told of and whose loss is repaired: a
    /// start report's session id, which every mom reports again each time it registers (to a
    /// restarted server too).
    pub fn persist_lazily(&mut self, op: StoreOp) {
        self.lazy_ops += usize::from(self.lazy_ops == self.persist.len());
        self.persist.push(op);
    }

    /// Whether every op to persist was recorded lazily and nothing waits for the commit (no
    /// mom message, no notice): then the ops may ride the next transaction, unwaited for.
    pub fn is_lazy(&self) -> bool {
        self.lazy_ops > 0 && self.lazy_ops == self.persist.len() && self.to_moms.is_empty() && self.notices.is_empty()
    }

    pub fn send(&mut self, node: &str, message: ServerToMom) {
        self.to_moms.push((node.to_string(), message));
    }

    /// Records that `kind` happened to `job` (call after the change, with the changed job).
    pub fn notice(&mut self, kind: NoticeKind, job: &Job, time: i64) {
        self.notices.push(Notice { kind, job: Box::new(job.clone()), time });
    }
}

#[cfg(test)]
mod tests {
    use super::Outbox;
    use crate::state::records::StoreOp;

    fn op(seq: u64) -> StoreOp {
        StoreOp::SetNextSeq(seq)
    }

    #[test]
    fn an_outbox_is_lazy_only_when_all_it_persists_was_recorded_lazily_and_nothing_waits() {
        let mut out = Outbox::default();
        assert!(!out.is_lazy(), "nothing to persist");
        out.persist_lazily(op(1));
        out.persist_lazily(op(2));
        assert!(out.is_lazy());
        out.persist.push(op(3));
        assert!(!out.is_lazy(), "an op added after (fair share, arrays) is waited for");

        let mut out = Outbox::default();
        out.persist(op(1));
        out.persist_lazily(op(2));
        assert!(!out.is_lazy(), "an eager op makes the batch eager");

        let mut out = Outbox::default();
        out.persist_lazily(op(1));
        out.send("node1", proto::ServerToMom::Heartbeat);
        assert!(!out.is_lazy(), "a message waits for the commit");
    }
}
