//! A deterministic fuzz-style test: thousands of pseudo-random strings built from pieces of
//! the grammars (and some hostile characters) go through every parser of this crate, which
//! must return `Ok` or `Err` and never panic. Errors must point inside their input.

use crate::array::{parse_openpbs, parse_torque};
use crate::directives::extract;
use crate::duration::parse_duration;
use crate::resources::{merge_directive_lists, parse_list, ResourceError, ResourceRequest};
use crate::size::Size;

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

/// xorshift64: small, deterministic, good enough to mix pieces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn text(&mut self) -> String {
        let length = self.below(12);
        (0..length).map(|_| PIECES[self.below(PIECES.len())]).collect()
    }

    /// A script whose lines are mostly directives.
    fn script(&mut self) -> String {
        let lines = self.below(6);
        (0..lines).map(|_| format!("{}{}\n", ["#PBS ", "#PBS -l ", "  #PBS", ""][self.below(4)], self.text())).collect()
    }

    /// A resource list whose items mostly have the `name=value` shape.
    fn list(&mut self) -> String {
        let items = 1 + self.below(3);
        let items: Vec<String> =
            (0..items).map(|_| format!("{}{}", KNOWN[self.below(KNOWN.len())], self.text())).collect();
        items.join(",")
    }
}

/// Resource names with their `=`, to start list items.
const KNOWN: &[&str] = &["nodes=", "select=", "place=", "walltime=", "mem=", "ncpus=", "ngpus=", "procs=", "host="];

fn check_error(error: &ResourceError) {
    assert!(error.column <= error.input.chars().count(), "{error:?}");
    let _ = error.caret_display();
}

#[test]
fn parsers_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut directives, mut requests, mut arrays) = (0, 0, 0);
    for _ in 0..20_000 {
        let text = rng.text();
        directives += extract(&rng.script(), "#PBS").map_or(0, |found| found.len());
        let _ = extract(&text, "#PBS");
        let _ = extract(&text, &rng.text());
        let _ = Size::parse(&text);
        let _ = parse_duration(&text);
        let list = if rng.below(2) == 0 { rng.list() } else { text.clone() };
        match parse_list(&list) {
            Ok(pairs) => match ResourceRequest::from_list(&pairs) {
                Ok(request) => {
                    assert!(!request.chunks.is_empty(), "{list:?}");
                    // What is derived from the select as written (issue 13, item 5).
                    let select = request.display_value("select").expect("every request shows a select");
                    assert!(!crate::resources::schedselect(select).is_empty(), "{list:?}");
                    let _ = request.omp_threads();
                    requests += 1;
                }
                Err(error) => check_error(&error),
            },
            Err(error) => check_error(&error),
        }
        // Known names with random values reach the value parsers directly.
        let name = KNOWN[rng.below(KNOWN.len())].trim_end_matches('=');
        let pairs = vec![(name.to_string(), rng.text()), ("mem".to_string(), rng.text())];
        match ResourceRequest::from_list(&pairs) {
            Ok(_) => requests += 1,
            Err(error) => check_error(&error),
        }
        let _ = merge_directive_lists(&[(1, pairs.clone()), (2, pairs)]);
        let _ = crate::shell::shell_for_node(&text, "node1");
        for array in [parse_openpbs(&text), parse_torque(&text)].into_iter().flatten() {
            let indices = array.expand().expect("a parsed array expands");
            assert!(!indices.is_empty() && indices.len() <= crate::array::MAX_ARRAY_SIZE, "{text:?}");
            arrays += 1;
        }
        // `-M` lists (issue 12, item 1): what passes never reads as an option or breaks a header.
        for recipients in crate::mail::parse_list(&text).into_iter().flatten() {
            assert!(!recipients.starts_with('-'), "{recipients:?}");
            assert!(!recipients.chars().any(|c| c.is_whitespace() || c.is_control()), "{recipients:?}");
        }
    }
    eprintln!("{directives} directives, {requests} requests, {arrays} arrays");
    assert!(arrays > 50, "{arrays} arrays");
    // The strings must reach the successful paths too, not only the first error check.
    assert!(directives > 8000 && requests > 400, "{directives} directives, {requests} requests");
}
