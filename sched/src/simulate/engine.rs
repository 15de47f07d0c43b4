//! The simulator's virtual clock: jobs arrive and end as events; at each instant, ends are
//! processed first, then arrivals, then one scheduling pass through [`crate::schedule`], and
//! the jobs start where its decisions say.
//!
//! Owns: the machine's state between passes (each node's free slot list, kept exactly as the
//! server keeps it: ascending indices, taken at start and given back at the end), the
//! `ClusterView` of each pass, and when a pass is worth running.
//! Must not know: the SWF format, metrics, files or the real clock.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use job::{Chunk, Placement, ResourceRequest};

use super::Policy;
use crate::view::{Assignment, ClusterView, NodeView, PendingJob, RunningJob};

/// One job to replay (times in seconds since time zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimJob {
    /// The SWF job number.
    pub id: i64,
    pub submit: i64,
    /// How long it runs (already cut at `requested`).
    pub run: i64,
    /// What it asked for: its walltime for the scheduler's plans.
    pub requested: i64,
    /// Processors: one chunk of this many 1-cpu units, free placement.
    pub procs: u32,
}

/// Why a replay stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineError {
    /// The scheduler placed this job (index into the jobs) on slots that are not free.
    Conflict(usize),
    /// Nothing runs and nothing arrives, yet this job (the oldest waiting) did not start.
    Stalled(usize),
}

/// Replays `jobs` (sorted by `submit`, every `procs` at most `nodes * ppn`) and returns
/// `(index into jobs, start time)` in the order the jobs started.
pub(crate) fn run(jobs: &[SimJob], nodes: u32, ppn: u32, policy: Policy) -> Result<Vec<(usize, i64)>, EngineError> {
    let requests = Requests::new(jobs);
    let mut machine = Machine::new(nodes, ppn, policy);
    let mut next = 0;
    loop {
        let arrival = jobs.get(next).map(|job| job.submit);
        let end = machine.ends.peek().map(|Reverse((end, _, _))| *end);
        let now = match (arrival, end) {
            (None, None) => break,
            (Some(time), None) | (None, Some(time)) => time,
            (Some(arrival), Some(end)) => arrival.min(end),
        };
        while let Some(&Reverse((end, _, index))) = machine.ends.peek() {
            if end != now {
                break;
            }
            machine.ends.pop();
            machine.finish(index);
        }
        while jobs.get(next).is_some_and(|job| job.submit == now) {
            machine.enqueue(next, jobs[next].procs);
            next += 1;
        }
        if machine.worth_a_pass() {
            machine.pass(now, jobs, &requests)?;
        }
        if machine.ends.is_empty() && next == jobs.len() {
            if let Some(&oldest) = machine.queue.first() {
                return Err(EngineError::Stalled(oldest));
            }
        }
    }
    Ok(machine.started)
}

/// One request per distinct processor count, shared by the jobs asking for it.
struct Requests {
    by_procs: HashMap<u32, ResourceRequest>,
}

impl Requests {
    fn new(jobs: &[SimJob]) -> Requests {
        let mut by_procs = HashMap::new();
        for job in jobs {
            by_procs.entry(job.procs).or_insert_with(|| request(job.procs));
        }
        Requests { by_procs }
    }

    fn of(&self, procs: u32) -> &ResourceRequest {
        &self.by_procs[&procs]
    }
}

/// `select=PROCS:ncpus=1`, free placement: the units may share or span nodes.
fn request(procs: u32) -> ResourceRequest {
    ResourceRequest {
        chunks: vec![Chunk { count: procs, ncpus: 1, mpiprocs: 1, ..Chunk::default() }],
        place: Placement::Free,
        exclusive: false,
        walltime: None,
        cput: None,
        first_ppn: 1,
        display: Default::default(),
    }
}

/// The simulated machine between passes.
struct Machine {
    nodes: Vec<NodeView>,
    /// Running jobs, as the scheduler sees them (moved into each pass's view and back).
    running: Vec<RunningJob>,
    /// Key -> position in `running`.
    position: HashMap<u64, usize>,
    /// Jobs running on each node (a node with any is `busy`).
    jobs_on: Vec<u32>,
    /// Actual ends: (time, start sequence, job index); the earliest first, ties in start order.
    ends: BinaryHeap<Reverse<(i64, u64, usize)>>,
    /// Waiting jobs in submission order.
    queue: Vec<usize>,
    /// Processor counts of the waiting jobs (count of each), for "could anything start?".
    queued_procs: BTreeMap<u32, usize>,
    /// Procs of each job (by index), filled as jobs arrive.
    procs: HashMap<usize, u32>,
    free: u64,
    policy: Policy,
    started: Vec<(usize, i64)>,
}

impl Machine {
    fn new(nodes: u32, ppn: u32, policy: Policy) -> Machine {
        let nodes: Vec<NodeView> = (0..nodes)
            .map(|index| NodeView {
                name: format!("node{}", index + 1),
                available: true,
                np: ppn,
                free_slots: (0..ppn).collect(),
                ..NodeView::default()
            })
            .collect();
        let count = nodes.len();
        Machine {
            nodes,
            running: Vec::new(),
            position: HashMap::new(),
            jobs_on: vec![0; count],
            ends: BinaryHeap::new(),
            queue: Vec::new(),
            queued_procs: BTreeMap::new(),
            procs: HashMap::new(),
            free: u64::from(ppn) * count as u64,
            policy,
            started: Vec::new(),
        }
    }

    fn enqueue(&mut self, index: usize, procs: u32) {
        self.queue.push(index);
        self.procs.insert(index, procs);
        *self.queued_procs.entry(procs).or_default() += 1;
    }

    /// Whether a pass could start anything: strict order needs the oldest job to fit; the
    /// others need some waiting job to fit in what is free (units of 1 cpu, free placement).
    fn worth_a_pass(&self) -> bool {
        let smallest = match self.policy {
            Policy::Fifo => self.queue.first().map(|index| self.procs[index]),
            Policy::Easy | Policy::Conservative => self.queued_procs.keys().next().copied(),
        };
        smallest.is_some_and(|procs| u64::from(procs) <= self.free)
    }

    /// The waiting jobs offered to one pass: all of them, except in strict order, where only
    /// the jobs that could start in a row plus the first that cannot matter.
    fn offered(&self) -> &[usize] {
        if self.policy != Policy::Fifo {
            return &self.queue;
        }
        let mut room = self.free;
        let mut count = 0;
        for index in &self.queue {
            count += 1;
            let procs = u64::from(self.procs[index]);
            if procs > room {
                break;
            }
            room -= procs;
        }
        &self.queue[..count]
    }

    /// One scheduling pass at `now`; starts what it decides.
    fn pass(&mut self, now: i64, jobs: &[SimJob], requests: &Requests) -> Result<(), EngineError> {
        let pending: Vec<PendingJob> = self
            .offered()
            .iter()
            .map(|&index| pending(index, &jobs[index], now, requests.of(jobs[index].procs)))
            .collect();
        let depth = match self.policy {
            Policy::Fifo => 0,
            Policy::Easy => 1,
            Policy::Conservative => u32::try_from(pending.len()).unwrap_or(u32::MAX),
        };
        let view = ClusterView {
            nodes: std::mem::take(&mut self.nodes),
            jobs: pending,
            running: std::mem::take(&mut self.running),
            now,
            backfill_depth: depth,
            strict: self.policy == Policy::Fifo,
            ..ClusterView::default()
        };
        let mut starts = crate::schedule(&view).starts;
        let offered_len = view.jobs.len();
        let offered_keys: Vec<u64> = view.jobs.iter().map(|job| job.key).collect();
        self.nodes = view.nodes;
        self.running = view.running;
        if self.policy == Policy::Fifo {
            // Strict order, whatever the pass did: only an unbroken run of the oldest jobs.
            let run = starts.iter().zip(&offered_keys).take_while(|(start, key)| start.key == **key).count();
            starts.truncate(run.min(offered_len));
        }
        let mut started: Vec<usize> = Vec::new();
        for decision in starts {
            let index = decision.key as usize;
            if !self.procs.contains_key(&index) || self.position.contains_key(&decision.key) {
                return Err(EngineError::Conflict(index));
            }
            self.start(index, &jobs[index], now, decision.assignments)?;
            started.push(index);
        }
        if !started.is_empty() {
            started.sort_unstable();
            self.queue.retain(|index| started.binary_search(index).is_err());
        }
        Ok(())
    }

    /// Takes the job's slots, records it running and schedules its end.
    fn start(&mut self, index: usize, job: &SimJob, now: i64, assignments: Vec<Assignment>) -> Result<(), EngineError> {
        let taken: usize = assignments.iter().map(|assignment| assignment.slots.len()).sum();
        if taken != job.procs as usize {
            return Err(EngineError::Conflict(index));
        }
        for assignment in &assignments {
            let node = self.nodes.get_mut(assignment.node).ok_or(EngineError::Conflict(index))?;
            if !take_slots(&mut node.free_slots, &assignment.slots) {
                return Err(EngineError::Conflict(index));
            }
            self.jobs_on[assignment.node] += 1;
            node.busy = true;
        }
        self.free -= u64::from(job.procs);
        let procs = self.procs[&index];
        if let Some(count) = self.queued_procs.get_mut(&procs) {
            *count -= 1;
            if *count == 0 {
                self.queued_procs.remove(&procs);
            }
        }
        let key = index as u64;
        self.position.insert(key, self.running.len());
        self.running.push(RunningJob {
            key,
            start: now,
            end: now + job.requested,
            assignments,
            ..RunningJob::default()
        });
        self.ends.push(Reverse((now + job.run, self.started.len() as u64, index)));
        self.started.push((index, now));
        Ok(())
    }

    /// Gives a finished job's slots back to its nodes.
    fn finish(&mut self, index: usize) {
        let key = index as u64;
        let Some(position) = self.position.remove(&key) else { return };
        let job = self.running.swap_remove(position);
        if let Some(moved) = self.running.get(position) {
            self.position.insert(moved.key, position);
        }
        for assignment in &job.assignments {
            let node = &mut self.nodes[assignment.node];
            node.free_slots.extend_from_slice(&assignment.slots);
            node.free_slots.sort_unstable();
            self.free += assignment.slots.len() as u64;
            self.jobs_on[assignment.node] -= 1;
            node.busy = self.jobs_on[assignment.node] > 0;
        }
        self.procs.remove(&index);
    }
}

/// The scheduler's view of a waiting job: submission order is its only priority.
fn pending<'a>(index: usize, job: &SimJob, now: i64, request: &'a ResourceRequest) -> PendingJob<'a> {
    PendingJob {
        key: index as u64,
        queue_priority: 0,
        priority: 0,
        order: index as u64,
        request,
        limits: &[],
        user: "",
        takes: &[],
        walltime: job.requested as u64,
        eligible_time: now - job.submit,
        fairshare: Default::default(),
        queue: usize::MAX,
        preemptor: false,
    }
}

/// Removes `slots` from the ascending list `free`; false (and `free` unchanged) when one of
/// them is not free.
fn take_slots(free: &mut Vec<u32>, slots: &[u32]) -> bool {
    let mut wanted = slots.to_vec();
    wanted.sort_unstable();
    if wanted.windows(2).any(|pair| pair[0] == pair[1]) || !wanted.iter().all(|slot| free.binary_search(slot).is_ok()) {
        return false;
    }
    free.retain(|slot| wanted.binary_search(slot).is_err());
    true
}
