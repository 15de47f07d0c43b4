//! Property test: over many pseudo-random views (deterministic seed, no extra crates),
//! `schedule` never over-allocates, gives every job exactly what it asked for, respects
//! placement, exclusivity and node rules, and decides exactly what the naive reference does.

use std::collections::HashSet;

use job::{Chunk, Placement, ResourceRequest};

use super::reference::{node_matches, reference_schedule};
use super::{request, GB};
use crate::{schedule, ClusterView, Decision, NodeView, PendingJob};

/// splitmix64: tiny, deterministic, good enough to shake out bookkeeping bugs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (bound > 0).
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    /// True with probability `percent`/100.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A random ascending subset of `0..count`.
    fn subset(&mut self, count: u32, percent: u64) -> Vec<u32> {
        (0..count).filter(|_| self.chance(percent)).collect()
    }
}

const PROPERTIES: [&str; 3] = ["fast", "bigmem", "gpu"];

fn random_node(rng: &mut Rng, index: usize) -> NodeView {
    let np = rng.below(9) as u32;
    let ngpus = rng.below(4) as u32;
    // Some nodes idle, the others partly used.
    let percent_free = if rng.chance(40) { 100 } else { 70 };
    let free_slots = rng.subset(np, percent_free);
    let free_gpus = rng.subset(ngpus, percent_free);
    let mem_total = (1 + rng.below(8)) * GB;
    let busy = free_slots.len() < np as usize || free_gpus.len() < ngpus as usize;
    NodeView {
        name: format!("n{index}"),
        properties: PROPERTIES.iter().filter(|_| rng.chance(30)).map(|p| p.to_string()).collect(),
        available: rng.chance(90),
        np,
        free_slots,
        mem_total,
        mem_free: if busy { rng.below(mem_total + 1) } else { mem_total },
        ngpus,
        free_gpus,
        mps_gpus: Vec::new(),
        busy,
        exclusive: busy && rng.chance(10),
        amounts: Vec::new(),
    }
}

fn random_chunk(rng: &mut Rng, n_nodes: usize, max_count: u64) -> Chunk {
    Chunk {
        count: rng.below(max_count) as u32 + u32::from(rng.chance(90)),
        ncpus: rng.below(5) as u32,
        ngpus: if rng.chance(30) { rng.below(3) as u32 } else { 0 },
        mem: rng.chance(40).then(|| rng.below(4 * GB)),
        mpiprocs: rng.below(3) as u32,
        host: rng.chance(10).then(|| format!("n{}", rng.below(n_nodes as u64 + 1))),
        properties: PROPERTIES.iter().filter(|_| rng.chance(10)).map(|p| p.to_string()).collect(),
        mps: None,
        amounts: Vec::new(),
    }
}

fn random_request(rng: &mut Rng, n_nodes: usize, max_count: u64) -> ResourceRequest {
    let chunks = (0..1 + rng.below(3)).map(|_| random_chunk(rng, n_nodes, max_count)).collect();
    let place = [Placement::Free, Placement::Pack, Placement::Scatter][rng.below(3) as usize];
    ResourceRequest { exclusive: rng.chance(20), ..request(chunks, place) }
}

/// Up to 8 requests; some copy an earlier one's chunks with another placement or
/// exclusivity, so classes that differ only there are exercised.
fn random_shapes(rng: &mut Rng, n_nodes: usize, max_count: u64) -> Vec<ResourceRequest> {
    let mut shapes: Vec<ResourceRequest> = Vec::new();
    for _ in 0..1 + rng.below(8) {
        let mut shape = random_request(rng, n_nodes, max_count);
        if !shapes.is_empty() && rng.chance(30) {
            shape.chunks = shapes[rng.below(shapes.len() as u64) as usize].chunks.clone();
        }
        shapes.push(shape);
    }
    shapes
}

#[test]
fn never_over_allocates_and_matches_the_reference() {
    let started = run_rounds(20240501, 1000, 4);
    // The generator must start every kind of job often, or the checks above prove little.
    assert!(started.iter().all(|&count| count > 200), "started {started:?}");
}

/// Chunk counts up to 40 on nodes of up to 8 slots: identical units are placed in bulk,
/// spilling over several nodes, and must land exactly where one-by-one first fit (the
/// reference) puts them.
#[test]
fn bulk_placement_of_many_chunks_matches_the_reference() {
    let started = run_rounds(7, 600, 40);
    assert!(started.iter().all(|&count| count > 30), "started {started:?}");
}

/// `rounds` random views from `seed`, each checked against the invariants and the reference.
/// Returns how many jobs started by kind: free, pack, scatter, exclusive.
fn run_rounds(seed: u64, rounds: usize, max_count: u64) -> [usize; 4] {
    let mut rng = Rng(seed);
    let mut started = [0usize; 4];
    for round in 0..rounds {
        let n_nodes = 1 + rng.below(25) as usize;
        let nodes: Vec<NodeView> = (0..n_nodes).map(|index| random_node(&mut rng, index)).collect();
        // A few shapes reused by many jobs, so request classes and their skipping matter.
        let shapes = random_shapes(&mut rng, n_nodes, max_count);
        // Run limits: a queue counter (0) and three users' shares (1..=3), sometimes none.
        // Drawn from their own generator, so the views stay those of the seed above.
        let mut limit_rng = Rng(round as u64);
        let limits: Vec<u32> = (0..4).map(|_| limit_rng.below(6) as u32).collect();
        let job_limits: [&[usize]; 5] = [&[], &[0], &[0, 1], &[0, 2], &[3]];
        let jobs: Vec<PendingJob> = (0..rng.below(40))
            .map(|key| PendingJob {
                key,
                queue_priority: rng.below(2) as i32,
                priority: rng.below(3) as i32 - 1,
                order: rng.below(20),
                request: &shapes[rng.below(shapes.len() as u64) as usize],
                limits: if limit_rng.chance(30) { job_limits[limit_rng.below(5) as usize] } else { &[] },
                user: "u",
                takes: &[],
            })
            .collect();
        let view = ClusterView { nodes, jobs, limits, pools: Vec::new() };
        let decisions = schedule(&view);
        check_invariants(&view, &decisions, round);
        check_limits(&view, &decisions, round);
        assert_eq!(decisions, reference_schedule(&view), "round {round}");
        for decision in &decisions {
            let job = view.jobs.iter().find(|job| job.key == decision.key).unwrap();
            let kind = match job.request.place {
                Placement::Free => 0,
                Placement::Pack => 1,
                Placement::Scatter => 2,
            };
            started[kind] += 1;
            started[3] += usize::from(job.request.exclusive);
        }
    }
    started
}

/// No counter is overdrawn: the started jobs naming a counter are at most its capacity.
fn check_limits(view: &ClusterView, decisions: &[Decision], round: usize) {
    let mut used = vec![0u32; view.limits.len()];
    for decision in decisions {
        let job = view.jobs.iter().find(|job| job.key == decision.key).unwrap();
        for &limit in job.limits {
            used[limit] += 1;
        }
    }
    for (limit, (used, capacity)) in used.iter().zip(&view.limits).enumerate() {
        assert!(used <= capacity, "round {round}: counter {limit} overdrawn ({used} > {capacity})");
    }
}

fn check_invariants(view: &ClusterView, decisions: &[Decision], round: usize) {
    let mut slots_given = HashSet::new();
    let mut gpus_given = HashSet::new();
    let mut mem_given = vec![0u64; view.nodes.len()];
    let mut users = vec![Vec::new(); view.nodes.len()];
    let mut keys = HashSet::new();
    for decision in decisions {
        assert!(keys.insert(decision.key), "round {round}: job {} started twice", decision.key);
        let job = view.jobs.iter().find(|job| job.key == decision.key).unwrap();
        check_counts(job.request, view, decision, round);
        for assignment in &decision.assignments {
            let node = &view.nodes[assignment.node];
            assert!(node.available && !node.exclusive, "round {round}: unusable node used");
            assert!(!job.request.exclusive || !node.busy, "round {round}: exclusive on busy node");
            for slot in &assignment.slots {
                assert!(node.free_slots.contains(slot), "round {round}: slot {slot} not free");
                assert!(slots_given.insert((assignment.node, *slot)), "round {round}: slot twice");
            }
            for gpu in &assignment.gpus {
                assert!(node.free_gpus.contains(gpu), "round {round}: gpu {gpu} not free");
                assert!(gpus_given.insert((assignment.node, *gpu)), "round {round}: gpu twice");
            }
            mem_given[assignment.node] += assignment.mem;
            assert!(mem_given[assignment.node] <= node.mem_free, "round {round}: memory overcommitted");
            users[assignment.node].push(job.request.exclusive);
        }
    }
    for users in users {
        assert!(users.len() <= 1 || !users.contains(&true), "round {round}: exclusive node shared");
    }
}

/// The decision gives exactly what the request asks for, in the requested arrangement.
fn check_counts(request: &ResourceRequest, view: &ClusterView, decision: &Decision, round: usize) {
    let total = |f: fn(&Chunk) -> u64| request.chunks.iter().map(|c| u64::from(c.count) * f(c)).sum::<u64>();
    let given = |f: fn(&crate::Assignment) -> u64| decision.assignments.iter().map(f).sum::<u64>();
    assert_eq!(given(|a| a.slots.len() as u64), total(|c| c.ncpus.into()), "round {round}: cpus");
    assert_eq!(given(|a| a.gpus.len() as u64), total(|c| c.ngpus.into()), "round {round}: gpus");
    assert_eq!(given(|a| a.mem), total(|c| c.mem.unwrap_or(0)), "round {round}: mem");
    assert_eq!(given(|a| a.mpiprocs.into()), total(|c| c.mpiprocs.into()), "round {round}: mpiprocs");
    let nodes: HashSet<usize> = decision.assignments.iter().map(|a| a.node).collect();
    assert_eq!(nodes.len(), decision.assignments.len(), "round {round}: node listed twice");
    match request.place {
        Placement::Scatter => {
            assert_eq!(nodes.len() as u64, total(|_| 1), "round {round}: scatter")
        }
        Placement::Pack => assert_eq!(nodes.len(), 1, "round {round}: pack"),
        Placement::Free => {}
    }
    for assignment in &decision.assignments {
        let node = &view.nodes[assignment.node];
        let wanted = request.chunks.iter().filter(|c| c.count > 0);
        let matched = if request.place == Placement::Pack {
            wanted.clone().all(|chunk| node_matches(node, chunk))
        } else {
            wanted.clone().any(|chunk| node_matches(node, chunk))
        };
        assert!(matched, "round {round}: {} does not match the request", node.name);
    }
}
