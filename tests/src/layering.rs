//! The layering rules of the workspace, checked on the source text (issue 14):
//!
//! - no handler imports another handler: a file of `server/src/handlers/` (its non-test code)
//!   names no sibling handler module; shared rules live in `server/src/state/`, and a part of
//!   one handler only is its child module (`handlers/alter_job/array.rs`). Tests may call any
//!   handler's entry point, as the dispatch does (a test of qdel submits first);
//! - only `server/src/store/` uses `diesel` (every crate's `src/` is scanned);
//! - no two sibling modules of a directory of `server/src` (`server/src` itself, `state/`,
//!   `handlers/`, `store/`, ...) name each other, directly or through a longer cycle, beyond the
//!   cycles listed in [`KNOWN_CYCLES`] (none today; a cycle may only leave that list);
//! - the same, with no exception, for every other crate of the workspace;
//! - no client command imports another command's files: a command is a file of `client/src/`
//!   with a `pub fn main` (`qsub.rs`); it owns its sub-files named after it with a `_`
//!   (`qsub_options.rs`); what two commands share gets a home of its own (`cli.rs`, `ids.rs`,
//!   `submit.rs`, `output/`).
//!
//! How: a simple textual scan, not the compiler's resolution (`cargo modules` is not a
//! dependency we want). A small lexer drops comments, strings and `#[cfg(test)] mod x { .. }`
//! blocks; every path that starts with `crate::`, `super::` or `self::` (with `use` groups
//! `a::{b, c::d}` expanded) is resolved against the file's module path; two files of the same
//! directory are linked when one names the other's module. Files named `tests.rs` or
//! `*_tests.rs`, and directories named `tests`, are test code and not scanned. Known blind
//! spots: a name reached through a parent's re-export (`crate::state::Job` is `state`, not
//! `state::job`), and paths without `crate::`/`super::`/`self::` (imports from the parent's
//! scope); both are rare here and the scan errs towards missing an edge, never inventing one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles between sibling modules of the server tolerated for now, as sorted member lists
/// (none: the last, state <-> store <-> outbox <-> depend, was broken by moving the outbox,
/// the dependency rules and the store's records into `state/`). This list may only shrink.
const KNOWN_CYCLES: &[&[&str]] = &[];

/// A module path, `["crate", "state", "holds"]`.
type ModPath = Vec<String>;

#[test]
fn no_handler_imports_another_handler() {
    let edges = sibling_edges(&server_src());
    let handlers: Vec<String> = edges
        .iter()
        .filter(|edge| edge.dir == ["crate", "handlers"])
        .map(|edge| format!("{} -> {} ({})", edge.from, edge.to, edge.file.display()))
        .collect();
    assert!(handlers.is_empty(), "handlers import other handlers (move the shared rule to state/):\n{handlers:#?}");
}

#[test]
fn only_the_store_uses_diesel() {
    let root = workspace();
    let store = root.join("server/src/store");
    let mut offenders = Vec::new();
    for krate in std::fs::read_dir(&root).expect("workspace").flatten() {
        let src = krate.path().join("src");
        for file in rust_files(&src).into_iter().filter(|file| !file.starts_with(&store)) {
            let code = strip(&std::fs::read_to_string(&file).expect("readable source"));
            if code.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word.starts_with("diesel")) {
                offenders.push(file);
            }
        }
    }
    assert!(offenders.is_empty(), "diesel outside server/src/store: {offenders:#?}");
}

#[test]
fn no_cycle_between_sibling_modules_of_the_server() {
    let cycles = cycles(&sibling_edges(&server_src()));
    let known: BTreeSet<Vec<String>> =
        KNOWN_CYCLES.iter().map(|cycle| cycle.iter().map(|name| name.to_string()).collect()).collect();
    let new: Vec<&Vec<String>> = cycles.iter().filter(|cycle| !known.contains(*cycle)).collect();
    assert!(new.is_empty(), "modules of one directory that import each other: {new:#?}");
    let gone: Vec<&Vec<String>> = known.iter().filter(|cycle| !cycles.contains(*cycle)).collect();
    assert!(gone.is_empty(), "cycles broken: remove them from KNOWN_CYCLES: {gone:#?}");
}

#[test]
fn no_command_imports_another_commands_files() {
    let src = workspace().join("client/src");
    let commands = client_commands(&src);
    let found: Vec<String> = sibling_edges(&src)
        .into_iter()
        .filter(|edge| edge.dir.len() == 1)
        .filter_map(|edge| {
            let other = owner(&edge.to, &commands)?;
            let message = format!("{} imports crate::{} (command {other}'s)", edge.file.display(), edge.to);
            (owner(&edge.from, &commands) != Some(other)).then_some(message)
        })
        .collect();
    assert!(!commands.is_empty(), "no command found in {}", src.display());
    assert!(found.is_empty(), "give what commands share a home of its own:\n{}", found.join("\n"));
}

#[test]
fn no_cycle_between_sibling_modules_of_any_crate() {
    let root = workspace();
    let mut found = Vec::new();
    for krate in ["job", "proto", "sched", "mom", "client", "pbslog", "modules", "tests"] {
        for cycle in cycles(&sibling_edges(&root.join(krate).join("src"))) {
            found.push(format!("{krate}: {}", cycle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "modules of one directory that import each other: {found:#?}");
}

/// The workspace root (this file is in the `tests` crate).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn server_src() -> PathBuf {
    workspace().join("server/src")
}

/// The commands of `client/src/`: its top-level files with a `pub fn main`.
fn client_commands(src: &Path) -> Vec<String> {
    let mut commands: Vec<String> = std::fs::read_dir(src)
        .expect("client/src")
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .filter(|path| {
            std::fs::read_to_string(path).is_ok_and(|code| code.lines().any(|l| l.starts_with("pub fn main(")))
        })
        .map(|path| path.file_stem().expect("a file name").to_string_lossy().into_owned())
        .collect();
    commands.sort();
    commands
}

/// The command owning module `name` among `commands`: itself or, for `<command>_<rest>`, the
/// longest command it starts with.
fn owner<'a>(name: &str, commands: &'a [String]) -> Option<&'a str> {
    commands
        .iter()
        .filter(|command| name == command.as_str() || name.starts_with(&format!("{command}_")))
        .max_by_key(|command| command.len())
        .map(String::as_str)
}

/// One file of directory module `dir` naming a sibling: `from` (its module under `dir`) uses
/// `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    dir: ModPath,
    from: String,
    to: String,
    file: PathBuf,
}

/// Every sibling edge of the non-test code under `src` (a crate's `src/`).
fn sibling_edges(src: &Path) -> Vec<Edge> {
    let files: Vec<(PathBuf, ModPath)> =
        rust_files(src).into_iter().map(|file| (file.clone(), module_of(src, &file))).collect();
    let modules: BTreeSet<ModPath> = files.iter().map(|(_, module)| module.clone()).collect();
    let mut edges = BTreeSet::new();
    for (file, module) in &files {
        let code = strip(&std::fs::read_to_string(file).expect("readable source"));
        for path in paths_in(&code) {
            if let Some((dir, from, to)) = link(module, &resolve(module, &path), &modules) {
                edges.insert(Edge { dir, from, to, file: file.strip_prefix(src).unwrap_or(file).to_path_buf() });
            }
        }
    }
    edges.into_iter().collect()
}

/// The `.rs` files under `dir`, test files left out (see the header).
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return files };
    for path in entries.flatten().map(|entry| entry.path()) {
        let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default().to_string();
        if path.is_dir() && name != "tests" {
            files.extend(rust_files(&path));
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// `src/state/holds.rs` is `crate::state::holds`; `mod.rs`, `lib.rs` and `main.rs` are their
/// directory's module.
fn module_of(src: &Path, file: &Path) -> ModPath {
    let relative = file.strip_prefix(src).expect("file under src").with_extension("");
    let mut module: ModPath = vec!["crate".to_string()];
    module.extend(relative.iter().map(|part| part.to_string_lossy().into_owned()));
    if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        module.pop();
    }
    module
}

/// `path` (as written in module `module`) as an absolute module path.
/// In `x.rs` and `x/mod.rs` alike, `self` is `x` and `super` its parent.
fn resolve(module: &ModPath, path: &[String]) -> ModPath {
    let mut resolved = module.clone();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => return path.to_vec(),
        Some("self") => rest = &path[1..],
        _ => {
            while rest.first().map(String::as_str) == Some("super") {
                resolved.pop();
                rest = &rest[1..];
            }
        }
    }
    resolved.extend(rest.iter().cloned());
    resolved
}

/// The sibling edge `module` -> `target` makes, if any: where the two paths part, both
/// continue with a module of that directory (an item of the common parent, `state::Job`, is
/// no module and makes none).
fn link(module: &ModPath, target: &ModPath, modules: &BTreeSet<ModPath>) -> Option<(ModPath, String, String)> {
    let common = module.iter().zip(target).take_while(|(a, b)| a == b).count();
    let (from, to) = (module.get(common)?, target.get(common)?);
    let dir = module[..common].to_vec();
    let to_module: ModPath = dir.iter().chain([to]).cloned().collect();
    modules.iter().any(|known| known.starts_with(&to_module)).then(|| (dir, from.clone(), to.clone()))
}

/// Every path starting with `crate::`, `super::` or `self::` in `code`, use groups expanded.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let starts_word = at == 0 || !(chars[at - 1].is_alphanumeric() || chars[at - 1] == '_' || chars[at - 1] == ':');
        let rest: String = chars[at..chars.len().min(at + 7)].iter().collect();
        if starts_word && ["crate::", "super::", "self::"].iter().any(|start| rest.starts_with(start)) {
            let (tree, end) = use_tree(&chars, at, Vec::new());
            paths.extend(tree);
            at = end.max(at + 1);
        } else {
            at += 1;
        }
    }
    paths
}

/// Parses the path (or use tree) at `at` under `prefix`; returns its paths and where it ends.
fn use_tree(chars: &[char], mut at: usize, mut prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    loop {
        while chars.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        if chars.get(at) == Some(&'{') {
            let mut paths = Vec::new();
            at += 1;
            loop {
                while chars.get(at).is_some_and(|c| c.is_whitespace() || *c == ',') {
                    at += 1;
                }
                match chars.get(at) {
                    None => return (paths, at),
                    Some('}') => return (paths, at + 1),
                    _ => {
                        let (inner, end) = use_tree(chars, at, prefix.clone());
                        paths.extend(inner);
                        at = if end > at { end } else { at + 1 };
                    }
                }
            }
        }
        let start = at;
        while chars.get(at).is_some_and(|c| c.is_alphanumeric() || *c == '_') {
            at += 1;
        }
        if at == start {
            return (vec![prefix], at);
        }
        prefix.push(chars[start..at].iter().collect());
        if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            return (vec![prefix], at);
        }
    }
}

/// `code` without comments, string and char literals, and `#[cfg(test)]` modules with a body.
fn strip(code: &str) -> String {
    let lexed = lex(code);
    let mut out = String::with_capacity(lexed.len());
    let mut rest = lexed.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let body = item.find(['{', ';']).filter(|end| item[..*end].split_whitespace().any(|word| word == "mod"));
        match body {
            Some(open) if item[open..].starts_with('{') => rest = &item[matching_brace(&item[open..]) + open..],
            _ => rest = after,
        }
    }
    out.push_str(rest);
    out
}

/// The offset just past the brace closing the one `text` starts with.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (at, c) in text.char_indices() {
        depth += match c {
            '{' => 1,
            '}' => -1,
            _ => 0,
        };
        if depth == 0 {
            return at + 1;
        }
    }
    text.len()
}

/// `code` with comments dropped and literals emptied (`"..."` becomes `""`), so braces and
/// paths in them do not count.
fn lex(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut at = 0;
    while at < chars.len() {
        let (c, next) = (chars[at], chars.get(at + 1).copied());
        if c == '/' && next == Some('/') {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next == Some('*') {
            let end = code_find(&chars, at + 2, "*/").map_or(chars.len(), |end| end + 2);
            at = end;
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !word_before(&chars, at) {
            let hashes = chars[at + 1..].iter().take_while(|c| **c == '#').count();
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            let open = at + 1 + hashes;
            at = code_find(&chars, open + 1, &close).map_or(chars.len(), |end| end + close.len());
            out.push_str("\"\"");
        } else if c == '"' {
            at += 1;
            while at < chars.len() && chars[at] != '"' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            out.push_str("\"\"");
        } else if c == '\'' && (next == Some('\\') || chars.get(at + 2) == Some(&'\'')) {
            at += 1;
            while at < chars.len() && chars[at] != '\'' {
                at += if chars[at] == '\\' { 2 } else { 1 };
            }
            at += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            at += 1;
        }
    }
    out
}

fn word_before(chars: &[char], at: usize) -> bool {
    at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_')
}

fn code_find(chars: &[char], from: usize, needle: &str) -> Option<usize> {
    let needle: Vec<char> = needle.chars().collect();
    (from..chars.len()).find(|at| chars[*at..].starts_with(&needle))
}

/// The cycles among sibling modules: each strongly connected group of two or more modules of
/// one directory, as its sorted member names prefixed with the directory (`crate::state::a`).
fn cycles(edges: &[Edge]) -> BTreeSet<Vec<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for edge in edges {
        let dir = edge.dir.join("::");
        graph.entry(format!("{dir}::{}", edge.from)).or_default().insert(format!("{dir}::{}", edge.to));
    }
    let reach = |start: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(node) = todo.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|node| (node, reach(node))).collect();
    let mut groups = BTreeSet::new();
    for (node, from_node) in &reachable {
        let group: Vec<String> = from_node
            .iter()
            .filter(|other| reachable.get(other).is_some_and(|back| back.contains(*node)))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.insert(group);
        }
    }
    groups
}

#[cfg(test)]
mod scanner {
    use super::*;

    #[test]
    fn sub_files_belong_to_the_longest_command_they_start_with() {
        let commands = ["qsub".to_string(), "qstat".to_string(), "q".to_string()];
        assert_eq!(owner("qsub_options", &commands), Some("qsub"));
        assert_eq!(owner("qstat", &commands), Some("qstat"));
        assert_eq!(owner("q_x", &commands), Some("q"));
        assert_eq!(owner("qsubmit", &commands), None);
        assert_eq!(owner("submit", &commands), None);
    }

    fn edges_of(files: &[(&str, &str)]) -> Vec<Edge> {
        let dir = std::env::temp_dir().join(format!("layering-{}-{}", std::process::id(), files.len()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let edges = sibling_edges(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        edges
    }

    #[test]
    fn a_cycle_between_siblings_is_found_and_test_code_is_not_scanned() {
        let edges = edges_of(&[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::b::{x, y::z}; // crate::c::w in a comment\nconst S: &str = \"crate::c::s\";"),
            ("b.rs", "fn f() { super::a::g() }\n#[cfg(test)]\nmod tests { use crate::c::t; }"),
            ("c.rs", "use crate::{a::Thing, b};"),
            ("c_tests.rs", "use crate::a::t;"),
        ]);
        let pairs: Vec<(String, String)> = edges.iter().map(|edge| (edge.from.clone(), edge.to.clone())).collect();
        let expected = [("a", "b"), ("b", "a"), ("c", "a"), ("c", "b")].map(|(a, b)| (a.to_string(), b.to_string()));
        assert_eq!(pairs, expected);
        let found = cycles(&edges);
        assert_eq!(found, BTreeSet::from([vec!["crate::a".to_string(), "crate::b".to_string()]]));
    }

    #[test]
    fn a_child_module_and_the_parents_items_are_not_siblings() {
        let edges = edges_of(&[
            ("lib.rs", "mod h; mod state;"),
            ("h/mod.rs", "mod a; mod b; pub struct Fixture;"),
            ("h/a.rs", "mod child; use super::Fixture; use crate::state::Job;"),
            ("h/a/child.rs", "use super::super::b::run; use crate::h::a::helper;"),
            ("h/b.rs", "use crate::state::holds::merge;"),
            ("state/mod.rs", "pub mod holds; pub struct Job;"),
            ("state/holds.rs", "use super::Job;"),
        ]);
        let found: Vec<String> =
            edges.iter().map(|edge| format!("{}: {} -> {}", edge.dir.join("::"), edge.from, edge.to)).collect();
        assert_eq!(found, ["crate: h -> state", "crate: h -> state", "crate::h: a -> b"]);
    }

    #[test]
    fn literals_and_comments_are_dropped() {
        assert_eq!(lex("a /* crate::x */ 'b' '{' r#\"s\"# \"q\\\"\" // c\nd"), "a  ' ' ' ' \"\" \"\" \nd");
    }
}
