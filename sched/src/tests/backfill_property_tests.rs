//! Property test of backfill (proptest, fixed seed): on random small clusters with running
//! jobs and a queue, with `backfill_depth` 1, the top job's reservation is the same whether
//! computed with the lower jobs still queued or after their starts were carried out (so no
//! backfilled start delays it), and every start fits what was free.
//!
//! Owns: the generator of clusters with running jobs (placed by `schedule` itself on empty
//! nodes, so the views are consistent) and carrying a pass's starts out into a new view.

use std::cell::Cell;
use std::collections::HashSet;

use job::{Chunk, Placement, ResourceRequest};
use proptest::bool::weighted;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use super::{request, GB};
use crate::{schedule, ClusterView, Decision, NodeView, Outcome, PendingJob, RunningJob};

const NOW: i64 = 1000;

fn node(index: usize) -> impl Strategy<Value = NodeView> {
    (1u32..9, 0u32..4, 1u64..9, weighted(0.9)).prop_map(move |(np, ngpus, mem_gb, available)| NodeView {
        name: format!("n{index}"),
        available,
        np,
        free_slots: (0..np).collect(),
        mem_total: mem_gb * GB,
        mem_free: mem_gb * GB,
        ngpus,
        free_gpus: (0..ngpus).collect(),
        ..NodeView::default()
    })
}

fn shape() -> impl Strategy<Value = ResourceRequest> {
    // A host may name a node that is not there (n5 on smaller clusters).
    let host = proptest::option::weighted(0.15, 0usize..6).prop_map(|host| host.map(|index| format!("n{index}")));
    let counts = (1u32..4, 0u32..5, prop_oneof![3 => Just(0u32), 1 => 1u32..3]);
    let chunk =
        (counts, proptest::option::weighted(0.3, 1..4 * GB), host).prop_map(|((count, ncpus, ngpus), mem, host)| {
            Chunk { count, ncpus, ngpus, mem, host, mpiprocs: 1, ..Chunk::default() }
        });
    let places = select(&[Placement::Free, Placement::Pack, Placement::Scatter][..]);
    (vec(chunk, 1..3), places, weighted(0.15))
        .prop_map(|(chunks, place, exclusive)| ResourceRequest { exclusive, ..request(chunks, place) })
}

/// Nodes, the running jobs' shapes with their ends, and the queue's shapes with walltimes.
#[derive(Debug, Clone)]
struct Round {
    nodes: Vec<NodeView>,
    running: Vec<(ResourceRequest, i64)>,
    queued: Vec<(ResourceRequest, u64)>,
}

fn round() -> impl Strategy<Value = Round> {
    (1usize..6).prop_flat_map(|n_nodes| {
        let nodes: Vec<_> = (0..n_nodes).map(node).collect();
        let running = vec((shape(), NOW - 20..NOW + 300), 0..8);
        let queued = vec((shape(), 1u64..400), 1..14);
        (nodes, running, queued).prop_map(|(nodes, running, queued)| Round { nodes, running, queued })
    })
}

/// `view`'s nodes with `decisions` carried out (taken out, busy, exclusive when asked), and
/// the running jobs they become, ending at `now + walltime`.
fn carry_out(view: &ClusterView, decisions: &[Decision]) -> (Vec<NodeView>, Vec<RunningJob>) {
    let mut nodes = view.nodes.clone();
    let mut running = Vec::new();
    for decision in decisions {
        let job = view.jobs.iter().find(|job| job.key == decision.key).expect("a queued job");
        for assignment in &decision.assignments {
            let node = &mut nodes[assignment.node];
            node.free_slots.retain(|slot| !assignment.slots.contains(slot));
            node.free_gpus.retain(|gpu| !assignment.gpus.contains(gpu));
            node.mem_free -= assignment.mem;
            node.busy = true;
            node.exclusive |= job.request.exclusive;
        }
        running.push(RunningJob {
            key: decision.key,
            start: view.now,
            end: view.now + job.walltime.max(1) as i64,
            assignments: decision.assignments.clone(),
            exclusive: job.request.exclusive,
            ..RunningJob::default()
        });
    }
    (nodes, running)
}

/// The first job with an estimate, and its start.
fn top(outcome: &Outcome) -> Option<(u64, i64)> {
    outcome.waits.iter().find_map(|wait| wait.estimate.as_ref().map(|estimate| (wait.key, estimate.start)))
}

/// Checks one round; returns (it had a reservation, some lower job backfilled beside it).
fn check(drawn: &Round) -> (bool, bool) {
    // The running jobs: placed greedily on the empty nodes, then given their ends.
    let setup: Vec<PendingJob> =
        drawn.running.iter().enumerate().map(|(key, (shape, _))| super::job(100 + key as u64, shape)).collect();
    let placed = schedule(&ClusterView { nodes: drawn.nodes.clone(), jobs: setup, ..ClusterView::default() }).starts;
    let setup_view = ClusterView {
        nodes: drawn.nodes.clone(),
        jobs: drawn.running.iter().enumerate().map(|(key, (shape, _))| super::job(100 + key as u64, shape)).collect(),
        ..ClusterView::default()
    };
    let (nodes, mut running) = carry_out(&setup_view, &placed);
    for job in &mut running {
        job.end = drawn.running[(job.key - 100) as usize].1;
    }
    let jobs: Vec<PendingJob> = drawn
        .queued
        .iter()
        .enumerate()
        .map(|(key, (shape, walltime))| PendingJob { walltime: *walltime, ..super::job(key as u64, shape) })
        .collect();
    let view = ClusterView { nodes, jobs, now: NOW, running, backfill_depth: 1, ..ClusterView::default() };
    let outcome = schedule(&view);
    check_fits(&view, &outcome.starts);
    assert_eq!(outcome.starts.len() + outcome.waits.len(), view.jobs.len(), "every job starts or waits");
    check_capacity(&ClusterView { backfill_depth: 1000, ..view.clone() });
    let Some((key, start)) = top(&outcome) else { return (false, false) };
    assert!(start >= NOW);
    let (nodes, mut running) = carry_out(&view, &outcome.starts);
    running.extend(view.running.iter().cloned());
    let started: HashSet<u64> = outcome.starts.iter().map(|decision| decision.key).collect();
    let jobs = view.jobs.iter().filter(|job| !started.contains(&job.key)).copied().collect();
    let after = schedule(&ClusterView { nodes, jobs, running, ..view.clone() });
    assert_eq!(top(&after), Some((key, start)), "the backfilled starts {started:?} moved the reservation");
    (true, started.iter().any(|&started| started > key))
}

/// (node, from, to, cpus, gpus, mem, exclusive): what one job holds on one node, when.
type Held = (usize, i64, i64, u64, u64, u64, bool);

/// Conservative: at every time a plan starts, on every node, the running jobs, the jobs
/// started now and the reservations active then hold no more than the node has, and an
/// exclusive one is alone there. Every estimate is at `now` or later.
fn check_capacity(view: &ClusterView) {
    let outcome = schedule(view);
    check_fits(view, &outcome.starts);
    let mut held: Vec<Held> = Vec::new();
    for job in &view.running {
        for a in &job.assignments {
            let end = job.expected_end(view.now);
            held.push((a.node, view.now, end, a.slots.len() as u64, a.gpus.len() as u64, a.mem, job.exclusive));
        }
    }
    let walltime_of = |key: u64| view.jobs.iter().find(|job| job.key == key).unwrap();
    for decision in &outcome.starts {
        let job = walltime_of(decision.key);
        let end = view.now + job.walltime.max(1) as i64;
        for a in &decision.assignments {
            held.push((a.node, view.now, end, a.slots.len() as u64, a.gpus.len() as u64, a.mem, job.request.exclusive));
        }
    }
    for wait in &outcome.waits {
        let Some(estimate) = &wait.estimate else { continue };
        assert!(estimate.start >= view.now, "{wait:?}");
        let job = walltime_of(wait.key);
        let end = estimate.start + job.walltime.max(1) as i64;
        for host in &estimate.hosts {
            held.push((
                host.node,
                estimate.start,
                end,
                host.ncpus.into(),
                host.ngpus.into(),
                host.mem,
                job.request.exclusive,
            ));
        }
    }
    for &(_, time, ..) in &held {
        for (index, node) in view.nodes.iter().enumerate() {
            let active: Vec<_> = held.iter().filter(|h| h.0 == index && h.1 <= time && time < h.2).collect();
            let sum = |f: fn(&&Held) -> u64| active.iter().map(f).sum::<u64>();
            assert!(sum(|h| h.3) <= node.np.into(), "cpus of {} at {time}: {outcome:?}", node.name);
            assert!(sum(|h| h.4) <= node.ngpus.into(), "gpus of {} at {time}: {outcome:?}", node.name);
            assert!(sum(|h| h.5) <= node.mem_total, "mem of {} at {time}: {outcome:?}", node.name);
            assert!(active.len() <= 1 || !active.iter().any(|h| h.6), "exclusive {} at {time}: {outcome:?}", node.name);
        }
    }
}

/// Every start uses free slots and GPUs once, memory within what is free, usable nodes, and
/// an exclusive job alone on an idle node.
fn check_fits(view: &ClusterView, decisions: &[Decision]) {
    let mut given = HashSet::new();
    let mut mem = vec![0u64; view.nodes.len()];
    let mut users = vec![Vec::new(); view.nodes.len()];
    for decision in decisions {
        let job = view.jobs.iter().find(|job| job.key == decision.key).unwrap();
        for assignment in &decision.assignments {
            let node = &view.nodes[assignment.node];
            assert!(node.available && !node.exclusive, "unusable node used");
            assert!(!job.request.exclusive || !node.busy, "exclusive on a busy node");
            for slot in &assignment.slots {
                assert!(node.free_slots.contains(slot) && given.insert((assignment.node, 's', *slot)), "slot {slot}");
            }
            for gpu in &assignment.gpus {
                assert!(node.free_gpus.contains(gpu) && given.insert((assignment.node, 'g', *gpu)), "gpu {gpu}");
            }
            mem[assignment.node] += assignment.mem;
            assert!(mem[assignment.node] <= node.mem_free, "memory overcommitted");
            users[assignment.node].push(job.request.exclusive);
        }
    }
    for users in users {
        assert!(users.len() <= 1 || !users.contains(&true), "exclusive node shared");
    }
}

#[test]
fn backfill_never_delays_the_top_reservation() {
    let config = Config { cases: 600, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let (reserved, backfilled) = (Cell::new(0), Cell::new(0));
    let result = runner.run(&round(), |drawn| {
        let (with_reservation, with_backfill) = check(&drawn);
        reserved.set(reserved.get() + usize::from(with_reservation));
        backfilled.set(backfilled.get() + usize::from(with_backfill));
        Ok(())
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
    eprintln!("{} rounds with a reservation, {} with a backfilled start", reserved.get(), backfilled.get());
    // The generator must exercise both often, or the property proves little.
    assert!(reserved.get() > 200 && backfilled.get() > 60, "{} / {}", reserved.get(), backfilled.get());
}
