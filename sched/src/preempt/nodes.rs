//! The preemption phase's copy of the node views: what a running or suspended job's
//! assignments hold, checked free, taken, and given back, and the `busy`/`exclusive` marks
//! kept right as jobs leave and arrive.
//!
//! Owns: `Holders` (which listed jobs hold each node) and the arithmetic on `NodeView`s.
//! Must not know: priorities, victims, placement rules (see `preempt.rs`, `place`).

use crate::view::{Assignment, NodeView, RunningJob};

/// How many listed jobs (running, resumed or started in this pass) hold each node, and how
/// many of them exclusively. A node's `busy` or `exclusive` mark can also come from a job the
/// view does not list (one exiting, say): `unlisted_exclusive` keeps those.
#[derive(Debug, Clone)]
pub(crate) struct Holders {
    count: Vec<u32>,
    exclusive: Vec<u32>,
    unlisted_exclusive: Vec<bool>,
}

impl Holders {
    /// The holders of `nodes` as `running` lists them.
    pub fn new(nodes: &[NodeView], running: &[RunningJob]) -> Holders {
        let mut holders =
            Holders { count: vec![0; nodes.len()], exclusive: vec![0; nodes.len()], unlisted_exclusive: Vec::new() };
        for job in running {
            holders.add(&job.assignments, job.exclusive);
        }
        holders.unlisted_exclusive =
            nodes.iter().zip(&holders.exclusive).map(|(node, &listed)| node.exclusive && listed == 0).collect();
        holders
    }

    /// A job holding `assignments` arrived.
    pub fn add(&mut self, assignments: &[Assignment], exclusive: bool) {
        for node in distinct_nodes(assignments) {
            if let Some(count) = self.count.get_mut(node) {
                *count += 1;
                self.exclusive[node] += u32::from(exclusive);
            }
        }
    }

    /// A job holding `assignments` left.
    pub fn remove(&mut self, assignments: &[Assignment], exclusive: bool) {
        for node in distinct_nodes(assignments) {
            if let Some(count) = self.count.get_mut(node) {
                *count = count.saturating_sub(1);
                self.exclusive[node] = self.exclusive[node].saturating_sub(u32::from(exclusive));
            }
        }
    }
}

/// The nodes an allocation uses, each once (a well-formed one names each once already).
fn distinct_nodes(assignments: &[Assignment]) -> Vec<usize> {
    let mut nodes: Vec<usize> = assignments.iter().map(|assignment| assignment.node).collect();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}

/// Whether everything `job` holds is free on `nodes` now (its nodes up, its slots, GPUs,
/// memory and amounts free; no other job on a node it holds exclusively, and no exclusive
/// job on its nodes). An assignment naming a node past the end never is.
pub(crate) fn all_free(nodes: &[NodeView], job: &RunningJob) -> bool {
    job.assignments.iter().all(|assignment| {
        let Some(node) = nodes.get(assignment.node) else { return false };
        node.available
            && !node.exclusive
            && !(job.exclusive && node.busy)
            && assignment.slots.iter().all(|slot| node.free_slots.contains(slot))
            && assignment.gpus.iter().all(|gpu| node.free_gpus.contains(gpu))
            && assignment.mem <= node.mem_free
            && assignment.amounts.iter().all(|(name, amount)| {
                node.amounts
                    .iter()
                    .any(|site| &site.name == name && site.available.saturating_sub(site.assigned) >= *amount)
            })
    })
}

/// Takes `assignments` from `nodes` (the caller checked them free): the nodes become busy,
/// and closed to others for an exclusive job. An MPS share takes its GPU whole here: the
/// server never preempts or suspends MPS jobs, and a whole GPU is the safe reading.
pub(crate) fn take(nodes: &mut [NodeView], holders: &mut Holders, assignments: &[Assignment], exclusive: bool) {
    for assignment in assignments {
        let Some(node) = nodes.get_mut(assignment.node) else { continue };
        node.free_slots.retain(|slot| !assignment.slots.contains(slot));
        node.free_gpus.retain(|gpu| !assignment.gpus.contains(gpu));
        node.mem_free = node.mem_free.saturating_sub(assignment.mem);
        for (name, amount) in &assignment.amounts {
            if let Some(site) = node.amounts.iter_mut().find(|site| &site.name == name) {
                site.assigned = site.assigned.saturating_add(*amount);
            }
        }
        node.busy = true;
        node.exclusive |= exclusive;
    }
    holders.add(assignments, exclusive);
}

/// Gives back what `job` holds. A node is then idle when no listed job is left on it and its
/// slots and memory are all free; it stays exclusive while an exclusive job is left on it.
pub(crate) fn give_back(nodes: &mut [NodeView], holders: &mut Holders, job: &RunningJob) {
    holders.remove(&job.assignments, job.exclusive);
    for assignment in &job.assignments {
        let Some(node) = nodes.get_mut(assignment.node) else { continue };
        add_sorted(&mut node.free_slots, &assignment.slots, node.np);
        add_sorted(&mut node.free_gpus, &assignment.gpus, node.ngpus);
        node.mem_free = node.mem_free.saturating_add(assignment.mem).min(node.mem_total);
        for (name, amount) in &assignment.amounts {
            if let Some(site) = node.amounts.iter_mut().find(|site| &site.name == name) {
                site.assigned = site.assigned.saturating_sub(*amount);
            }
        }
        let at = assignment.node;
        node.exclusive = holders.exclusive[at] > 0 || holders.unlisted_exclusive[at];
        node.busy = holders.count[at] > 0 || node.free_slots.len() < node.np as usize || node.mem_free < node.mem_total;
    }
}

/// Adds `indices` (those below `limit`, not already there) to the ascending list `free`.
fn add_sorted(free: &mut Vec<u32>, indices: &[u32], limit: u32) {
    free.extend(indices.iter().filter(|&&index| index < limit));
    free.sort_unstable();
    free.dedup();
}
