//! The commands a modulefile may use (modules.md 8.2), each doing what its mode asks: change
//! the environment on load, the reverse on unload (re-evaluation, not replay: modules.md 6.1),
//! record a `show` line on display, nothing else otherwise. Dependencies (`prereq`,
//! `module load`, `conflict`) load through the evaluation's loader with the same session.
//!
//! Owns: argument forms and per-mode behaviour of the environment commands; the
//! dependency and information commands are in modfile_deps.rs.

use crate::context::{Ctx, Mode};
use crate::session::ModError;
use crate::tcl::list::format_list;
use crate::tcl::{Exception, Interp, TclError};

type Result = std::result::Result<String, Exception>;

/// Registers the environment commands (eval.rs registers modfile_deps.rs's too).
pub fn register(interp: &mut Interp<Ctx>) {
    interp.register("setenv", setenv);
    interp.register("unsetenv", unsetenv);
    interp.register("pushenv", setenv);
    interp.register("prepend-path", add_path);
    interp.register("append-path", add_path);
    interp.register("remove-path", remove_path);
    interp.register("getenv", getenv);
    interp.register("puts", puts);
    interp.register("reportError", report);
    interp.register("reportWarning", report);
    interp.register("set-alias", set_alias);
    interp.register("unset-alias", set_alias);
    interp.register("family", family);
    for ignored in ["add-property", "remove-property", "extensions", "module-version", "module-alias", "module-tag"] {
        interp.register(ignored, |_, _| Ok(String::new()));
    }
}

/// A Tcl error with Tcl's usage text.
pub fn usage(text: &str) -> Exception {
    Exception::Error(TclError::new(format!("wrong # args: should be \"{text}\"")))
}

/// Prints a `show` line in display mode (inline with what the file prints itself).
pub fn display(interp: &mut Interp<Ctx>, args: &[String]) {
    if interp.ctx.mode == Mode::Display {
        let line = crate::format::show_line(&args[0], &format_list(&args[1..]));
        interp.ctx.session.out.push(line);
    }
}

/// Ends the evaluation with `failure` (reported in its own words, not as a Tcl error).
pub fn fail(interp: &mut Interp<Ctx>, failure: ModError) -> Exception {
    interp.ctx.failure = Some(failure);
    Exception::Error(TclError::new("module command failed"))
}

fn set_var(interp: &mut Interp<Ctx>, name: &str, value: Option<&str>) {
    match value {
        Some(value) => {
            interp.ctx.session.env.set(name, value);
            interp.set_global_elem("env", name, value);
        }
        None => {
            interp.ctx.session.env.unset(name);
            interp.unset_global_elem("env", name);
        }
    }
}

fn setenv(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let words: Vec<&String> = args[1..].iter().filter(|arg| !arg.starts_with("--")).collect();
    let if_undef = args.iter().any(|arg| arg == "--set-if-undef");
    let [name, value] = words[..] else { return Err(usage(&format!("{} ?--set-if-undef? var val", args[0]))) };
    display(interp, args);
    match interp.ctx.mode {
        Mode::Load if if_undef && interp.ctx.session.env.get(name).is_some() => {}
        Mode::Load => set_var(interp, name, Some(value)),
        Mode::Unload => set_var(interp, name, None),
        _ => {}
    }
    Ok(String::new())
}

fn unsetenv(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let words: Vec<&String> = args[1..].iter().filter(|arg| !arg.starts_with("--")).collect();
    if words.is_empty() || words.len() > 2 {
        return Err(usage("unsetenv ?--noop-on-unload? ?--unset-on-unload? var ?val?"));
    }
    display(interp, args);
    match interp.ctx.mode {
        Mode::Load => set_var(interp, words[0], None),
        Mode::Unload if words.len() == 2 => set_var(interp, words[0], Some(words[1])),
        _ => {}
    }
    Ok(String::new())
}

/// `[-d C|--delim C|--delim=C] [--duplicates] [--index] [--glob] VAR value...`.
struct PathArgs {
    delim: String,
    name: String,
    values: Vec<String>,
}

fn path_args(args: &[String]) -> std::result::Result<PathArgs, Exception> {
    let mut delim = ":".to_string();
    let mut rest = args[1..].iter();
    let mut words = Vec::new();
    while let Some(arg) = rest.next() {
        if arg == "-d" || arg == "--delim" {
            delim = rest.next().cloned().ok_or_else(|| usage(&format!("{} ?-d delim? var val ?val...?", args[0])))?;
        } else if let Some(value) = arg.strip_prefix("--delim=") {
            delim = value.to_string();
        } else if words.is_empty() && arg.starts_with("--") {
            // --duplicates, --index, --glob, --*-on-unload: accepted, not distinguished.
        } else {
            words.push(arg.clone());
        }
    }
    if words.len() < 2 || delim.is_empty() {
        return Err(usage(&format!("{} ?-d delim? var val ?val...?", args[0])));
    }
    let name = words.remove(0);
    let values =
        words.iter().flat_map(|value| value.split(delim.as_str()).map(str::to_string).collect::<Vec<_>>()).collect();
    Ok(PathArgs { delim, name, values })
}

fn add_path(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let path = path_args(args)?;
    display(interp, args);
    let front = args[0] == "prepend-path";
    let env = &mut interp.ctx.session.env;
    match interp.ctx.mode {
        Mode::Load => env.add_path(&path.name, &path.values, &path.delim, front),
        Mode::Unload => env.release_path(&path.name, &path.values, &path.delim),
        _ => return Ok(String::new()),
    }
    let value = interp.ctx.session.env.get(&path.name).map(str::to_string);
    set_var(interp, &path.name, value.as_deref());
    Ok(String::new())
}

fn remove_path(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let path = path_args(args)?;
    display(interp, args);
    if interp.ctx.mode == Mode::Load {
        interp.ctx.session.env.remove_path(&path.name, &path.values, &path.delim);
        let value = interp.ctx.session.env.get(&path.name).map(str::to_string);
        set_var(interp, &path.name, value.as_deref());
    }
    Ok(String::new())
}

fn getenv(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let return_value = args.iter().any(|arg| arg == "--return-value");
    let words: Vec<&String> = args[1..].iter().filter(|arg| !arg.starts_with("--")).collect();
    let (name, default) = match words[..] {
        [name] => (name, ""),
        [name, default] => (name, default.as_str()),
        _ => return Err(usage("getenv ?--return-value? var ?valifundef?")),
    };
    if interp.ctx.mode == Mode::Display && !return_value {
        return Ok(format!("${name}"));
    }
    Ok(interp.ctx.session.env.get(name).unwrap_or(default).to_string())
}

/// `puts ?-nonewline? ?channel? string`: stderr is a message, stdout raw shell code.
fn puts(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let words: Vec<&String> = args[1..].iter().filter(|arg| *arg != "-nonewline").collect();
    let (channel, text) = match words[..] {
        [text] => ("stdout", text),
        [channel, text] => (channel.as_str(), text),
        _ => return Err(usage("puts ?-nonewline? ?channelId? string")),
    };
    match channel {
        "stderr" => interp.ctx.session.print(text.clone()),
        "stdout" | "prestdout" if matches!(interp.ctx.mode, Mode::Load | Mode::Unload) => {
            interp.ctx.session.raw.push(text.clone());
        }
        "stdout" | "prestdout" | "log" => {}
        other => return Err(Exception::Error(TclError::new(format!("can not find channel named \"{other}\"")))),
    }
    Ok(String::new())
}

fn report(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let [_, text] = args else { return Err(usage(&format!("{} message", args[0]))) };
    if args[0] == "reportError" {
        interp.ctx.session.error(vec![format!("  ERROR: {text}")]);
        interp.ctx.failure = Some(ModError::Reported);
    } else {
        interp.ctx.session.line(format!("  WARNING: {text}"));
    }
    Ok(String::new())
}

fn set_alias(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let set = args[0] == "set-alias";
    let (name, value) = match (&args[1..], set) {
        ([name, value], true) => (name, Some(value)),
        ([name], false) => (name, None),
        _ => return Err(usage(&format!("{} name{}", args[0], if set { " body" } else { "" }))),
    };
    display(interp, args);
    let line = match (interp.ctx.mode, value) {
        (Mode::Load, Some(value)) => format!("alias {name}={};", crate::shell::quote(value)),
        (Mode::Load, None) | (Mode::Unload, Some(_)) => format!("unalias {name} 2>/dev/null || true;"),
        _ => return Ok(String::new()),
    };
    interp.ctx.session.raw.push(line);
    Ok(String::new())
}

/// `family NAME`: `MODULES_FAMILY_<NAME>` and `LMOD_FAMILY_<NAME>` name this module.
fn family(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let [_, family] = args else { return Err(usage("family name")) };
    display(interp, args);
    let bare = interp.ctx.name.rsplit_once('/').map_or(interp.ctx.name.clone(), |(bare, _)| bare.to_string());
    let upper = family.to_uppercase();
    for name in [format!("MODULES_FAMILY_{upper}"), format!("LMOD_FAMILY_{upper}")] {
        match interp.ctx.mode {
            Mode::Load => set_var(interp, &name, Some(&bare)),
            Mode::Unload => set_var(interp, &name, None),
            _ => {}
        }
    }
    Ok(String::new())
}
