//! The scheduler's notes on queued jobs: why each one waits and, for the jobs that hold a
//! reservation, when and where it is planned to start (`estimated.start_time`,
//! `estimated.exec_vnode`). `qstat` shows a note as the job's `comment` (OpenPBS's scheduler
//! overwrites the comment of every queued job it looks at).
//!
//! In memory only, on purpose: a pass over 100,000 queued jobs would otherwise write 100,000
//! rows. Nothing is stored; after a restart the first pass writes them again. A note goes when
//! its job leaves the queue (`ServerState::transition`) or a pass no longer names it.
//!
//! Owns: the notes and applying one pass's set. Must not know: comment texts
//! (`server/src/sched_text.rs`), the scheduler's indices (`sched_loop.rs` resolves them), the
//! store.

use super::ServerState;
use job::JobKey;
use std::collections::HashMap;
use std::sync::Arc;

/// Why a queued job does not start, its names resolved (the pass's counter and pool indices
/// mean nothing after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitWhy {
    /// Not enough of this resource is free (`ncpus`, `ngpus`, `mem`, `nodes`, a site resource).
    Resource(Arc<str>),
    /// It would delay a job holding a reservation.
    Backfill,
    /// An earlier job in strict order cannot start.
    StrictOrder,
    /// The queue's `max_run` is reached.
    QueueLimit { queue: Arc<str> },
    /// The queue's per-user `max_run` is reached for the job's owner.
    QueueUserLimit { queue: Arc<str>, user: Arc<str> },
    /// A server-level consumable (`resources_available.NAME` of the server) holds too little.
    ServerResource(Arc<str>),
    /// It can never run here (more than the nodes have).
    Never,
}

/// A planned start: when (epoch seconds) and where (`exec_vnode` form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedStart {
    pub start: i64,
    pub exec_vnode: String,
}

/// What the last pass said of one queued job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedNote {
    pub why: WaitWhy,
    pub estimate: Option<PlannedStart>,
}

/// The notes, by job, with the pass that last named each.
#[derive(Debug, Default)]
pub struct SchedNotes {
    notes: HashMap<JobKey, (SchedNote, u64)>,
    pass: u64,
}

impl SchedNotes {
    pub fn get(&self, key: JobKey) -> Option<&SchedNote> {
        self.notes.get(&key).map(|(note, _)| note)
    }

    pub fn forget(&mut self, key: JobKey) {
        self.notes.remove(&key);
    }

    pub fn len(&self) -> usize {
        self.notes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.notes.is_empty()
    }

    pub fn keys(&self) -> impl Iterator<Item = JobKey> + '_ {
        self.notes.keys().copied()
    }

    /// Replaces the notes with one pass's: a job named again keeps its entry (rewritten only
    /// when it changed), a job not named loses it. Returns how many notes changed or appeared.
    fn replace(&mut self, notes: impl IntoIterator<Item = (JobKey, SchedNote)>) -> usize {
        self.pass += 1;
        let pass = self.pass;
        let mut changed = 0;
        for (key, note) in notes {
            match self.notes.get_mut(&key) {
                Some((old, seen)) => {
                    *seen = pass;
                    if *old != note {
                        *old = note;
                        changed += 1;
                    }
                }
                None => {
                    self.notes.insert(key, (note, pass));
                    changed += 1;
                }
            }
        }
        self.notes.retain(|_, (_, seen)| *seen == pass);
        changed
    }
}

impl ServerState {
    /// The last pass's note on job `key`, while it is queued.
    pub fn sched_note(&self, key: JobKey) -> Option<&SchedNote> {
        self.sched_notes.get(key)
    }

    /// Takes one pass's notes (only those of queued jobs are kept); every other note goes.
    /// Returns how many changed.
    pub fn replace_sched_notes(&mut self, notes: impl IntoIterator<Item = (JobKey, SchedNote)>) -> usize {
        let queued = &self.queued;
        let notes: Vec<(JobKey, SchedNote)> = notes.into_iter().filter(|(key, _)| queued.contains(key)).collect();
        self.sched_notes.replace(notes)
    }

    /// How many jobs have a note.
    pub fn sched_note_count(&self) -> usize {
        self.sched_notes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(why: WaitWhy, start: Option<i64>) -> SchedNote {
        SchedNote { why, estimate: start.map(|start| PlannedStart { start, exec_vnode: "(n1:ncpus=1)".into() }) }
    }

    #[test]
    fn a_pass_replaces_the_notes_and_counts_only_changes() {
        let mut notes = SchedNotes::default();
        let (a, b) = (JobKey::from_raw(1), JobKey::from_raw(2));
        let first = [(a, note(WaitWhy::Backfill, None)), (b, note(WaitWhy::Resource("ncpus".into()), Some(50)))];
        assert_eq!(notes.replace(first.clone()), 2);
        assert_eq!(notes.replace(first.clone()), 0, "nothing changed");
        assert_eq!(notes.replace([(b, note(WaitWhy::Resource("ncpus".into()), Some(60)))]), 1);
        assert_eq!(notes.get(a), None, "not named by the last pass");
        assert_eq!(notes.get(b).and_then(|note| note.estimate.as_ref()).map(|e| e.start), Some(60));
        notes.forget(b);
        assert!(notes.is_empty());
    }
}
