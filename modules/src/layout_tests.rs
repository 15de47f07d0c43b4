//! The imports among sibling files have no cycle: among `modules/src/*.rs` (through `crate::x`
//! paths) and among `modules/src/tcl/*.rs` (through `super::x` and `crate::tcl::x`). A child
//! module (`tcl/mathfunc.rs` under `expr.rs`, the `*_tests.rs` files) is part of its parent's
//! file and not checked; a name re-exported by a parent (`tcl::format_list`) is not followed.
//! A small text scan rather than `cargo modules`, which is a separate tool the tests cannot run.

use std::collections::BTreeMap;
use std::path::Path;

/// The names a source text follows `prefix` with (`use P::a::b`, `P::a::f()`, `use P::{a, b::c}`),
/// comments left out, each once, in order. `prefix` ends with `::`.
fn paths_after(source: &str, prefix: &str) -> Vec<String> {
    let code: String = source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut names = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + prefix.len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let items = match after.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or("").split(',').map(str::trim).collect(),
            None => vec![after],
        };
        for item in items {
            let name: String = item.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// Each file of `dir` (`mod.rs` and `*_tests.rs` left out) with the siblings it names after
/// any of `prefixes`.
fn graph(dir: &Path, prefixes: &[&str]) -> BTreeMap<String, Vec<String>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_some_and(|ext| ext == "rs") && stem != "mod" && !stem.ends_with("_tests") {
            files.insert(stem, std::fs::read_to_string(&path).unwrap());
        }
    }
    let edges = |(stem, text): (&String, &String)| {
        let named = prefixes.iter().flat_map(|prefix| paths_after(text, prefix));
        let mut siblings: Vec<String> = named.filter(|name| name != stem && files.contains_key(name)).collect();
        siblings.dedup();
        (stem.clone(), siblings)
    };
    files.iter().map(edges).collect()
}

/// A cycle of `graph`, as the files along it (first one repeated at the end), if there is one.
fn cycle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> bool {
        if let Some(at) = path.iter().position(|seen| seen == node) {
            path.drain(..at);
            path.push(node.to_string());
            return true;
        }
        if done.iter().any(|finished| finished == node) {
            return false;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if visit(next, graph, path, done) {
                return true;
            }
        }
        path.pop();
        done.push(node.to_string());
        false
    }
    let (mut path, mut done) = (Vec::new(), Vec::new());
    graph.keys().find(|node| visit(node, graph, &mut path, &mut done)).map(|_| path)
}

#[test]
fn the_files_of_the_crate_import_each_other_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_eq!(cycle(&graph(&src, &["crate::"])), None);
}

#[test]
fn the_files_of_the_tcl_interpreter_import_each_other_without_a_cycle() {
    let tcl = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tcl");
    assert_eq!(cycle(&graph(&tcl, &["super::", "crate::tcl::"])), None);
}

#[test]
fn the_scanner_reads_every_path_form_and_finds_cycles() {
    let source =
        "//! crate::ops in a comment\nuse crate::eval::{self, Mode};\nuse crate::{find, session::Session,\n state};\n\
                  fn f() { crate::tcl::list::x(); } // crate::cmd\n";
    assert_eq!(paths_after(source, "crate::"), ["eval", "find", "session", "state", "tcl"]);
    assert_eq!(paths_after("use super::{list::parse_list, error};", "super::"), ["list", "error"]);
    let edges = |pairs: &[(&str, &[&str])]| {
        pairs.iter().map(|(from, to)| (from.to_string(), to.iter().map(|s| s.to_string()).collect())).collect()
    };
    let cyclic = edges(&[("a", &["b"]), ("b", &["c"]), ("c", &["a"]), ("d", &["a"])]);
    assert_eq!(cycle(&cyclic), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    assert_eq!(cycle(&edges(&[("a", &["b", "c"]), ("b", &["c"]), ("c", &[])])), None);
}
