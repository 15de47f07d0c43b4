//! `avail`, `list` and `whatis` (modules.md 4.1, 4.2, 4.9): what they select, how entries are
//! decorated (symbols in parentheses, `(@)` for aliases, `<L>`/`<aL>` tags) and the `Key:`
//! legend.
//!
//! Owns: the selection and decoration; layouts come from format.rs.

use crate::context::{Mode, Target};
use crate::eval;
use crate::find;
use crate::format::{grid, header, whatis_line};
use crate::session::Session;
use crate::state::{AltName, Loaded};
use crate::tcl::glob_match;

/// Which decorations were shown, for the legend.
#[derive(Debug, Default)]
struct Legend {
    alias: bool,
    symbol: bool,
    loaded: bool,
    auto: bool,
}

impl Legend {
    fn lines(&self, width: usize) -> Vec<String> {
        let mut items = Vec::new();
        if self.alias {
            items.push("(@)=module-alias".to_string());
        }
        if self.symbol {
            items.push("(symbolic-version)".to_string());
        }
        if self.loaded || self.auto {
            items.push("<module-tag>".to_string());
        }
        if self.loaded {
            items.push("<L>=loaded".to_string());
        }
        if self.auto {
            items.push("<aL>=auto-loaded".to_string());
        }
        if items.is_empty() {
            return Vec::new();
        }
        let mut lines = vec![String::new(), "Key:".to_string()];
        lines.extend(grid(&items, width, false));
        lines
    }
}

/// Whether `name` is selected by `patterns` (none: everything): a case-insensitive prefix
/// match with `*` and `?` allowed.
fn selected(name: &str, patterns: &[String]) -> bool {
    patterns.is_empty() || patterns.iter().any(|pattern| glob_match(&format!("{pattern}*"), name, true))
}

/// `avail [-t] [-a] [pattern...]`.
pub fn avail(session: &mut Session, patterns: &[String], terse: bool, all: bool) {
    let mut legend = Legend::default();
    let mut sections: Vec<Vec<String>> = Vec::new();
    for modulepath in session.modulepaths() {
        let listing = find::list(&modulepath);
        let mut entries: Vec<(String, String)> = Vec::new();
        for (name, hidden) in &listing.modules {
            if (*hidden && !all) || !selected(name, patterns) {
                continue;
            }
            let mut shown = name.clone();
            if let Some(symbols) = listing.symbols.get(name) {
                shown.push_str(&format!("({})", symbols.join(":")));
                legend.symbol = true;
            }
            if let Some(module) = session.loaded.iter().find(|module| module.name == *name) {
                shown.push_str(if module.auto { " <aL>" } else { " <L>" });
                legend.auto |= module.auto;
                legend.loaded |= !module.auto;
            }
            entries.push((name.clone(), shown));
        }
        for alias in listing.aliases.keys().filter(|alias| selected(alias, patterns)) {
            entries.push((alias.clone(), format!("{alias}(@)")));
            legend.alias = true;
        }
        if entries.is_empty() {
            continue;
        }
        entries.sort_by(|a, b| crate::tcl::list::dictionary_cmp(&a.0, &b.0));
        let shown: Vec<String> = entries.into_iter().map(|(_, shown)| shown).collect();
        let mut lines = if terse {
            vec![format!("{}:", modulepath.display())]
        } else {
            vec![header(&modulepath.display().to_string(), session.width)]
        };
        lines.extend(if terse { shown } else { grid(&shown, session.width, false) });
        sections.push(lines);
    }
    let count = sections.len();
    for (index, section) in sections.into_iter().enumerate() {
        session.out.extend(section);
        if index + 1 < count {
            session.out.push(String::new());
        }
    }
    if !terse && count > 0 {
        let lines = legend.lines(session.width);
        session.out.extend(lines);
    }
}

/// The symbols a loaded module is shown with (`(default:edge)`, in alphabetical order), from
/// its other names.
fn symbols(module: &Loaded) -> Vec<String> {
    let Some((bare, _)) = module.name.rsplit_once('/') else { return Vec::new() };
    let prefix = format!("{bare}/");
    let symbols = module.alt_names.iter().filter(|alt| matches!(alt, AltName::Symbol(_)));
    let mut symbols: Vec<String> =
        symbols.filter_map(|alt| alt.name().strip_prefix(&prefix)).map(str::to_string).collect();
    symbols.sort();
    symbols
}

/// `list [-t] [pattern...]`.
pub fn list(session: &mut Session, patterns: &[String], terse: bool) {
    let modules: Vec<Loaded> =
        session.loaded.iter().filter(|module| selected(&module.name, patterns)).cloned().collect();
    if modules.is_empty() {
        session.out.push("No Modulefiles Currently Loaded.".to_string());
        return;
    }
    let title =
        if patterns.is_empty() { "Currently Loaded Modulefiles:" } else { "Currently Loaded Matching Modulefiles:" };
    session.out.push(title.to_string());
    if terse {
        session.out.extend(modules.iter().map(|module| module.name.clone()));
        return;
    }
    let mut legend = Legend::default();
    let shown: Vec<String> = modules
        .iter()
        .map(|module| {
            let mut shown = module.name.clone();
            let symbols = symbols(module);
            if !symbols.is_empty() {
                shown.push_str(&format!("({})", symbols.join(":")));
                legend.symbol = true;
            }
            if module.auto {
                shown.push_str(" <aL>");
                legend.auto = true;
            }
            shown
        })
        .collect();
    let lines = grid(&shown, session.width, true);
    session.out.extend(lines);
    let lines = legend.lines(session.width);
    session.out.extend(lines);
}

/// `whatis [pattern...]`: each module's `module-whatis` lines, per modulepath. Modules that
/// fail to evaluate are left out.
pub fn whatis(session: &mut Session, patterns: &[String]) {
    for modulepath in session.modulepaths() {
        let listing = find::list(&modulepath);
        let mut lines = Vec::new();
        for (name, hidden) in &listing.modules {
            if *hidden || !selected(name, patterns) {
                continue;
            }
            let file = modulepath.join(name);
            let target = Target { name, file: &file, specified: name, command: "whatis" };
            let mut quiet = Session::new(session.env.clone(), session.width);
            quiet.budget = session.budget.clone();
            if let Ok(declared) = eval::evaluate(&mut quiet, Mode::Whatis, target, &crate::ops::Ops) {
                lines.extend(declared.whatis.iter().map(|text| whatis_line(name, text)));
            }
        }
        if !lines.is_empty() {
            session.out.push(header(&modulepath.display().to_string(), session.width));
            session.out.extend(lines);
        }
    }
}
