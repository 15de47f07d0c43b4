//! Tests of the policy: priority order, FIFO tie-break, greedy skipping, request classes,
//! determinism and a 1,000-node cluster.

use job::Placement;

use super::{chunk, exclusive, job, keys, node, request, run};
use crate::{schedule, ClusterView, PendingJob};

#[test]
fn queue_priority_then_priority_then_order() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    let with = |key, queue_priority, priority, order| PendingJob {
        key,
        queue_priority,
        priority,
        order,
        request: &one_cpu,
        limits: &[],
        user: "u",
        takes: &[],
        ..crate::tests::job(key, &one_cpu)
    };
    let jobs = vec![with(1, 0, 10, 1), with(2, 1, 0, 5), with(3, 0, 10, 0), with(4, 0, 0, 2), with(5, 1, -5, 0)];
    // Three slots: only the three best jobs start, in policy order.
    let decisions = run(vec![node("n1", 3)], jobs);
    assert_eq!(keys(&decisions), vec![2, 5, 3]);
}

#[test]
fn equal_priorities_start_in_submission_order() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    // The view lists the jobs newest first; `order`, not view position or key, decides.
    let jobs = (0..4).map(|index| PendingJob { key: 10 + index, order: 100 - index, ..job(0, &one_cpu) }).collect();
    let decisions = run(vec![node("n1", 2)], jobs);
    assert_eq!(keys(&decisions), vec![13, 12]);
}

#[test]
fn a_job_that_does_not_fit_is_skipped_without_reservation() {
    let big = request(vec![chunk(1, 4)], Placement::Free);
    let small = request(vec![chunk(1, 1)], Placement::Free);
    let mut nodes = vec![node("n1", 4)];
    nodes[0].free_slots = vec![1, 2];
    nodes[0].busy = true;
    let decisions = run(nodes, vec![job(1, &big), job(2, &small), job(3, &big), job(4, &small)]);
    assert_eq!(keys(&decisions), vec![2, 4]);
    assert_eq!(decisions[0].assignments[0].slots, vec![1]);
    assert_eq!(decisions[1].assignments[0].slots, vec![2]);
}

#[test]
fn a_failed_class_does_not_block_other_classes() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let two_again = request(vec![chunk(1, 2)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    // 3 slots: job 1 takes 2, job 2 (same class) fails, job 3 (equal request, other
    // allocation) is skipped with it, job 4 (another class) still gets the last slot.
    let jobs = vec![job(1, &two), job(2, &two), job(3, &two_again), job(4, &one)];
    let decisions = run(vec![node("n1", 3)], jobs);
    assert_eq!(keys(&decisions), vec![1, 4]);
}

#[test]
fn exclusivity_and_placement_are_part_of_the_class() {
    let mut nodes = vec![node("n1", 4)];
    nodes[0].free_slots = vec![2, 3];
    nodes[0].busy = true;
    let alone = exclusive(vec![chunk(2, 1)], Placement::Free);
    let apart = request(vec![chunk(2, 1)], Placement::Scatter);
    let shared = request(vec![chunk(2, 1)], Placement::Free);
    // Same chunks each time: the first two fail (busy node, one node), the third must not be
    // skipped as if it were the same request.
    let decisions = run(nodes, vec![job(1, &alone), job(2, &apart), job(3, &shared)]);
    assert_eq!(keys(&decisions), vec![3]);
}

#[test]
fn a_request_without_chunks_never_starts() {
    let nothing = request(vec![chunk(0, 1)], Placement::Free);
    let empty = request(Vec::new(), Placement::Pack);
    let decisions = run(vec![node("n1", 2)], vec![job(1, &nothing), job(2, &empty)]);
    assert!(decisions.is_empty(), "{decisions:?}");
}

#[test]
fn the_same_view_gives_the_same_decisions() {
    let shapes = [
        request(vec![chunk(2, 3)], Placement::Scatter),
        request(vec![chunk(3, 1)], Placement::Free),
        request(vec![chunk(1, 5)], Placement::Pack),
    ];
    let nodes: Vec<_> = (0..20).map(|index| node(&format!("n{index}"), 1 + index % 7)).collect();
    let jobs: Vec<_> = (0..60).map(|key| job(key, &shapes[key as usize % 3])).collect();
    let view = ClusterView { nodes, jobs, ..ClusterView::default() };
    let first = schedule(&view).starts;
    assert!(!first.is_empty());
    assert_eq!(first, schedule(&view).starts);
}

#[test]
fn a_thousand_nodes() {
    let nodes: Vec<_> = (0..1000).map(|index| node(&format!("n{index}"), 8)).collect();
    let wide = request(vec![chunk(1000, 1)], Placement::Scatter);
    let pair = request(vec![chunk(1, 2)], Placement::Free);
    let mut jobs = vec![PendingJob { priority: 1, ..job(0, &wide) }];
    jobs.extend((1..=5000).map(|key| job(key, &pair)));
    let decisions = run(nodes, jobs);
    // The wide job takes one slot per node; 7 slots remain per node, room for 3 pairs each.
    assert_eq!(decisions[0].key, 0);
    assert_eq!(decisions[0].assignments.len(), 1000);
    assert_eq!(decisions.len(), 1 + 3000);
    let last = decisions.last().unwrap();
    assert_eq!(last.key, 3000);
    assert_eq!(last.assignments[0].node, 999);
    assert_eq!(last.assignments[0].slots, vec![5, 6]);
}

#[test]
fn a_pass_stops_at_its_most_starts_in_priority_order() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    let jobs: Vec<PendingJob> =
        (0..6).map(|index| PendingJob { key: index, order: index, ..job(0, &one_cpu) }).collect();
    let mut view = ClusterView { nodes: vec![node("n1", 8)], jobs, max_starts: Some(4), ..ClusterView::default() };
    let outcome = schedule(&view);
    assert_eq!(keys(&outcome.starts), vec![0, 1, 2, 3]);
    assert!(outcome.waits.is_empty(), "the jobs after the bound are left to the next pass");
    view.max_starts = None;
    assert_eq!(keys(&schedule(&view).starts), vec![0, 1, 2, 3, 4, 5]);
}
