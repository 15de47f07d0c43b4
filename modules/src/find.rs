//! Modulepaths and names (modules.md section 3): which file a designation selects (first
//! modulepath that has the name; explicit default from `.modulerc` or `.version`, else the
//! highest version in dictionary order; symbolic versions; aliases; partial versions), and
//! every module of a modulepath for `avail` and `whatis`.
//!
//! Owns: the directory walk and the magic-cookie check. Must not: evaluate modulefiles (only
//! control files, through rc.rs).

use crate::rc::{self, RcInfo};
use crate::state::AltName;
use crate::tcl::list::dictionary_cmp;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Directory names never searched.
const SKIPPED_DIRS: [&str; 7] = ["CVS", "RCS", "SCCS", ".svn", ".git", ".SYNC", ".sos"];

/// A designation resolved to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The modulepath it was found in.
    pub modulepath: PathBuf,
    /// `name/version`, relative to the modulepath.
    pub name: String,
    pub file: PathBuf,
    /// The aliases followed to reach it (all its other names: `alt_names`).
    pub alt_names: Vec<AltName>,
}

/// Whether `path` is a regular file starting with `#%Module` (a FIFO or device is not waited on).
pub fn is_modulefile(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 8];
    crate::tcl::open_regular(path).and_then(|mut file| file.read_exact(&mut head)).is_ok() && &head == b"#%Module"
}

/// The modulepaths in `MODULEPATH` order.
pub fn modulepaths(modulepath: Option<&str>) -> Vec<PathBuf> {
    crate::env::split(modulepath.unwrap_or(""), ":")
        .into_iter()
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .collect()
}

/// The control files of `dir` (relative to `modulepath`): its `.modulerc` and `.version`.
fn dir_rc(modulepath: &Path, dir: &str) -> (RcInfo, RcInfo) {
    let base = if dir.is_empty() { modulepath.to_path_buf() } else { modulepath.join(dir) };
    let modulerc = base.join(".modulerc");
    let modulerc = if modulerc.is_file() { rc::read(&modulerc, dir) } else { RcInfo::default() };
    let version = base.join(".version");
    let version = if !dir.is_empty() && version.is_file() { rc::read(&version, dir) } else { RcInfo::default() };
    (modulerc, version)
}

/// Resolves `designation` in the modulepaths, following aliases (at most 16 deep).
pub fn resolve(modulepaths: &[PathBuf], designation: &str) -> Option<Found> {
    resolve_depth(modulepaths, designation.trim_end_matches('/'), 0)
}

fn resolve_depth(modulepaths: &[PathBuf], designation: &str, depth: u32) -> Option<Found> {
    if depth > 16 || designation.is_empty() || designation.split('/').any(|part| part == ".." || part.is_empty()) {
        return None;
    }
    for modulepath in modulepaths {
        let (top, _) = dir_rc(modulepath, "");
        if let Some(target) = top.aliases.get(designation) {
            let mut found = resolve_depth(modulepaths, target, depth + 1)?;
            found.alt_names.push(AltName::Alias(designation.to_string()));
            return Some(found);
        }
        if let Some(found) = resolve_in(modulepath, designation, &top) {
            return Some(found);
        }
    }
    None
}

/// `designation` within one modulepath, or `None` when this modulepath does not have it.
fn resolve_in(modulepath: &Path, designation: &str, top: &RcInfo) -> Option<Found> {
    let (parent, last) = designation.rsplit_once('/').unwrap_or(("", designation));
    let (parent_rc, parent_version) = dir_rc(modulepath, parent);
    let symbol_target = [top, &parent_rc].into_iter().find_map(|info| {
        info.versions
            .iter()
            .find(|(module, symbol)| module_symbol(module, symbol) == designation)
            .map(|(module, _)| module.clone())
    });
    let name = symbol_target.unwrap_or_else(|| designation.to_string());
    let path = modulepath.join(&name);
    if path.is_file() {
        Some(found(modulepath, &name))
    } else if path.is_dir() {
        default_in(modulepath, &name, top)
    } else {
        partial_version(modulepath, parent, last, &parent_rc, &parent_version)
    }
}

/// The most other names kept for one loaded module. 5.2 has no limit, but they all go into
/// `__MODULES_LMALTNAME`, and one environment string over 128 KiB makes every later program
/// the shell starts fail (E2BIG): a `.modulerc` declaring thousands of aliases of a module
/// must not break the shells of everyone who loads it. Real trees declare a handful.
pub const MAX_ALT_NAMES: usize = 128;

/// Every other name `found` answers to, in 5.2's order: its symbols as declared (top
/// `.modulerc`, then its directory's `.modulerc`, then `.version`) and, when it is its
/// directory's explicit default, the bare name; the aliases that lead to it or to a directory
/// above it that has no explicit default (declared in the top `.modulerc` of its modulepath or
/// of one searched before it in `modulepaths`, or in its directory's `.modulerc`), with those
/// `found` was reached through; then, for each directory above it without an explicit
/// `default` (`latest`), `<dir>/default` (`<dir>/latest`) when the directory's highest entry
/// leads to it. Symbols and aliases: `MAX_ALT_NAMES` at most.
pub fn alt_names(modulepaths: &[PathBuf], found: &Found) -> Vec<AltName> {
    let (modulepath, name) = (found.modulepath.as_path(), found.name.as_str());
    let (top, _) = dir_rc(modulepath, "");
    let searched = modulepaths.iter().take_while(|path| path.as_path() != modulepath);
    let earlier: Vec<RcInfo> = searched.map(|path| dir_rc(path, "").0).collect();
    let (parent, _) = name.rsplit_once('/').unwrap_or(("", name));
    let (modulerc, _) = dir_rc(modulepath, parent);
    let mut names: Vec<AltName> = symbols_of(modulepath, name, &top).into_iter().map(AltName::Symbol).collect();
    if !parent.is_empty() && names.contains(&AltName::Symbol(format!("{parent}/default"))) {
        names.push(AltName::Symbol(parent.to_string()));
    }
    let declared = earlier.iter().chain([&top, &modulerc]).flat_map(|info| info.aliases.iter());
    // the directories above it an alias may name to lead to it, worked out once
    let leading: Vec<&str> = ancestors(name)
        .map(|(dir, _)| dir)
        .filter(|dir| {
            explicit_symbol(modulepath, dir, "default", &top).is_none()
                || default_in(modulepath, dir, &top).is_some_and(|found| found.name == name)
        })
        .collect();
    names.truncate(MAX_ALT_NAMES);
    for (alias, target) in declared {
        if names.len() >= MAX_ALT_NAMES {
            break;
        }
        let leads =
            target == name || leading.contains(&target.as_str()) || names.iter().any(|alt| alt.name() == target);
        if leads {
            names.push(AltName::Alias(alias.clone()));
        }
    }
    names.extend(found.alt_names.iter().cloned());
    for (dir, child) in ancestors(name) {
        if highest(&entries(&modulepath.join(dir))).as_deref() != Some(child) {
            continue;
        }
        for symbol in ["default", "latest"] {
            if explicit_symbol(modulepath, dir, symbol, &top).is_none() {
                names.push(AltName::Auto(format!("{dir}/{symbol}")));
            }
        }
    }
    dedup_in_order(&mut names);
    names
}

/// Drops the repeats of `items`, the first of each kept in place (linear: a control file may
/// declare a hundred thousand names).
fn dedup_in_order<T: Eq + std::hash::Hash + Clone>(items: &mut Vec<T>) {
    let mut seen = std::collections::HashSet::with_capacity(items.len());
    items.retain(|item| seen.insert(item.clone()));
}

/// Each directory above module `name` with the entry of it that leads to `name`:
/// `bio/samtools/1.17` gives `("bio", "samtools")` and `("bio/samtools", "1.17")`.
fn ancestors(name: &str) -> impl Iterator<Item = (&str, &str)> {
    name.match_indices('/').map(move |(index, _)| {
        let rest = &name[index + 1..];
        (&name[..index], rest.split('/').next().unwrap_or(rest))
    })
}

/// The entry of directory `dir` that `symbol` names explicitly (`module-version` in the top
/// or the directory's `.modulerc`; for `default`, also `.version`).
fn explicit_symbol(modulepath: &Path, dir: &str, symbol: &str, top: &RcInfo) -> Option<String> {
    let (modulerc, version) = dir_rc(modulepath, dir);
    let declared = [top, &modulerc]
        .into_iter()
        .flat_map(|info| info.versions.iter())
        .find(|(module, declared)| {
            declared == symbol && module.rsplit_once('/').is_some_and(|(parent, _)| parent == dir)
        })
        .map(|(module, _)| module.clone());
    declared
        .or_else(|| version.modules_version.filter(|_| symbol == "default").map(|default| format!("{dir}/{default}")))
}

fn found(modulepath: &Path, name: &str) -> Found {
    Found {
        modulepath: modulepath.to_path_buf(),
        name: name.to_string(),
        file: modulepath.join(name),
        alt_names: vec![],
    }
}

/// `module/symbol` for a `module-version` of `module` (the symbol replaces the version).
fn module_symbol(module: &str, symbol: &str) -> String {
    match module.rsplit_once('/') {
        Some((name, _)) => format!("{name}/{symbol}"),
        None => format!("{module}/{symbol}"),
    }
}

/// The symbols of module `name` (`zlib/default`, ...), from the modulepath's and its
/// directory's control files, in the order they are declared.
pub fn symbols_of(modulepath: &Path, name: &str, top: &RcInfo) -> Vec<String> {
    let parent = name.rsplit_once('/').map_or("", |(parent, _)| parent);
    let (modulerc, version) = dir_rc(modulepath, parent);
    let mut symbols: Vec<String> = [top, &modulerc]
        .into_iter()
        .flat_map(|info| info.versions.iter())
        .filter(|(module, _)| module == name)
        .map(|(module, symbol)| module_symbol(module, symbol))
        .collect();
    if version.modules_version.as_deref().is_some_and(|default| format!("{parent}/{default}") == name) {
        symbols.push(module_symbol(name, "default"));
    }
    dedup_in_order(&mut symbols);
    symbols
}

/// The default of directory `dir`: explicit (`.modulerc` default symbol, then `.version`),
/// else the highest entry in dictionary order; a directory default is searched in turn.
fn default_in(modulepath: &Path, dir: &str, top: &RcInfo) -> Option<Found> {
    let (modulerc, version) = dir_rc(modulepath, dir);
    let explicit = [top, &modulerc]
        .into_iter()
        .flat_map(|info| info.versions.iter())
        .find(|(module, symbol)| {
            symbol == "default" && module.rsplit_once('/').is_some_and(|(parent, _)| parent == dir)
        })
        .map(|(module, _)| module.clone())
        .or_else(|| version.modules_version.map(|default| format!("{dir}/{default}")));
    let choice = match explicit.filter(|name| modulepath.join(name).exists()) {
        Some(name) => name,
        None => format!("{dir}/{}", highest(&entries(&modulepath.join(dir)))?),
    };
    let path = modulepath.join(&choice);
    if path.is_dir() {
        default_in(modulepath, &choice, top)
    } else {
        Some(found(modulepath, &choice))
    }
}

/// `zlib/1` (extended default): among `zlib/1.*`, the directory's default if it is one of
/// them, else the highest.
fn partial_version(modulepath: &Path, parent: &str, last: &str, modulerc: &RcInfo, version: &RcInfo) -> Option<Found> {
    if parent.is_empty() {
        return None;
    }
    let prefix = format!("{last}.");
    let candidates: Vec<String> =
        entries(&modulepath.join(parent)).into_iter().filter(|entry| entry.starts_with(&prefix)).collect();
    let default = modulerc
        .versions
        .iter()
        .find(|(_, symbol)| symbol == "default")
        .and_then(|(module, _)| module.rsplit_once('/').map(|(_, version)| version.to_string()))
        .or_else(|| version.modules_version.clone());
    let choice = match default.filter(|default| candidates.contains(default)) {
        Some(default) => default,
        None => highest(&candidates)?,
    };
    let name = format!("{parent}/{choice}");
    if modulepath.join(&name).is_dir() {
        return default_in(modulepath, &name, &RcInfo::default());
    }
    Some(found(modulepath, &name))
}

/// Visible entries of a directory that are modulefiles or directories.
fn entries(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    read.filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let path = entry.path();
            let usable = !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_str());
            (usable && (path.is_dir() || is_modulefile(&path))).then_some(name)
        })
        .collect()
}

fn highest(names: &[String]) -> Option<String> {
    names.iter().max_by(|a, b| dictionary_cmp(a, b)).cloned()
}

/// Every module of a modulepath: `(name, hidden)` for each modulefile, in dictionary order;
/// and the modulepath's aliases and each module's symbols.
#[derive(Debug, Default)]
pub struct Listing {
    pub modules: Vec<(String, bool)>,
    pub aliases: BTreeMap<String, String>,
    pub symbols: BTreeMap<String, Vec<String>>,
}

/// Walks `modulepath`.
pub fn list(modulepath: &Path) -> Listing {
    let (top, _) = dir_rc(modulepath, "");
    let mut listing = Listing { aliases: top.aliases.clone(), ..Listing::default() };
    walk(modulepath, "", false, &top, &mut listing, 0);
    listing.modules.sort_by(|a, b| dictionary_cmp(&a.0, &b.0));
    listing
}

fn walk(modulepath: &Path, dir: &str, hidden: bool, top: &RcInfo, listing: &mut Listing, depth: u32) {
    let base = if dir.is_empty() { modulepath.to_path_buf() } else { modulepath.join(dir) };
    let Ok(read) = std::fs::read_dir(&base) else { return };
    let mut files = Vec::new();
    for entry in read.filter_map(Result::ok) {
        let Ok(name) = entry.file_name().into_string() else { continue };
        if name == ".modulerc" || name == ".version" || SKIPPED_DIRS.contains(&name.as_str()) {
            continue;
        }
        let full = if dir.is_empty() { name.clone() } else { format!("{dir}/{name}") };
        let is_hidden = hidden || name.starts_with('.');
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() && depth < 32 {
            walk(modulepath, &full, is_hidden, top, listing, depth + 1);
        } else if (kind.is_file() || kind.is_symlink()) && is_modulefile(&entry.path()) {
            files.push((full, is_hidden));
        }
    }
    if files.is_empty() {
        return;
    }
    let (modulerc, version) = dir_rc(modulepath, dir);
    for (name, _) in &files {
        let mut symbols: Vec<String> = [top, &modulerc]
            .into_iter()
            .flat_map(|info| info.versions.iter())
            .filter(|(module, _)| module == name)
            .map(|(_, symbol)| symbol.clone())
            .collect();
        if version.modules_version.as_deref().is_some_and(|default| format!("{dir}/{default}") == *name) {
            symbols.push("default".into());
        }
        symbols.sort();
        symbols.dedup();
        if !symbols.is_empty() {
            listing.symbols.insert(name.clone(), symbols);
        }
    }
    listing.aliases.extend(modulerc.aliases);
    listing.modules.extend(files);
}

#[cfg(test)]
#[path = "find_tests.rs"]
mod tests;
