//! What a modulefile evaluation works with: why it runs ([`Mode`]), which file ([`Target`]),
//! the state its commands see ([`Ctx`]), what the file declared ([`Declared`]), and the
//! [`Loader`] its commands load and unload other modules through. Types only: eval.rs runs
//! the evaluation, modfile.rs and modfile_deps.rs are the commands, ops.rs is the loader.

use crate::session::{ModError, Session};
use std::path::{Path, PathBuf};

/// What an evaluation is for (`module-info mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Load,
    Unload,
    Display,
    Help,
    Whatis,
}

impl Mode {
    pub fn word(self) -> &'static str {
        match self {
            Mode::Load => "load",
            Mode::Unload => "unload",
            Mode::Display => "display",
            Mode::Help => "help",
            Mode::Whatis => "whatis",
        }
    }
}

/// Loading and unloading other modules, for the modulefile commands that ask for it
/// (`prereq`, `module load|unload|switch`), with the session being evaluated.
pub trait Loader: std::fmt::Debug {
    /// Loads the first of `group` that loads, as a requirement of the module being loaded.
    fn load_requirement(&self, session: &mut Session, group: &[String]) -> Result<(), ModError>;
    /// Unloads the last loaded module matching `designation`, with what depends on it.
    fn unload(&self, session: &mut Session, designation: &str) -> Result<(), ModError>;
    /// `switch [old] new`.
    fn switch(&self, session: &mut Session, words: &[String]) -> Result<(), ModError>;
}

/// The state a modulefile's commands see.
#[derive(Debug)]
pub struct Ctx {
    pub session: Session,
    /// Loads and unloads the modules a modulefile asks for.
    pub loader: &'static dyn Loader,
    pub mode: Mode,
    /// `name/version` of the module evaluated.
    pub name: String,
    pub file: PathBuf,
    /// The designation the user gave.
    pub specified: String,
    /// The sub-command being run (`module-info command`).
    pub command: String,
    /// What the file declared.
    pub declared: Declared,
    /// A failure raised by a modulefile command (conflict, missing prereq, ...), which ends the
    /// evaluation like a Tcl error but is reported in its own words.
    pub failure: Option<ModError>,
}

/// What a modulefile declared while evaluated.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    pub prereqs: Vec<Vec<String>>,
    pub conflicts: Vec<String>,
    /// `module-whatis` texts.
    pub whatis: Vec<String>,
    /// Help mode: whether `ModulesHelp` existed.
    pub has_help: bool,
}

/// Which module to evaluate and why.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub name: &'a str,
    pub file: &'a Path,
    pub specified: &'a str,
    pub command: &'a str,
}
