//! Access to the state's maps (jobs by [`JobKey`], nodes and queues by name), which are
//! private to `state/` as tako keeps its task and worker maps: read-only views for anyone,
//! mutable access one entry at a time. A `&mut Job` handed out cannot change the job's state
//! (`Job::state` is written only in `state/`), so the indexes kept beside the maps (queued,
//! waiting, array counts) stay exact.
//!
//! Must not know: requests, the store, the outbox.

use super::{Job, Node, Queue, ServerState};
use ::job::JobKey;
use proto::error::{ErrorCode, RequestError};
use std::collections::{BTreeMap, HashMap};

impl ServerState {
    /// Active jobs (running, exiting, suspended) per queue and per (queue, owner): what
    /// `max_run` limits count (the pass's run limits and eligible time both read it).
    #[allow(clippy::type_complexity)]
    pub fn active_counts(&self) -> (HashMap<&str, u32>, HashMap<(&str, &str), u32>) {
        let mut per_queue: HashMap<&str, u32> = HashMap::new();
        let mut per_user: HashMap<(&str, &str), u32> = HashMap::new();
        for job in self.jobs().values().filter(|job| job.state().is_active()) {
            *per_queue.entry(job.queue.as_str()).or_default() += 1;
            *per_user.entry((job.queue.as_str(), job.owner.as_str())).or_default() += 1;
        }
        (per_queue, per_user)
    }

    /// Every job, by key, read-only. Add jobs with [`ServerState::insert_job`], remove them
    /// with [`ServerState::remove_finished_job`].
    pub fn jobs(&self) -> &BTreeMap<JobKey, Box<Job>> {
        &self.jobs
    }

    /// The job with key `key`, if the state has it.
    pub fn job(&self, key: JobKey) -> Option<&Job> {
        self.jobs.get(&key).map(|job| &**job)
    }

    /// Resolves a user-typed id as [`ServerState::find_job`] does, with the job found: a
    /// handler's one lookup, so it never indexes the map with a key it "knows" exists.
    pub fn find_job_entry(&self, text: &str) -> Result<(JobKey, &Job), RequestError> {
        let key = self.find_job(text)?;
        Ok((key, self.known_job(key)?))
    }

    /// The job with key `key`, or `Unknown Job Id` (the typed error at a handler's edge, for
    /// a key that came from a request or a report).
    pub fn known_job(&self, key: JobKey) -> Result<&Job, RequestError> {
        self.job(key).ok_or_else(|| RequestError::with_detail(ErrorCode::UnknownJobId, key.to_id(&self.server_name)))
    }

    /// The job with key `key`, to change anything but its state.
    pub fn job_mut(&mut self, key: JobKey) -> Option<&mut Job> {
        self.jobs.get_mut(&key).map(|job| &mut **job)
    }

    /// Every job, to change anything but their states.
    pub fn jobs_mut(&mut self) -> impl Iterator<Item = &mut Job> {
        self.jobs.values_mut().map(|job| &mut **job)
    }

    /// Forgets every job and what is derived from them (a test's clean slate).
    #[cfg(test)]
    pub fn forget_all_jobs_for_test(&mut self) {
        self.jobs.clear();
        self.queued.clear();
        self.waiting.clear();
        self.suspended.clear();
        self.arrays.clear();
        self.touched_arrays.clear();
        self.depend = Default::default();
        self.sched_notes = Default::default();
        self.tally = Default::default();
    }

    /// Who waits on whom (derived from the jobs' specs by `depend.rs`).
    pub fn depend(&self) -> &crate::state::depend::Index {
        &self.depend
    }

    /// The dependency index, for `depend.rs`, which keeps it derived from the jobs.
    pub(crate) fn depend_mut(&mut self) -> &mut crate::state::depend::Index {
        &mut self.depend
    }

    /// The jobs beside the dependency index, for `depend.rs` to read one while changing
    /// the other.
    pub(crate) fn jobs_and_depend_mut(&mut self) -> (&BTreeMap<JobKey, Box<Job>>, &mut crate::state::depend::Index) {
        (&self.jobs, &mut self.depend)
    }

    /// Every node, by name, read-only.
    pub fn nodes(&self) -> &BTreeMap<String, Node> {
        &self.nodes
    }

    /// The node named `name`, if known.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.get(name)
    }

    /// The node named `name`, to change it.
    pub fn node_mut(&mut self, name: &str) -> Option<&mut Node> {
        self.nodes.get_mut(name)
    }

    /// Adds or replaces a node (registration, qmgr, loading from the store).
    pub fn insert_node(&mut self, node: Node) {
        self.nodes.insert(node.name.clone(), node);
    }

    /// The node named `name`, made with `make` if it is new (a mom registering).
    pub fn node_or_insert_with(&mut self, name: &str, make: impl FnOnce() -> Node) -> &mut Node {
        self.nodes.entry(name.to_string()).or_insert_with(make)
    }

    /// Forgets a node (qmgr `delete node`); the caller checked that no job holds it.
    pub fn remove_node(&mut self, name: &str) -> Option<Node> {
        self.nodes.remove(name)
    }

    /// Every queue, by name, read-only.
    pub fn queues(&self) -> &BTreeMap<String, Queue> {
        &self.queues
    }

    /// The queue named `name`, if it exists.
    pub fn queue(&self, name: &str) -> Option<&Queue> {
        self.queues.get(name)
    }

    /// Adds or replaces queue `name` (qmgr).
    pub fn insert_queue(&mut self, name: &str, queue: Queue) {
        self.queues.insert(name.to_string(), queue);
    }

    /// Forgets queue `name` (qmgr `delete queue`); the caller checked that it holds no job.
    /// The default queue, deleted, is unset, so `default_queue` names a queue or nothing.
    pub fn remove_queue(&mut self, name: &str) -> Option<Queue> {
        if self.default_queue == name {
            self.default_queue.clear();
            self.attrs.mark("default_queue", true);
        }
        self.queues.remove(name)
    }

    /// The queue a submission without `-q` goes to; empty if unset. Invariant: names one of
    /// [`Self::queues`] or is empty (set through qmgr, `state/admin.rs`).
    pub fn default_queue(&self) -> &str {
        &self.default_queue
    }

    /// The next job sequence number. Invariant: greater than every id ever handed out.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The next sequence number as the store kept it (at start-up, before any submission).
    pub fn restore_next_seq(&mut self, next_seq: u64) {
        self.next_seq = next_seq;
    }

    /// Takes the next sequence number for job `seq` just handed out (submission), keeping
    /// [`Self::next_seq`] above every id.
    pub fn consume_seq(&mut self, seq: u64) {
        self.next_seq = self.next_seq.max(seq + 1);
    }
}
