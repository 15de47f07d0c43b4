//! Per-owner tallies, kept as jobs are added, change state, are altered and forgotten, so a
//! submission's quota check (`max_queued`, `max_user_kept_bytes`, `state/admin.rs`) costs the
//! same with 100,000 jobs as with none, instead of a walk of every job, history included.
//!
//! Owns: the counts of live jobs (not finished, not an array's parent: what `max_queued`
//! counts), in all and by owner, and each owner's kept bytes (every job, history included).
//! Must not: decide a limit. Kept exact by `ServerState` (`insert_job`, `transition`,
//! `replace_job_keeping_state`, `remove_finished_job`), checked against a recount by
//! `sanity_check`.

use std::collections::HashMap;

use compact_str::CompactString;

use super::Job;

/// One owner's share of the tally.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct OwnerTally {
    /// Live jobs: neither finished nor an array's parent.
    pub live: u32,
    /// [`Job::kept_bytes`] summed over every job of the owner, finished ones included.
    pub kept: u64,
}

/// The tallies of all jobs. An owner without jobs has no entry.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Tally {
    live: u32,
    owners: HashMap<CompactString, OwnerTally>,
}

/// Whether `max_queued` counts the job: neither finished nor an array's parent (its
/// subjobs are counted instead).
pub fn is_live(job: &Job) -> bool {
    !job.state().is_finished() && job.id.array != Some(job::id::ArrayPart::Parent)
}

impl Tally {
    /// The tally of `jobs`, counted afresh (the check of the kept one).
    pub fn recount<'a>(jobs: impl Iterator<Item = &'a Job>) -> Tally {
        let mut tally = Tally::default();
        for job in jobs {
            tally.added(job);
        }
        tally
    }

    /// Live jobs of every owner.
    pub fn live(&self) -> u32 {
        self.live
    }

    /// `owner`'s tally (zero without jobs).
    pub fn owner(&self, owner: &str) -> OwnerTally {
        self.owners.get(owner).copied().unwrap_or_default()
    }

    /// Counts a job added to the state.
    pub fn added(&mut self, job: &Job) {
        if !self.owners.contains_key(job.owner.as_str()) {
            self.owners.insert(job.owner.clone(), OwnerTally::default());
        }
        self.change(&job.owner, false, is_live(job), 0, job.kept_bytes());
    }

    /// Uncounts a job forgotten by the state.
    pub fn removed(&mut self, job: &Job) {
        self.change(&job.owner, is_live(job), false, job.kept_bytes(), 0);
    }

    /// Follows a job's change: it was live or not and kept `kept_before` bytes; `job` is what
    /// it is now (the same owner).
    pub fn changed(&mut self, job: &Job, was_live: bool, kept_before: u64) {
        self.change(&job.owner, was_live, is_live(job), kept_before, job.kept_bytes());
    }

    fn change(&mut self, owner: &str, was_live: bool, is_live: bool, kept_before: u64, kept_after: u64) {
        let Some(entry) = self.owners.get_mut(owner) else { return };
        entry.kept = entry.kept.saturating_sub(kept_before).saturating_add(kept_after);
        match (was_live, is_live) {
            (true, false) => {
                entry.live = entry.live.saturating_sub(1);
                self.live = self.live.saturating_sub(1);
            }
            (false, true) => {
                entry.live = entry.live.saturating_add(1);
                self.live = self.live.saturating_add(1);
            }
            _ => {}
        }
        if *entry == OwnerTally::default() {
            self.owners.remove(owner);
        }
    }
}
