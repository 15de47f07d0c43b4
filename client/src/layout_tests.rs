//! No command imports another command's files. A command is a file of `client/src/` with a
//! `pub fn main` (`qsub.rs`, `qhold.rs`, ...); it owns that file and its sub-files, the files
//! of `client/src/` named after it with a `_` (`qsub_options.rs`, `qstat_queues.rs`). Any file
//! (`client/src/bin/` aside, whose binaries only call `main`) may import its own command's
//! files and the shared ones (`cli.rs`, `ids.rs`, `submit.rs`, `output/`, ...), nothing owned by
//! another command: what two commands share gets a home of its own.

use std::path::{Path, PathBuf};

/// The top-level modules a source text names through `crate::` paths (`use crate::a::b`,
/// `crate::a::f()`, `use crate::{a, b::c}`), comments left out, each once, in order.
fn crate_modules(source: &str) -> Vec<String> {
    let code: String = source.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut names = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let items = match after.strip_prefix('{') {
            Some(group) => group.split('}').next().unwrap_or("").split(',').map(str::trim).collect(),
            None => vec![after],
        };
        for item in items {
            let name: String = item.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != "self" && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
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

/// Every `.rs` file under `dir`, `bin/` left out.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path.file_name().is_some_and(|name| name != "bin") {
            files.extend(sources(&path));
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// `file imports module (owned by command)` for every import across commands under `src`.
fn violations(src: &Path) -> Vec<String> {
    let files = sources(src);
    let stem = |path: &Path| path.file_stem().unwrap().to_string_lossy().into_owned();
    let top_level = |path: &Path| path.parent() == Some(src);
    let read = |path: &Path| std::fs::read_to_string(path).unwrap();
    let commands: Vec<String> = files
        .iter()
        .filter(|path| top_level(path) && read(path).lines().any(|line| line.starts_with("pub fn main(")))
        .map(|path| stem(path))
        .collect();
    let mut found = Vec::new();
    // This file's own test texts name commands on purpose.
    for path in files.iter().filter(|path| !path.ends_with("layout_tests.rs")) {
        let own = if top_level(path) { owner(&stem(path), &commands) } else { None };
        for module in crate_modules(&read(path)) {
            match owner(&module, &commands) {
                Some(other) if Some(other) != own => {
                    let file = path.strip_prefix(src).unwrap().display();
                    found.push(format!("{file} imports crate::{module} (command {other}'s)"));
                }
                _ => {}
            }
        }
    }
    found
}

#[test]
fn no_command_imports_another_commands_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&src);
    assert!(found.is_empty(), "give what commands share a home of its own:\n{}", found.join("\n"));
}

#[test]
fn the_scanner_finds_crate_paths_in_every_form() {
    let source = "//! Uses crate::qdel in a comment.\nuse crate::exit;\nuse crate::{conn::Connection, qsub::fail,\n    self};\n\
                  fn f() { crate::qhold::with_range(); mycrate::qstat::x(); } // crate::qmgr\nuse crate::exit::SUCCESS;\n";
    assert_eq!(crate_modules(source), ["exit", "conn", "qsub", "qhold"]);
}

#[test]
fn sub_files_belong_to_the_longest_command_they_start_with() {
    let commands = ["qsub".to_string(), "qstat".to_string(), "q".to_string()];
    assert_eq!(owner("qsub_options", &commands), Some("qsub"));
    assert_eq!(owner("qstat", &commands), Some("qstat"));
    assert_eq!(owner("q_x", &commands), Some("q"));
    assert_eq!(owner("qsubmit", &commands), None);
    assert_eq!(owner("submit", &commands), None);
}
