//! Evaluating one modulefile: a fresh interpreter per evaluation (as Environment Modules
//! does), the modulefile commands registered (modfile.rs), Tcl's `env` array filled from the
//! session's environment, the file run in a mode (`load`, `unload`, `display`, `help`,
//! `whatis`), and what it declared handed back.
//!
//! Owns: setting up the interpreter and turning its outcomes into [`ModError`]s; the context
//! types are context.rs's. Loading and unloading other modules from inside a modulefile goes
//! through the [`Loader`] the caller supplies (ops.rs's `Ops`), so this file and the modulefile
//! commands never import ops.rs: the imports among this crate's files have no cycle. The session is moved into the interpreter for the evaluation and back out,
//! so nested loads (`module load` inside a modulefile) evaluate with the same session; every
//! interpreter counts against the session's budget, and one that reaches a limit is reported
//! as [`ModError::Limit`] naming its file.

use crate::context::{Ctx, Declared, Loader, Mode, Target};
use crate::session::{ModError, Session};
use crate::tcl::{Exception, Interp};

/// Evaluates `target` in `mode` with `session`'s environment; the modules it loads or unloads
/// go through `loader`.
pub fn evaluate(
    session: &mut Session,
    mode: Mode,
    target: Target<'_>,
    loader: &'static dyn Loader,
) -> Result<Declared, ModError> {
    let text = match crate::tcl::read_script(target.file) {
        Ok(text) if text.starts_with("#%Module") => text,
        Ok(_) => return Err(ModError::Cookie(target.file.to_path_buf())),
        Err(err) => return Err(ModError::Tcl(format!("couldn't read file \"{}\": {err}", target.file.display()))),
    };
    let budget = session.budget.clone();
    let ctx = Ctx {
        session: std::mem::take(session),
        loader,
        mode,
        name: target.name.to_string(),
        file: target.file.to_path_buf(),
        specified: target.specified.to_string(),
        command: target.command.to_string(),
        declared: Declared::default(),
        failure: None,
    };
    let mut interp = Interp::new(ctx);
    interp.set_budget(budget);
    crate::modfile::register(&mut interp);
    crate::modfile_deps::register(&mut interp);
    let vars: Vec<(String, String)> =
        interp.ctx.session.env.vars().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (name, value) in vars {
        interp.set_global_elem("env", &name, &value);
    }
    interp.set_global("ModulesCurrentModulefile", &target.file.display().to_string());
    interp.set_global("ModuleTool", "Modules");
    interp.set_global("ModuleToolVersion", crate::VERSION);
    let file = target.file.display().to_string();
    let mut result = interp.eval_script(&text, &file);
    if mode == Mode::Help && result.is_ok() {
        match interp.call("ModulesHelp", &[]) {
            Some(call) => {
                interp.ctx.declared.has_help = true;
                result = call.map(|_| String::new());
            }
            None => interp.ctx.declared.has_help = false,
        }
    }
    let limit = interp.limit_reached();
    let ctx = interp.ctx;
    *session = ctx.session;
    if let Some(limit) = limit {
        return Err(ModError::Limit(target.file.to_path_buf(), limit));
    }
    if let Some(failure) = ctx.failure {
        return Err(failure);
    }
    match result {
        Ok(_) | Err(Exception::Return(_)) => Ok(ctx.declared),
        Err(Exception::Error(error)) => Err(ModError::Tcl(error.info)),
        Err(Exception::Break | Exception::Continue) => Err(ModError::Abandoned),
        Err(Exception::Exit(_)) => Err(ModError::Exit),
    }
}
