//! Preemption and resumption, the first phase of a pass: resume suspended jobs whose resources
//! are free again, then let each queued preemptor that does not fit take the resources of
//! lower-queue running jobs (suspended or requeued, as each allows).
//!
//! Order (OpenPBS sorts by preemption level first, and preempted jobs first within a level):
//! preemptors in priority order (`order::priority_order`); before each, every suspended job of
//! a queue priority at least its own is resumed if all it holds is free, in the view's order
//! of `suspended` (the server lists them by when they were preempted, earliest first), so
//! preempted work comes back before anything of its level or below starts. A suspended job
//! that cannot resume yet keeps what of its resources is free (the main pass does not give it
//! away), so it resumes as soon as the jobs on the rest end.
//!
//! A preemptor that fits is started here. One that does not chooses victims as OpenPBS's
//! default `preempt_sort` (`min_time_since_start`) does: running jobs that may be preempted,
//! of a lower queue priority, with all their nodes up, lowest queue priority first, then the
//! most recently started first. It takes the shortest prefix of that list after which it fits,
//! then (OpenPBS: from the last chosen back) drops every victim it still fits without. A job
//! that does not fit even with every candidate gone preempts nothing.
//!
//! Owns: choosing victims and what the node views look like once they are gone.
//! Must not know: how the server suspends or requeues a job, accounting, comments.

mod nodes;

use crate::class::{Classes, Plan};
use crate::mps::place_mps;
use crate::place::place;
use crate::view::{Assignment, ClusterView, Decision, NodeView, PendingJob, Preemption};
use crate::work::{Work, WorkNode};
use nodes::Holders;

/// At most this many preemptors per pass look for victims (each look places the job a few
/// times over all nodes); later ones wait for the next pass. Bounds what a queue of many
/// preemptors that do not fit costs.
pub(crate) const MAX_PREEMPT_ATTEMPTS: usize = 16;

/// What the preemption phase decided, for the main pass to continue from.
#[derive(Debug, Default)]
pub(crate) struct PreemptPhase {
    /// The node views after resumes, preemptions and the preemptors' starts; `None`: the
    /// view's own are unchanged.
    pub nodes: Option<Vec<NodeView>>,
    /// Suspended jobs resumed now.
    pub resumes: Vec<u64>,
    /// Preemptors started now (their resources are out of `nodes`). The main pass must not
    /// consider these jobs again.
    pub starts: Vec<Decision>,
    /// Who was preempted, and for whom.
    pub preempted: Vec<Preemption>,
    /// `ClusterView::limits` after the starts above (`None`: unchanged).
    pub limits: Option<Vec<u32>>,
    /// `ClusterView::pools` after the starts above (`None`: unchanged).
    pub pools: Option<Vec<u64>>,
}

/// Runs the phase on `view`.
pub(crate) fn phase(view: &ClusterView) -> PreemptPhase {
    // Most passes have neither: no second sort of every queued job then.
    if view.suspended.is_empty() && !view.jobs.iter().any(|job| job.preemptor) {
        return PreemptPhase::default();
    }
    let preemptors: Vec<usize> =
        crate::order::priority_order(view).into_iter().filter(|&index| view.jobs[index].preemptor).collect();
    let mut run = Run {
        view,
        nodes: view.nodes.clone(),
        holders: Holders::new(&view.nodes, &view.running),
        limits: view.limits.clone(),
        pools: view.pools.clone(),
        gone: vec![false; view.running.len()],
        settled: vec![false; view.suspended.len()],
        attempts: 0,
        out: PreemptPhase::default(),
    };
    let mut next = 0;
    while next < preemptors.len() {
        run.resume_down_to(view.jobs[preemptors[next]].queue_priority);
        let (done, stopped) = run.start_fitting(&preemptors[next..]);
        next += done;
        if let Some(index) = stopped {
            run.preempt_for(&view.jobs[index]);
        }
    }
    run.resume_down_to(i32::MIN);
    let Run { nodes, limits, pools, mut out, .. } = run;
    out.nodes = Some(nodes);
    out.limits = Some(limits);
    out.pools = Some(pools);
    out
}

/// The phase as it goes.
struct Run<'v, 'a> {
    view: &'v ClusterView<'a>,
    nodes: Vec<NodeView>,
    holders: Holders,
    limits: Vec<u32>,
    pools: Vec<u64>,
    /// By index of `view.running`: preempted in this pass.
    gone: Vec<bool>,
    /// By index of `view.suspended`: resumed, or its free resources kept for it.
    settled: Vec<bool>,
    attempts: usize,
    out: PreemptPhase,
}

impl Run<'_, '_> {
    /// Resumes, in view order, every suspended job not yet settled whose queue priority is at
    /// least `priority` and whose resources are all free; the others keep what is free of theirs.
    fn resume_down_to(&mut self, priority: i32) {
        for (index, job) in self.view.suspended.iter().enumerate() {
            if self.settled[index] || job.queue_priority < priority {
                continue;
            }
            self.settled[index] = true;
            if nodes::all_free(&self.nodes, job) {
                nodes::take(&mut self.nodes, &mut self.holders, &job.assignments, job.exclusive);
                self.out.resumes.push(job.key);
            } else {
                let part = free_part(&self.nodes, &job.assignments);
                nodes::take(&mut self.nodes, &mut self.holders, &part, false);
            }
        }
    }

    /// Starts, in order, the preemptors of `order` (indices into `view.jobs`) that fit now,
    /// on one working copy of the nodes (so a long run of them costs one copy, not one each).
    /// Stops before one that needs a suspended job resumed first, and after one that does not
    /// fit while preemption attempts are left (returned: the caller looks for its victims).
    /// Returns how many of `order` it went through.
    fn start_fitting(&mut self, order: &[usize]) -> (usize, Option<usize>) {
        let view = self.view;
        let snapshot = self.nodes.clone();
        let mut work = Work::new(snapshot.iter().map(WorkNode::from_view).collect());
        let mut classes = Classes::default();
        for (done, &index) in order.iter().enumerate() {
            let job = &view.jobs[index];
            if done > 0 && self.resume_due(job.queue_priority) {
                return (done, None);
            }
            if !within_budget(job, &self.limits, &self.pools) {
                continue;
            }
            let class = classes.class_of(job.request, &mut work);
            let placed = match job.request.mps_share() {
                Some(percent) => place_mps(job.request, job.user, percent, &mut work),
                None if classes.failed(class) => None,
                None => place(classes.plan(class), &mut work),
            };
            match placed {
                Some(assignments) => self.start(job, assignments),
                None => {
                    if job.request.mps_share().is_none() {
                        classes.mark_failed(class);
                    }
                    if self.attempts < MAX_PREEMPT_ATTEMPTS {
                        return (done + 1, Some(index));
                    }
                }
            }
        }
        (order.len(), None)
    }

    /// Whether a suspended job not yet settled has a queue priority of at least `priority`.
    fn resume_due(&self, priority: i32) -> bool {
        self.view.suspended.iter().zip(&self.settled).any(|(job, &settled)| !settled && job.queue_priority >= priority)
    }

    /// Preempts what `job` (which does not fit now) needs, if that makes it fit, and starts it.
    fn preempt_for(&mut self, job: &PendingJob) {
        self.attempts += 1;
        let Some(victims) = self.choose_victims(job) else { return };
        for &victim in &victims {
            let running = &self.view.running[victim];
            self.gone[victim] = true;
            nodes::give_back(&mut self.nodes, &mut self.holders, running);
            // `candidates` kept only jobs with a way to be preempted.
            let how = running.preempt.expect("a candidate may be preempted");
            self.out.preempted.push(Preemption { key: running.key, how, by: job.key });
        }
        let assignments = try_place(&self.nodes, job).expect("the victims were chosen so that it fits");
        self.start(job, assignments);
    }

    fn start(&mut self, job: &PendingJob, assignments: Vec<Assignment>) {
        for &limit in job.limits {
            self.limits[limit] -= 1;
        }
        for &(pool, amount) in job.takes {
            self.pools[pool] -= amount;
        }
        nodes::take(&mut self.nodes, &mut self.holders, &assignments, job.request.exclusive);
        self.out.starts.push(Decision { key: job.key, assignments });
    }

    /// The victims (indices into `view.running`) whose going makes `job` fit, or `None`.
    fn choose_victims(&self, job: &PendingJob) -> Option<Vec<usize>> {
        let candidates = self.candidates(job);
        let fits_without = |chosen: &[usize]| {
            let mut nodes = self.nodes.clone();
            let mut holders = self.holders.clone();
            for &victim in chosen {
                nodes::give_back(&mut nodes, &mut holders, &self.view.running[victim]);
            }
            try_place(&nodes, job).is_some()
        };
        if candidates.is_empty() || !fits_without(&candidates) {
            return None;
        }
        // The shortest prefix after which it fits (more gone never leaves less free).
        let (mut low, mut high) = (1, candidates.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if fits_without(&candidates[..middle]) {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        let mut chosen = candidates[..high].to_vec();
        // From the last chosen back: keep only those it cannot do without.
        for at in (0..chosen.len().saturating_sub(1)).rev() {
            let mut without = chosen.clone();
            without.remove(at);
            if fits_without(&without) {
                chosen = without;
            }
        }
        Some(chosen)
    }

    /// Running jobs `job` may preempt, in the order they are taken: lowest queue priority
    /// first, then the most recently started, then the view's order.
    fn candidates(&self, job: &PendingJob) -> Vec<usize> {
        let mut candidates: Vec<usize> = (0..self.view.running.len())
            .filter(|&index| {
                let running = &self.view.running[index];
                !self.gone[index]
                    && running.preempt.is_some()
                    && running.queue_priority < job.queue_priority
                    && !running.assignments.is_empty()
                    && running
                        .assignments
                        .iter()
                        .all(|assignment| self.nodes.get(assignment.node).is_some_and(|node| node.available))
            })
            .collect();
        let running = &self.view.running;
        candidates
            .sort_by_key(|&index| (running[index].queue_priority, std::cmp::Reverse(running[index].start), index));
        candidates
    }
}

/// What of `assignments` is free on `nodes` now (slots, GPUs, memory and amounts each as far
/// as free), as assignments to take.
fn free_part(nodes: &[NodeView], assignments: &[Assignment]) -> Vec<Assignment> {
    let part_of = |assignment: &Assignment| {
        let node = nodes.get(assignment.node)?;
        let amounts = assignment
            .amounts
            .iter()
            .filter_map(|(name, amount)| {
                let site = node.amounts.iter().find(|site| &site.name == name)?;
                Some((name.clone(), (*amount).min(site.available.saturating_sub(site.assigned))))
            })
            .collect();
        Some(Assignment {
            node: assignment.node,
            slots: assignment.slots.iter().copied().filter(|slot| node.free_slots.contains(slot)).collect(),
            gpus: assignment.gpus.iter().copied().filter(|gpu| node.free_gpus.contains(gpu)).collect(),
            mem: assignment.mem.min(node.mem_free),
            amounts,
            ..Assignment::default()
        })
    };
    assignments.iter().filter_map(part_of).collect()
}

/// Whether every run-limit counter `job` names has room left and every pool it takes from
/// holds its amount (two takes from one pool added up; an index past the end holds nothing),
/// as the main pass requires. Preempting frees no counter or pool: a preemptor held back by
/// one preempts nothing.
fn within_budget(job: &PendingJob, limits: &[u32], pools: &[u64]) -> bool {
    let limits_ok = job.limits.iter().all(|&limit| limits.get(limit).is_some_and(|&left| left > 0));
    let pools_ok = job.takes.iter().all(|&(pool, _)| {
        let wanted = job
            .takes
            .iter()
            .filter(|(other, _)| *other == pool)
            .try_fold(0u64, |sum, (_, amount)| sum.checked_add(*amount));
        wanted.is_some_and(|wanted| pools.get(pool).is_some_and(|&left| left >= wanted))
    });
    limits_ok && pools_ok
}

/// Where `job` would be placed on `nodes` now, as the main pass places it.
fn try_place(nodes: &[NodeView], job: &PendingJob) -> Option<Vec<Assignment>> {
    let mut work = Work::new(nodes.iter().map(WorkNode::from_view).collect());
    match job.request.mps_share() {
        Some(percent) => place_mps(job.request, job.user, percent, &mut work),
        None => {
            let plan = Plan::new(job.request, &mut work);
            place(&plan, &mut work)
        }
    }
}
