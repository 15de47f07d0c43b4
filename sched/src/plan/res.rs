//! `Res`: what one node holds free (or what a job takes there) at some time, as signed
//! counts so a plan can add releases and subtract holds; `Totals`: the same summed over nodes.
//!
//! Owns: the arithmetic of those vectors and reading one from an `Assignment`.
//! Must not know: time, jobs, reservations or placement (see `plan`).

use crate::view::{Assignment, NodeView};

/// Cpus, GPUs, memory and the node's consumable site amounts (in the order of
/// [`NodeView::amounts`]). Signed and wide: sums of releases and holds never wrap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Res {
    pub cpus: i64,
    pub gpus: i64,
    pub mem: i128,
    pub amounts: Vec<i128>,
}

impl Res {
    /// Nothing, on a node with `amounts` site resources.
    pub fn zero(amounts: usize) -> Res {
        Res { amounts: vec![0; amounts], ..Res::default() }
    }

    /// What `node` has free in its view now.
    pub fn free_now(node: &NodeView) -> Res {
        Res {
            cpus: node.free_slots.len() as i64,
            gpus: node.free_gpus.len() as i64,
            mem: i128::from(node.mem_free),
            amounts: node.amounts.iter().map(|site| i128::from(site.available.saturating_sub(site.assigned))).collect(),
        }
    }

    /// What `assignment` holds on `node`. An MPS share counts its GPU only when `mps_gpu` (it
    /// is the share that took the GPU whole); amounts the node does not have are left out.
    pub fn of(assignment: &Assignment, node: &NodeView, mps_gpu: bool) -> Res {
        let gpus = if assignment.mps.is_some() { i64::from(mps_gpu) } else { assignment.gpus.len() as i64 };
        Res::taking(node, assignment.slots.len() as i64, gpus, assignment.mem, &assignment.amounts)
    }

    /// `cpus`, `gpus`, `mem` and `amounts` (by name) on `node`; amounts the node does not have
    /// are left out.
    pub fn taking(node: &NodeView, cpus: i64, gpus: i64, mem: u64, amounts: &[(String, u64)]) -> Res {
        let mut held = vec![0i128; node.amounts.len()];
        for (name, amount) in amounts {
            if let Some(index) = node.amounts.iter().position(|site| &site.name == name) {
                held[index] += i128::from(*amount);
            }
        }
        Res { cpus, gpus, mem: i128::from(mem), amounts: held }
    }

    pub fn add(&mut self, other: &Res) {
        self.cpus += other.cpus;
        self.gpus += other.gpus;
        self.mem += other.mem;
        for (mine, theirs) in self.amounts.iter_mut().zip(&other.amounts) {
            *mine += theirs;
        }
    }

    pub fn sub(&mut self, other: &Res) {
        self.cpus -= other.cpus;
        self.gpus -= other.gpus;
        self.mem -= other.mem;
        for (mine, theirs) in self.amounts.iter_mut().zip(&other.amounts) {
            *mine -= theirs;
        }
    }

    /// Component-wise maximum (an upper bound of what is held at once over a window).
    pub fn max_with(&mut self, other: &Res) {
        self.cpus = self.cpus.max(other.cpus);
        self.gpus = self.gpus.max(other.gpus);
        self.mem = self.mem.max(other.mem);
        for (mine, theirs) in self.amounts.iter_mut().zip(&other.amounts) {
            *mine = (*mine).max(*theirs);
        }
    }

    /// Some count is below zero: more is taken than there is.
    pub fn overdrawn(&self) -> bool {
        self.cpus < 0 || self.gpus < 0 || self.mem < 0 || self.amounts.iter().any(|amount| *amount < 0)
    }

    pub fn totals(&self) -> Totals {
        Totals { cpus: self.cpus, gpus: self.gpus, mem: self.mem }
    }
}

/// Cpus, GPUs and memory summed over nodes: the quick necessary condition of a plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub cpus: i64,
    pub gpus: i64,
    pub mem: i128,
}

impl Totals {
    pub fn add(&mut self, other: Totals) {
        self.cpus += other.cpus;
        self.gpus += other.gpus;
        self.mem += other.mem;
    }

    pub fn sub(&mut self, other: Totals) {
        self.cpus -= other.cpus;
        self.gpus -= other.gpus;
        self.mem -= other.mem;
    }

    /// Every component of `need` is at most this one's.
    pub fn holds(&self, need: &Totals) -> bool {
        self.cpus >= need.cpus && self.gpus >= need.gpus && self.mem >= need.mem
    }
}
