//! One modulecmd invocation: the command line (options before or after the sub-command),
//! the sub-command carried out on a session, and the result: shell code for stdout, lines for
//! stderr, success or failure (modules.md sections 4 and 5).
//!
//! Owns: the sub-command table, `show`, `help`, `use`, `unuse`, `is-loaded` and the usage
//! errors. Must not: touch the process environment or print (the binary does).

use crate::context::{Mode, Target};
use crate::env::Env;
use crate::eval;
use crate::find;
use crate::format::separator;
use crate::listing;
use crate::ops;
use crate::session::{ModError, Session};
use crate::shell::{self, Shell};
use std::path::Path;

/// What to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: Vec<String>,
    pub ok: bool,
}

/// Where modulecmd is installed, for `autoinit`.
#[derive(Debug, Clone, Copy)]
pub struct Install<'a> {
    pub cmd: &'a Path,
    pub home: &'a Path,
}

/// Options and words of the command line.
#[derive(Debug, Default)]
struct Args {
    terse: bool,
    all: bool,
    append: bool,
    force: bool,
    no_auto: bool,
    version: bool,
    words: Vec<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args::default();
    for arg in args {
        match arg.as_str() {
            "-t" | "--terse" => parsed.terse = true,
            "-a" | "--all" => parsed.all = true,
            "--append" => parsed.append = true,
            "-f" | "--force" => parsed.force = true,
            "--no-auto" => parsed.no_auto = true,
            "--auto" | "-l" | "--long" | "-d" | "--default" | "-L" | "--latest" | "-i" | "--icase" => {}
            "--redirect" | "--no-redirect" | "-s" | "--silent" | "-v" | "--verbose" | "-D" | "--debug" => {}
            "-V" | "--version" => parsed.version = true,
            "-h" | "--help" => parsed.words.insert(0, "help".to_string()),
            option
                if option.starts_with('-')
                    && option.len() > 1
                    && parsed.words.first().is_none_or(|sub| sub != "use") =>
            {
                return Err(format!("Invalid option '{option}'"));
            }
            word => parsed.words.push(word.to_string()),
        }
    }
    Ok(parsed)
}

/// Runs `args` (what follows the shell name) with `env` and layout `width`.
pub fn run(shell: Shell, args: &[String], env: Env, width: usize, install: Install<'_>) -> Output {
    let mut session = Session::new(env, width);
    let parsed = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            usage_error(&mut session, message);
            return finish(session);
        }
    };
    session.force = parsed.force;
    session.auto_handling = !parsed.no_auto;
    if parsed.version {
        session.out.push(format!(
            "Modules Release {} (minipbs modulecmd {})",
            crate::VERSION,
            env!("CARGO_PKG_VERSION")
        ));
        return finish(session);
    }
    let Some((sub, words)) = parsed.words.split_first() else {
        usage(&mut session);
        session.failed = true;
        return finish(session);
    };
    match sub.as_str() {
        "autoinit" => return autoinit(&session, shell, install),
        "avail" | "av" => listing::avail(&mut session, words, parsed.terse, parsed.all),
        "list" | "li" => listing::list(&mut session, words, parsed.terse),
        "whatis" => listing::whatis(&mut session, words),
        "load" | "add" => each(&mut session, words, |session, word| ops::load(session, word, false)),
        "try-load" => {
            let paths = session.modulepaths();
            let found: Vec<String> =
                words.iter().filter(|word| find::resolve(&paths, word).is_some()).cloned().collect();
            each(&mut session, &found, |session, word| ops::load(session, word, false));
        }
        "unload" | "rm" | "del" if words.is_empty() => arg_count(&mut session, "unload"),
        "unload" | "rm" | "del" => each(&mut session, words, ops::unload),
        "switch" | "swap" if words.is_empty() || words.len() > 2 => arg_count(&mut session, "switch"),
        "switch" | "swap" => {
            let _ = ops::switch(&mut session, words);
        }
        "purge" => ops::purge(&mut session),
        "reload" => reload(&mut session),
        "show" | "display" if words.is_empty() => arg_count(&mut session, sub),
        "show" | "display" => each(&mut session, words, show),
        "help" if words.is_empty() => usage(&mut session),
        "help" => each(&mut session, words, help),
        "use" => use_dirs(&mut session, words, parsed.append || parsed.all),
        "unuse" if words.is_empty() => arg_count(&mut session, "unuse"),
        "unuse" => session.env.release_path("MODULEPATH", words, ":"),
        "is-loaded" => {
            let loaded = if words.is_empty() {
                !session.loaded.is_empty()
            } else {
                words.iter().all(|word| session.find_loaded(word).is_some())
            };
            session.failed = !loaded;
        }
        "is-avail" => {
            let paths = session.modulepaths();
            session.failed = words.is_empty() || !words.iter().all(|word| find::resolve(&paths, word).is_some());
        }
        "refresh" => {}
        other => usage_error(&mut session, format!("Invalid command '{other}'")),
    }
    finish(session)
}

/// `autoinit`: the shell definitions. `MODULESHOME` is kept when set (the init files set it to
/// their own prefix); a shell with no modulepath and nothing loaded gets the directories
/// listed in `$MODULESHOME/init/modulespath` (one per line or `:`-separated, `#` comments).
fn autoinit(session: &Session, shell: Shell, install: Install<'_>) -> Output {
    let home = session.env.get("MODULESHOME").map_or(install.home.to_path_buf(), std::path::PathBuf::from);
    let fresh = session.env.get("MODULEPATH").unwrap_or("").is_empty() && session.loaded.is_empty();
    let initial = if fresh {
        let text = std::fs::read_to_string(home.join("init/modulespath")).unwrap_or_default();
        let dirs: Vec<&str> = text
            .lines()
            .map(|line| line.split('#').next().unwrap_or("").trim())
            .flat_map(|line| line.split(':'))
            .filter(|dir| !dir.is_empty())
            .collect();
        (!dirs.is_empty()).then(|| dirs.join(":"))
    } else {
        None
    };
    Output { stdout: shell::autoinit(shell, install.cmd, &home, initial.as_deref()), stderr: Vec::new(), ok: true }
}

/// Applies `action` to each word; an `exit` in a modulefile stops the rest.
fn each(session: &mut Session, words: &[String], action: impl Fn(&mut Session, &str) -> Result<(), ModError>) {
    for word in words {
        if let Err(ModError::Exit) = action(session, word) {
            break;
        }
    }
}

fn finish(session: Session) -> Output {
    let ok = !session.failed;
    Output { stdout: shell::render(&session.env.changes(), &session.raw, ok), stderr: session.out, ok }
}

fn usage_error(session: &mut Session, message: String) {
    session.failed = true;
    session.out.push(format!("ERROR: {message}"));
    session.out.push("  Try 'module --help' for more information.".to_string());
}

fn arg_count(session: &mut Session, sub: &str) {
    usage_error(session, format!("Unexpected number of args for '{sub}' command"));
}

fn usage(session: &mut Session) {
    session.out.push(format!("Modules Release {} (minipbs modulecmd)", crate::VERSION));
    session.out.push("Usage: module [options] [command] [args ...]".to_string());
    for line in crate::USAGE.lines() {
        session.out.push(line.to_string());
    }
}

/// `show`: the commands the file runs, between separators.
fn show(session: &mut Session, designation: &str) -> Result<(), ModError> {
    between_separators(session, designation, Mode::Display, |file| format!("{file}:"))
}

/// `help`: what the file's `ModulesHelp` prints, between separators.
fn help(session: &mut Session, designation: &str) -> Result<(), ModError> {
    between_separators(session, designation, Mode::Help, |file| format!("Module Specific Help for {file}:"))
}

/// Resolves `designation` and evaluates it in `mode` between two separators, under the title
/// `title(file)` and an empty line (a help mode file without `ModulesHelp` gets 5.2's warning).
fn between_separators(
    session: &mut Session,
    designation: &str,
    mode: Mode,
    title: impl Fn(&str) -> String,
) -> Result<(), ModError> {
    let paths = session.modulepaths();
    let Some(found) = find::resolve(&paths, designation) else {
        let error = ModError::NotFound(designation.to_string());
        session.error(error.lines());
        return Err(error);
    };
    let file = found.file.display().to_string();
    session.out.extend([separator(session.width), title(&file), String::new()]);
    let target = Target { name: &found.name, file: &found.file, specified: designation, command: mode.word() };
    let result = eval::evaluate(session, mode, target, &ops::Ops);
    match &result {
        Ok(declared) if mode == Mode::Help && !declared.has_help => {
            session.out.push(format!("WARNING: Unable to find ModulesHelp in {file}."));
        }
        Ok(_) => {}
        Err(error) => session.error(error.lines()),
    }
    session.out.push(separator(session.width));
    result.map(|_| ())
}

/// `use [-a] dir...`, or the search path when no directory is given.
fn use_dirs(session: &mut Session, dirs: &[String], append: bool) {
    if dirs.is_empty() {
        session.out.push("Search path for module files (in search order):".to_string());
        let paths = session.modulepaths();
        session.out.extend(paths.iter().map(|path| format!("  {}", path.display())));
        return;
    }
    let mut elements = session.env.elements("MODULEPATH", ":");
    let mut front = 0;
    for dir in dirs {
        let dir = dir.trim_end_matches('/').to_string();
        if elements.contains(&dir) {
            continue;
        }
        if append {
            elements.push(dir);
        } else {
            elements.insert(front, dir);
            front += 1;
        }
    }
    session.env.set("MODULEPATH", &elements.join(":"));
}

/// `reload`: unloads and loads again every module, keeping their tags.
fn reload(session: &mut Session) {
    let modules = session.loaded.clone();
    ops::purge(session);
    for module in modules {
        let _ = ops::load(session, &module.name, module.auto);
    }
}
