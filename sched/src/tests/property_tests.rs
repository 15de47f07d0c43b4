//! Property test (proptest, fixed seed, shrinking): over many generated views, `schedule`
//! never over-allocates, gives every job exactly what it asked for, respects placement,
//! exclusivity, run limits and node rules, and decides exactly what the naive reference does.

use std::cell::Cell;
use std::collections::HashSet;

use job::{Chunk, Placement, ResourceRequest};
use proptest::bool::weighted;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::reference::{node_matches, reference_schedule};
use super::{request, GB};
use crate::{schedule, ClusterView, Decision, NodeView, PendingJob};

const PROPERTIES: [&str; 3] = ["fast", "bigmem", "gpu"];

/// The properties whose flag is set.
fn chosen(flags: &[bool]) -> Vec<String> {
    PROPERTIES.iter().zip(flags).filter(|(_, &on)| on).map(|(p, _)| p.to_string()).collect()
}

/// Node `index`: up to 8 slots and 3 GPUs; some idle, the others partly used.
fn node(index: usize) -> impl Strategy<Value = NodeView> {
    (0u32..9, 0u32..4, weighted(0.4)).prop_flat_map(move |(np, ngpus, idle)| {
        let free = if idle { 1.0 } else { 0.7 };
        let masks = (vec(weighted(free), np as usize), vec(weighted(free), ngpus as usize));
        let rest = (1u64..9, any::<u64>(), vec(weighted(0.3), 3), weighted(0.9), weighted(0.1));
        (masks, rest).prop_map(move |((slots, gpus), (mem_gb, mem_draw, flags, available, exclusive))| {
            let free_slots: Vec<u32> = (0..np).filter(|&slot| slots[slot as usize]).collect();
            let free_gpus: Vec<u32> = (0..ngpus).filter(|&gpu| gpus[gpu as usize]).collect();
            let mem_total = mem_gb * GB;
            let busy = free_slots.len() < np as usize || free_gpus.len() < ngpus as usize;
            NodeView {
                name: format!("n{index}"),
                properties: chosen(&flags),
                available,
                np,
                free_slots,
                mem_total,
                mem_free: if busy { mem_draw % (mem_total + 1) } else { mem_total },
                ngpus,
                free_gpus,
                mps_gpus: Vec::new(),
                busy,
                exclusive: busy && exclusive,
                amounts: Vec::new(),
            }
        })
    })
}

/// A chunk of up to `max_count` units (rarely none); a `host` may name a node that is not there.
fn chunk(n_nodes: usize, max_count: u32) -> impl Strategy<Value = Chunk> {
    let counts = (0..max_count, weighted(0.9), 0u32..5, prop_oneof![7 => Just(0u32), 3 => 0u32..3]);
    let mem = proptest::option::weighted(0.4, 0..4 * GB);
    let host = proptest::option::weighted(0.1, 0..=n_nodes).prop_map(|host| host.map(|index| format!("n{index}")));
    (counts, mem, 0u32..3, host, vec(weighted(0.1), 3)).prop_map(
        |((count, at_least_one, ncpus, ngpus), mem, mpiprocs, host, flags)| Chunk {
            count: count + u32::from(at_least_one),
            ncpus,
            ngpus,
            mem,
            mpiprocs,
            host,
            properties: chosen(&flags),
            mps: None,
            amounts: Vec::new(),
        },
    )
}

fn resource_request(n_nodes: usize, max_count: u32) -> impl Strategy<Value = ResourceRequest> {
    let places = select(&[Placement::Free, Placement::Pack, Placement::Scatter][..]);
    (vec(chunk(n_nodes, max_count), 1..4), places, weighted(0.2))
        .prop_map(|(chunks, place, exclusive)| ResourceRequest { exclusive, ..request(chunks, place) })
}

/// Up to 8 requests; some copy an earlier one's chunks with another placement or
/// exclusivity, so classes that differ only there are exercised.
fn shapes(n_nodes: usize, max_count: u32) -> impl Strategy<Value = Vec<ResourceRequest>> {
    vec((resource_request(n_nodes, max_count), weighted(0.3), any::<Index>()), 1..9).prop_map(|drawn| {
        let mut shapes: Vec<ResourceRequest> = Vec::new();
        for (mut shape, copy, earlier) in drawn {
            if !shapes.is_empty() && copy {
                shape.chunks = shapes[earlier.index(shapes.len())].chunks.clone();
            }
            shapes.push(shape);
        }
        shapes
    })
}

/// A pending job as drawn: priorities, order, which shape and which run limits it names.
#[derive(Debug, Clone)]
struct JobDraw {
    queue_priority: i32,
    priority: i32,
    order: u64,
    shape: Index,
    limits: Option<usize>,
}

fn job_draw() -> impl Strategy<Value = JobDraw> {
    (0i32..2, -1i32..2, 0u64..20, any::<Index>(), proptest::option::weighted(0.3, 0usize..5)).prop_map(
        |(queue_priority, priority, order, shape, limits)| JobDraw { queue_priority, priority, order, shape, limits },
    )
}

/// One generated round: nodes, a few shapes reused by many jobs (so request classes and
/// their skipping matter), run limits (a queue counter (0) and three users' shares (1..=3))
/// and the jobs.
#[derive(Debug, Clone)]
struct Round {
    nodes: Vec<NodeView>,
    shapes: Vec<ResourceRequest>,
    limits: Vec<u32>,
    jobs: Vec<JobDraw>,
}

fn round(max_count: u32) -> impl Strategy<Value = Round> {
    (1usize..26).prop_flat_map(move |n_nodes| {
        let nodes: Vec<_> = (0..n_nodes).map(node).collect();
        (nodes, shapes(n_nodes, max_count), vec(0u32..6, 4), vec(job_draw(), 0..40))
            .prop_map(|(nodes, shapes, limits, jobs)| Round { nodes, shapes, limits, jobs })
    })
}

#[test]
fn never_over_allocates_and_matches_the_reference() {
    let started = run_rounds(1000, 4);
    // The generator must start every kind of job often, or the checks above prove little.
    assert!(started.iter().all(|&count| count > 200), "started {started:?}");
}

/// Chunk counts up to 40 on nodes of up to 8 slots: identical units are placed in bulk,
/// spilling over several nodes, and must land exactly where one-by-one first fit (the
/// reference) puts them.
#[test]
fn bulk_placement_of_many_chunks_matches_the_reference() {
    let started = run_rounds(800, 40);
    assert!(started.iter().all(|&count| count > 30), "started {started:?}");
}

/// `rounds` generated rounds (from a fixed seed: the same rounds, and run time, every run),
/// each checked against the invariants and the reference; a failing one is shrunk. Returns
/// how many jobs started by kind: free, pack, scatter, exclusive.
fn run_rounds(rounds: u32, max_count: u32) -> [usize; 4] {
    let config = Config { cases: rounds, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let started = Cell::new([0usize; 4]);
    let number = Cell::new(0usize);
    let result = runner.run(&round(max_count), |drawn| {
        number.set(number.get() + 1);
        let counts = check_round(&drawn, number.get());
        started.set(std::array::from_fn(|kind| started.get()[kind] + counts[kind]));
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    eprintln!("started {:?}", started.get());
    started.get()
}

/// Schedules `drawn`, checks the decisions, and counts the started jobs by kind.
fn check_round(drawn: &Round, round: usize) -> [usize; 4] {
    let job_limits: [&[usize]; 5] = [&[], &[0], &[0, 1], &[0, 2], &[3]];
    let jobs: Vec<PendingJob> = (0..)
        .zip(&drawn.jobs)
        .map(|(key, job)| PendingJob {
            key,
            queue_priority: job.queue_priority,
            priority: job.priority,
            order: job.order,
            request: &drawn.shapes[job.shape.index(drawn.shapes.len())],
            limits: job.limits.map_or(&[], |limits| job_limits[limits]),
            user: "u",
            takes: &[],
            ..crate::tests::job(key, &drawn.shapes[job.shape.index(drawn.shapes.len())])
        })
        .collect();
    let view = ClusterView {
        nodes: drawn.nodes.clone(),
        jobs,
        limits: drawn.limits.clone(),
        pools: Vec::new(),
        ..ClusterView::default()
    };
    let decisions = schedule(&view).starts;
    check_invariants(&view, &decisions, round);
    check_limits(&view, &decisions, round);
    assert_eq!(decisions, reference_schedule(&view), "round {round}");
    let mut started = [0usize; 4];
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
