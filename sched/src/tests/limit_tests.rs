//! Run limits (`ClusterView::limits`): a queue's `max_run` and a per-user share of it hold
//! jobs back without failing their request class, and no counter is overdrawn; server-level
//! consumable pools (`ClusterView::pools`) do the same by amount.

use job::Placement;

use super::{chunk, job, keys, node, request};
use crate::{schedule, ClusterView, PendingJob};

#[test]
fn a_per_user_limit_lets_another_users_job_start() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    // Counters: 0 = alice's share (2), 1 = bob's share (2). Alice's 20-job sweep came first.
    let alice: &[usize] = &[0];
    let bob: &[usize] = &[1];
    let mut jobs: Vec<PendingJob> = (0..20).map(|key| PendingJob { limits: alice, ..job(key, &one_cpu) }).collect();
    jobs.push(PendingJob { limits: bob, ..job(20, &one_cpu) });
    let view = ClusterView {
        nodes: vec![node("n1", 8)],
        jobs,
        limits: vec![2, 2],
        pools: Vec::new(),
        ..ClusterView::default()
    };
    assert_eq!(keys(&schedule(&view).starts), vec![0, 1, 20]);
}

#[test]
fn a_queue_limit_and_a_user_limit_both_count() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    // 0 = the queue's max_run (3), 1 = alice's share (2), 2 = bob's share (5).
    let (alice, bob): (&[usize], &[usize]) = (&[0, 1], &[0, 2]);
    let jobs = vec![
        PendingJob { limits: alice, ..job(1, &one_cpu) },
        PendingJob { limits: alice, ..job(2, &one_cpu) },
        PendingJob { limits: alice, ..job(3, &one_cpu) },
        PendingJob { limits: bob, ..job(4, &one_cpu) },
        PendingJob { limits: bob, ..job(5, &one_cpu) },
        job(6, &one_cpu),
    ];
    let view = ClusterView {
        nodes: vec![node("n1", 8)],
        jobs,
        limits: vec![3, 2, 5],
        pools: Vec::new(),
        ..ClusterView::default()
    };
    // Alice takes 2 (her share), bob 1 (the queue's last), and the unlimited job starts too.
    assert_eq!(keys(&schedule(&view).starts), vec![1, 2, 4, 6]);
}

#[test]
fn exhausted_or_unknown_counters_hold_jobs_back() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![PendingJob { limits: &[0], ..job(1, &one_cpu) }, PendingJob { limits: &[7], ..job(2, &one_cpu) }];
    let view =
        ClusterView { nodes: vec![node("n1", 8)], jobs, limits: vec![0], pools: Vec::new(), ..ClusterView::default() };
    assert!(schedule(&view).starts.is_empty());
}

#[test]
fn server_level_pools_hold_jobs_back_by_amount() {
    let one_cpu = request(vec![chunk(1, 1)], Placement::Free);
    let three: &[(usize, u64)] = &[(0, 3)];
    let jobs = vec![
        PendingJob { takes: three, ..job(1, &one_cpu) },
        PendingJob { takes: three, ..job(2, &one_cpu) },
        PendingJob { takes: &[(0, 1)], ..job(3, &one_cpu) },
        PendingJob { takes: &[(1, 1)], ..job(4, &one_cpu) },
        PendingJob { takes: &[(0, u64::MAX), (0, u64::MAX)], ..job(5, &one_cpu) },
    ];
    let view =
        ClusterView { nodes: vec![node("n1", 8)], jobs, limits: Vec::new(), pools: vec![4], ..ClusterView::default() };
    // 3 of 4 licences to the first, none left for the second, the last one to the third; the
    // fourth names a pool that does not exist, the fifth a sum past u64.
    assert_eq!(keys(&schedule(&view).starts), [1, 3]);
    let view = ClusterView { pools: vec![2], ..view };
    assert_eq!(keys(&schedule(&view).starts), [3], "the first job's licences are held by a running one");
}
