//! One scheduling pass: order the queued jobs, start what fits now unless it would delay a
//! reservation, and give the top jobs that cannot start a reservation (backfill).
//!
//! Owns: the policy: priority order, first fit now, skipping failed request classes, wait
//! reasons, which jobs are top jobs (`backfill_depth`, per queue or server), strict order.
//! Must not know: the clock, I/O, how the server applies decisions or words the reasons.
//!
//! The time profile and the backfill rule are `plan`'s; placement now is `place`/`mps` on
//! `work`; why a class does not fit is `reason`'s. With `backfill_depth` 0 and no queue
//! depth nothing is planned: the greedy pass of old, plus wait reasons.
//!
//! Shortcuts, each erring towards waiting (never towards delaying a reservation): a job that
//! would delay a reservation makes later jobs of its class with at least its walltime wait
//! too; a class no reservation could be found for is not searched again for longer jobs; an
//! MPS share that would delay a reservation on its node is not tried elsewhere.

use std::collections::HashSet;

use crate::class::Classes;
use crate::mps::{mps_node, mps_takes_free_gpu, place_mps};
use crate::place::try_place;
use crate::plan::{Res, Timeline};
use crate::reason::why_not;
use crate::view::{
    Assignment, ClusterView, Decision, Estimate, EstimatedHost, NodeView, Outcome, PendingJob, Wait, WaitReason,
};
use crate::work::{Work, WorkNode};

/// How many nodes a job that would delay a reservation may have closed to it before it waits
/// (each round closes the nodes it would delay and places it again).
const REPLACEMENTS: usize = 8;

/// The policy: which queued jobs to start now and where, and why the others wait.
///
/// Jobs are taken in priority order (`order::priority_order`). A job whose run-limit counters
/// ([`ClusterView::limits`]) are exhausted, or that asks more of a server-level pool than is
/// left ([`ClusterView::pools`]), waits (`Limit`, `Pool`). Otherwise it is placed first fit
/// on what is free now; a job that does not fit waits with the resource that is short, and so
/// does every later job with an identical request (same chunks, placement and exclusivity),
/// since free resources only shrink during a pass. A job that fits starts unless it would
/// delay a reservation (`Backfill`; then later jobs of its request class with at least its
/// walltime wait too). The first `backfill_depth` jobs that cannot start (not held by a limit
/// or pool, not `Never`; a queue with its own depth counts its jobs apart) get a reservation:
/// the earliest time their request fits (`plan`), shown as their estimate. In strict order
/// the first job that cannot start (except `Never`) stops every later one (`StrictOrder`).
/// Deterministic: the same view gives the same outcome.
pub fn schedule(view: &ClusterView) -> Outcome {
    let phase = crate::preempt::phase(view);
    let nodes = phase.nodes.as_ref().unwrap_or(&view.nodes);
    let started: HashSet<u64> = phase.starts.iter().map(|decision| decision.key).collect();
    let preempted: HashSet<u64> = phase.preempted.iter().map(|preemption| preemption.key).collect();
    let mut pass = Pass::new(view, nodes, &preempted);
    // The phase's starts used up their limits and pools.
    if let Some(limits) = &phase.limits {
        pass.limits.clone_from(limits);
    }
    if let Some(pools) = &phase.pools {
        pass.pools.clone_from(pools);
    }
    if let Some(timeline) = &mut pass.timeline {
        add_phase(timeline, view, &phase.starts, &phase.resumes);
    }
    for index in crate::order::priority_order(view) {
        if view.max_starts.is_some_and(|max| phase.starts.len() + pass.starts.len() >= max) {
            break;
        }
        // (Most passes start nothing in the phase: no hash per job then.)
        if started.is_empty() || !started.contains(&view.jobs[index].key) {
            pass.consider(index);
        }
    }
    Outcome {
        starts: phase.starts.into_iter().chain(pass.starts).collect(),
        resumes: phase.resumes,
        preempted: phase.preempted,
        waits: pass.waits,
    }
}

/// The profile learns that the phase's starts and resumes hold their nodes until their ends
/// (their resources are already out of the phase's node views).
fn add_phase(timeline: &mut Timeline, view: &ClusterView, starts: &[Decision], resumes: &[u64]) {
    for decision in starts {
        if let Some(job) = view.jobs.iter().find(|job| job.key == decision.key) {
            let end = timeline.end_of(job.walltime);
            // An MPS share's GPU is not counted as coming back (it may have joined a shared one).
            timeline.hold_until(&decision.assignments, end, job.request.exclusive, false);
        }
    }
    for job in view.suspended.iter().filter(|job| resumes.contains(&job.key)) {
        timeline.hold_until(&job.assignments, job.expected_end(view.now), job.exclusive, false);
    }
}

/// The state of one pass.
struct Pass<'v> {
    view: &'v ClusterView<'v>,
    nodes: &'v [NodeView],
    work: Work<'v>,
    classes: Classes<'v>,
    /// The class of each job of the view.
    class_of: Vec<usize>,
    /// Per class: why it does not fit now, once known.
    reasons: Vec<Option<WaitReason>>,
    /// Per class: the smallest walltime that would have delayed a reservation.
    conflicting: Vec<u64>,
    /// Per class: the smallest walltime no reservation could be found for (a longer job of
    /// the class cannot fit either, and the profile only fills up during a pass).
    unplannable: Vec<u64>,
    limits: Vec<u32>,
    pools: Vec<u64>,
    /// `None`: nothing is planned (depth 0 everywhere).
    timeline: Option<Timeline<'v>>,
    /// Reservations made, for the server's depth and per queue with its own depth.
    reserved: u32,
    queue_reserved: Vec<u32>,
    /// Strict order: a job could not start, nothing later may.
    blocked: bool,
    starts: Vec<Decision>,
    waits: Vec<Wait>,
}

impl<'v> Pass<'v> {
    /// The pass over `nodes` (the views after the preemption phase), planning (when a depth
    /// asks for it) with the running jobs that were not just `preempted`.
    fn new(view: &'v ClusterView<'v>, nodes: &'v [NodeView], preempted: &HashSet<u64>) -> Pass<'v> {
        let mut work = Work::new(nodes.iter().map(WorkNode::from_view).collect());
        let mut classes = Classes::default();
        // Classified in view order, which is the order the caller allocated the requests in
        // most of the time: reading 100,000 requests in priority order costs cache misses.
        let class_of: Vec<usize> = view.jobs.iter().map(|job| classes.class_of(job.request, &mut work)).collect();
        let count = class_of.iter().max().map_or(0, |&last| last + 1);
        let plans = view.backfill_depth > 0 || view.queue_depths.iter().any(|depth| depth.is_some_and(|d| d > 0));
        let running = view.running.iter().filter(|job| !preempted.contains(&job.key));
        Pass {
            view,
            nodes,
            work,
            classes,
            class_of,
            reasons: vec![None; count],
            conflicting: vec![u64::MAX; count],
            unplannable: vec![u64::MAX; count],
            limits: view.limits.clone(),
            pools: view.pools.clone(),
            timeline: plans.then(|| Timeline::new(view.now, nodes, running)),
            reserved: 0,
            queue_reserved: vec![0; view.queue_depths.len()],
            blocked: false,
            starts: Vec::new(),
            waits: Vec::with_capacity(view.jobs.len()),
        }
    }

    /// Starts job `index` or records why it waits (and its reservation, for a top job).
    fn consider(&mut self, index: usize) {
        let view = self.view;
        let job = &view.jobs[index];
        let reason = if self.blocked { Some(WaitReason::StrictOrder) } else { self.try_start(job, index) };
        let Some(reason) = reason else { return };
        let top = matches!(reason, WaitReason::Resource(_) | WaitReason::Backfill | WaitReason::StrictOrder);
        let estimate = if top { self.reserve(job, self.class_of[index]) } else { None };
        if self.view.strict && reason != WaitReason::Never {
            self.blocked = true;
        }
        self.waits.push(Wait { key: job.key, reason, estimate });
    }

    /// Starts the job now if it may; else why not.
    fn try_start(&mut self, job: &PendingJob<'v>, index: usize) -> Option<WaitReason> {
        let class = self.class_of[index];
        // No steps: no chunk with a count (an MPS share too has one chunk of count 1).
        if self.classes.plan(class).steps.is_empty() {
            return Some(WaitReason::Never);
        }
        if let Some(&limit) = job.limits.iter().find(|&&limit| self.limits.get(limit).is_none_or(|&left| left == 0)) {
            return Some(WaitReason::Limit(limit));
        }
        if let Some(pool) = short_pool(job.takes, &self.pools) {
            return Some(WaitReason::Pool(pool));
        }
        if self.classes.failed(class) {
            return self.reasons[class].clone();
        }
        if job.walltime >= self.conflicting[class] {
            return Some(WaitReason::Backfill);
        }
        match job.request.mps_share() {
            Some(percent) => self.start_mps(job, class, percent),
            None => self.start_plan(job, class),
        }
    }

    /// Places the job first fit now. When the nodes chosen would delay a reservation, they are
    /// closed to it and it is placed again, up to `REPLACEMENTS` times (a free node further on
    /// may hold it without delaying anything); then it waits (`Backfill`).
    fn start_plan(&mut self, job: &PendingJob<'v>, class: usize) -> Option<WaitReason> {
        let exclusive = self.classes.plan(class).exclusive;
        let mut closed: Vec<usize> = Vec::new();
        let reason = loop {
            if !try_place(self.classes.plan(class), &mut self.work) {
                if !closed.is_empty() {
                    break Some(WaitReason::Backfill);
                }
                self.classes.mark_failed(class);
                let reason = why_not(self.classes.plan(class), &mut self.work);
                self.reasons[class] = Some(reason.clone());
                break Some(reason);
            }
            let taken: Vec<(usize, Res)> = self
                .work
                .pending()
                .iter()
                .map(|assignment| (assignment.node, Res::of(assignment, &self.nodes[assignment.node], false)))
                .collect();
            let delayed = self.delayed_by(&taken, job.walltime, exclusive);
            if delayed.is_empty() {
                let assignments = self.work.commit(exclusive);
                self.started(job, assignments, false);
                break None;
            }
            self.work.rollback();
            if closed.len() >= REPLACEMENTS {
                break Some(WaitReason::Backfill);
            }
            for node in delayed {
                self.work.set_usable(node, false);
                closed.push(node);
            }
        };
        for node in closed {
            self.work.set_usable(node, true);
        }
        if reason == Some(WaitReason::Backfill) {
            self.conflicting[class] = self.conflicting[class].min(job.walltime);
        }
        reason
    }

    /// An MPS share (never marks its class failed: shares of different users differ).
    fn start_mps(&mut self, job: &PendingJob<'v>, class: usize, percent: u8) -> Option<WaitReason> {
        let Some(node) = mps_node(job.request, job.user, percent, &self.work) else {
            return Some(self.class_reason(class));
        };
        let whole = mps_takes_free_gpu(&self.work, node, job.user, percent);
        let chunk = &job.request.chunks[0];
        let cpus = i64::from(chunk.ncpus);
        let res = Res::taking(&self.nodes[node], cpus, i64::from(whole), chunk.mem.unwrap_or(0), &chunk.amounts);
        if !self.delayed_by(&[(node, res)], job.walltime, job.request.exclusive).is_empty() {
            return Some(WaitReason::Backfill);
        }
        match place_mps(job.request, job.user, percent, &mut self.work) {
            Some(assignments) => {
                self.started(job, assignments, whole);
                None
            }
            None => Some(self.class_reason(class)),
        }
    }

    /// Why class `class` does not fit now, computed once.
    fn class_reason(&mut self, class: usize) -> WaitReason {
        if let Some(reason) = &self.reasons[class] {
            return reason.clone();
        }
        let reason = why_not(self.classes.plan(class), &mut self.work);
        self.reasons[class] = Some(reason.clone());
        reason
    }

    /// The nodes of `taken` where a job running `walltime` from now would delay a reservation.
    fn delayed_by(&self, taken: &[(usize, Res)], walltime: u64, exclusive: bool) -> Vec<usize> {
        match &self.timeline {
            Some(timeline) if timeline.has_reservations() => {
                timeline.conflicts(taken, timeline.end_of(walltime), exclusive)
            }
            _ => Vec::new(),
        }
    }

    fn started(&mut self, job: &PendingJob<'v>, assignments: Vec<Assignment>, mps_gpu: bool) {
        for &limit in job.limits {
            self.limits[limit] -= 1;
        }
        // `short_pool` checked each amount against what is left: no underflow.
        for &(pool, amount) in job.takes {
            self.pools[pool] -= amount;
        }
        if let Some(timeline) = &mut self.timeline {
            let end = timeline.end_of(job.walltime);
            timeline.start(&assignments, end, job.request.exclusive, mps_gpu);
        }
        self.starts.push(Decision { key: job.key, assignments });
    }

    /// A reservation for a top job, if its depth has room and the profile has a time.
    fn reserve(&mut self, job: &PendingJob<'v>, class: usize) -> Option<Estimate> {
        let timeline = self.timeline.as_mut()?;
        if job.walltime >= self.unplannable[class] {
            return None;
        }
        let own = self.view.queue_depths.get(job.queue).copied().flatten();
        let (made, depth) = match own {
            Some(depth) => (&mut self.queue_reserved[job.queue], depth),
            None => (&mut self.reserved, self.view.backfill_depth),
        };
        if *made >= depth {
            return None;
        }
        let Some(found) = timeline.earliest(job.request, job.walltime) else {
            self.unplannable[class] = job.walltime;
            return None;
        };
        *made += 1;
        let length = i64::try_from(job.walltime).unwrap_or(i64::MAX).max(1);
        timeline.reserve(found.start, found.start.saturating_add(length), &found.assignments, job.request.exclusive);
        let hosts = found
            .assignments
            .iter()
            .map(|assignment| EstimatedHost {
                node: assignment.node,
                ncpus: assignment.slots.len() as u32,
                ngpus: assignment.gpus.len() as u32,
                mem: assignment.mem,
            })
            .collect();
        Some(Estimate { start: found.start, hosts })
    }
}

/// The first pool a job takes from that holds less than its amount (an index past the end
/// holds none). Two entries naming one pool are added up (checked: a sum past `u64` never
/// fits).
fn short_pool(takes: &[(usize, u64)], pools: &[u64]) -> Option<usize> {
    takes.iter().map(|&(pool, _)| pool).find(|&pool| {
        let wanted = takes
            .iter()
            .filter(|(other, _)| *other == pool)
            .try_fold(0u64, |sum, (_, amount)| sum.checked_add(*amount));
        wanted.is_none_or(|wanted| pools.get(pool).is_none_or(|&left| left < wanted))
    })
}
