//! Tests of `can_ever_run`: accepted requests, and the message for each kind of refusal.

use job::{Chunk, Placement, ResourceRequest};

use super::{chunk, gpu_chunk, gpu_node, node, request, GB};
use crate::{can_ever_run, NodeView};

fn cluster() -> Vec<NodeView> {
    let mut nodes = vec![node("n1", 4), node("n2", 4), gpu_node("g1", 2, 1)];
    nodes[0].properties = vec!["bigmem".into()];
    nodes[0].mem_total = 64 * GB;
    nodes[1].properties = vec!["fast".into()];
    nodes
}

fn check(request: &ResourceRequest) -> Result<(), String> {
    can_ever_run(request, &cluster())
}

fn with_properties(properties: &[&str]) -> Chunk {
    Chunk { properties: properties.iter().map(|p| p.to_string()).collect(), ..chunk(1, 1) }
}

#[test]
fn requests_that_fit_an_empty_cluster_are_accepted() {
    assert_eq!(check(&request(vec![chunk(3, 2)], Placement::Scatter)), Ok(()));
    assert_eq!(check(&request(vec![chunk(10, 1)], Placement::Free)), Ok(()));
    assert_eq!(check(&request(vec![gpu_chunk(1, 1)], Placement::Pack)), Ok(()));
    // Down, busy and exclusively held nodes count as empty and up.
    let mut nodes = cluster();
    for node in &mut nodes {
        node.available = false;
        node.busy = true;
        node.exclusive = true;
        node.free_slots.clear();
        node.mem_free = 0;
    }
    assert_eq!(can_ever_run(&request(vec![chunk(1, 4)], Placement::Free), &nodes), Ok(()));
}

#[test]
fn too_many_cpus_gpus_or_memory_on_one_node() {
    let cpus = request(vec![chunk(1, 64)], Placement::Free);
    assert_eq!(check(&cpus), Err("needs 64 cpus on one node; the largest node has 4".into()));
    let gpus = request(vec![gpu_chunk(1, 2)], Placement::Free);
    assert_eq!(check(&gpus), Err("needs 2 gpus on one node; the node with the most has 1".into()));
    let mem = request(vec![Chunk { mem: Some(128 * GB), ..chunk(1, 1) }], Placement::Free);
    assert_eq!(check(&mem), Err("needs 128gb of memory on one node; the node with the most has 64gb".into()));
    let both = request(vec![Chunk { ncpus: 4, ..gpu_chunk(1, 1) }], Placement::Free);
    assert_eq!(check(&both), Err("needs 4 cpus and 1 gpus on one node; no node has all of these".into()));
}

#[test]
fn the_limits_of_matching_nodes_are_named() {
    let fast = Chunk { ncpus: 8, ..with_properties(&["fast"]) };
    assert_eq!(
        check(&request(vec![fast], Placement::Free)),
        Err("needs 8 cpus on one node; the largest node with fast has 4".into())
    );
}

#[test]
fn unknown_hosts_and_properties() {
    let host = Chunk { host: Some("n9".into()), ..chunk(1, 1) };
    assert_eq!(check(&request(vec![host], Placement::Free)), Err("host 'n9' is not a node of this server".into()));
    assert_eq!(
        check(&request(vec![with_properties(&["huge"])], Placement::Free)),
        Err("no node has property 'huge'".into())
    );
    assert_eq!(
        check(&request(vec![with_properties(&["fast", "bigmem"])], Placement::Free)),
        Err("no node has all of: bigmem, fast".into())
    );
    // A node name works as a property.
    assert_eq!(check(&request(vec![with_properties(&["g1"])], Placement::Free)), Ok(()));
}

#[test]
fn the_failing_chunk_is_numbered_when_there_are_several() {
    let chunks = vec![chunk(1, 1), chunk(1, 16)];
    assert_eq!(
        check(&request(chunks, Placement::Free)),
        Err("chunk 2: needs 16 cpus on one node; the largest node has 4".into())
    );
}

#[test]
fn too_few_distinct_nodes_for_scatter() {
    assert_eq!(
        check(&request(vec![chunk(4, 1)], Placement::Scatter)),
        Err("needs 4 distinct nodes (place=scatter); only 3 can hold a chunk of 1 cpus".into())
    );
    assert_eq!(
        check(&request(vec![chunk(3, 4)], Placement::Scatter)),
        Err("needs 3 distinct nodes (place=scatter); only 2 can hold a chunk of 4 cpus".into())
    );
    assert_eq!(
        check(&request(vec![chunk(2, 1), chunk(2, 2)], Placement::Scatter)),
        Err("needs 4 distinct nodes (place=scatter); only 3 can hold one of its chunks".into())
    );
}

#[test]
fn too_much_in_total_or_on_one_node_for_pack() {
    assert_eq!(
        check(&request(vec![chunk(11, 1)], Placement::Free)),
        Err("needs 11 cpus in total; the nodes it may use have 10".into())
    );
    assert_eq!(
        check(&request(vec![chunk(2, 3)], Placement::Pack)),
        Err("place=pack: needs 6 cpus on one node; the largest node has 4".into())
    );
}

#[test]
fn nothing_requested_is_refused() {
    assert!(check(&request(Vec::new(), Placement::Free)).is_err());
    assert!(check(&request(vec![chunk(0, 1)], Placement::Free)).is_err());
}

#[test]
fn first_fit_failure_on_an_empty_cluster_is_refused() {
    // The one-cpu unit lands on big n1 first, leaving too little for the 4-cpu bigmem unit,
    // although the totals and each unit alone would fit.
    let nodes = {
        let mut nodes = vec![node("n1", 4), node("n2", 1)];
        nodes[0].properties = vec!["bigmem".into()];
        nodes
    };
    let big = Chunk { ncpus: 4, ..with_properties(&["bigmem"]) };
    let err = can_ever_run(&request(vec![chunk(1, 1), big], Placement::Free), &nodes).unwrap_err();
    assert!(err.starts_with("does not fit on the nodes even when all of them are empty"), "{err}");
}

#[test]
fn more_chunks_than_cpu_slots_or_gpus_are_refused_whatever_they_ask() {
    // n1 and n2 hold 4 chunks each, g1 2 (its cpus; it has 1 GPU): 10 in all.
    for place in [Placement::Free, Placement::Pack] {
        assert_eq!(check(&request(vec![chunk(10, 0)], place)), Ok(()), "{place:?}");
        let err = check(&request(vec![chunk(1_000_000_000, 0)], place)).unwrap_err();
        assert_eq!(
            err,
            "asks for 1000000000 chunks; the nodes it may use hold at most 10 (one chunk per cpu slot or GPU)"
        );
    }
    assert!(check(&request(vec![chunk(6, 0), chunk(5, 0)], Placement::Free)).unwrap_err().starts_with("asks for 11"));
    // Only the nodes a chunk may use count: bigmem is n1 alone.
    let bigmem = Chunk { count: 5, ..with_properties(&["bigmem"]) };
    assert!(check(&request(vec![Chunk { ncpus: 0, ..bigmem }], Placement::Free)).unwrap_err().contains("at most 4"));
    // A node with more GPUs than cpus holds a GPU-only chunk per GPU.
    let nodes = vec![gpu_node("g", 1, 4)];
    assert_eq!(can_ever_run(&request(vec![Chunk { ncpus: 0, ..gpu_chunk(4, 1) }], Placement::Free), &nodes), Ok(()));
}
