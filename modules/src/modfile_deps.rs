//! Modulefile commands about other modules and about the evaluation itself: `prereq` (and its
//! `-any`/`-all`, `depends-on`, `always-load` forms), `conflict`, `module <sub-command>`,
//! `is-loaded`, `is-avail`, `is-used`, `module-info`, `module-whatis`, `versioncmp`, `uname`.
//!
//! Owns: what each does per mode; loading and unloading themselves are the evaluation's
//! loader's ([`crate::context::Loader`], which ops.rs implements).

use crate::context::{Ctx, Mode};
use crate::modfile::{display, fail, usage};
use crate::session::ModError;
use crate::tcl::{Exception, Interp, TclError};

type Result = std::result::Result<String, Exception>;

pub fn register(interp: &mut Interp<Ctx>) {
    interp.register("prereq", prereq);
    interp.register("prereq-any", prereq);
    interp.register("prereq-all", prereq);
    interp.register("depends-on", prereq);
    interp.register("always-load", prereq);
    interp.register("conflict", conflict);
    interp.register("module", module);
    interp.register("is-loaded", is_loaded);
    interp.register("is-avail", is_avail);
    interp.register("is-used", is_used);
    interp.register("module-info", module_info);
    interp.register("module-whatis", module_whatis);
    interp.register("versioncmp", versioncmp);
    interp.register("uname", uname);
}

/// Designations among `args[1..]`, options left out.
fn designations(args: &[String]) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = args[1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--tag" {
            rest.next();
        } else if !arg.starts_with("--") {
            words.push(arg.clone());
        }
    }
    words
}

/// `prereq` and `prereq-any`: one group (any of them); `prereq-all`, `depends-on`,
/// `always-load`: one group per module.
fn prereq(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let modules = designations(args);
    if modules.is_empty() {
        return Err(usage(&format!("{} ?--optional? ?--tag tag? modulefile ?...?", args[0])));
    }
    display(interp, args);
    let groups: Vec<Vec<String>> = if matches!(args[0].as_str(), "prereq" | "prereq-any") {
        vec![modules]
    } else {
        modules.into_iter().map(|module| vec![module]).collect()
    };
    if interp.ctx.mode != Mode::Load {
        return Ok(String::new());
    }
    for group in groups {
        require(interp, group)?;
    }
    Ok(String::new())
}

/// Makes sure one of `group` is loaded (loading the first that loads when auto-handling is
/// on) and records the group as a requirement of the module evaluated.
fn require(interp: &mut Interp<Ctx>, group: Vec<String>) -> std::result::Result<(), Exception> {
    let loader = interp.ctx.loader;
    let session = &mut interp.ctx.session;
    let satisfied = group.iter().any(|designation| session.find_loaded(designation).is_some());
    if !satisfied {
        if session.reloading && !session.force {
            return Err(fail(interp, ModError::RequirementNotLoaded(group.join(" or "))));
        } else if !session.auto_handling {
            if session.force {
                session.line(format!("  WARNING: Requirement {} is not loaded", group.join(" or ")));
            } else {
                return Err(fail(interp, ModError::MissingPrereq(group.join(" or "))));
            }
        } else if let Err(error) = loader.load_requirement(session, &group) {
            return Err(fail(interp, error));
        }
    }
    interp.ctx.declared.prereqs.push(group);
    Ok(())
}

fn conflict(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let modules = designations(args);
    if modules.is_empty() {
        return Err(usage("conflict modulefile ?...?"));
    }
    display(interp, args);
    if interp.ctx.mode != Mode::Load {
        return Ok(String::new());
    }
    let own = interp.ctx.name.clone();
    for designation in &modules {
        let clash = interp.ctx.session.loaded.iter().any(|module| module.name != own && module.matches(designation));
        if clash && interp.ctx.session.force {
            interp.ctx.session.line(format!("  WARNING: Conflicting {designation} is loaded"));
        } else if clash {
            return Err(fail(interp, ModError::Conflict(designation.clone())));
        }
    }
    interp.ctx.declared.conflicts.extend(modules);
    Ok(String::new())
}

/// `module load|add|try-load|load-any|unload|rm|switch|swap|use|unuse ...` inside a file.
fn module(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let Some(sub) = args.get(1) else { return Err(usage("module command ?arg ...?")) };
    let words: Vec<String> = args[2..].iter().filter(|arg| !arg.starts_with('-')).cloned().collect();
    display(interp, args);
    let (mode, loader) = (interp.ctx.mode, interp.ctx.loader);
    match (sub.as_str(), mode) {
        ("load" | "add" | "always-load", Mode::Load) => {
            for designation in words {
                require(interp, vec![designation])?;
            }
        }
        ("try-load" | "load-any", Mode::Load) => {
            let any = sub == "load-any";
            for designation in words {
                let loaded = interp.ctx.session.find_loaded(&designation).is_some()
                    || loader.load_requirement(&mut interp.ctx.session, std::slice::from_ref(&designation)).is_ok();
                if loaded {
                    interp.ctx.declared.prereqs.push(vec![designation]);
                    if any {
                        break;
                    }
                }
            }
        }
        ("unload" | "rm", Mode::Load) => {
            for designation in words {
                loader.unload(&mut interp.ctx.session, &designation).map_err(|error| fail(interp, error))?;
            }
        }
        ("switch" | "swap", Mode::Load) => {
            loader.switch(&mut interp.ctx.session, &words).map_err(|error| fail(interp, error))?;
        }
        ("use", Mode::Load) | ("unuse", Mode::Unload) => {
            let append = args.iter().any(|arg| arg == "-a" || arg == "--append");
            interp.ctx.session.env.add_path("MODULEPATH", &words, ":", !append);
        }
        ("use", Mode::Unload) | ("unuse", Mode::Load) => {
            interp.ctx.session.env.release_path("MODULEPATH", &words, ":");
        }
        ("load" | "add" | "always-load" | "try-load" | "load-any" | "unload" | "rm" | "switch" | "swap", _) => {}
        ("use" | "unuse", _) => {}
        ("is-loaded", _) => return is_loaded(interp, &args[1..]),
        ("list" | "avail" | "whatis" | "show" | "display" | "help" | "purge" | "refresh", _) => {}
        (other, _) => return Err(Exception::Error(TclError::new(format!("Invalid command '{other}'")))),
    }
    Ok(String::new())
}

fn is_loaded(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let session = &interp.ctx.session;
    let loaded = if args.len() < 2 {
        !session.loaded.is_empty()
    } else {
        args[1..].iter().any(|designation| session.find_loaded(designation).is_some())
    };
    Ok(if loaded { "1" } else { "0" }.to_string())
}

fn is_avail(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let paths = interp.ctx.session.modulepaths();
    let avail = args[1..].iter().any(|designation| crate::find::resolve(&paths, designation).is_some());
    Ok(if avail { "1" } else { "0" }.to_string())
}

fn is_used(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let paths = interp.ctx.session.modulepaths();
    let used = args[1..].iter().any(|dir| paths.iter().any(|path| path.as_os_str() == dir.as_str()));
    Ok(if used { "1" } else { "0" }.to_string())
}

fn module_info(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    let Some(what) = args.get(1) else { return Err(usage("module-info option ?info?")) };
    let ctx = &interp.ctx;
    let value = match what.as_str() {
        "mode" => match args.get(2) {
            Some(asked) => {
                let same = asked == ctx.mode.word() || (asked == "remove" && ctx.mode == Mode::Unload);
                return Ok(if same { "1" } else { "0" }.to_string());
            }
            None => ctx.mode.word().to_string(),
        },
        "name" => ctx.name.clone(),
        "specified" => ctx.specified.clone(),
        "command" => ctx.command.clone(),
        "shell" | "shelltype" => "sh".to_string(),
        "type" => "Tcl".to_string(),
        "loaded" => {
            let designation = args.get(2).map_or("", String::as_str);
            ctx.session
                .loaded
                .iter()
                .filter(|m| m.matches(designation))
                .map(|m| m.name.clone())
                .collect::<Vec<_>>()
                .join(" ")
        }
        "username" => ctx.session.env.get("USER").unwrap_or_default().to_string(),
        "version" | "symbols" | "tags" | "usergroups" => String::new(),
        other => return Err(Exception::Error(TclError::new(format!("module-info {other} not supported")))),
    };
    Ok(value)
}

fn module_whatis(interp: &mut Interp<Ctx>, args: &[String]) -> Result {
    if args.len() < 2 {
        return Err(usage("module-whatis string"));
    }
    display(interp, args);
    if interp.ctx.mode == Mode::Whatis {
        interp.ctx.declared.whatis.push(args[1..].join(" "));
    }
    Ok(String::new())
}

fn versioncmp(_: &mut Interp<Ctx>, args: &[String]) -> Result {
    let [_, a, b] = args else { return Err(usage("versioncmp version1 version2")) };
    let order = crate::tcl::list::dictionary_cmp(a, b) as i8;
    Ok(order.to_string())
}

fn uname(_: &mut Interp<Ctx>, args: &[String]) -> Result {
    let read = |file: &str| std::fs::read_to_string(file).map(|text| text.trim().to_string()).unwrap_or_default();
    let value = match args.get(1).map(String::as_str) {
        Some("sysname") => "Linux".to_string(),
        Some("machine") => std::env::consts::ARCH.to_string(),
        Some("nodename") => read("/proc/sys/kernel/hostname"),
        Some("release") => read("/proc/sys/kernel/osrelease"),
        Some("domain") => read("/proc/sys/kernel/domainname"),
        Some("version") => read("/proc/sys/kernel/version"),
        _ => return Err(usage("uname field")),
    };
    Ok(value)
}
