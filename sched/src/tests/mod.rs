//! Unit tests of the scheduler, driven entirely in memory with fake nodes and jobs.
//!
//! Owns: builders shared by the test files (`node`, `chunk`, `request`, `job`, `run`).
//! Must not know: anything outside this crate; no I/O, no sleeping, no timing assertions.

mod backfill_bounds_tests;
mod backfill_property_tests;
mod backfill_tests;
mod consumable_tests;
mod feasible_tests;
mod limit_tests;
mod mps_tests;
mod placement_tests;
mod policy_tests;
mod preempt_tests;
mod property_tests;
mod reference;
mod site_tests;
mod starvation_tests;

use job::{Chunk, Placement, ResourceRequest};

use crate::{schedule, ClusterView, Decision, NodeView, PendingJob};

pub(crate) const GB: u64 = 1 << 30;

/// An idle, available node with `np` slots, 16gb and no GPUs.
pub(crate) fn node(name: &str, np: u32) -> NodeView {
    gpu_node(name, np, 0)
}

/// An idle, available node with `np` slots, `ngpus` GPUs and 16gb.
pub(crate) fn gpu_node(name: &str, np: u32, ngpus: u32) -> NodeView {
    NodeView {
        name: name.to_string(),
        properties: Vec::new(),
        available: true,
        np,
        free_slots: (0..np).collect(),
        mem_total: 16 * GB,
        mem_free: 16 * GB,
        ngpus,
        free_gpus: (0..ngpus).collect(),
        mps_gpus: Vec::new(),
        busy: false,
        exclusive: false,
        amounts: Vec::new(),
    }
}

/// `count` units of `ncpus` cpus each, nothing else, one `PBS_NODEFILE` line per unit.
pub(crate) fn chunk(count: u32, ncpus: u32) -> Chunk {
    Chunk { count, ncpus, mpiprocs: 1, ..Chunk::default() }
}

/// `count` units of one cpu and `ngpus` GPUs each.
pub(crate) fn gpu_chunk(count: u32, ngpus: u32) -> Chunk {
    Chunk { ngpus, ..chunk(count, 1) }
}

/// A non-exclusive request without walltime.
pub(crate) fn request(chunks: Vec<Chunk>, place: Placement) -> ResourceRequest {
    let first_ppn = chunks.first().map_or(1, |chunk| chunk.ncpus);
    ResourceRequest {
        chunks,
        place,
        exclusive: false,
        walltime: None,
        cput: None,
        first_ppn,
        display: Default::default(),
    }
}

/// An exclusive version of [`request`].
pub(crate) fn exclusive(chunks: Vec<Chunk>, place: Placement) -> ResourceRequest {
    ResourceRequest { exclusive: true, ..request(chunks, place) }
}

/// A job with priorities 0 submitted in the order of its key.
pub(crate) fn job(key: u64, request: &ResourceRequest) -> PendingJob<'_> {
    PendingJob {
        key,
        queue_priority: 0,
        priority: 0,
        order: key,
        request,
        limits: &[],
        user: "alice",
        takes: &[],
        walltime: 3600,
        eligible_time: 0,
        fairshare: crate::FairShare::default(),
        queue: usize::MAX,
        preemptor: false,
    }
}

/// One pass over `nodes` and `jobs`.
pub(crate) fn run(nodes: Vec<NodeView>, jobs: Vec<PendingJob>) -> Vec<Decision> {
    schedule(&ClusterView { nodes, jobs, ..ClusterView::default() }).starts
}

/// The keys of the started jobs, in decision order.
pub(crate) fn keys(decisions: &[Decision]) -> Vec<u64> {
    decisions.iter().map(|decision| decision.key).collect()
}

/// The node indices of one decision, mother superior first.
pub(crate) fn nodes_of(decision: &Decision) -> Vec<usize> {
    decision.assignments.iter().map(|assignment| assignment.node).collect()
}
