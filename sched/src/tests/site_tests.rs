//! Site resources among node requirements: a string value (`gpu_type=a100`), a string_array
//! item (`feature=ib`) and a boolean asked `False` (`!bigmem`) match nodes' `resources_available`
//! as the server lists them in `NodeView::properties`.

use job::{Chunk, Placement};

use super::{gpu_chunk, gpu_node, job, request, run};
use crate::{can_ever_run, NodeView};

fn cluster() -> Vec<NodeView> {
    let mut nodes = vec![gpu_node("n1", 2, 1), gpu_node("n2", 2, 1), gpu_node("n3", 2, 1)];
    nodes[0].properties = vec!["gpu_type=v100".into(), "bigmem".into()];
    nodes[1].properties = vec!["gpu_type=a100".into(), "bigmem".into(), "feature=ib".into()];
    nodes[2].properties = vec!["gpu_type=a100".into(), "feature=ib".into(), "feature=nvme".into()];
    nodes
}

fn wanting(properties: &[&str]) -> Chunk {
    Chunk { properties: properties.iter().map(|p| p.to_string()).collect(), ..gpu_chunk(1, 1) }
}

/// The node names each job (in order) started on.
fn placed(chunks: Vec<Vec<&str>>) -> Vec<String> {
    let requests: Vec<_> =
        chunks.iter().map(|properties| request(vec![wanting(properties)], Placement::Free)).collect();
    let nodes = cluster();
    let jobs = requests.iter().enumerate().map(|(key, request)| job(key as u64, request)).collect();
    run(nodes.clone(), jobs).iter().map(|decision| nodes[decision.assignments[0].node].name.clone()).collect()
}

#[test]
fn string_values_match_only_nodes_with_that_value() {
    assert_eq!(placed(vec![vec!["gpu_type=a100"], vec!["gpu_type=a100"], vec!["gpu_type=a100"]]), ["n2", "n3"]);
    assert_eq!(placed(vec![vec!["gpu_type=v100"]]), ["n1"]);
}

#[test]
fn array_items_and_false_booleans_narrow_the_nodes() {
    assert_eq!(placed(vec![vec!["feature=nvme"]]), ["n3"]);
    assert_eq!(placed(vec![vec!["!bigmem"]]), ["n3"]);
    assert_eq!(placed(vec![vec!["!bigmem", "gpu_type=v100"]]), Vec::<String>::new());
    assert_eq!(placed(vec![vec!["feature=ib", "bigmem"]]), ["n2"]);
}

#[test]
fn can_ever_run_names_the_missing_value() {
    let check = |properties: &[&str]| can_ever_run(&request(vec![wanting(properties)], Placement::Free), &cluster());
    assert_eq!(check(&["gpu_type=a100"]), Ok(()));
    assert_eq!(check(&["!bigmem"]), Ok(()));
    assert_eq!(check(&["gpu_type=h100"]), Err("no node has gpu_type=h100".to_string()));
    let mut all_big = cluster();
    for node in &mut all_big {
        node.properties.push("bigmem".into());
    }
    let refused = can_ever_run(&request(vec![wanting(&["!bigmem"])], Placement::Free), &all_big);
    assert_eq!(refused, Err("every node has bigmem=True".to_string()));
}

#[test]
fn numbers_match_nodes_with_at_least_that_much() {
    let mut nodes = cluster();
    nodes[0].properties.extend(["pcmem=8gb".to_string(), format!("pcmem:{}", 8u64 << 30)]);
    nodes[2].properties.extend(["pcmem=2gb".to_string(), format!("pcmem:{}", 2u64 << 30)]);
    let want = |gb: u64| request(vec![wanting(&[&format!("pcmem>={}", gb << 30)])], Placement::Free);
    let (four, eight, nine) = (want(4), want(8), want(9));
    let jobs = vec![job(0, &four), job(1, &eight)];
    let placed: Vec<usize> = run(nodes.clone(), jobs).iter().map(|d| d.assignments[0].node).collect();
    assert_eq!(placed, [0], "only n1 has 8gb; its one GPU goes to the first");
    assert_eq!(can_ever_run(&nine, &nodes), Err(format!("no node has pcmem>={}", 9u64 << 30)));
    assert_eq!(can_ever_run(&eight, &nodes), Ok(()));
}
