//! `Work`: the scheduler's private working copy of free resources during one pass, and the
//! transaction that places one job on it (take units, then commit or roll back).
//!
//! Owns: free slot/GPU/memory/consumable-amount bookkeeping per node, the busy/exclusive marks a pass adds, and
//! keeping every node set's `CapacityTree` in step with those changes.
//! Must not know: job priorities, request classes or placement rules (see `place`).

use crate::captree::{Capacity, Need};
pub(crate) mod nodeset;

use crate::view::{Assignment, MpsGpu, NodeView};
use nodeset::NodeSets;

/// Free indices of one kind (cpu slots or GPUs) on one node. Indices are handed out from the
/// front, lowest first, so rolling back only moves `next` back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pool<'a> {
    /// The free indices, ascending; `None` means `0..len` (an empty node in `can_ever_run`).
    listed: Option<&'a [u32]>,
    len: usize,
    /// Invariant: indices before `next` are taken in this pass.
    next: usize,
}

impl<'a> Pool<'a> {
    /// The free indices listed by the view.
    pub fn listed(free: &'a [u32]) -> Pool<'a> {
        Pool { listed: Some(free), len: free.len(), next: 0 }
    }

    /// All of `0..count` free.
    pub fn all(count: u32) -> Pool<'a> {
        Pool { listed: None, len: count as usize, next: 0 }
    }

    /// How many indices are still free.
    pub fn free(&self) -> usize {
        self.len - self.next
    }

    /// Moves the lowest `count` free indices into `out`. The caller has checked `free()`.
    fn take(&mut self, count: usize, out: &mut Vec<u32>) {
        let end = self.next + count;
        match self.listed {
            Some(free) => out.extend_from_slice(&free[self.next..end]),
            // `end <= len`, which came from a u32, so the casts are lossless.
            None => out.extend(self.next as u32..end as u32),
        }
        self.next = end;
    }
}

/// One node in the working copy.
#[derive(Debug, Clone)]
pub(crate) struct WorkNode<'a> {
    pub name: &'a str,
    pub properties: &'a [String],
    /// Up, not offline, not held by an exclusive job.
    pub usable: bool,
    /// No job runs here (an exclusive request may use it).
    pub idle: bool,
    pub slots: Pool<'a>,
    pub gpus: Pool<'a>,
    pub mem_free: u64,
    /// GPUs shared through MPS (working copy: shares placed in this pass are added).
    pub mps: Vec<MpsGpu>,
    /// Free amounts of consumable site resources, by name (a name not listed has none).
    pub amounts: Vec<(&'a str, u64)>,
    /// Index of this node's entry in the open transaction's assignments, or `NO_ENTRY`.
    entry: u32,
    /// The node sets this node belongs to, as `(set, position in the set)`.
    pub memberships: Vec<(u32, u32)>,
}

const NO_ENTRY: u32 = u32::MAX;

impl<'a> WorkNode<'a> {
    /// The node as the view describes it.
    pub fn from_view(node: &'a NodeView) -> WorkNode<'a> {
        WorkNode {
            name: &node.name,
            properties: &node.properties,
            usable: node.available && !node.exclusive,
            idle: !node.busy,
            slots: Pool::listed(&node.free_slots),
            gpus: Pool::listed(&node.free_gpus),
            mem_free: node.mem_free,
            mps: node.mps_gpus.clone(),
            amounts: node
                .amounts
                .iter()
                .map(|site| (site.name.as_str(), site.available.saturating_sub(site.assigned)))
                .collect(),
            entry: NO_ENTRY,
            memberships: Vec::new(),
        }
    }

    /// The node up and with nothing running on it.
    pub fn empty(node: &'a NodeView) -> WorkNode<'a> {
        WorkNode {
            usable: true,
            idle: true,
            slots: Pool::all(node.np),
            gpus: Pool::all(node.ngpus),
            mem_free: node.mem_total,
            mps: Vec::new(),
            amounts: node.amounts.iter().map(|site| (site.name.as_str(), site.available)).collect(),
            ..WorkNode::from_view(node)
        }
    }

    /// The node as a plan sees it at some future time: `cpus` and `gpus` free (counted from
    /// 0: which indices will be free is not known), `mem` and `amounts` free.
    pub fn planned(node: &'a NodeView, free: Planned<'a>) -> WorkNode<'a> {
        WorkNode {
            name: &node.name,
            properties: &node.properties,
            usable: free.usable,
            idle: free.idle,
            slots: Pool::all(free.cpus),
            gpus: Pool::all(free.gpus),
            mem_free: free.mem,
            mps: Vec::new(),
            amounts: free.amounts,
            entry: NO_ENTRY,
            memberships: Vec::new(),
        }
    }

    /// How much of consumable `name` is free here (0 when the node has none of it).
    pub fn amount_free(&self, name: &str) -> u64 {
        self.amounts.iter().find(|(have, _)| *have == name).map_or(0, |&(_, free)| free)
    }

    /// Whether one unit asking for `amounts` of consumable site resources fits here now.
    pub fn holds(&self, amounts: &[(String, u64)]) -> bool {
        amounts.iter().all(|(name, each)| self.amount_free(name) >= *each)
    }

    /// What one more unit could get here. A node already used by the scatter job being placed
    /// counts as unusable.
    fn capacity(&self, scatter: bool) -> Capacity {
        if !self.usable || (scatter && self.entry != NO_ENTRY) {
            return Capacity::default();
        }
        let cpus_plus_one = self.slots.free().min(u32::MAX as usize - 1) as u32 + 1;
        Capacity {
            cpus_plus_one,
            idle_cpus_plus_one: if self.idle { cpus_plus_one } else { 0 },
            gpus: self.gpus.free().min(u32::MAX as usize) as u32,
            mem: self.mem_free,
        }
    }
}

/// What a node holds free at a planned time (see [`WorkNode::planned`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Planned<'a> {
    pub cpus: u32,
    pub gpus: u32,
    pub mem: u64,
    pub amounts: Vec<(&'a str, u64)>,
    pub usable: bool,
    pub idle: bool,
}

/// What a node looked like before the open transaction first touched it.
#[derive(Debug, Clone)]
struct Touched<'a> {
    node: usize,
    slots_next: usize,
    gpus_next: usize,
    mem_free: u64,
    amounts: Vec<(&'a str, u64)>,
}

/// The working copy: nodes, the node sets over them, and at most one open transaction.
#[derive(Debug)]
pub(crate) struct Work<'a> {
    pub nodes: Vec<WorkNode<'a>>,
    pub sets: NodeSets<'a>,
    /// The open transaction places a scatter job (each node used at most once).
    scatter: bool,
    touched: Vec<Touched<'a>>,
    entries: Vec<Assignment>,
}

impl<'a> Work<'a> {
    /// A working copy over `nodes` (index i here is index i of the view).
    pub fn new(nodes: Vec<WorkNode<'a>>) -> Work<'a> {
        Work { nodes, sets: NodeSets::default(), scatter: false, touched: Vec::new(), entries: Vec::new() }
    }

    /// What one unit could get on `node` now (as the trees see it).
    pub fn capacity(&self, node: usize) -> Capacity {
        self.nodes[node].capacity(self.scatter)
    }

    /// Opens a transaction for one job.
    pub fn begin(&mut self, scatter: bool) {
        debug_assert!(self.touched.is_empty() && self.entries.is_empty());
        self.scatter = scatter;
    }

    /// How many units with `need` and `amounts`, up to `wanted`, fit on `node` now one after
    /// another. The caller found `node` through a tree, so at least one does. A scatter
    /// transaction puts one unit per node; otherwise taking a unit changes neither `usable` nor
    /// `idle` until commit, so only the free cpus, GPUs, memory and amounts divide (a unit that
    /// needs none of them fits any number of times).
    pub fn room(&self, node: usize, need: &Need, amounts: &[(String, u64)], wanted: u64) -> u64 {
        if self.scatter {
            return wanted.min(1);
        }
        let work_node = &self.nodes[node];
        let times = |free: u64, each: u64| free.checked_div(each).unwrap_or(u64::MAX);
        times(work_node.slots.free() as u64, need.cpus)
            .min(times(work_node.gpus.free() as u64, need.gpus))
            .min(times(work_node.mem_free, need.mem))
            .min(amounts.iter().map(|(name, each)| times(work_node.amount_free(name), *each)).min().unwrap_or(u64::MAX))
            .min(wanted)
    }

    /// Gives `units` units with `need` on `node` to the open transaction, as if taken one by
    /// one. The caller checked them with `room`, so they fit.
    pub fn take(&mut self, node: usize, need: &Need, amounts: &[(String, u64)], units: u64, mpiprocs: u32) {
        let work_node = &mut self.nodes[node];
        if work_node.entry == NO_ENTRY {
            self.touched.push(Touched {
                node,
                slots_next: work_node.slots.next,
                gpus_next: work_node.gpus.next,
                mem_free: work_node.mem_free,
                amounts: work_node.amounts.clone(),
            });
            work_node.entry = self.entries.len() as u32;
            self.entries.push(Assignment { node, ..Assignment::default() });
        }
        let entry = &mut self.entries[work_node.entry as usize];
        // `room` bounded `units` by the free counts, so these products are at most those
        // counts (no overflow, and the slot/GPU counts fit a usize).
        work_node.slots.take((units * need.cpus) as usize, &mut entry.slots);
        work_node.gpus.take((units * need.gpus) as usize, &mut entry.gpus);
        work_node.mem_free -= units * need.mem;
        entry.mem += units * need.mem;
        take_amounts(&mut work_node.amounts, &mut entry.amounts, amounts, units);
        let lines = u32::try_from(units.saturating_mul(u64::from(mpiprocs))).unwrap_or(u32::MAX);
        entry.mpiprocs = entry.mpiprocs.saturating_add(lines);
        self.refresh(node);
    }

    /// Opens or closes `node` to new units (outside any transaction): a pass closes the nodes
    /// where a job would delay a reservation, places it again, then opens them back.
    pub fn set_usable(&mut self, node: usize, usable: bool) {
        self.nodes[node].usable = usable;
        self.refresh(node);
    }

    /// What the open transaction has taken so far, per node in first-use order.
    pub fn pending(&self) -> &[Assignment] {
        &self.entries
    }

    /// Keeps what the transaction took: the nodes are now busy and, for an exclusive job,
    /// closed to everyone else. Returns the assignments in first-use order.
    pub fn commit(&mut self, exclusive: bool) -> Vec<Assignment> {
        self.scatter = false;
        for touched in std::mem::take(&mut self.touched) {
            let work_node = &mut self.nodes[touched.node];
            work_node.entry = NO_ENTRY;
            work_node.idle = false;
            work_node.usable &= !exclusive;
            self.refresh(touched.node);
        }
        std::mem::take(&mut self.entries)
    }

    /// Gives back everything the open transaction took.
    pub fn rollback(&mut self) {
        self.scatter = false;
        self.entries.clear();
        for touched in std::mem::take(&mut self.touched).into_iter().rev() {
            let work_node = &mut self.nodes[touched.node];
            work_node.entry = NO_ENTRY;
            work_node.slots.next = touched.slots_next;
            work_node.gpus.next = touched.gpus_next;
            work_node.mem_free = touched.mem_free;
            work_node.amounts = touched.amounts;
            self.refresh(touched.node);
        }
    }

    /// Gives `user` a share of `percent` of one GPU of `node`: a GPU that user already shares
    /// with room left (the fullest such), else the lowest free GPU, which becomes shared.
    /// `None` (nothing changed) when neither exists. Outside any transaction: the caller
    /// commits the cpus and memory of the same job right after.
    pub fn take_mps_gpu(&mut self, node: usize, user: &str, percent: u32) -> Option<u32> {
        let work_node = &mut self.nodes[node];
        let joinable = work_node
            .mps
            .iter_mut()
            .filter(|gpu| gpu.usable && gpu.user == user && gpu.used + percent <= 100)
            .max_by_key(|gpu| (gpu.used, std::cmp::Reverse(gpu.index)));
        if let Some(gpu) = joinable {
            gpu.used += percent;
            return Some(gpu.index);
        }
        if work_node.gpus.free() == 0 {
            return None;
        }
        let mut taken = Vec::with_capacity(1);
        work_node.gpus.take(1, &mut taken);
        let index = taken[0];
        work_node.mps.push(MpsGpu { index, user: user.to_string(), used: percent, usable: true });
        self.refresh(node);
        Some(index)
    }

    /// Whether `user` could get a share of `percent` on `node` now (see `take_mps_gpu`).
    pub fn mps_fits(&self, node: usize, user: &str, percent: u32) -> bool {
        let work_node = &self.nodes[node];
        work_node.gpus.free() > 0
            || work_node.mps.iter().any(|gpu| gpu.usable && gpu.user == user && gpu.used + percent <= 100)
    }

    /// Pushes `node`'s current capacity into every set that contains it.
    fn refresh(&mut self, node: usize) {
        let capacity = self.nodes[node].capacity(self.scatter);
        for &(set, position) in &self.nodes[node].memberships {
            self.sets.update(set, position as usize, capacity);
        }
    }
}

/// Moves `units` times `amounts` from a node's `free` amounts to an assignment's `given` ones.
/// `room` bounded `units` by the free amounts, so each product is at most what is free; the
/// arithmetic saturates anyway, so a caller's mistake can only refuse, never wrap.
fn take_amounts(free: &mut [(&str, u64)], given: &mut Vec<(String, u64)>, amounts: &[(String, u64)], units: u64) {
    for (name, each) in amounts {
        let used = units.saturating_mul(*each);
        if let Some((_, left)) = free.iter_mut().find(|(have, _)| have == name) {
            *left = left.saturating_sub(used);
        }
        match given.iter_mut().find(|(have, _)| have == name) {
            Some((_, total)) => *total = total.saturating_add(used),
            None => given.push((name.clone(), used)),
        }
    }
}
