//! The server's live state: jobs, nodes and queues, in memory. The store is its durable log.
//! No I/O here: handlers mutate the state and record in an [`Outbox`](crate::state::outbox::Outbox)
//! what must be persisted (`records.rs`: `StoreOp`) and sent. Also the rules several handlers
//! apply: `holds.rs`, `submission.rs` (qsub's and qalter's checks), `requeue.rs` (a run that
//! ends without its job ending), `depend.rs` (dependencies), `array.rs` (array parents).
//!
//! Privilege is one rule, as in OpenPBS: operators (qmgr `operators`, and every manager) may
//! hold `o`, rerun, suspend and resume, take nodes offline and act on other users' jobs;
//! everything else in qmgr, holds `s`/`p`, `qdel -W force` and qalter of a root job need a
//! manager (root, the server's uid, `--managers`, qmgr `managers`). [`ServerState::is_operator`],
//! [`ServerState::is_manager`] and [`ServerState::may_alter`] are the rule's only homes.
//!
//! Invariant: a job's state changes only through [`ServerState::transition`], which applies
//! `job::JobState::apply` and refuses illegal transitions. Held by the types: the maps are
//! private (`lookup.rs` hands out views and single entries) and `Job::state` is written only
//! in `state/`; `invariant_tests.rs` and [`ServerState::sanity_check`] check the rest.

mod admin;
pub mod array;
pub mod depend;
pub mod eligible;
pub mod fairshare;
pub mod holds;
#[cfg(test)]
mod invariant_tests;
pub mod job;
mod lookup;
pub mod node;
pub mod node_gpus;
pub mod outbox;
pub mod preempt;
pub mod queue;
pub mod records;
pub mod requeue;
pub mod sched_attrs;
pub mod sched_notes;
pub mod server_attrs;
pub mod server_pools;
pub mod site;
mod spec_share;
pub mod std_path;
pub mod submission;
pub mod tally;
pub mod values;

pub use array::ArrayCounts;
pub use job::{EligibleClock, Job, JobTimes, NodeShare};
pub use node::{Node, NodeNames};
pub use queue::Queue;
pub use server_attrs::ServerAttrs;
pub use std_path::StdPath;

use ::job::id::ArrayPart;
use ::job::state::IllegalTransition;
use ::job::{JobEvent, JobId, JobKey};
use proto::error::{ErrorCode, RequestError};
use std::collections::{BTreeMap, BTreeSet};

/// Why [`ServerState::transition`] refused: no such job, or an illegal transition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransitionError {
    #[error("no job with key {0}")]
    UnknownJob(JobKey),
    #[error(transparent)]
    Illegal(#[from] IllegalTransition),
}

/// Who sent a request, as the transport established it (never from the message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requester {
    pub uid: u32,
    pub gid: u32,
    pub user: String,
}

/// All live state of the server. Jobs (by [`JobKey`]), nodes, queues, the next id, the
/// default queue and the dependency index are private: each has an invariant over the rest.
/// The public fields are configuration with none: names and uids fixed at start, the flavor,
/// and the qmgr-set server attributes and site resources, whose values `admin.rs` and
/// `site.rs` check as they are set.
#[derive(Debug)]
pub struct ServerState {
    pub server_name: String,
    /// Private: see [`ServerState::default_queue`].
    default_queue: String,
    pub kill_delay: u64,
    /// The uid the server runs as; it and root are managers.
    pub server_uid: u32,
    /// Which dialect conflicting displays follow (pbs-reference section 0); from the config at
    /// start.
    pub flavor: proto::Flavor,
    /// Every job, by key (`JobId::key`: an array's subjobs follow their parent). Add jobs with
    /// [`ServerState::insert_job`] and change their state only with [`ServerState::transition`],
    /// so `queued` stays true. Private: read through `lookup.rs`.
    /// Boxed: a B-tree node holds 11 values whether full or not, and a `Job` is large.
    jobs: BTreeMap<JobKey, Box<Job>>,
    /// Invariant: exactly the keys of the jobs in state `Q` other than array parents (never
    /// scheduled themselves), so a scheduling pass does not walk the history.
    queued: BTreeSet<JobKey>,
    /// Invariant: exactly the keys of the jobs in state `W` (waiting for their `-a` time), so
    /// the timer that wakes them does not walk the history either.
    waiting: BTreeSet<JobKey>,
    /// Invariant: exactly the keys of the jobs in state `S`, so that each scheduling pass finds
    /// the ones to resume without walking every job (history included).
    suspended: BTreeSet<JobKey>,
    /// Subjob counts by state of every array, by parent key. Invariant: exact (kept by
    /// `insert_job`, `transition` and `remove_finished_job`).
    arrays: BTreeMap<JobKey, ArrayCounts>,
    /// Arrays whose subjobs changed state since the last `settle_arrays`.
    touched_arrays: BTreeSet<JobKey>,
    /// The nodes by name. Private: read and changed through `lookup.rs`.
    nodes: BTreeMap<String, Node>,
    /// The next job sequence number. Invariant: greater than every id ever handed out.
    next_seq: u64,
    /// Who waits on whom (job dependencies). Invariant: derived from the jobs' specs; only
    /// `depend.rs` changes it (`depend_mut`), checked by `depend::sanity_check`.
    depend: crate::state::depend::Index,
    /// The queues by name. Invariant: `default_queue` names one of them (or is empty).
    /// Private: read and changed through `lookup.rs`.
    queues: BTreeMap<String, Queue>,
    /// Server attributes set with qmgr (see `state/admin.rs`).
    pub attrs: ServerAttrs,
    /// Site-defined resources (qmgr `create resource`; `state/site.rs`).
    pub resources: ::job::resources::site::SiteResources,
    /// The scheduler's notes on queued jobs (`state/sched_notes.rs`). Invariant: only jobs in
    /// `queued` have one (`transition` drops a job's note when it leaves the queue).
    sched_notes: sched_notes::SchedNotes,
    /// Fair-share usage, the share tree and standings (`state/fairshare.rs`). Its running
    /// set is kept by `insert_job` and `transition`.
    pub fairshare: fairshare::FairShareState,
    /// Some queued job's eligible-time clock may be stopped (`state/eligible.rs`): set by
    /// `settle` and by `insert_job` (a job loaded so); lets `settle` skip its scan otherwise.
    pub eligible_paused: bool,
    /// The spec of each user's last plain job, shared by the next one if equal
    /// (`spec_share.rs`).
    last_specs: spec_share::LastSpecs,
    /// Live jobs and kept bytes by owner, for the quota checks (`tally.rs`). Invariant: equal
    /// to a recount of `jobs`.
    tally: tally::Tally,
}

impl ServerState {
    pub fn new(server_name: &str, default_queue: &str, kill_delay: u64, server_uid: u32) -> ServerState {
        ServerState {
            server_name: server_name.to_string(),
            default_queue: default_queue.to_string(),
            kill_delay,
            server_uid,
            flavor: proto::Flavor::OpenPbs,
            jobs: BTreeMap::new(),
            queued: BTreeSet::new(),
            waiting: BTreeSet::new(),
            suspended: BTreeSet::new(),
            arrays: BTreeMap::new(),
            touched_arrays: BTreeSet::new(),
            nodes: BTreeMap::new(),
            next_seq: 1,
            depend: Default::default(),
            queues: [(default_queue.to_string(), Queue::default_queue(default_queue))].into_iter().collect(),
            attrs: ServerAttrs::new(server_attrs::Defaults {
                job_history_duration: 14 * 24 * 3600,
                flavor: proto::Flavor::OpenPbs,
                default_queue: default_queue.to_string(),
                managers: Vec::new(),
                operators: Vec::new(),
                acl_roots: Vec::new(),
            }),
            resources: Default::default(),
            sched_notes: Default::default(),
            fairshare: Default::default(),
            eligible_paused: false,
            last_specs: Default::default(),
            tally: Default::default(),
        }
    }

    /// The node list as the store keeps it.
    pub fn stored_nodes(&self) -> Vec<crate::state::records::StoredNode> {
        self.nodes
            .values()
            .map(|node| crate::state::records::StoredNode {
                name: node.name.clone(),
                np: node.np,
                mem_bytes: node.mem_bytes,
                ngpus: node.ngpus,
                properties: node.properties.clone(),
                offline: node.offline,
                comment: node.operator_comment.clone(),
            })
            .collect()
    }

    /// Adds a job (submitted or loaded from the store).
    pub fn insert_job(&mut self, job: Job) {
        let job = self.share_spec(job);
        let key = job.id.key();
        match job.id.array {
            Some(ArrayPart::Parent) => {
                self.arrays.entry(key).or_default();
            }
            Some(ArrayPart::Sub(_)) => {
                self.arrays.entry(JobId::parent_key(key)).or_default().add(job.state);
                self.touched_arrays.insert(JobId::parent_key(key));
            }
            None => {}
        }
        if job.state == ::job::JobState::Queued && job.id.array != Some(ArrayPart::Parent) {
            self.queued.insert(key);
        }
        if job.state == ::job::JobState::Waiting {
            self.waiting.insert(key);
        }
        if job.state == ::job::JobState::Suspended {
            self.suspended.insert(key);
        }
        if job.state.is_active() {
            self.fairshare.run_started(key);
        }
        if job.state == ::job::JobState::Queued && job.eligible.since.is_none() {
            self.eligible_paused = true;
        }
        self.tally.added(&job);
        self.jobs.insert(key, Box::new(job));
    }

    /// Forgets a finished job (history purge, qdel -x), an array parent with all its subjobs,
    /// and their entries in the dependency index. Jobs in any other state are kept. Returns
    /// the keys removed.
    pub fn remove_finished_job(&mut self, key: JobKey) -> Vec<JobKey> {
        let Some(job) = self.jobs.get(&key).filter(|job| job.state.is_finished()) else { return Vec::new() };
        let mut removed = Vec::new();
        if job.id.array == Some(ArrayPart::Parent) {
            removed = self.subjob_keys(key);
            self.arrays.remove(&key);
        } else if let Some(ArrayPart::Sub(_)) = job.id.array {
            if let Some(counts) = self.arrays.get_mut(&JobId::parent_key(key)) {
                counts.remove(job.state);
            }
        }
        removed.push(key);
        for key in &removed {
            crate::state::depend::forget(self, *key);
        }
        for key in &removed {
            if let Some(job) = self.jobs.remove(key) {
                self.tally.removed(&job);
            }
        }
        removed
    }

    /// The jobs in state `W`, in key order.
    pub fn waiting_jobs(&self) -> impl Iterator<Item = &Job> {
        self.waiting.iter().filter_map(|seq| self.jobs.get(seq).map(|job| &**job))
    }

    /// The jobs in state `S`, in key order.
    pub fn suspended_jobs(&self) -> impl Iterator<Item = &Job> {
        self.suspended.iter().filter_map(|key| self.jobs.get(key).map(|job| &**job))
    }

    /// How many jobs are in state `Q`.
    pub fn queued_count(&self) -> usize {
        self.queued.len()
    }

    /// The jobs in state `Q`, in key order (submission order; subjobs by index).
    pub fn queued_jobs(&self) -> impl Iterator<Item = &Job> {
        self.queued.iter().filter_map(|seq| self.jobs.get(seq).map(|job| &**job))
    }

    /// Resolves a destination (`queue`, `@server` or `queue@server`, pbs-reference 2.2) to a
    /// queue of this server; an empty queue part means the default queue.
    pub fn resolve_destination(&self, text: &str) -> Result<String, RequestError> {
        let (queue, server) = match text.split_once('@') {
            Some((queue, server)) => (queue, Some(server)),
            None => (text, None),
        };
        if let Some(server) = server {
            if server.split('.').next() != Some(self.server_name.as_str()) {
                let message = format!(
                    "{} {text}: {server} is not this server ({})",
                    ErrorCode::UnknownQueue.text(),
                    self.server_name
                );
                return Err(RequestError::new(ErrorCode::UnknownQueue, message));
            }
        }
        let queue = if queue.is_empty() { self.default_queue.as_str() } else { queue };
        if queue.is_empty() {
            return Err(RequestError::new(ErrorCode::NoDefaultQueue, ErrorCode::NoDefaultQueue.text()));
        }
        if !self.queues.contains_key(queue) {
            return Err(RequestError::new(ErrorCode::UnknownQueue, ErrorCode::UnknownQueue.text()));
        }
        Ok(queue.to_string())
    }

    /// Resolves a user-typed id (`12`, `12.head`, `12[]`, `12[3]`) to a known job's key. `12`
    /// also finds the array parent `12[]`, as in OpenPBS.
    pub fn find_job(&self, text: &str) -> Result<JobKey, RequestError> {
        let id = JobId::parse(text, &self.server_name)
            .map_err(|_| RequestError::with_detail(ErrorCode::UnknownJobId, text))?;
        let key = id.key();
        let parent_of_plain_job = id.array == Some(ArrayPart::Parent)
            && self.jobs.get(&key).is_some_and(|job| job.id.array != Some(ArrayPart::Parent));
        if id.server != self.server_name || !self.jobs.contains_key(&key) || parent_of_plain_job {
            return Err(RequestError::with_detail(ErrorCode::UnknownJobId, id));
        }
        Ok(key)
    }

    /// Whether `requester` may act on a job owned by `owner_uid` (owner, operator or manager).
    pub fn may_modify(&self, requester: &Requester, owner_uid: u32) -> bool {
        requester.uid == owner_uid || self.is_operator(requester)
    }

    /// Who may qalter a job owned by `owner_uid`: as [`Self::may_modify`], but a job that runs
    /// as root (uid 0) only its owner (root) and managers: its shell, variables and output
    /// path would otherwise be an operator's way to root (issue 12, item 9).
    pub fn may_alter(&self, requester: &Requester, owner_uid: u32) -> bool {
        match owner_uid {
            0 => self.is_manager(requester),
            _ => self.may_modify(requester, owner_uid),
        }
    }

    /// Managers: root, the user the server runs as, and the server's `managers`.
    pub fn is_manager(&self, requester: &Requester) -> bool {
        requester.uid == 0
            || requester.uid == self.server_uid
            || self.attrs.admins("managers").any(|entry| server_attrs::admin_matches(entry, &requester.user))
    }

    /// Whether `acl_roots` lets `owner`'s jobs run as root (OpenPBS `set_objexid`: a job whose
    /// execution user is uid 0 is refused unless its owner is listed).
    pub fn root_allowed(&self, owner: &str) -> bool {
        self.attrs.acl_roots.iter().any(|entry| values::user_matches(entry, owner))
    }

    /// Operators: managers and the server's `operators`.
    pub fn is_operator(&self, requester: &Requester) -> bool {
        self.is_manager(requester)
            || self.attrs.admins("operators").any(|entry| server_attrs::admin_matches(entry, &requester.user))
    }

    /// Applies `event` to job `key`; the only way a job's state changes. Returns the job, so
    /// that the caller goes on without looking it up again.
    pub fn transition(&mut self, key: JobKey, event: JobEvent, now: i64) -> Result<&mut Job, TransitionError> {
        let job = self.jobs.get_mut(&key).ok_or(TransitionError::UnknownJob(key))?;
        let before = job.state;
        let counted = tally::Tally::before(job);
        job.state = job.state.apply(event)?;
        self.tally.changed(counted, job);
        job.times.mtime = now;
        // Eligible time accrues only while queued; the pass stops it for a queued job that
        // cannot run and starts it again (`state/eligible.rs`). The caller stores the job.
        if job.state == ::job::JobState::Queued {
            job.eligible.start(now);
        } else {
            job.eligible.stop(now);
        }
        match (before.is_active(), job.state.is_active()) {
            (false, true) => self.fairshare.run_started(key),
            (true, false) => {
                // The run ends: its usage goes to its owner (`state/fairshare.rs`).
                let used = fairshare::run_usage(job, &self.attrs.sched, now);
                self.fairshare.run_ended(key, &job.owner, &job.group, used, now, &self.attrs.sched);
            }
            _ => {}
        }
        if let Some(ArrayPart::Sub(_)) = job.id.array {
            let counts = self.arrays.entry(JobId::parent_key(key)).or_default();
            counts.remove(before);
            counts.add(job.state);
            self.touched_arrays.insert(JobId::parent_key(key));
        }
        if job.state == ::job::JobState::Queued && job.id.array != Some(ArrayPart::Parent) {
            self.queued.insert(key);
        } else {
            self.queued.remove(&key);
            self.sched_notes.forget(key);
        }
        for (index, state) in
            [(&mut self.waiting, ::job::JobState::Waiting), (&mut self.suspended, ::job::JobState::Suspended)]
        {
            if job.state == state {
                index.insert(key);
            } else {
                index.remove(&key);
            }
        }
        Ok(job)
    }

    /// Replaces job `key` with `altered` (qalter's changed copy) but keeps its state (which
    /// changes only by [`ServerState::transition`]), and follows the change in the tally.
    /// `false` if there is no such job.
    pub fn replace_job_keeping_state(&mut self, key: JobKey, altered: Job) -> bool {
        let Some(job) = self.jobs.get_mut(&key) else { return false };
        let counted = tally::Tally::before(job);
        job.replace_keeping_state(altered);
        self.tally.changed(counted, job);
        true
    }

    /// Live jobs in all and `owner`'s tally (`tally.rs`): what the quota checks count.
    pub fn tally(&self, owner: &str) -> (u32, tally::OwnerTally) {
        (self.tally.live(), self.tally.owner(owner))
    }

    /// Checks the state's invariants (for tests, as tako's `Core::sanity_check`): the queued
    /// index matches the job states, the tally a recount, and node slots and GPUs are owned
    /// exactly by the active jobs whose allocation names them.
    pub fn sanity_check(&self) {
        assert_eq!(
            tally::Tally::recount(self.jobs.values().map(|job| &**job)),
            self.tally,
            "tally out of step with the jobs"
        );
        let queued: BTreeSet<JobKey> = self
            .jobs
            .values()
            .filter(|job| job.state == ::job::JobState::Queued && job.id.array != Some(ArrayPart::Parent))
            .map(|job| job.id.key())
            .collect();
        assert_eq!(queued, self.queued, "queued index out of step with job states");
        assert!(self.sched_notes.keys().all(|key| queued.contains(&key)), "a scheduler note on a job not queued");
        let waiting: BTreeSet<JobKey> =
            self.jobs.values().filter(|job| job.state == ::job::JobState::Waiting).map(|job| job.id.key()).collect();
        assert_eq!(waiting, self.waiting, "waiting index out of step with job states");
        let suspended: BTreeSet<JobKey> =
            self.jobs.values().filter(|job| job.state == ::job::JobState::Suspended).map(|job| job.id.key()).collect();
        assert_eq!(suspended, self.suspended, "suspended index out of step with job states");
        crate::state::depend::sanity_check(self);
        let mut arrays: BTreeMap<JobKey, ArrayCounts> = BTreeMap::new();
        for job in self.jobs.values() {
            match job.id.array {
                Some(ArrayPart::Parent) => {
                    arrays.entry(job.id.key()).or_default();
                }
                Some(ArrayPart::Sub(_)) => {
                    let parent_key = JobId::parent_key(job.id.key());
                    assert!(self.jobs.contains_key(&parent_key), "subjob {} without its parent", job.id);
                    // One that started before its array was altered keeps the spec it ran with.
                    assert!(
                        job.run_count > 0 || std::sync::Arc::ptr_eq(&job.spec, &self.jobs[&parent_key].spec),
                        "subjob {} has never run and does not share its parent's spec",
                        job.id
                    );
                    arrays.entry(parent_key).or_default().add(job.state);
                }
                None => {}
            }
        }
        assert_eq!(arrays, self.arrays, "array counts out of step with subjob states");
        for node in self.nodes.values() {
            for (index, owner) in node.slot_owner.iter().enumerate() {
                if let Some(key) = owner {
                    let job = &self.jobs[key];
                    assert!(job.state.is_active(), "slot {index} of {} owned by inactive job {key}", node.name);
                    assert!(
                        !job.shares_released,
                        "slot {index} of {} owned by job {key}, which gave it back",
                        node.name
                    );
                    let share = job.exec.iter().find(|share| share.node == node.name);
                    assert!(
                        share.is_some_and(|share| share.slots.contains(&(index as u32))),
                        "slot {index} of {}",
                        node.name
                    );
                }
            }
            for (index, owner) in node.gpu_owner.iter().enumerate() {
                if let Some(key) = owner {
                    let share = self.jobs[key].exec.iter().find(|share| share.node == node.name);
                    assert!(
                        share.is_some_and(|share| share.gpus.contains(&(index as u32)) && share.mps.is_none()),
                        "gpu {index} of {}",
                        node.name
                    );
                    assert!(node.gpus[index].mps.is_none(), "gpu {index} of {} held whole and shared", node.name);
                }
            }
            assert_eq!(node.gpus.len(), node.gpu_owner.len(), "GPU lists of {}", node.name);
            for gpu in &node.gpus {
                let Some(hold) = &gpu.mps else { continue };
                assert!(
                    hold.used() <= 100 && !hold.shares.is_empty(),
                    "MPS shares of {} gpu {}",
                    node.name,
                    gpu.info.index
                );
                for (key, percent) in &hold.shares {
                    let job = &self.jobs[key];
                    assert!(job.state.is_active() && job.owner == hold.user, "MPS share of job {key}");
                    let share = job.exec.iter().find(|share| share.node == node.name);
                    assert!(share.is_some_and(|share| share.mps == Some(*percent) && share.gpus == [gpu.info.index]));
                }
            }
            let mut held: BTreeMap<&str, u64> = BTreeMap::new();
            let shares = node.jobs.iter().flat_map(|key| self.jobs[key].exec.iter().filter(|s| s.node == node.name));
            for (name, amount) in shares.flat_map(|share| &share.amounts) {
                let sum = held.entry(name).or_default();
                *sum = sum.saturating_add(*amount);
            }
            held.retain(|_, sum| *sum > 0);
            let recorded: BTreeMap<&str, u64> = node
                .site_assigned
                .iter()
                .filter(|(_, sum)| **sum > 0)
                .map(|(name, sum)| (name.as_str(), *sum))
                .collect();
            assert_eq!(held, recorded, "resources_assigned of {} out of step with its jobs", node.name);
        }
        for job in self.jobs.values().filter(|job| job.state.is_active() && !job.shares_released) {
            for share in &job.exec {
                if let Some(node) = self.nodes.get(share.node.as_str()) {
                    for slot in &share.slots {
                        assert_eq!(
                            node.slot_owner.get(*slot as usize),
                            Some(&Some(job.id.key())),
                            "{} slot {slot}",
                            share.node
                        );
                    }
                }
            }
        }
    }

    /// Ends an active job (R or E): frees its nodes and records its exit status and end time.
    /// The one place the job ends of the mom's report, a forced qdel and a lost mom share.
    /// A subjob ends as X (expired), any other job as F.
    pub fn finish_job(&mut self, key: JobKey, exit_status: i32, now: i64) -> Result<&mut Job, TransitionError> {
        let event = if key.is_subjob() { JobEvent::Expire } else { JobEvent::Finish };
        self.transition(key, event, now)?;
        let job = self.release_nodes(key).ok_or(TransitionError::UnknownJob(key))?;
        job.exit_status = Some(exit_status);
        job.times.obittime = Some(now);
        Ok(job)
    }

    /// Puts an active job (R, E or S) back in the queue after a run that will not finish (the
    /// killed run of a qrerun, a run lost with its mother superior): frees its nodes, state `Q`,
    /// or `H` if a hold was set while it ran (OpenPBS requeues a held job held), and forgets
    /// the run's session and exit status. The run's allocation and start stay on the job for
    /// the caller's rerun notice (the `R` record names them) and its sisters; the caller then
    /// calls [`Job::forget_run`]. `run_count` keeps counting the runs, so an `after`
    /// dependency met by the first start stays met.
    pub fn requeue_job(&mut self, key: JobKey, now: i64) -> Result<&mut Job, TransitionError> {
        self.transition(key, ::job::JobEvent::Requeue, now)?;
        let held = self.release_nodes(key).is_some_and(|job| job.hold_types != "n");
        let job = match held {
            true => self.transition(key, ::job::JobEvent::Hold, now)?,
            false => self.jobs.get_mut(&key).ok_or(TransitionError::UnknownJob(key))?,
        };
        job.rerun_requested = false;
        job.session_id = None;
        job.exit_status = None;
        job.times.qtime = now;
        job.times.etime = now;
        Ok(job)
    }

    /// Frees every node share of job `key`; returns the job, if known. A job whose shares
    /// preemption already gave back (`Job::shares_released`) frees nothing again.
    pub fn release_nodes(&mut self, key: JobKey) -> Option<&mut Job> {
        let job = self.jobs.get_mut(&key)?;
        if std::mem::take(&mut job.shares_released) {
            return Some(job);
        }
        for share in &job.exec {
            if let Some(node) = self.nodes.get_mut(share.node.as_str()) {
                node.release(key, share);
            }
        }
        Some(job)
    }

    /// Re-takes the node shares of active jobs (after loading from the store, or when a node
    /// registers again). Shares on unknown nodes are kept on the job and taken when the node
    /// appears.
    pub fn claim_shares_on(&mut self, node_name: &str) {
        let Some(node) = self.nodes.get_mut(node_name) else { return };
        for (key, job) in &self.jobs {
            if !job.state.is_active() || job.shares_released {
                continue;
            }
            for share in job.exec.iter().filter(|share| share.node == node_name) {
                if !node.jobs.contains(key) {
                    node.assign(*key, share, &job.owner, job.request.exclusive);
                }
            }
        }
    }
}
