//! The time profile of a pass: what each node holds free from `now` on, given when running
//! jobs end (their `expected_end`), the jobs started in this pass (until `now + walltime`) and
//! the reservations made so far (each holding its nodes over `[start, start + walltime)`).
//!
//! Owns: the profile (`Timeline`), a node's free resources over a window, the backfill rule
//! (`Timeline::conflicts`: a start now must leave every overlapping reservation its resources,
//! node by node) and, in `search`, the earliest start of a request.
//! Must not know: priorities, limits, wait reasons, the clock (`now` is the view's).
//!
//! Approximations, all on the safe side (a plan may be later than it could be, never earlier):
//! resources coming back inside a window are not counted before its end; what reservations
//! hold over a window is the component-wise maximum of what they hold at each of its starts;
//! a node busy or held exclusively by a job the view does not list stays so. An MPS share is
//! planned as a whole GPU (its cpus and memory as asked); a GPU shared through MPS comes back
//! when the last listed share on it ends (a share that took a free GPU in this pass: at its
//! own end, even if a later share of the same user joined it).

mod res;
mod search;

#[cfg(test)]
pub(crate) use search::MAX_TRIALS;

use std::collections::{BTreeMap, HashMap};

use crate::view::{Assignment, NodeView, RunningJob};
pub(crate) use res::Res;
use res::Totals;

/// What one reservation holds on one node.
#[derive(Debug, Clone)]
struct Held {
    from: i64,
    to: i64,
    res: Res,
    /// The reservation is exclusive: the node must be idle over the window.
    exclusive: bool,
}

/// A node over a window, as a plan sees it.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub res: Res,
    /// Up and not held exclusively by anyone over the window.
    pub usable: bool,
    /// Nothing runs or is planned there over the window.
    pub idle: bool,
}

/// The profile. `base` is what is free now (after the starts of this pass); everything else
/// changes it at a time.
#[derive(Debug)]
pub(crate) struct Timeline<'v> {
    now: i64,
    nodes: &'v [NodeView],
    base: Vec<Res>,
    /// Per node: (time, what comes back then).
    releases: Vec<Vec<(i64, Res)>>,
    /// Per node: when the last job there ends (`i64::MIN`: none; `i64::MAX`: not known).
    busy_until: Vec<i64>,
    /// Per node: when the last exclusive job there ends (same conventions).
    exclusive_until: Vec<i64>,
    /// Per node: what reservations hold there.
    held: Vec<Vec<Held>>,
    /// Over available nodes: what is free now, and what comes back at each time.
    base_total: Totals,
    release_totals: BTreeMap<i64, Totals>,
    /// Over all reservations: what they start holding (positive) or give back (negative) at
    /// each time, summed.
    held_totals: BTreeMap<i64, Totals>,
}

impl<'v> Timeline<'v> {
    /// The profile at `now` over `nodes` (free resources as listed) with `running` jobs
    /// holding what their assignments name until their expected end.
    pub fn new<'r>(now: i64, nodes: &'v [NodeView], running: impl Iterator<Item = &'r RunningJob>) -> Timeline<'v> {
        let mut timeline = Timeline {
            now,
            nodes,
            base: nodes.iter().map(Res::free_now).collect(),
            releases: vec![Vec::new(); nodes.len()],
            busy_until: nodes.iter().map(|node| if node.busy { i64::MAX } else { i64::MIN }).collect(),
            exclusive_until: nodes.iter().map(|node| if node.exclusive { i64::MAX } else { i64::MIN }).collect(),
            held: vec![Vec::new(); nodes.len()],
            base_total: Totals::default(),
            release_totals: BTreeMap::new(),
            held_totals: BTreeMap::new(),
        };
        for (node, free) in nodes.iter().zip(&timeline.base) {
            if node.available {
                timeline.base_total.add(free.totals());
            }
        }
        timeline.add_running(running);
        timeline
    }

    /// Adds the releases of running jobs, and bounds the busy and exclusive marks of the
    /// nodes they use by their ends.
    fn add_running<'r>(&mut self, running: impl Iterator<Item = &'r RunningJob>) {
        let mut last_end: HashMap<usize, (i64, i64)> = HashMap::new();
        let mut mps_end: HashMap<(usize, u32), i64> = HashMap::new();
        for job in running {
            let end = job.expected_end(self.now);
            for assignment in job.assignments.iter().filter(|assignment| assignment.node < self.nodes.len()) {
                let node = assignment.node;
                let ends = last_end.entry(node).or_insert((i64::MIN, i64::MIN));
                ends.0 = ends.0.max(end);
                if job.exclusive {
                    ends.1 = ends.1.max(end);
                }
                if assignment.mps.is_some() {
                    for &gpu in &assignment.gpus {
                        let last = mps_end.entry((node, gpu)).or_insert(end);
                        *last = (*last).max(end);
                    }
                }
                self.release(node, end, Res::of(assignment, &self.nodes[node], false));
            }
        }
        for (node, (busy, exclusive)) in last_end {
            if self.nodes[node].busy {
                self.busy_until[node] = busy;
            }
            if self.nodes[node].exclusive && exclusive != i64::MIN {
                self.exclusive_until[node] = exclusive;
            }
        }
        for (node, view) in self.nodes.iter().enumerate() {
            for gpu in &view.mps_gpus {
                if let Some(&end) = mps_end.get(&(node, gpu.index)) {
                    self.release(node, end, Res { gpus: 1, ..Res::zero(view.amounts.len()) });
                }
            }
        }
    }

    fn release(&mut self, node: usize, time: i64, res: Res) {
        if self.nodes[node].available {
            self.release_totals.entry(time).or_default().add(res.totals());
        }
        self.releases[node].push((time, res));
    }

    /// The time a job started now with `walltime` seconds is planned to end (at least one
    /// second from now, as a running job past its end).
    pub fn end_of(&self, walltime: u64) -> i64 {
        self.now.saturating_add(i64::try_from(walltime).unwrap_or(i64::MAX)).max(self.now.saturating_add(1))
    }

    /// A job starts now with these assignments and runs until `end`. `mps_gpu`: its MPS
    /// share took a whole free GPU.
    pub fn start(&mut self, assignments: &[Assignment], end: i64, exclusive: bool, mps_gpu: bool) {
        for assignment in assignments {
            let node = assignment.node;
            let res = Res::of(assignment, &self.nodes[node], mps_gpu);
            self.base[node].sub(&res);
            if self.nodes[node].available {
                self.base_total.sub(res.totals());
            }
        }
        self.hold_until(assignments, end, exclusive, mps_gpu);
    }

    /// A job whose resources are already out of the node views holds them until `end`.
    pub fn hold_until(&mut self, assignments: &[Assignment], end: i64, exclusive: bool, mps_gpu: bool) {
        for assignment in assignments.iter().filter(|assignment| assignment.node < self.nodes.len()) {
            let node = assignment.node;
            self.release(node, end, Res::of(assignment, &self.nodes[node], mps_gpu));
            self.busy_until[node] = self.busy_until[node].max(end);
            if exclusive {
                self.exclusive_until[node] = self.exclusive_until[node].max(end);
            }
        }
    }

    /// Holds `assignments` over `[from, to)` for a reservation.
    pub fn reserve(&mut self, from: i64, to: i64, assignments: &[Assignment], exclusive: bool) {
        let mut total = Totals::default();
        for assignment in assignments {
            let res = Res::of(assignment, &self.nodes[assignment.node], false);
            total.add(res.totals());
            self.held[assignment.node].push(Held { from, to, res, exclusive });
        }
        self.held_totals.entry(from).or_default().add(total);
        self.held_totals.entry(to).or_default().sub(total);
    }

    /// Whether any reservation exists (else nothing can conflict).
    pub fn has_reservations(&self) -> bool {
        !self.held_totals.is_empty()
    }

    /// The nodes where a job taking `taken` (per node) from now until `end` would delay a
    /// reservation: a reservation there starting before `end` is exclusive (or the job is), or
    /// what is free there over the reservation's window, minus what the job takes, is
    /// overdrawn. Empty: the job delays nothing.
    pub fn conflicts(&self, taken: &[(usize, Res)], end: i64, exclusive: bool) -> Vec<usize> {
        let delays = |node: usize, res: &Res| {
            self.held[node].iter().filter(|held| held.from < end).any(|held| {
                if held.exclusive || exclusive {
                    return true;
                }
                let mut left = self.window(node, held.from, held.to).res;
                left.sub(res);
                left.overdrawn()
            })
        };
        taken.iter().filter(|(node, res)| delays(*node, res)).map(|(node, _)| *node).collect()
    }

    /// What `node` surely has free over all of `[from, to)` (`from` at least `now`).
    pub fn window(&self, node: usize, from: i64, to: i64) -> Window {
        let mut res = self.base[node].clone();
        for (time, back) in &self.releases[node] {
            if *time <= from {
                res.add(back);
            }
        }
        let held = &self.held[node];
        let overlapping = || held.iter().filter(|held| held.from < to && held.to > from);
        res.sub(&most_held(overlapping(), from, res.amounts.len()));
        let view = &self.nodes[node];
        Window {
            res,
            usable: view.available && self.exclusive_until[node] <= from && !overlapping().any(|held| held.exclusive),
            idle: self.busy_until[node] <= from && overlapping().next().is_none(),
        }
    }
}

/// The component-wise maximum, over the times of a window starting at `from`, of what the
/// `holds` (those overlapping the window) hold at once: a sweep over their starts and ends
/// (an end before a start at the same time), O(k log k) for k holds.
fn most_held<'h>(holds: impl Iterator<Item = &'h Held>, from: i64, amounts: usize) -> Res {
    let mut events: Vec<(i64, bool, &Res)> = Vec::new();
    for held in holds {
        events.push((held.from.max(from), true, &held.res));
        events.push((held.to, false, &held.res));
    }
    events.sort_unstable_by_key(|&(time, starts, _)| (time, starts));
    let mut now = Res::zero(amounts);
    let mut most = Res::zero(amounts);
    for (index, &(time, starts, res)) in events.iter().enumerate() {
        if starts {
            now.add(res);
        } else {
            now.sub(res);
        }
        let last_at_time = events.get(index + 1).is_none_or(|&(next, _, _)| next != time);
        if last_at_time {
            most.max_with(&now);
        }
    }
    most
}
