//! Keeps ARCHITECTURE.md true: at most 150 lines, and every path and type it names in backticks
//! exists in the repository.
//!
//! What counts as a name (a textual scan, no Rust parser): a backticked span with a `/` or a
//! file extension is a path (a bare `shared.rs` or `state/holds.rs` must end some file's path in
//! the repository); a span with `::`, or one that starts with a capital and has no spaces, is a
//! Rust item: each CamelCase segment must be defined somewhere in the workspace (`struct`,
//! `enum`, `trait`, `type`, or an enum variant) and a trailing snake_case segment must be a `fn`,
//! `const`, `static`, `mod` or field. Spans with `<`, `*`, `{` or spaces (commands, templates)
//! are not checked. The map writes no numbers the code sets; it names the constants instead.

use std::path::{Path, PathBuf};

const MAX_LINES: usize = 150;

/// The repository root (this crate lives in `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Every file under `dir`, skipping build output and version control.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == "target" || name == ".git" || name.to_string_lossy().starts_with("target-") {
            continue;
        }
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The backticked spans of a markdown text, outside fenced code blocks.
fn spans(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
            found.push(inside.to_string());
        }
    }
    found
}

#[derive(Debug, PartialEq)]
enum Name {
    Path(String),
    Item(Vec<String>),
}

/// What a span names, if it is checked at all (see the header).
fn classify(span: &str) -> Option<Name> {
    let no_word = !span.chars().any(|c| c.is_ascii_alphanumeric());
    if no_word || span.contains(['<', '*', '{', ' ', '"', '=']) || span.starts_with('-') {
        return None;
    }
    let extension = [".rs", ".md", ".toml", ".yml", ".sh", ".sql"].iter().any(|ext| span.ends_with(ext));
    if span.contains('/') || extension {
        return Some(Name::Path(span.trim_end_matches('/').to_string()));
    }
    let item = span.trim_end_matches("()");
    let capital = item.starts_with(|c: char| c.is_ascii_uppercase()) && item.chars().any(|c| c.is_ascii_lowercase());
    let word = item.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':');
    if word && (item.contains("::") || capital) {
        return Some(Name::Item(item.split("::").map(str::to_string).collect()));
    }
    None
}

fn is_camel(segment: &str) -> bool {
    segment.starts_with(|c: char| c.is_ascii_uppercase()) && segment.chars().any(|c| c.is_ascii_lowercase())
}

/// Whether `source` defines `segment` (a type or variant when CamelCase, else a fn, const,
/// static, module or field).
fn defines(source: &str, segment: &str) -> bool {
    let keywords: &[&str] =
        if is_camel(segment) { &["struct", "enum", "trait", "type"] } else { &["fn", "const", "static", "mod"] };
    source.lines().any(|line| {
        let line = line.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        let after_keyword = keywords.iter().any(|keyword| {
            line.strip_prefix(keyword)
                .and_then(|rest| rest.strip_prefix(' '))
                .is_some_and(|rest| starts_with_word(rest, segment))
        });
        // An enum variant or a struct field: the name opens the line.
        after_keyword
            || (starts_with_word(line, segment) && line[segment.len()..].starts_with([' ', '(', '{', ',', ':']))
    })
}

fn starts_with_word(text: &str, word: &str) -> bool {
    text.starts_with(word) && !text[word.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}

/// The names of a map that do not exist: paths no file ends with, items nothing defines.
fn missing(map: &str, paths: &[String], sources: &[String]) -> Vec<String> {
    let mut missing = Vec::new();
    for span in spans(map) {
        let exists = match classify(&span) {
            None => true,
            Some(Name::Path(path)) => paths.iter().any(|file| file == &path || file.ends_with(&format!("/{path}"))),
            Some(Name::Item(segments)) => segments
                .iter()
                .filter(|segment| is_camel(segment) || segments.len() > 1)
                .filter(|segment| !["crate", "self", "super", "std"].contains(&segment.as_str()))
                .filter(|segment| segment.as_str() != segments[0] || is_camel(segment))
                .all(|segment| sources.iter().any(|source| defines(source, segment))),
        };
        if !exists {
            missing.push(span);
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository() -> (Vec<String>, Vec<String>) {
        let root = root();
        let mut all = Vec::new();
        files(&root, &mut all);
        let mut paths: Vec<String> = Vec::new();
        let mut sources = Vec::new();
        for file in &all {
            let relative = file.strip_prefix(&root).expect("under the root");
            paths.push(relative.to_string_lossy().into_owned());
            // Directories count as paths too (`state/`, `tests/corpus/`).
            for ancestor in relative.ancestors().skip(1) {
                paths.push(ancestor.to_string_lossy().into_owned());
            }
            if file.extension().is_some_and(|ext| ext == "rs") {
                sources.push(std::fs::read_to_string(file).expect("readable source"));
            }
        }
        paths.sort();
        paths.dedup();
        (paths, sources)
    }

    #[test]
    fn the_map_is_short_and_names_only_what_exists() {
        let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
        let lines = map.lines().count();
        assert!(lines <= MAX_LINES, "ARCHITECTURE.md has {lines} lines, more than {MAX_LINES}");
        let (paths, sources) = repository();
        assert_eq!(missing(&map, &paths, &sources), Vec::<String>::new(), "names in ARCHITECTURE.md that do not exist");
    }

    #[test]
    fn the_check_can_fail() {
        let paths = vec!["server/src/shared.rs".to_string(), "server/src".to_string()];
        let sources = vec!["pub struct Shared;\nimpl Shared {\n    pub fn apply(&self) {}\n}\n".to_string()];
        let map = "`shared.rs` `server/src/` `Shared::apply` `qsub -I`\n`gone.rs` `Shared::vanish` `Nothing`\n";
        assert_eq!(missing(map, &paths, &sources), ["gone.rs", "Shared::vanish", "Nothing"]);
    }

    #[test]
    fn spans_skip_fenced_blocks_and_templates() {
        assert_eq!(spans("a `x` b\n```\n`y`\n```\n`z`"), ["x", "z"]);
        assert_eq!(classify("handlers/<request>.rs"), None);
        assert_eq!(classify("qsub -I"), None);
        assert_eq!(classify("JobState::apply"), Some(Name::Item(vec!["JobState".into(), "apply".into()])));
        assert_eq!(classify("state/"), Some(Name::Path("state".into())));
    }
}
