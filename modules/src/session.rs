//! One run of modulecmd: the environment it works on, the loaded modules, the messages for
//! stderr (with the report blocks of modules.md 4.3-4.6), the raw shell lines for stdout,
//! whether the command failed, and the evaluation budget every modulefile it evaluates counts
//! against (a time limit of `MODULES_EVAL_TIMEOUT` seconds, 10 by default, for the whole run).
//!
//! Owns: message layout (blocks, error texts of modules.md section 5). Must not: evaluate
//! modulefiles (eval.rs) or decide loads (ops.rs).

use crate::env::Env;
use crate::state::{self, Loaded};
use crate::tcl::{Budget, Limit};
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

/// How long the modulefiles one command evaluates may take in all, unless
/// `MODULES_EVAL_TIMEOUT` says otherwise.
pub const DEFAULT_EVAL_TIMEOUT: Duration = Duration::from_secs(10);

/// `MODULES_EVAL_TIMEOUT` (seconds, a positive number such as `10` or `0.5`), else the default.
pub fn eval_timeout(env: &Env) -> Duration {
    env.get("MODULES_EVAL_TIMEOUT")
        .and_then(|text| text.trim().parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs > 0.0)
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .unwrap_or(DEFAULT_EVAL_TIMEOUT)
}

/// The run's state.
#[derive(Debug, Default)]
pub struct Session {
    pub env: Env,
    pub loaded: Vec<Loaded>,
    /// Terminal width for layouts.
    pub width: usize,
    /// Lines for stderr, in order.
    pub out: Vec<String>,
    /// Lines for stdout after the changes (`puts stdout`).
    pub raw: Vec<String>,
    /// Whether the command failed (exit status 1).
    pub failed: bool,
    /// Requirements are loaded and dependents unloaded automatically (`--no-auto` turns off).
    pub auto_handling: bool,
    /// `--force`: load despite conflicts and missing prereqs.
    pub force: bool,
    /// Dependents are being reloaded after a switch: a requirement no longer loaded is an
    /// error, not loaded again (5.2 reloads them with automatic handling off).
    pub reloading: bool,
    /// Modules being loaded, outermost first (a module found here again is a loop).
    pub stack: Vec<String>,
    /// Open report blocks, outermost first.
    reports: Vec<Report>,
    /// Blocks printed so far (consecutive blocks are separated by an empty line).
    blocks: usize,
    /// What the modulefiles this run evaluates may still do (shared by all their interpreters).
    pub budget: Rc<Budget>,
}

/// An open report block.
#[derive(Debug, Default)]
pub struct Report {
    head: String,
    lines: Vec<String>,
    /// A modulefile printed to stderr while this block was open.
    printed: bool,
}

impl Session {
    /// A session over `env`, with the loaded modules read from it.
    pub fn new(env: Env, width: usize) -> Session {
        let loaded = state::read(&env);
        let budget = Rc::new(Budget::new(Some(eval_timeout(&env))));
        Session { env, loaded, width, auto_handling: true, budget, ..Session::default() }
    }

    /// The modulepaths now.
    pub fn modulepaths(&self) -> Vec<PathBuf> {
        crate::find::modulepaths(self.env.get("MODULEPATH"))
    }

    /// Writes the loaded list back into the environment.
    pub fn store_state(&mut self) {
        state::write(&mut self.env, &self.loaded);
    }

    /// Opens a report block (`Loading x`, `Unloading x`, `Switching from x to y`).
    pub fn open(&mut self, head: String) {
        self.reports.push(Report { head, ..Report::default() });
    }

    /// Closes the innermost block: printed when something was added to it. A nested block's
    /// lines go into its parent instead.
    pub fn close(&mut self) {
        let Some(report) = self.reports.pop() else { return };
        if report.lines.is_empty() {
            return;
        }
        match self.reports.last_mut() {
            Some(parent) => report.lines.into_iter().for_each(|line| push_merged(&mut parent.lines, line)),
            None => {
                if report.printed || self.blocks > 0 {
                    self.out.push(String::new());
                }
                self.blocks += 1;
                self.out.push(report.head);
                let width = self.width;
                self.out.extend(in_5_2_order(report.lines).iter().flat_map(|line| wrap(line, width)));
            }
        }
    }

    /// Adds a line (indented for a block) to the current block, or prints it two columns to
    /// the left when none is open.
    pub fn line(&mut self, text: String) {
        match self.reports.last_mut() {
            Some(report) => push_merged(&mut report.lines, text),
            None => self.out.push(text.strip_prefix("  ").unwrap_or(&text).to_string()),
        }
    }

    /// A message printed by a modulefile (`puts stderr`): shown at once.
    pub fn print(&mut self, text: String) {
        if let Some(report) = self.reports.first_mut() {
            report.printed = true;
        }
        self.out.push(text);
    }

    /// Records an error: the command fails.
    pub fn error(&mut self, lines: Vec<String>) {
        self.failed = true;
        for line in lines {
            self.line(line);
        }
    }

    /// Whether a block is open.
    pub fn in_block(&self) -> bool {
        !self.reports.is_empty()
    }

    /// Forgets the requirements reported loaded in the innermost block: the load they were
    /// for failed, and they went with it (5.2 reports none of them).
    pub fn forget_loaded_requirements(&mut self) {
        if let Some(report) = self.reports.last_mut() {
            report.lines.retain(|line| !line.starts_with(LOADING_REQUIREMENT));
        }
    }

    /// Takes the open blocks away, so that the blocks opened next are printed on their own
    /// (a dependent reloaded by a switch reports its failure before the switch does).
    pub fn detach_blocks(&mut self) -> Vec<Report> {
        std::mem::take(&mut self.reports)
    }

    /// Puts back blocks taken by `detach_blocks`.
    pub fn attach_blocks(&mut self, blocks: Vec<Report>) {
        self.reports = blocks;
    }

    /// The loaded module matching `designation` that was loaded last.
    pub fn find_loaded(&self, designation: &str) -> Option<usize> {
        self.loaded.iter().rposition(|module| module.matches(designation))
    }
}

const LOADING_REQUIREMENT: &str = "  Loading requirement: ";

/// Lines listing modules that are handled alike: consecutive ones become one line, the names
/// joined by spaces (`  Loading requirement: zlib/1.2.13 netlib/3.0`).
const GROUPED: [&str; 4] =
    [LOADING_REQUIREMENT, "  Unloading dependent: ", "  Reloading dependent: ", "  Unloading useless requirement: "];

/// A grouped line wrapped at `width` on spaces, continuation lines indented by four.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let Some(prefix) = GROUPED.iter().find(|prefix| line.starts_with(*prefix)) else { return vec![line.to_string()] };
    let mut lines = vec![prefix.trim_end().to_string()];
    for word in line[prefix.len()..].split(' ') {
        let current = lines.last_mut().expect("one line at least");
        let fresh = current.trim().is_empty() || current.ends_with(':');
        if !fresh && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(format!("    {word}"));
        } else {
            current.push(' ');
            current.push_str(word);
        }
    }
    lines
}

/// A block's lines as 5.2 prints them: errors, warnings and other messages as they came, then
/// the modules handled alike, one line per kind in the order the kinds first came (5.2 sums
/// them up when the evaluation ends).
fn in_5_2_order(lines: Vec<String>) -> Vec<String> {
    let (mut grouped, mut ordered): (Vec<String>, Vec<String>) =
        lines.into_iter().partition(|line| GROUPED.iter().any(|prefix| line.starts_with(prefix)));
    let mut kinds: Vec<(&str, String)> = Vec::new();
    for line in grouped.drain(..) {
        let prefix = GROUPED.iter().find(|prefix| line.starts_with(*prefix)).expect("a grouped line");
        match kinds.iter_mut().find(|(kind, _)| kind == prefix) {
            Some((_, merged)) => {
                merged.push(' ');
                merged.push_str(&line[prefix.len()..]);
            }
            None => kinds.push((prefix, line)),
        }
    }
    ordered.extend(kinds.into_iter().map(|(_, line)| line));
    ordered
}

fn push_merged(lines: &mut Vec<String>, text: String) {
    let prefix = GROUPED.iter().find(|prefix| text.starts_with(*prefix));
    if let (Some(prefix), Some(last)) = (prefix, lines.last_mut()) {
        if last.starts_with(prefix) {
            last.push(' ');
            last.push_str(&text[prefix.len()..]);
            return;
        }
    }
    lines.push(text);
}

/// Why a modulefile could not be evaluated or a module loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum ModError {
    NotFound(String),
    Cookie(PathBuf),
    Conflict(String),
    MissingPrereq(String),
    /// A Tcl error: its errorInfo.
    Tcl(String),
    /// The evaluation of this file reached a limit (time, commands, memory) and was stopped.
    Limit(PathBuf, Limit),
    /// The file asked for it (`error` aside): `reportError` already said why.
    Reported,
    /// A requirement could not be loaded.
    Requirement(String),
    /// A requirement is no longer loaded when a dependent is reloaded.
    RequirementNotLoaded(String),
    Loop(Vec<String>),
    /// `break` in the modulefile: abandoned silently.
    Abandoned,
    /// `exit`: this and the remaining modules of the command are abandoned.
    Exit,
}

impl ModError {
    /// The lines of a block reporting this error (indented by two, details by four).
    pub fn lines(&self) -> Vec<String> {
        match self {
            ModError::NotFound(name) => vec![format!("  ERROR: Unable to locate a modulefile for '{name}'")],
            ModError::Cookie(path) => vec![
                "  Module ERROR: Magic cookie '#%Module' missing".into(),
                format!("    In '{}'", path.display()),
                "    Please contact <root@localhost>".into(),
            ],
            ModError::Conflict(designation) => vec![
                "  ERROR: Module cannot be loaded due to a conflict.".into(),
                format!("    HINT: Might try \"module unload {designation}\" first."),
            ],
            ModError::MissingPrereq(designation) => vec![
                "  ERROR: Module cannot be loaded due to missing prereq.".into(),
                format!("    HINT: the following module must be loaded first: {designation}"),
            ],
            ModError::Tcl(info) => {
                let mut lines: Vec<String> = Vec::new();
                for (index, line) in info.lines().enumerate() {
                    lines.push(if index == 0 { format!("  Module ERROR: {line}") } else { format!("    {line}") });
                }
                lines.push("    Please contact <root@localhost>".into());
                lines
            }
            ModError::Limit(path, limit) => vec![
                match limit {
                    Limit::Time(_) => format!("  Module ERROR: {limit} (MODULES_EVAL_TIMEOUT)"),
                    _ => format!("  Module ERROR: {limit}"),
                },
                format!("    In '{}'", path.display()),
                "    Please contact <root@localhost>".into(),
            ],
            ModError::Requirement(name) => vec![format!("  ERROR: Load of requirement {name} failed")],
            ModError::RequirementNotLoaded(names) => vec![format!("  ERROR: Requirement {names} is not loaded")],
            ModError::Loop(chain) => vec![format!(
                "  ERROR: {} requires itself through its requirements ({}); nothing was loaded",
                chain.last().map_or("", String::as_str),
                chain.join(" -> ")
            )],
            ModError::Reported | ModError::Abandoned | ModError::Exit => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_shows_messages_first_then_one_line_per_kind_of_module_handled() {
        let mut session = Session::new(Env::default(), 80);
        session.open("Switching from a/1 to a/2".into());
        session.line("  Unloading dependent: b/1".into());
        session.line("  Loading requirement: z/1".into());
        session.line("  WARNING: Reload of dependent b/1 failed".into());
        session.line("  Unloading dependent: c/1".into());
        session.close();
        assert_eq!(
            session.out,
            [
                "Switching from a/1 to a/2",
                "  WARNING: Reload of dependent b/1 failed",
                "  Unloading dependent: b/1 c/1",
                "  Loading requirement: z/1"
            ]
        );
    }

    #[test]
    fn blocks_of_one_command_are_separated_and_long_lists_wrap() {
        let mut session = Session::new(Env::default(), 40);
        session.open("Loading a/1".into());
        for name in ["zlib/1.2.13", "hwloc/13.0-GCCcore-13.3.0", "ucx/9.2.2"] {
            session.line(format!("  Loading requirement: {name}"));
        }
        session.close();
        session.open("Loading b/1".into());
        session.close();
        session.open("Loading c/1".into());
        session.line("  Unloading dependent: d/1".into());
        session.close();
        assert_eq!(
            session.out,
            [
                "Loading a/1",
                "  Loading requirement: zlib/1.2.13",
                "    hwloc/13.0-GCCcore-13.3.0 ucx/9.2.2",
                "",
                "Loading c/1",
                "  Unloading dependent: d/1"
            ]
        );
    }
}
