//! Host-level consumable site resources (flag `n`): a chunk's amounts fit a node only while
//! `available - assigned` holds them; units on one node add up; sums never wrap.

use job::{Chunk, Placement};

use super::{chunk, job, keys, node, request, run, GB};
use crate::{can_ever_run, NodeView, SiteAmount};

/// A node of 4 cpus with `scratch` available and `held` of it assigned.
fn scratch_node(name: &str, available: u64, held: u64) -> NodeView {
    let amounts = vec![SiteAmount { name: "scratch".into(), available, assigned: held }];
    NodeView { amounts, ..node(name, 4) }
}

/// `count` chunks of one cpu and `each` bytes of scratch.
fn scratch_chunk(count: u32, each: u64) -> Chunk {
    Chunk { amounts: vec![("scratch".into(), each)], ..chunk(count, 1) }
}

#[test]
fn a_second_job_waits_while_the_first_holds_the_amount() {
    let first = request(vec![scratch_chunk(1, 60 * GB)], Placement::Free);
    let second = request(vec![scratch_chunk(1, 60 * GB)], Placement::Free);
    let decisions = run(vec![scratch_node("n1", 100 * GB, 0)], vec![job(1, &first), job(2, &second)]);
    assert_eq!(keys(&decisions), [1], "60gb + 60gb is more than 100gb");
    assert_eq!(decisions[0].assignments[0].amounts, [("scratch".to_string(), 60 * GB)]);
    // The first runs (the server counts it as assigned): the second still does not fit.
    assert!(run(vec![scratch_node("n1", 100 * GB, 60 * GB)], vec![job(2, &second)]).is_empty());
    // The first ended (nothing assigned): the second starts.
    assert_eq!(keys(&run(vec![scratch_node("n1", 100 * GB, 0)], vec![job(2, &second)])), [2]);
    assert_eq!(keys(&run(vec![scratch_node("n1", 100 * GB, 40 * GB)], vec![job(2, &second)])), [2], "exactly fits");
}

#[test]
fn units_on_one_node_count_once_each() {
    let two = request(vec![scratch_chunk(2, 40 * GB)], Placement::Free);
    let decisions = run(vec![scratch_node("n1", 100 * GB, 0)], vec![job(1, &two)]);
    assert_eq!(decisions[0].assignments[0].amounts, [("scratch".to_string(), 80 * GB)]);
    let three = request(vec![scratch_chunk(3, 40 * GB)], Placement::Free);
    let nodes = vec![scratch_node("n1", 100 * GB, 0), scratch_node("n2", 100 * GB, 0)];
    let decisions = run(nodes.clone(), vec![job(1, &three)]);
    let given: Vec<(usize, u64)> =
        decisions[0].assignments.iter().map(|share| (share.node, share.amounts[0].1)).collect();
    assert_eq!(given, [(0, 80 * GB), (1, 40 * GB)], "the third 40gb does not fit beside two on n1");
    // Two chunk specifications on one node add up too (place=pack: one node for all).
    let packed = request(vec![scratch_chunk(1, 60 * GB), scratch_chunk(1, 60 * GB)], Placement::Pack);
    assert!(run(nodes.clone(), vec![job(1, &packed)]).is_empty());
    assert!(can_ever_run(&packed, &nodes).is_err());
}

#[test]
fn nodes_without_the_resource_or_lowered_below_use_take_nothing() {
    let want = request(vec![scratch_chunk(1, GB)], Placement::Free);
    let decisions = run(vec![node("plain", 4), scratch_node("n2", 10 * GB, 0)], vec![job(1, &want)]);
    assert_eq!(decisions[0].assignments[0].node, 1, "a node without scratch has none of it");
    // An operator lowered available below what runs there: nothing more, no underflow.
    assert!(run(vec![scratch_node("n1", 10 * GB, 50 * GB)], vec![job(1, &want)]).is_empty());
}

#[test]
fn can_ever_run_refuses_more_than_any_node_has() {
    let nodes = vec![scratch_node("n1", 100 * GB, 90 * GB), scratch_node("n2", 50 * GB, 0)];
    let fits = request(vec![scratch_chunk(1, 100 * GB)], Placement::Free);
    assert_eq!(can_ever_run(&fits, &nodes), Ok(()), "assigned does not matter at submit");
    let too_big = request(vec![scratch_chunk(1, 101 * GB)], Placement::Free);
    let expected = format!("needs scratch={} on one node; the node with the most has scratch={}", 101 * GB, 100 * GB);
    assert_eq!(can_ever_run(&too_big, &nodes), Err(expected));
    let scattered = request(vec![scratch_chunk(2, 60 * GB)], Placement::Scatter);
    assert!(can_ever_run(&scattered, &nodes).is_err(), "only n1 can hold 60gb");
}

#[test]
fn sums_past_u64_never_fit_and_never_wrap() {
    let nodes = vec![scratch_node("n1", u64::MAX, 0)];
    let huge = u64::MAX / 2 + 1;
    // Two units of u64::MAX/2+1: 2 * huge wraps to 0 in unchecked arithmetic.
    let packed = request(vec![scratch_chunk(2, huge)], Placement::Pack);
    assert!(run(nodes.clone(), vec![job(1, &packed)]).is_empty());
    assert!(can_ever_run(&packed, &nodes).is_err());
    let free = request(vec![scratch_chunk(2, huge)], Placement::Free);
    assert!(run(nodes.clone(), vec![job(1, &free)]).is_empty(), "one unit fits, two do not");
    let one = request(vec![scratch_chunk(1, huge)], Placement::Free);
    assert_eq!(keys(&run(nodes, vec![job(1, &one)])), [1]);
    // Many units of a zero amount: bounded by the cpus, not by the amount.
    let zero = request(vec![scratch_chunk(4, 0)], Placement::Free);
    assert_eq!(keys(&run(vec![scratch_node("n1", 0, 0)], vec![job(1, &zero)])), [1]);
}
