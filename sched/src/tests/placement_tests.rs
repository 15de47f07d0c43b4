//! Tests of placement: scatter, free, pack, GPUs, memory, properties and hosts, exclusive
//! requests, unusable nodes, and how assignments are merged and ordered.

use job::{Chunk, Placement};

use super::{chunk, exclusive, gpu_chunk, gpu_node, job, keys, node, nodes_of, request, run, GB};
use crate::Assignment;

#[test]
fn scatter_puts_every_unit_on_a_distinct_node() {
    let mut nodes = vec![node("n1", 8), node("n2", 4), node("n3", 2)];
    nodes[1].free_slots.clear();
    nodes[1].busy = true;
    let scatter = request(vec![chunk(2, 2)], Placement::Scatter);
    let decisions = run(nodes, vec![job(1, &scatter)]);
    // n1 could hold both units, but scatter wants two nodes: n1 and n3 (n2 is full).
    assert_eq!(nodes_of(&decisions[0]), vec![0, 2]);
    assert_eq!(decisions[0].assignments[0].slots, vec![0, 1]);
    assert_eq!(decisions[0].assignments[1].slots, vec![0, 1]);
}

#[test]
fn scatter_does_not_start_without_enough_nodes_but_free_shares_one() {
    let scatter = request(vec![chunk(2, 1)], Placement::Scatter);
    let free = request(vec![chunk(2, 1)], Placement::Free);
    let decisions = run(vec![node("n1", 8)], vec![job(1, &scatter), job(2, &free)]);
    assert_eq!(keys(&decisions), vec![2]);
    let expected =
        Assignment { node: 0, slots: vec![0, 1], gpus: vec![], mem: 0, mpiprocs: 2, mps: None, amounts: vec![] };
    assert_eq!(decisions[0].assignments, vec![expected]);
}

#[test]
fn free_units_fill_the_first_node_then_move_on() {
    let free = request(vec![chunk(3, 1), chunk(1, 2)], Placement::Free);
    let decisions = run(vec![node("n1", 3), node("n2", 4)], vec![job(1, &free)]);
    let assignments = &decisions[0].assignments;
    assert_eq!(nodes_of(&decisions[0]), vec![0, 1]);
    assert_eq!((assignments[0].slots.clone(), assignments[0].mpiprocs), (vec![0, 1, 2], 3));
    assert_eq!((assignments[1].slots.clone(), assignments[1].mpiprocs), (vec![0, 1], 1));
}

#[test]
fn the_first_node_used_comes_first_even_with_a_higher_index() {
    let pinned = Chunk { host: Some("n3".into()), ..chunk(1, 1) };
    let free = request(vec![pinned, chunk(1, 1)], Placement::Free);
    let nodes = vec![node("n1", 1), node("n2", 1), node("n3", 1)];
    let decisions = run(nodes, vec![job(1, &free)]);
    assert_eq!(nodes_of(&decisions[0]), vec![2, 0]);
}

#[test]
fn pack_puts_everything_on_one_node() {
    let pack = request(vec![Chunk { mpiprocs: 2, ..chunk(2, 2) }], Placement::Pack);
    let decisions = run(vec![node("n1", 2), node("n2", 4)], vec![job(1, &pack)]);
    let expected =
        Assignment { node: 1, slots: vec![0, 1, 2, 3], gpus: vec![], mem: 0, mpiprocs: 4, mps: None, amounts: vec![] };
    assert_eq!(decisions[0].assignments, vec![expected]);
    // Two 3-slot nodes hold the same cpus in total, but not on one node.
    let decisions = run(vec![node("n1", 3), node("n2", 3)], vec![job(1, &pack)]);
    assert!(decisions.is_empty(), "{decisions:?}");
}

#[test]
fn two_jobs_wanting_both_gpus_never_share_a_node() {
    let both = request(vec![gpu_chunk(1, 2)], Placement::Free);
    let decisions = run(vec![gpu_node("g1", 8, 2)], vec![job(1, &both), job(2, &both)]);
    assert_eq!(keys(&decisions), vec![1]);
    assert_eq!(decisions[0].assignments[0].gpus, vec![0, 1]);
    let nodes = vec![gpu_node("g1", 8, 2), gpu_node("g2", 8, 2)];
    let decisions = run(nodes, vec![job(1, &both), job(2, &both)]);
    assert_eq!(decisions.iter().map(nodes_of).collect::<Vec<_>>(), vec![vec![0], vec![1]]);
}

#[test]
fn four_single_gpu_jobs_on_a_two_gpu_node_start_two() {
    let one = request(vec![gpu_chunk(1, 1)], Placement::Free);
    let jobs = (1..=4).map(|key| job(key, &one)).collect();
    let decisions = run(vec![gpu_node("g1", 8, 2)], jobs);
    assert_eq!(keys(&decisions), vec![1, 2]);
    assert_eq!(decisions[0].assignments[0].gpus, vec![0]);
    assert_eq!(decisions[1].assignments[0].gpus, vec![1]);
}

#[test]
fn only_free_gpus_are_handed_out() {
    let mut g1 = gpu_node("g1", 8, 3);
    g1.free_gpus = vec![1];
    let two = request(vec![gpu_chunk(1, 2)], Placement::Free);
    let one = request(vec![gpu_chunk(1, 1)], Placement::Free);
    let decisions = run(vec![g1], vec![job(1, &two), job(2, &one)]);
    assert_eq!(keys(&decisions), vec![2]);
    assert_eq!(decisions[0].assignments[0].gpus, vec![1]);
}

#[test]
fn memory_is_never_given_twice() {
    let mut n1 = node("n1", 8);
    n1.mem_free = 4 * GB;
    let three = request(vec![Chunk { mem: Some(3 * GB), ..chunk(1, 1) }], Placement::Free);
    let decisions = run(vec![n1, node("n2", 1)], vec![job(1, &three), job(2, &three), job(3, &three)]);
    assert_eq!(keys(&decisions), vec![1, 2]);
    assert_eq!(nodes_of(&decisions[1]), vec![1]);
    assert_eq!(decisions[0].assignments[0].mem, 3 * GB);
}

#[test]
fn properties_and_hosts_select_nodes() {
    let mut nodes = vec![node("n1", 4), node("n2", 4), node("n3", 4)];
    nodes[0].properties = vec!["bigmem".into()];
    nodes[1].properties = vec!["gpu".into(), "fast".into()];
    let with = |host: Option<&str>, properties: &[&str]| {
        let properties = properties.iter().map(|p| p.to_string()).collect();
        request(vec![Chunk { host: host.map(str::to_string), properties, ..chunk(1, 1) }], Placement::Free)
    };
    let cases = [
        (with(None, &["fast"]), Some(1)),
        (with(None, &["bigmem"]), Some(0)),
        (with(None, &["n3"]), Some(2)),
        (with(Some("n3"), &[]), Some(2)),
        (with(Some("n2"), &["gpu"]), Some(1)),
        (with(None, &["bigmem", "fast"]), None),
        (with(Some("n1"), &["fast"]), None),
        (with(Some("n9"), &[]), None),
        (with(None, &["nosuch"]), None),
    ];
    for (request, expected) in &cases {
        let decisions = run(nodes.clone(), vec![job(1, request)]);
        let placed = decisions.first().map(|decision| decision.assignments[0].node);
        assert_eq!(placed, *expected, "{:?}", request.chunks[0]);
    }
}

#[test]
fn exclusive_takes_only_idle_nodes_and_closes_them() {
    let mut nodes = vec![node("n1", 8), node("n2", 8), node("n3", 8)];
    nodes[0].free_slots = vec![4, 5, 6, 7];
    nodes[0].busy = true;
    let excl = exclusive(vec![chunk(2, 1)], Placement::Free);
    let small = request(vec![chunk(1, 1)], Placement::Free);
    let decisions = run(nodes, vec![job(1, &excl), job(2, &small), job(3, &small), job(4, &excl)]);
    // Job 1 skips busy n1 and puts both its units on n2 (its own node may be shared by its
    // own units); n2 is then closed, so the small jobs go to n1; job 4 gets idle n3.
    assert_eq!(keys(&decisions), vec![1, 2, 3, 4]);
    assert_eq!(decisions[0].assignments[0].slots, vec![0, 1]);
    let placed: Vec<_> = decisions.iter().map(nodes_of).collect();
    assert_eq!(placed, vec![vec![1], vec![0], vec![0], vec![2]]);
}

#[test]
fn nodes_held_exclusively_or_unavailable_are_never_used() {
    let mut nodes = vec![node("n1", 8), node("n2", 8), node("n3", 8)];
    nodes[0].available = false;
    nodes[1].exclusive = true;
    nodes[1].busy = true;
    let small = request(vec![chunk(1, 1)], Placement::Free);
    let scatter = request(vec![chunk(2, 1)], Placement::Scatter);
    let decisions = run(nodes, vec![job(1, &scatter), job(2, &small)]);
    assert_eq!(keys(&decisions), vec![2]);
    assert_eq!(nodes_of(&decisions[0]), vec![2]);
}

#[test]
fn a_zero_cpu_unit_still_needs_a_usable_node() {
    let mut down = gpu_node("g1", 0, 1);
    down.available = false;
    let gpu_only = request(vec![Chunk { ncpus: 0, ..gpu_chunk(1, 1) }], Placement::Free);
    assert!(run(vec![down.clone()], vec![job(1, &gpu_only)]).is_empty());
    down.available = true;
    let decisions = run(vec![down], vec![job(1, &gpu_only)]);
    assert_eq!(decisions[0].assignments[0].gpus, vec![0]);
    assert!(decisions[0].assignments[0].slots.is_empty());
}

#[test]
fn a_billion_identical_units_are_placed_in_bulk() {
    // Units that need nothing all fit the first node (one by one, this took 13 s); units
    // with memory fill each node up to what its memory holds, then move on.
    let nothing = request(vec![Chunk { mpiprocs: 5, ..chunk(1_000_000_000, 0) }], Placement::Free);
    let decisions = run(vec![node("n1", 4), node("n2", 4)], vec![job(1, &nothing)]);
    let expected =
        Assignment { node: 0, slots: vec![], gpus: vec![], mem: 0, mpiprocs: u32::MAX, mps: None, amounts: vec![] };
    assert_eq!(decisions[0].assignments, vec![expected]);

    let mem = request(vec![Chunk { mem: Some(GB), ..chunk(20, 0) }], Placement::Free);
    let decisions = run(vec![node("n1", 4), node("n2", 4)], vec![job(1, &mem)]);
    let mems: Vec<(usize, u64, u32)> = decisions[0].assignments.iter().map(|a| (a.node, a.mem, a.mpiprocs)).collect();
    assert_eq!(mems, vec![(0, 16 * GB, 16), (1, 4 * GB, 4)]);
}
