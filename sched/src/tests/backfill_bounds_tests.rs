//! Bounds of planning: values a user or a peer controls (walltimes, chunk counts, clock values)
//! never overflow or hang a pass, and a reservation costs at most `MAX_TRIALS` placements.
//! Also MPS shares, which plans count as whole GPUs.

use job::{Chunk, Placement};

use super::backfill_tests::{occupy, running};
use super::{chunk, gpu_node, job, keys, node, request};
use crate::plan::MAX_TRIALS;
use crate::{schedule, ClusterView, MpsGpu, NodeView, Outcome, PendingJob, RunningJob, WaitReason};

fn pass(now: i64, nodes: Vec<NodeView>, mut running: Vec<RunningJob>, jobs: Vec<PendingJob>) -> Outcome {
    let nodes = occupy(nodes, &mut running);
    schedule(&ClusterView { nodes, jobs, now, running, backfill_depth: 1000, ..ClusterView::default() })
}

fn estimate(outcome: &Outcome, key: u64) -> Option<i64> {
    let wait = outcome.waits.iter().find(|wait| wait.key == key).expect("waits");
    wait.estimate.as_ref().map(|estimate| estimate.start)
}

#[test]
fn extreme_walltimes_and_clocks_saturate() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    for now in [0, i64::MAX - 10, i64::MAX, i64::MIN + 5] {
        let busy = vec![running(100, 0, 2, 0, i64::MAX), running(101, 0, 1, 0, i64::MIN)];
        let jobs = vec![
            PendingJob { walltime: u64::MAX, ..job(1, &four) },
            PendingJob { walltime: u64::MAX, ..job(2, &one) },
            PendingJob { walltime: 0, ..job(3, &one) },
        ];
        let outcome = pass(now, vec![node("n1", 4)], busy, jobs);
        for wait in &outcome.waits {
            if let Some(estimate) = &wait.estimate {
                assert!(estimate.start >= now, "{now}: {wait:?}");
            }
        }
        assert_eq!(outcome.starts.len() + outcome.waits.len(), 3);
    }
}

#[test]
fn a_billion_chunks_are_planned_in_bulk() {
    let many = request(vec![chunk(1_000_000_000, 0)], Placement::Free);
    let mut held = running(100, 0, 1, 0, 100);
    held.exclusive = true;
    let outcome = pass(0, vec![node("n1", 4), node("n2", 4)], vec![held], vec![job(1, &many)]);
    // Zero-cpu units fit n2 now in any number (can_ever_run refuses such a job at submit).
    assert_eq!(keys(&outcome.starts), [1]);
    let mut both = vec![running(100, 0, 1, 0, 100), running(101, 1, 1, 0, 200)];
    both.iter_mut().for_each(|job| job.exclusive = true);
    let outcome = pass(0, vec![node("n1", 4), node("n2", 4)], both, vec![job(1, &many)]);
    assert_eq!(estimate(&outcome, 1), Some(100));
}

/// `small` one-cpu nodes each busy until a distinct time, and a two-cpu node busy until 10,000:
/// a 2-cpu packed job passes the summed check at each small node's end but fits only the big
/// node, so it costs one placement per small node (but the first) before its true time.
fn fragmented(small: usize) -> Option<i64> {
    let mut nodes: Vec<NodeView> = (0..small).map(|index| node(&format!("s{index}"), 1)).collect();
    nodes.push(node("big", 2));
    let mut busy: Vec<RunningJob> =
        (0..small).map(|index| running(index as u64, index, 1, 0, 10 * (index as i64 + 1))).collect();
    busy.push(running(999, small, 2, 0, 10_000));
    let two = request(vec![chunk(1, 2)], Placement::Pack);
    estimate(&pass(0, nodes, busy, vec![job(1, &two)]), 1)
}

#[test]
fn a_reservation_costs_at_most_max_trials_placements() {
    assert_eq!(fragmented(MAX_TRIALS), Some(10_000), "{} failed placements, then the fit", MAX_TRIALS - 1);
    assert_eq!(fragmented(MAX_TRIALS + 1), None, "the budget runs out first");
}

#[test]
fn an_mps_share_is_planned_as_a_whole_gpu() {
    let mut shared = gpu_node("g1", 8, 1);
    shared.free_gpus.clear();
    shared.free_slots = (1..8).collect();
    shared.busy = true;
    shared.mps_gpus = vec![MpsGpu { index: 0, user: "alice".into(), used: 50, usable: true }];
    let mut alices = running(100, 0, 1, 0, 80);
    alices.assignments[0].gpus = vec![0];
    alices.assignments[0].mps = Some(50);
    let share = request(vec![Chunk { ngpus: 1, mps: Some(50), ..chunk(1, 1) }], Placement::Free);
    let bobs = PendingJob { user: "bob", ..job(1, &share) };
    let whole = request(vec![Chunk { ngpus: 1, ..chunk(1, 1) }], Placement::Free);
    let jobs = vec![bobs, job(2, &whole), PendingJob { walltime: 10, ..job(3, &share) }];
    let view =
        ClusterView { nodes: vec![shared], jobs, running: vec![alices], backfill_depth: 1, ..ClusterView::default() };
    let outcome = schedule(&view);
    let bob = outcome.waits.iter().find(|wait| wait.key == 1).unwrap();
    assert_eq!(bob.reason, WaitReason::Resource("ngpus".into()), "alice's GPU is not bob's to share");
    assert_eq!(bob.estimate.as_ref().map(|estimate| estimate.start), Some(80), "the GPU comes back whole at 80");
    // Alice's short share joins her GPU now: it takes no free GPU, so no reservation minds.
    assert_eq!(keys(&outcome.starts), [3]);
}

/// Every node down: no job can be planned, and a class found unplannable is not searched again
/// (100,000 queued jobs of a few shapes cost a few searches, not 100,000).
#[test]
fn an_unplannable_class_is_searched_once() {
    let mut nodes: Vec<NodeView> = (0..50).map(|index| node(&format!("n{index}"), 4)).collect();
    nodes.iter_mut().for_each(|node| node.available = false);
    let busy: Vec<RunningJob> = (0..50).map(|index| running(index as u64, index, 2, 0, 10 + index as i64)).collect();
    let shapes = [request(vec![chunk(1, 1)], Placement::Free), request(vec![chunk(2, 2)], Placement::Scatter)];
    let jobs: Vec<PendingJob> = (0..100_000).map(|key| job(key, &shapes[key as usize % 2])).collect();
    let outcome = pass(0, nodes, busy, jobs);
    assert!(outcome.starts.is_empty());
    assert!(outcome
        .waits
        .iter()
        .all(|wait| wait.estimate.is_none() && wait.reason == WaitReason::Resource("nodes".into())));
}
