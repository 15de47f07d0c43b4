//! An Environment Modules compatible `module` command, as a library: the shell function runs
//! `modulecmd <shell> <subcommand> ...`, which reads its state from the environment, evaluates
//! Tcl modulefiles with its own Tcl-subset interpreter, prints messages on stderr and the
//! resulting environment changes as shell code on stdout (modules.md).
//!
//! Layout:
//! * `tcl/`: the Tcl-subset interpreter (parser, substitution, `expr`, core commands).
//! * `cmd.rs`: one modulecmd invocation: options, the sub-command table, `show`, `help`, `use`.
//! * `listing.rs`: `avail`, `list`, `whatis`; `format.rs`: their layouts (pure).
//! * `ops.rs`: load, unload, switch, purge with dependencies; `session.rs`: the run's state
//!   and its messages.
//! * `eval.rs`: one modulefile evaluation, with `context.rs`'s types; `modfile.rs` and
//!   `modfile_deps.rs`: the modulefile commands, which load other modules through the
//!   `context::Loader` ops.rs implements (no file imports ops.rs back: `tests/src/layering.rs`
//!   checks that no sibling files import each other in a cycle).
//! * `find.rs`: modulepaths, names, defaults; `rc.rs`: `.modulerc` and `.version`.
//! * `env.rs`: the environment and reference-counted paths; `state.rs`: the loaded modules
//!   in environment variables; `shell.rs`: the shell code and `autoinit`.
//!
//! Must not know: PBS, jobs, the network. Depends on no other crate of the workspace.

pub mod cmd;
pub mod context;
pub mod env;
pub mod eval;
pub mod find;
pub mod format;
pub mod listing;
pub mod modfile;
pub mod modfile_deps;
pub mod ops;
pub mod rc;
pub mod session;
pub mod shell;
pub mod state;
pub mod tcl;

/// The Environment Modules release whose behaviour this follows (`module --version`,
/// `ModuleToolVersion`).
pub const VERSION: &str = "5.2.0";

/// The sub-commands, for `module help`.
pub const USAGE: &str = "\
Loading / Unloading commands:
  add | load      modulefile [...]  Load modulefile(s)
  try-load        modulefile [...]  Load modulefile(s), no complain if not found
  rm | unload     modulefile [...]  Remove modulefile(s)
  purge                             Unload all loaded modulefiles
  reload                            Unload then load all loaded modulefiles
  switch | swap   [mod1] mod2       Unload mod1 and load mod2

Listing / Searching commands:
  list            [-t] [pat]        List loaded modules
  avail   [-t] [-a] [pat ...]       List all or matching available modules
  whatis          [modulefile ...]  Print whatis information of modulefile(s)

Modulefile handling commands:
  display | show  modulefile [...]  Display information about modulefile(s)
  help            [modulefile ...]  Print this or modulefile(s) help info
  is-loaded       [modulefile ...]  Test if any of the modulefile(s) are loaded

Modulepath handling commands:
  use     [-a] dir [...]            Add dir(s) to MODULEPATH variable
  unuse           dir [...]         Remove dir(s) from MODULEPATH variable";
