//! MPS shares: at most 100 % per GPU, one user per shared GPU, and shared GPUs never handed
//! out whole.

use super::*;
use crate::MpsGpu;

/// One chunk of one cpu with a share of `percent` of one GPU.
fn share(percent: u8) -> ResourceRequest {
    request(vec![Chunk { mps: Some(percent), ..gpu_chunk(1, 1) }], Placement::Pack)
}

fn owned_by<'a>(key: u64, user: &'a str, request: &'a ResourceRequest) -> PendingJob<'a> {
    PendingJob { user, ..job(key, request) }
}

/// `(key, node, gpu, percent)` of each decision.
fn placed(decisions: &[Decision]) -> Vec<(u64, usize, u32, Option<u8>)> {
    decisions.iter().map(|d| (d.key, d.assignments[0].node, d.assignments[0].gpus[0], d.assignments[0].mps)).collect()
}

#[test]
fn four_quarter_shares_fill_one_gpu_and_a_fifth_waits() {
    let quarter = share(25);
    let jobs = (1..=5).map(|key| job(key, &quarter)).collect();
    let decisions = run(vec![gpu_node("n1", 8, 1)], jobs);
    let expected: Vec<_> = (1..=4).map(|key| (key, 0, 0, Some(25))).collect();
    assert_eq!(placed(&decisions), expected);
}

#[test]
fn another_users_share_never_joins_a_shared_gpu() {
    let quarter = share(25);
    let jobs = vec![owned_by(1, "alice", &quarter), owned_by(2, "bob", &quarter), owned_by(3, "alice", &quarter)];
    // One GPU: bob waits while alice shares it.
    assert_eq!(placed(&run(vec![gpu_node("n1", 8, 1)], jobs.clone())), vec![(1, 0, 0, Some(25)), (3, 0, 0, Some(25))]);
    // Two GPUs: bob gets his own.
    let two = run(vec![gpu_node("n1", 8, 2)], jobs);
    assert_eq!(placed(&two), vec![(1, 0, 0, Some(25)), (2, 0, 1, Some(25)), (3, 0, 0, Some(25))]);
}

#[test]
fn shares_from_the_view_count_and_unusable_ones_are_not_joined() {
    let mut node = gpu_node("n1", 8, 3);
    node.free_gpus = vec![2];
    node.mps_gpus = vec![
        MpsGpu { index: 0, user: "alice".into(), used: 75, usable: true },
        MpsGpu { index: 1, user: "alice".into(), used: 10, usable: false },
    ];
    let (quarter, half) = (share(25), share(50));
    let jobs = vec![job(1, &half), job(2, &quarter), job(3, &quarter)];
    // The half cannot join GPU 0 (75 + 50) nor the unusable GPU 1: it takes the free GPU 2.
    // The first quarter fills GPU 0; the second joins the half on GPU 2.
    assert_eq!(placed(&run(vec![node], jobs)), vec![(1, 0, 2, Some(50)), (2, 0, 0, Some(25)), (3, 0, 2, Some(25))]);
}

#[test]
fn a_gpu_shared_in_this_pass_is_not_given_whole() {
    let quarter = share(25);
    let whole = request(vec![gpu_chunk(1, 1)], Placement::Free);
    let jobs = vec![job(1, &quarter), job(2, &whole), job(3, &whole)];
    let decisions = run(vec![gpu_node("n1", 8, 2)], jobs);
    assert_eq!(keys(&decisions), vec![1, 2], "one GPU shared, the other whole, none left for job 3");
    assert_eq!(decisions[1].assignments[0].gpus, vec![1]);
    assert_eq!(decisions[1].assignments[0].mps, None);
}

#[test]
fn a_share_needs_its_cpus_and_memory_too() {
    let big = request(vec![Chunk { ncpus: 4, mem: Some(32 * GB), mps: Some(25), ..gpu_chunk(1, 1) }], Placement::Pack);
    assert!(run(vec![gpu_node("n1", 8, 1)], vec![job(1, &big)]).is_empty(), "16gb node");
    let mut full = gpu_node("n1", 8, 1);
    full.free_slots.clear();
    assert!(run(vec![full], vec![job(1, &share(25))]).is_empty(), "no free cpu");
}
