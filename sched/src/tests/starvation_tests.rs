//! Issue 16's starvation scenario, driven pass after pass: a 4-GPU job behind an endless
//! stream of 1-GPU jobs starts no later than its first reservation, and (the contrast that
//! proves the test can fail) never starts without reservations.
//!
//! Owns: a tiny virtual-clock driver (jobs run exactly their walltime, a pass every 10 s).

use job::Placement;

use super::{gpu_chunk, gpu_node, job, request};
use crate::{schedule, Assignment, ClusterView, NodeView, PendingJob, RunningJob};

/// The node views with exactly the running jobs' slots and GPUs taken out.
fn views(mut nodes: Vec<NodeView>, running: &[RunningJob]) -> Vec<NodeView> {
    for job in running {
        for assignment in &job.assignments {
            let node = &mut nodes[assignment.node];
            node.free_slots.retain(|slot| !assignment.slots.contains(slot));
            node.free_gpus.retain(|gpu| !assignment.gpus.contains(gpu));
            node.busy = true;
        }
    }
    nodes
}

/// What happened to the big job: the first estimate it was given and when it started.
#[derive(Debug, PartialEq)]
struct Fate {
    first_estimate: Option<i64>,
    started: Option<i64>,
}

/// Runs `steps` passes with `depth`; job 0 asks for 4 GPUs on one node, every other job for 1.
fn drive(depth: u32, steps: i64) -> Fate {
    let base = vec![gpu_node("g1", 8, 4), gpu_node("g2", 8, 4)];
    let big = request(vec![gpu_chunk(1, 4)], Placement::Free);
    let small = request(vec![gpu_chunk(1, 1)], Placement::Free);
    let mut rng = fastrand::Rng::with_seed(16);
    // Every GPU busy, ending at staggered times (multiples of 10: a pass sees each end).
    let mut running: Vec<RunningJob> = (0..8u32)
        .map(|index| RunningJob {
            key: 1000 + u64::from(index),
            end: 20 + 30 * i64::from(index),
            assignments: vec![Assignment {
                node: (index / 4) as usize,
                slots: vec![index % 4],
                gpus: vec![index % 4],
                ..Assignment::default()
            }],
            ..RunningJob::default()
        })
        .collect();
    // (key, walltime) of the queued jobs; the big one first.
    let mut queued: Vec<(u64, u64)> = vec![(0, 200)];
    let mut next_key = 1;
    let mut fate = Fate { first_estimate: None, started: None };
    for step in 0..steps {
        let now = step * 10;
        running.retain(|job| job.end > now);
        for _ in 0..2 {
            queued.push((next_key, 10 * rng.u64(5..30)));
            next_key += 1;
        }
        let jobs: Vec<PendingJob> = queued
            .iter()
            .map(|&(key, walltime)| PendingJob { walltime, ..job(key, if key == 0 { &big } else { &small }) })
            .collect();
        let nodes = views(base.clone(), &running);
        let view =
            ClusterView { nodes, jobs, now, running: running.clone(), backfill_depth: depth, ..ClusterView::default() };
        let outcome = schedule(&view);
        if let Some(wait) = outcome.waits.iter().find(|wait| wait.key == 0) {
            if fate.first_estimate.is_none() {
                fate.first_estimate = wait.estimate.as_ref().map(|estimate| estimate.start);
            }
        }
        for decision in outcome.starts {
            let walltime = queued.iter().find(|(key, _)| *key == decision.key).expect("queued").1;
            if decision.key == 0 {
                fate.started = Some(now);
            }
            queued.retain(|(key, _)| *key != decision.key);
            let end = now + walltime as i64;
            running.push(RunningJob {
                key: decision.key,
                start: now,
                end,
                assignments: decision.assignments,
                ..RunningJob::default()
            });
        }
    }
    fate
}

#[test]
fn a_four_gpu_job_starts_no_later_than_its_first_reservation() {
    let fate = drive(1, 200);
    eprintln!("{fate:?}");
    let estimate = fate.first_estimate.expect("the big job was given a reservation");
    let started = fate.started.expect("the big job started");
    assert!(started <= estimate, "{fate:?}");
}

#[test]
fn without_reservations_the_stream_starves_it() {
    let fate = drive(0, 200);
    assert_eq!(fate, Fate { first_estimate: None, started: None });
}
