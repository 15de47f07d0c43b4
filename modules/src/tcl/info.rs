//! The `info` command: exists, commands, procs, level, body, args, default, script, vars, globals, locals,
//! complete, tclversion, patchlevel.

use super::list::format_list;
use super::parse::Parser;
use super::{error, wrong_args, Interp, TclResult};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("info", cmd_info::<C>);
}

fn filtered<C>(interp: &Interp<C>, names: Vec<String>, pattern: Option<&String>) -> TclResult {
    let mut kept = Vec::new();
    for n in names {
        if pattern.map_or(Ok(true), |p| interp.glob(p, &n, false))? {
            kept.push(n);
        }
    }
    Ok(format_list(&kept))
}

fn cmd_info<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(sub) = a.get(1) else { return Err(wrong_args("info subcommand ?arg ...?")) };
    let arg = a.get(2);
    match sub.as_str() {
        "exists" => match arg {
            Some(v) if a.len() == 3 => Ok(u8::from(interp.var_exists(v)).to_string()),
            _ => Err(wrong_args("info exists varName")),
        },
        "commands" => filtered(interp, interp.command_names(false), arg),
        "procs" => filtered(interp, interp.command_names(true), arg),
        "vars" | "locals" => filtered(interp, interp.var_names(interp.cur), arg),
        "globals" => filtered(interp, interp.var_names(0), arg),
        "level" => info_level(interp, arg),
        "body" | "args" => {
            let Some(name) = arg else { return Err(wrong_args(&format!("info {sub} procname"))) };
            let p = interp.get_proc(name).ok_or_else(|| error(format!("\"{name}\" isn't a procedure")))?;
            if sub == "body" {
                Ok(p.body.clone())
            } else {
                Ok(format_list(&p.params.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>()))
            }
        }
        "default" => info_default(interp, a),
        "script" => Ok(interp.script_file.clone()),
        "complete" => {
            let Some(s) = arg else { return Err(wrong_args("info complete command")) };
            let mut p = Parser::new(s);
            loop {
                match p.next_command() {
                    Ok(Some(_)) => {}
                    Ok(None) => return Ok("1".into()),
                    Err(_) => return Ok("0".into()),
                }
            }
        }
        "tclversion" => Ok("8.6".into()),
        "patchlevel" => Ok("8.6.13".into()),
        _ => Err(error(format!(
            "unknown or ambiguous subcommand \"{sub}\": must be args, body, commands, complete, default, exists, \
             globals, level, locals, patchlevel, procs, script, tclversion, or vars"
        ))),
    }
}

fn info_level<C>(interp: &mut Interp<C>, arg: Option<&String>) -> TclResult {
    let cur_level = interp.frames.get(interp.cur).map_or(0, |f| f.level);
    let Some(n) = arg else { return Ok(cur_level.to_string()) };
    let n: i64 = n.parse().map_err(|_| error(format!("expected integer but got \"{n}\"")))?;
    let target = if n <= 0 { cur_level as i64 + n } else { n };
    let spec = format!("#{target}");
    let f = (target > 0)
        .then(|| interp.frame_for_level(&spec))
        .flatten()
        .ok_or_else(|| error(format!("bad level \"{n}\"")))?;
    Ok(format_list(&interp.frames.get(f).map(|f| f.call.clone()).unwrap_or_default()))
}

fn info_default<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, _, name, argname, var] = a else { return Err(wrong_args("info default procname arg varname")) };
    let p = interp.get_proc(name).ok_or_else(|| error(format!("\"{name}\" isn't a procedure")))?;
    let Some((_, def)) = p.params.iter().find(|(n, _)| n == argname) else {
        return Err(error(format!("procedure \"{name}\" doesn't have an argument \"{argname}\"")));
    };
    interp.set_named(var, def.clone().unwrap_or_default())?;
    Ok(u8::from(def.is_some()).to_string())
}
