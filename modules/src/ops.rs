//! Loading, unloading, switching and purging (modules.md section 6): a load evaluates the file
//! against the session and is undone entirely when it fails (requirements loaded for it
//! included); an unload re-evaluates the file in unload mode after unloading its dependents
//! and before unloading the requirements that only it needed; a switch unloads and reloads
//! the dependents around the swap. A module met again while it is being loaded is a loop:
//! an error, never a hang.
//!
//! Owns: the order of these steps and the lines of their report blocks. Each function
//! reports its own errors into the session before returning them. [`Ops`] is the loader
//! evaluations call back for the modules a modulefile loads or unloads.

use crate::context::{Loader, Mode, Target};
use crate::eval;
use crate::find;
use crate::session::{ModError, Session};
use crate::state::Loaded;

/// The [`Loader`] of this crate: the functions below, for modulefile commands.
#[derive(Debug)]
pub struct Ops;

impl Loader for Ops {
    fn load_requirement(&self, session: &mut Session, group: &[String]) -> Result<(), ModError> {
        load_requirement(session, group)
    }

    fn unload(&self, session: &mut Session, designation: &str) -> Result<(), ModError> {
        unload(session, designation)
    }

    fn switch(&self, session: &mut Session, words: &[String]) -> Result<(), ModError> {
        switch(session, words)
    }
}

/// Loads `designation` (a requirement when `auto`).
pub fn load(session: &mut Session, designation: &str, auto: bool) -> Result<(), ModError> {
    let paths = session.modulepaths();
    let Some(found) = find::resolve(&paths, designation) else {
        return report(session, ModError::NotFound(designation.to_string()));
    };
    // Already loaded: nothing changes, an auto-loaded module keeps its tag (as in 5.2).
    if session.loaded.iter().any(|module| module.name == found.name) {
        return Ok(());
    }
    if session.stack.contains(&found.name) {
        let mut chain = session.stack.clone();
        chain.push(found.name.clone());
        return report(session, ModError::Loop(chain));
    }
    if !find::is_modulefile(&found.file) {
        return report(session, ModError::Cookie(found.file.clone()));
    }
    session.open(format!("Loading {}", found.name));
    let alt_names = find::alt_names(&paths, &found);
    let names: Vec<&str> = std::iter::once(found.name.as_str()).chain(alt_names.iter().map(|alt| alt.name())).collect();
    let against = session.loaded.iter().find_map(|module| {
        module
            .conflicts
            .iter()
            .find(|designation| names.iter().any(|name| crate::state::name_matches(name, designation)))
            .cloned()
    });
    if let (Some(designation), false) = (against, session.force) {
        let result = report(session, ModError::Conflict(designation));
        session.close();
        return result;
    }
    let snapshot = (session.env.clone(), session.loaded.clone());
    session.stack.push(found.name.clone());
    let file = found.file.clone();
    let target = Target { name: &found.name, file: &file, specified: designation, command: "load" };
    let result = eval::evaluate(session, Mode::Load, target, &Ops);
    session.stack.pop();
    let result = match result {
        Ok(declared) => {
            session.loaded.push(Loaded {
                name: found.name.clone(),
                file: file.display().to_string(),
                auto,
                prereqs: declared.prereqs,
                conflicts: declared.conflicts,
                alt_names,
            });
            session.store_state();
            Ok(())
        }
        Err(error) => {
            (session.env, session.loaded) = snapshot;
            session.forget_loaded_requirements();
            report(session, error)
        }
    };
    session.close();
    result
}

/// Reports `error` where the session stands and returns it.
fn report(session: &mut Session, error: ModError) -> Result<(), ModError> {
    session.error(error.lines());
    Err(error)
}

/// Loads the first of `group` that loads, as a requirement of the module being loaded.
pub fn load_requirement(session: &mut Session, group: &[String]) -> Result<(), ModError> {
    for designation in group {
        let before = session.loaded.len();
        if load(session, designation, true).is_ok() {
            // a designation that resolves to a module already loaded loads nothing
            if session.loaded.len() > before {
                let name = session.loaded.last().map(|module| module.name.clone()).unwrap_or_default();
                session.line(format!("  Loading requirement: {name}"));
            }
            return Ok(());
        }
    }
    Err(ModError::Requirement(group.join(" or ")))
}

/// Unloads the last loaded module matching `designation`, with its dependents before it and
/// the requirements only it needed after it. Not loaded: nothing to do.
pub fn unload(session: &mut Session, designation: &str) -> Result<(), ModError> {
    let Some(index) = session.find_loaded(designation) else { return Ok(()) };
    let module = session.loaded[index].clone();
    session.open(format!("Unloading {}{}", module.name, if module.auto { " <aL>" } else { "" }));
    let dependents = dependents(&session.loaded, &module.name);
    if !dependents.is_empty() && !session.auto_handling && !session.force {
        let result = report_unload_prereq(session, &dependents);
        session.close();
        return result;
    }
    let mut result = Ok(());
    for dependent in dependents.iter().rev() {
        result = result.and(unload_one(session, dependent));
        session.line(format!("  Unloading dependent: {dependent}"));
    }
    result = result.and(unload_one(session, &module.name));
    if session.auto_handling && result.is_ok() {
        unload_useless(session, &[]);
    }
    session.close();
    result
}

/// Unloads the auto-loaded modules nothing needs any more, counting `coming_back` (dependents
/// about to be reloaded) as still needing theirs.
fn unload_useless(session: &mut Session, coming_back: &[Loaded]) {
    let mut considered = session.loaded.clone();
    considered.extend(coming_back.iter().map(|module| Loaded { auto: false, ..module.clone() }));
    for useless in useless_requirements(&considered) {
        if unload_one(session, &useless).is_ok() {
            session.line(format!("  Unloading useless requirement: {useless}"));
        }
    }
}

fn report_unload_prereq(session: &mut Session, dependents: &[String]) -> Result<(), ModError> {
    session.error(vec![
        "  ERROR: Module cannot be unloaded due to a prereq.".into(),
        format!("    HINT: Might try \"module unload {}\" first.", dependents.join(" ")),
    ]);
    Err(ModError::Reported)
}

/// Evaluates loaded module `name` in unload mode and takes it off the list; on an error
/// nothing changes.
fn unload_one(session: &mut Session, name: &str) -> Result<(), ModError> {
    let Some(index) = session.loaded.iter().position(|module| module.name == name) else { return Ok(()) };
    let module = session.loaded[index].clone();
    let snapshot = session.env.clone();
    let file = std::path::PathBuf::from(&module.file);
    let target = Target { name: &module.name, file: &file, specified: &module.name, command: "unload" };
    match eval::evaluate(session, Mode::Unload, target, &Ops) {
        Ok(_) | Err(ModError::Abandoned) => {
            session.loaded.retain(|loaded| loaded.name != module.name);
            session.store_state();
            Ok(())
        }
        Err(error) => {
            session.env = snapshot;
            report(session, error)
        }
    }
}

/// Names of the loaded modules that need `name` (directly or through each other), in load
/// order: each has a requirement group that only modules being unloaded satisfy.
pub fn dependents(loaded: &[Loaded], name: &str) -> Vec<String> {
    let mut going = vec![name.to_string()];
    loop {
        let next = loaded.iter().find(|module| {
            !going.contains(&module.name)
                && module.prereqs.iter().any(|group| {
                    let satisfied_by =
                        |candidate: &Loaded| group.iter().any(|designation| candidate.matches(designation));
                    let by_going = loaded.iter().filter(|m| going.contains(&m.name)).any(satisfied_by);
                    let by_others = loaded.iter().filter(|m| !going.contains(&m.name)).any(satisfied_by);
                    by_going && !by_others
                })
        });
        match next {
            Some(module) => going.push(module.name.clone()),
            None => break,
        }
    }
    loaded.iter().filter(|module| module.name != name && going.contains(&module.name)).map(|m| m.name.clone()).collect()
}

/// Auto-loaded modules nothing loaded needs any more, last loaded first (repeated until none
/// is left, so a requirement's own requirements follow).
fn useless_requirements(loaded: &[Loaded]) -> Vec<String> {
    let mut remaining: Vec<Loaded> = loaded.to_vec();
    let mut useless = Vec::new();
    loop {
        let needed = |candidate: &Loaded, others: &[Loaded]| {
            others.iter().any(|other| {
                other.name != candidate.name
                    && other.prereqs.iter().any(|group| group.iter().any(|designation| candidate.matches(designation)))
            })
        };
        let found = remaining.iter().rposition(|module| module.auto && !needed(module, &remaining));
        match found {
            Some(index) => useless.push(remaining.remove(index).name),
            None => return useless,
        }
    }
}

/// `switch [old] new`: unloads old (its dependents first), loads new, reloads the dependents.
pub fn switch(session: &mut Session, words: &[String]) -> Result<(), ModError> {
    let (old, new) = match words {
        [new] => (new.rsplit_once('/').map_or(new.as_str(), |(bare, _)| bare).to_string(), new.clone()),
        [old, new] => (old.clone(), new.clone()),
        _ => return Err(ModError::Reported),
    };
    let Some(index) = session.find_loaded(&old) else { return load(session, &new, false) };
    let module = session.loaded[index].clone();
    let paths = session.modulepaths();
    let new_name = find::resolve(&paths, &new).map_or(new.clone(), |found| found.name);
    let tag = if module.auto { " <aL>" } else { "" };
    session.open(format!("Switching from {}{tag} to {new_name}", module.name));
    let dependents = dependents(&session.loaded, &module.name);
    let reloads: Vec<Loaded> = session.loaded.iter().filter(|m| dependents.contains(&m.name)).cloned().collect();
    for dependent in dependents.iter().rev() {
        let _ = unload_one(session, dependent);
        session.line(format!("  Unloading dependent: {dependent}"));
    }
    let mut result = unload_one(session, &module.name);
    if result.is_ok() {
        if session.auto_handling {
            unload_useless(session, &reloads);
        }
        result = load(session, &new, false);
    }
    for dependent in &reloads {
        // reloaded as 5.2 does: no requirement loaded again, a failure reported on its own
        let blocks = session.detach_blocks();
        session.reloading = true;
        let reloaded = load(session, &dependent.name, dependent.auto);
        session.reloading = false;
        session.attach_blocks(blocks);
        match reloaded {
            Ok(()) => session.line(format!("  Reloading dependent: {}", dependent.name)),
            Err(_) => session.line(format!("  WARNING: Reload of dependent {} failed", dependent.name)),
        }
    }
    session.close();
    result
}

/// Unloads every module, last loaded first, silently.
pub fn purge(session: &mut Session) {
    let names: Vec<String> = session.loaded.iter().rev().map(|module| module.name.clone()).collect();
    for name in names {
        let _ = unload_one(session, &name);
    }
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
