//! A property test (proptest, fixed seed): thousands of strings built from pieces of the
//! grammars (and some hostile characters) go through every parser of this crate, which must
//! return `Ok` or `Err` and never panic. Errors must point inside their input.

use crate::array::{parse_openpbs, parse_torque};
use crate::directives::extract;
use crate::duration::parse_duration;
use crate::resources::{merge_directive_lists, parse_list, ResourceError, ResourceRequest};
use crate::size::Size;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::cell::Cell;

/// Pieces the strings are built from: grammar tokens, separators, quotes, escapes, line ends,
/// digits, multi-byte characters.
const PIECES: &[&str] = &[
    "nodes=",
    "select=",
    "place=",
    "walltime=",
    "mem=",
    "ncpus=",
    "ngpus=",
    "procs=",
    "host=",
    "cput=",
    "ppn=",
    "gpus=",
    "mics=",
    "mpiprocs=",
    "vnode=",
    "gpu=True",
    "excl",
    "scatter",
    "free",
    "pack",
    "exclusive_process",
    "#excl",
    "#PBS",
    "#PBS ",
    "#!",
    ":",
    "+",
    ",",
    "=",
    "'",
    "\"",
    "\\",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "#",
    ".",
    "-",
    "0",
    "1",
    "2",
    "9",
    "99999999999",
    "4294967295",
    "65536",
    "g",
    "kb",
    "w",
    "e",
    "é",
    "名",
    "\u{0}",
    "-N",
    "-l",
    "%",
    "%2",
    "1-10",
    "echo hi",
    ":",
    "x",
];

/// A string of up to 11 pieces.
fn text() -> impl Strategy<Value = String> {
    vec(select(PIECES), 0..12).prop_map(|pieces| pieces.concat())
}

/// A script whose lines are mostly directives.
fn script() -> impl Strategy<Value = String> {
    let line = (select(&["#PBS ", "#PBS -l ", "  #PBS", ""][..]), text());
    vec(line, 0..6).prop_map(|lines| lines.iter().map(|(start, rest)| format!("{start}{rest}\n")).collect())
}

/// A resource list whose items mostly have the `name=value` shape.
fn list() -> impl Strategy<Value = String> {
    let item = (select(KNOWN), text()).prop_map(|(name, rest)| format!("{name}{rest}"));
    vec(item, 1..4).prop_map(|items| items.join(","))
}

/// One round's inputs: a string, a script, a directive prefix, a list (or the string again),
/// a known name with a value and a `mem` value.
#[derive(Debug, Clone)]
struct Case {
    text: String,
    script: String,
    prefix: String,
    list: String,
    name: &'static str,
    value: String,
    mem: String,
}

fn case() -> impl Strategy<Value = Case> {
    let parts = (text(), script(), text(), list(), any::<bool>(), select(KNOWN), text(), text());
    parts.prop_map(|(text, script, prefix, list, use_list, name, value, mem)| Case {
        list: if use_list { list } else { text.clone() },
        text,
        script,
        prefix,
        name: name.trim_end_matches('='),
        value,
        mem,
    })
}

/// Resource names with their `=`, to start list items.
const KNOWN: &[&str] = &["nodes=", "select=", "place=", "walltime=", "mem=", "ncpus=", "ngpus=", "procs=", "host="];

fn check_error(error: &ResourceError) {
    assert!(error.column <= error.input.chars().count(), "{error:?}");
    let _ = error.caret_display();
}

/// How often each successful path was reached.
#[derive(Default)]
struct Reached {
    directives: Cell<usize>,
    requests: Cell<usize>,
    arrays: Cell<usize>,
}

fn add(counter: &Cell<usize>, count: usize) {
    counter.set(counter.get() + count);
}

fn check_request_list(list: &str, reached: &Reached) {
    match parse_list(list) {
        Ok(pairs) => match ResourceRequest::from_list(&pairs) {
            Ok(request) => {
                assert!(!request.chunks.is_empty(), "{list:?}");
                // What is derived from the select as written (issue 13, item 5).
                let select = request.display_value("select").expect("every request shows a select");
                assert!(!crate::resources::schedselect(select).is_empty(), "{list:?}");
                let _ = request.omp_threads();
                add(&reached.requests, 1);
            }
            Err(error) => check_error(&error),
        },
        Err(error) => check_error(&error),
    }
}

fn check_case(case: &Case, reached: &Reached) {
    let text = &case.text;
    add(&reached.directives, extract(&case.script, "#PBS").map_or(0, |found| found.len()));
    let _ = extract(text, "#PBS");
    let _ = extract(text, &case.prefix);
    let _ = Size::parse(text);
    let _ = parse_duration(text);
    check_request_list(&case.list, reached);
    // Known names with random values reach the value parsers directly.
    let pairs = vec![(case.name.to_string(), case.value.clone()), ("mem".to_string(), case.mem.clone())];
    match ResourceRequest::from_list(&pairs) {
        Ok(_) => add(&reached.requests, 1),
        Err(error) => check_error(&error),
    }
    let _ = merge_directive_lists(&[(1, pairs.clone()), (2, pairs)]);
    let _ = crate::shell::shell_for_node(text, "node1");
    for array in [parse_openpbs(text), parse_torque(text)].into_iter().flatten() {
        let indices = array.expand().expect("a parsed array expands");
        assert!(!indices.is_empty() && indices.len() <= crate::array::MAX_ARRAY_SIZE, "{text:?}");
        add(&reached.arrays, 1);
    }
    // `-M` lists (issue 12, item 1): what passes never reads as an option or breaks a header.
    for recipients in crate::mail::parse_list(text).into_iter().flatten() {
        assert!(!recipients.starts_with('-'), "{recipients:?}");
        assert!(!recipients.chars().any(|c| c.is_whitespace() || c.is_control()), "{recipients:?}");
    }
}

/// 20,000 cases from a fixed seed (the same inputs, and the same run time, on every run); a
/// failing case is shrunk to a small one by proptest.
#[test]
fn parsers_never_panic() {
    let config = Config { cases: 20_000, failure_persistence: None, ..Config::default() };
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let reached = Reached::default();
    TestRunner::new_with_rng(config, rng)
        .run(&case(), |case| {
            check_case(&case, &reached);
            Ok(())
        })
        .unwrap();
    let (directives, requests, arrays) = (reached.directives.get(), reached.requests.get(), reached.arrays.get());
    eprintln!("{directives} directives, {requests} requests, {arrays} arrays");
    assert!(arrays > 50, "{arrays} arrays");
    // The strings must reach the successful paths too, not only the first error check.
    assert!(directives > 8000 && requests > 400, "{directives} directives, {requests} requests");
}
