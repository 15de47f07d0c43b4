//! Fair-share usage and standings: what each user and group used, decayed, and where each job
//! owner stands in the share tree (`sched::fairshare`, from the `resource_group` file).
//!
//! Usage is resources held times hours, weighted by the server's `fairshare_weights`
//! (`ncpus=1,ngpus=1` by default: cpu-hours plus GPU-hours; an MPS share counts its fraction of
//! a GPU), counted on the allocation from the start of a run to its end (suspended time
//! included). A run that ends (finished, requeued, lost) is charged to its owner and to its
//! group then (`ServerState::transition` calls [`FairShareState::run_ended`]); a running job's
//! usage so far counts in standings without being recorded. Recorded usage decays
//! continuously: `usage * fairshare_decay_factor ^ (elapsed / fairshare_decay_time)`
//! (`sched::fairshare::decay`). Each record changed is stored (`StoreOp::PutUsage`, in the
//! commit of the change that caused it: `shared::run_handler` takes [`FairShareState::take_pending`]),
//! and loaded at start.
//!
//! The entity a job is charged to in the tree (OpenPBS `fairshare_entity`): its owner if the
//! file names the owner, else its group if the file names the group (a leaf for a whole Unix
//! group), else its owner under `unknown`. A leaf's usage is its user's record, else its
//! group's.
//!
//! Standings are computed once per second of the clock and change of usage (cached), for
//! every entity with a job or a record, so a pass over 100,000 jobs costs a hash lookup each.
//!
//! Must not know: the store's rows, files (the server reads `resource_group` at start:
//! `lib.rs`), the scheduler's policy.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use job::JobKey;
use sched::fairshare::{decay, ShareTree, Standings};

use super::records::{StoreOp, StoredUsage, UsageKind};
use super::sched_attrs::SchedAttrs;
use super::{Job, ServerState};

/// A recorded usage: its value when last changed, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    pub value: f64,
    pub stamp: i64,
    /// For a user: the group of its last charged job (where it sits in the tree when the file
    /// names only its group). Empty for a group.
    pub group: String,
}

/// The fair-share part of the server state.
#[derive(Debug, Default)]
pub struct FairShareState {
    tree: ShareTree,
    /// Where the tree was read from (`None`: no file, everyone under `unknown`).
    pub source: Option<String>,
    users: BTreeMap<String, Usage>,
    groups: BTreeMap<String, Usage>,
    /// Jobs in an active state (R, E, S): their usage so far counts in standings.
    running: BTreeSet<JobKey>,
    /// Records changed since the last [`FairShareState::take_pending`].
    pending: Vec<StoreOp>,
    /// Bumped at every change of usage or tree: the cache key with the clock.
    generation: u64,
    cache: RefCell<Option<Cache>>,
}

#[derive(Debug)]
struct Cache {
    now: i64,
    generation: u64,
    standings: Standings,
    /// The last (user, group) asked and its answer: queued jobs come in runs of one owner's.
    last: Option<(String, String, sched::FairShare)>,
}

impl FairShareState {
    /// Replaces the share tree.
    pub fn set_tree(&mut self, tree: ShareTree, source: Option<String>) {
        self.tree = tree;
        self.source = source;
        self.generation += 1;
    }

    pub fn tree(&self) -> &ShareTree {
        &self.tree
    }

    /// Restores stored records (at start).
    pub fn load(&mut self, rows: Vec<StoredUsage>) {
        for row in rows {
            let usage = Usage { value: sane(row.usage), stamp: row.stamp, group: row.group };
            match row.kind {
                UsageKind::User => self.users.insert(row.name, usage),
                UsageKind::Group => self.groups.insert(row.name, usage),
            };
        }
        self.generation += 1;
    }

    /// The recorded usage of a user, decayed to `now`.
    pub fn user_usage(&self, name: &str, now: i64, attrs: &SchedAttrs) -> f64 {
        self.users.get(name).map_or(0.0, |usage| decayed(usage, now, attrs))
    }

    /// The recorded usage of a group, decayed to `now`.
    pub fn group_usage(&self, name: &str, now: i64, attrs: &SchedAttrs) -> f64 {
        self.groups.get(name).map_or(0.0, |usage| decayed(usage, now, attrs))
    }

    /// A job entered an active state (or was loaded in one).
    pub fn run_started(&mut self, key: JobKey) {
        self.running.insert(key);
    }

    /// A run ended: charge `amount` (weighted hours) to `owner` and `group`.
    pub fn run_ended(&mut self, key: JobKey, owner: &str, group: &str, amount: f64, now: i64, attrs: &SchedAttrs) {
        self.running.remove(&key);
        self.add(UsageKind::User, owner, group, amount, now, attrs);
        self.add(UsageKind::Group, group, "", amount, now, attrs);
    }

    fn add(&mut self, kind: UsageKind, name: &str, group: &str, amount: f64, now: i64, attrs: &SchedAttrs) {
        let map = match kind {
            UsageKind::User => &mut self.users,
            UsageKind::Group => &mut self.groups,
        };
        let entry = map.entry(name.to_string()).or_insert(Usage { value: 0.0, stamp: now, group: String::new() });
        entry.value = sane(decayed(entry, now, attrs) + sane(amount));
        entry.stamp = now;
        if !group.is_empty() {
            entry.group = group.to_string();
        }
        let row = stored(kind, name, entry);
        self.pending.push(StoreOp::PutUsage(row));
        self.generation += 1;
    }

    /// Sets an entity's usage (`pbsfs -s`): a user's if there is a user of that name with a
    /// record or the name is not a known group, else the group's.
    pub fn set_usage(&mut self, name: &str, value: f64, now: i64) {
        let kind = if self.users.contains_key(name) || !self.groups.contains_key(name) {
            UsageKind::User
        } else {
            UsageKind::Group
        };
        let map = match kind {
            UsageKind::User => &mut self.users,
            UsageKind::Group => &mut self.groups,
        };
        let entry = map.entry(name.to_string()).or_insert(Usage { value: 0.0, stamp: now, group: String::new() });
        entry.value = sane(value);
        entry.stamp = now;
        let row = stored(kind, name, entry);
        self.pending.push(StoreOp::PutUsage(row));
        self.generation += 1;
    }

    /// Decays every record by one `fairshare_decay_factor` at once (`pbsfs -d`).
    pub fn decay_once(&mut self, now: i64, attrs: &SchedAttrs) {
        for (kind, map) in [(UsageKind::User, &mut self.users), (UsageKind::Group, &mut self.groups)] {
            for (name, entry) in map.iter_mut() {
                entry.value = sane(decayed(entry, now, attrs) * attrs.fairshare_decay_factor.clamp(0.0, 1.0));
                entry.stamp = now;
                self.pending.push(StoreOp::PutUsage(stored(kind, name, entry)));
            }
        }
        self.generation += 1;
    }

    /// Forgets every record of an entity the file does not name (`pbsfs -e`, OpenPBS's trim).
    pub fn trim(&mut self) {
        let tree = &self.tree;
        for (kind, map) in [(UsageKind::User, &mut self.users), (UsageKind::Group, &mut self.groups)] {
            let gone: Vec<String> = map.keys().filter(|name| !tree.contains(name)).cloned().collect();
            for name in gone {
                map.remove(&name);
                self.pending.push(StoreOp::DeleteUsage { kind, name });
            }
        }
        self.generation += 1;
    }

    /// The records changed since the last call, to store with the change that made them.
    pub fn take_pending(&mut self) -> Vec<StoreOp> {
        std::mem::take(&mut self.pending)
    }
}

fn sane(value: f64) -> f64 {
    if value.is_finite() && value > 0.0 {
        value
    } else {
        0.0
    }
}

fn decayed(usage: &Usage, now: i64, attrs: &SchedAttrs) -> f64 {
    decay(usage.value, now.saturating_sub(usage.stamp), attrs.fairshare_decay_time, attrs.fairshare_decay_factor)
}

fn stored(kind: UsageKind, name: &str, usage: &Usage) -> StoredUsage {
    StoredUsage { kind, name: name.to_string(), usage: usage.value, stamp: usage.stamp, group: usage.group.clone() }
}

/// What a run of `job` has used by `now`: weighted resource-hours of its allocation.
pub fn run_usage(job: &Job, attrs: &SchedAttrs, now: i64) -> f64 {
    let Some(start) = job.times.stime else { return 0.0 };
    let hours = now.saturating_sub(start).max(0) as f64 / 3600.0;
    let ncpus: usize = job.exec.iter().map(|share| share.slots.len()).sum();
    let ngpus: f64 = job
        .exec
        .iter()
        .map(|share| match share.mps {
            Some(percent) => f64::from(percent) / 100.0,
            None => share.gpus.len() as f64,
        })
        .sum();
    let weights = attrs.fairshare_weights;
    sane(hours * (ncpus as f64 * weights.ncpus + ngpus * weights.ngpus))
}

/// The tree entity a job of `user` in `group` is charged to.
pub fn entity<'a>(tree: &ShareTree, user: &'a str, group: &'a str) -> &'a str {
    let named = |name: &str| {
        tree.contains(name) && name != sched::fairshare::ROOT_NAME && name != sched::fairshare::UNKNOWN_NAME
    };
    if named(user) || !named(group) {
        user
    } else {
        group
    }
}

/// The fair-share standing of a job of `user` in `group` (`PendingJob::fairshare`). Cheap: the
/// standings are computed once per second and change.
pub fn standing(state: &ServerState, user: &str, group: &str, now: i64) -> sched::FairShare {
    let fair = &state.fairshare;
    {
        let mut cache = fair.cache.borrow_mut();
        if let Some(cache) = cache.as_mut().filter(|cache| cache.now == now && cache.generation == fair.generation) {
            if let Some((_, _, share)) = cache.last.as_ref().filter(|(u, g, _)| u == user && g == group) {
                return *share;
            }
            let name = entity(&fair.tree, user, group);
            if let Some(share) = cache.standings.get(name).map(|found| found.share) {
                cache.last = Some((user.to_string(), group.to_string(), share));
                return share;
            }
        }
    }
    let name = entity(&fair.tree, user, group);
    let standings = standings(state, now, Some(name));
    let share = standings.get(name).map(|found| found.share).unwrap_or_default();
    let last = Some((user.to_string(), group.to_string(), share));
    *fair.cache.borrow_mut() = Some(Cache { now, generation: fair.generation, standings, last });
    share
}

/// Every entity's standing at `now` (what `pbsfs` shows), with `extra` among the entities.
pub fn standings(state: &ServerState, now: i64, extra: Option<&str>) -> Standings {
    let fair = &state.fairshare;
    let attrs = &state.attrs.sched;
    // Usage so far of the running jobs, by user and by group.
    let mut running_users: HashMap<&str, f64> = HashMap::new();
    let mut running_groups: HashMap<&str, f64> = HashMap::new();
    let mut present: BTreeSet<&str> = BTreeSet::new();
    for job in fair.running.iter().filter_map(|key| state.job(*key)) {
        let used = run_usage(job, attrs, now);
        *running_users.entry(job.owner.as_str()).or_default() += used;
        *running_groups.entry(job.group.as_str()).or_default() += used;
        present.insert(entity(&fair.tree, &job.owner, &job.group));
    }
    // Queued jobs come in runs of one owner's (a sweep, an array): skip repeats cheaply.
    let mut pairs: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut last: Option<(&str, &str)> = None;
    for job in state.queued_jobs() {
        let pair = (job.owner.as_str(), job.group.as_str());
        if last != Some(pair) {
            pairs.insert(pair);
            last = Some(pair);
        }
    }
    for (user, group) in pairs {
        present.insert(entity(&fair.tree, user, group));
    }
    for (user, usage) in &fair.users {
        present.insert(entity(&fair.tree, user, &usage.group));
    }
    if let Some(extra) = extra {
        present.insert(extra);
    }
    let leaf_usage = |name: &str| -> f64 {
        if fair.users.contains_key(name) || running_users.contains_key(name) {
            fair.user_usage(name, now, attrs) + running_users.get(name).copied().unwrap_or(0.0)
        } else {
            fair.group_usage(name, now, attrs) + running_groups.get(name).copied().unwrap_or(0.0)
        }
    };
    fair.tree.standings(&leaf_usage, present.into_iter().filter(|name| !fair.tree.contains(name)))
}

#[cfg(test)]
#[path = "fairshare_tests.rs"]
mod tests;
