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

/// What the tally counted of one job, taken before a change.
#[derive(Debug)]
pub struct Counted {
    owner: CompactString,
    live: bool,
    kept: u64,
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

    /// What the tally counted of `job` before a change ([`Tally::changed`]).
    pub fn before(job: &Job) -> Counted {
        Counted { owner: job.owner.clone(), live: is_live(job), kept: job.kept_bytes() }
    }

    /// Follows a job's change: `before` is what was counted of it, `job` what it is now.
    pub fn changed(&mut self, before: Counted, job: &Job) {
        if before.owner == job.owner {
            self.change(&job.owner, before.live, is_live(job), before.kept, job.kept_bytes());
        } else {
            // No request changes an owner; were one to, the job moves between tallies.
            self.change(&before.owner, before.live, false, before.kept, 0);
            self.added(job);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(owner: &str, seq: u64, kept: u64) -> Job {
        let spec = job::JobSpec::new("t", "true\n");
        let request = job::ResourceRequest::from_list(&[]).expect("the empty request");
        let mut job = Job::new(job::JobId::new(seq, "head"), spec.into(), request, job::JobState::Queued);
        job.owner = owner.into();
        job.spec_bytes = kept;
        job
    }

    #[test]
    fn counts_follow_ends_alterations_and_a_changed_owner() {
        let mut tally = Tally::default();
        let (a, b) = (job("alice", 1, 100), job("alice", 2, 50));
        tally.added(&a);
        tally.added(&b);
        assert_eq!((tally.live(), tally.owner("alice")), (2, OwnerTally { live: 2, kept: 150 }));
        // An end: no longer live, still kept.
        let before = Tally::before(&a);
        let mut ended = a.clone();
        ended.set_state_for_test(job::JobState::Finished);
        tally.changed(before, &ended);
        assert_eq!((tally.live(), tally.owner("alice")), (1, OwnerTally { live: 1, kept: 150 }));
        // A grown spec, then the job handed to bob.
        let before = Tally::before(&b);
        let mut moved = job("bob", 2, 80);
        moved.set_state_for_test(b.state());
        tally.changed(before, &moved);
        assert_eq!(tally.owner("alice"), OwnerTally { live: 0, kept: 100 });
        assert_eq!(tally.owner("bob"), OwnerTally { live: 1, kept: 80 });
        tally.removed(&ended);
        tally.removed(&moved);
        assert_eq!(tally, Tally::default(), "owners without jobs leave no entry");
    }
}
