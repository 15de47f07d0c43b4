//! A deliberately naive scheduler that states the policy in the plainest way (linear scans,
//! cloned state, no trees, no request classes). The property test checks that `schedule`
//! decides exactly the same thing.
//!
//! Owns: nothing the crate uses; test-only.

use job::{Chunk, Placement, ResourceRequest};

use crate::{Assignment, ClusterView, Decision, NodeView};

#[derive(Clone)]
struct Free {
    slots: Vec<u32>,
    gpus: Vec<u32>,
    mem: u64,
    usable: bool,
    idle: bool,
}

/// The policy, written out plainly.
pub(crate) fn reference_schedule(view: &ClusterView) -> Vec<Decision> {
    let mut free: Vec<Free> = view
        .nodes
        .iter()
        .map(|node| Free {
            slots: node.free_slots.clone(),
            gpus: node.free_gpus.clone(),
            mem: node.mem_free,
            usable: node.available && !node.exclusive,
            idle: !node.busy,
        })
        .collect();
    let mut jobs: Vec<_> = view.jobs.iter().collect();
    jobs.sort_by(|a, b| (b.queue_priority, b.priority, a.order).cmp(&(a.queue_priority, a.priority, b.order)));
    let mut decisions = Vec::new();
    let mut remaining = view.limits.clone();
    for job in jobs {
        if job.limits.iter().any(|&limit| remaining.get(limit).copied().unwrap_or(0) == 0) {
            continue;
        }
        let mut trial = free.clone();
        if let Some(assignments) = try_place(job.request, &view.nodes, &mut trial) {
            for assignment in &assignments {
                trial[assignment.node].idle = false;
                trial[assignment.node].usable &= !job.request.exclusive;
            }
            free = trial;
            for &limit in job.limits {
                remaining[limit] -= 1;
            }
            decisions.push(Decision { key: job.key, assignments });
        }
    }
    decisions
}

fn try_place(request: &ResourceRequest, nodes: &[NodeView], free: &mut [Free]) -> Option<Vec<Assignment>> {
    let chunks: Vec<&Chunk> = request.chunks.iter().filter(|chunk| chunk.count > 0).collect();
    if chunks.is_empty() {
        return None;
    }
    // Each unit: (cpus, gpus, mem, mpiprocs, chunks whose host/properties it must match).
    let units: Vec<(usize, usize, u64, u32, Vec<&Chunk>)> = if request.place == Placement::Pack {
        let sum = |f: fn(&Chunk) -> u64| chunks.iter().map(|c| u64::from(c.count) * f(c)).sum::<u64>();
        let mpiprocs = chunks.iter().map(|c| c.count * c.mpiprocs).sum();
        let (cpus, gpus) = (sum(|c| c.ncpus.into()) as usize, sum(|c| c.ngpus.into()) as usize);
        vec![(cpus, gpus, sum(|c| c.mem.unwrap_or(0)), mpiprocs, chunks.clone())]
    } else {
        let per_chunk = chunks.iter().flat_map(|c| {
            (0..c.count).map(move |_| (c.ncpus as usize, c.ngpus as usize, c.mem.unwrap_or(0), c.mpiprocs, vec![*c]))
        });
        per_chunk.collect()
    };
    let mut assignments: Vec<Assignment> = Vec::new();
    for (cpus, gpus, mem, mpiprocs, rules) in units {
        let fits = |index: usize, node: &NodeView, state: &Free| {
            state.usable
                && (state.idle || !request.exclusive)
                && state.slots.len() >= cpus
                && state.gpus.len() >= gpus
                && state.mem >= mem
                && rules.iter().all(|chunk| node_matches(node, chunk))
                && !(request.place == Placement::Scatter && assignments.iter().any(|a| a.node == index))
        };
        let index = (0..nodes.len()).find(|&index| fits(index, &nodes[index], &free[index]))?;
        let state = &mut free[index];
        let position = match assignments.iter().position(|a| a.node == index) {
            Some(position) => position,
            None => {
                assignments.push(Assignment { node: index, ..Assignment::default() });
                assignments.len() - 1
            }
        };
        let assignment = &mut assignments[position];
        assignment.slots.extend(state.slots.drain(..cpus));
        assignment.gpus.extend(state.gpus.drain(..gpus));
        state.mem -= mem;
        assignment.mem += mem;
        assignment.mpiprocs += mpiprocs;
    }
    Some(assignments)
}

/// The host and property rules of one chunk, written out.
pub(crate) fn node_matches(node: &NodeView, chunk: &Chunk) -> bool {
    chunk.host.as_ref().is_none_or(|host| &node.name == host)
        && chunk.properties.iter().all(|p| &node.name == p || node.properties.contains(p))
}
