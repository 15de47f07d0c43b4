//! Control-flow commands: if, while, for, foreach, break, continue, switch, catch, error, return, exit,
//! eval, uplevel, proc, rename, expr, subst.

use super::list::{format_list, parse_list};
use super::list_cmds::concat;
use super::number::int_arg;
use super::parse::{backslash, Parser};
use super::{check_len, error, wrong_args, Exception, Interp, Proc, TclError, TclResult, ELEMENT_COST};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("if", cmd_if::<C>);
    i.register("while", cmd_while::<C>);
    i.register("for", cmd_for::<C>);
    i.register("foreach", cmd_foreach::<C>);
    i.register("break", |_, a| if a.len() == 1 { Err(Exception::Break) } else { Err(wrong_args("break")) });
    i.register("continue", |_, a| if a.len() == 1 { Err(Exception::Continue) } else { Err(wrong_args("continue")) });
    i.register("switch", cmd_switch::<C>);
    i.register("catch", cmd_catch::<C>);
    i.register("error", cmd_error::<C>);
    i.register("return", cmd_return::<C>);
    i.register("exit", cmd_exit::<C>);
    i.register("eval", cmd_eval::<C>);
    i.register("uplevel", cmd_uplevel::<C>);
    i.register("proc", cmd_proc::<C>);
    i.register("rename", cmd_rename::<C>);
    i.register("expr", cmd_expr::<C>);
    i.register("subst", cmd_subst::<C>);
}

fn cmd_if<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let mut i = 1;
    loop {
        let Some(cond) = a.get(i) else {
            let prev = a.get(i - 1).map_or("if", String::as_str);
            return Err(error(format!("wrong # args: no expression after \"{prev}\" argument")));
        };
        i += 1;
        if a.get(i).is_some_and(|w| w == "then") {
            i += 1;
        }
        let Some(body) = a.get(i) else {
            return Err(error(format!("wrong # args: no script following \"{}\" argument", a[i - 1])));
        };
        if interp.expr_bool(cond)? {
            return interp.eval(body);
        }
        i += 1;
        match a.get(i).map(String::as_str) {
            None => return Ok(String::new()),
            Some("elseif") => i += 1,
            Some("else") => {
                return match a.get(i + 1) {
                    Some(b) if a.len() == i + 2 => interp.eval(b),
                    Some(_) => Err(error("wrong # args: extra words after \"else\" clause in \"if\" command")),
                    None => Err(error("wrong # args: no script following \"else\" argument")),
                };
            }
            Some(b) if a.len() == i + 1 => return interp.eval(b),
            Some(_) => return Err(error("wrong # args: extra words after \"else\" clause in \"if\" command")),
        }
    }
}

/// Runs a loop body: `Ok(true)` to go on, `Ok(false)` after `break`.
fn run_body<C>(interp: &mut Interp<C>, body: &str) -> Result<bool, Exception> {
    interp.tick()?;
    match interp.eval(body) {
        Ok(_) | Err(Exception::Continue) => Ok(true),
        Err(Exception::Break) => Ok(false),
        Err(e) => Err(e),
    }
}

fn cmd_while<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, cond, body] = a else { return Err(wrong_args("while test command")) };
    while interp.expr_bool(cond)? {
        if !run_body(interp, body)? {
            break;
        }
    }
    Ok(String::new())
}

fn cmd_for<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, start, cond, next, body] = a else { return Err(wrong_args("for start test next command")) };
    interp.eval(start)?;
    while interp.expr_bool(cond)? {
        if !run_body(interp, body)? {
            break;
        }
        match interp.eval(next) {
            Ok(_) => {}
            Err(Exception::Break) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(String::new())
}

fn cmd_foreach<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 4 || !a.len().is_multiple_of(2) {
        return Err(wrong_args("foreach varList list ?varList list ...? command"));
    }
    let body = &a[a.len() - 1];
    let mut groups = Vec::new();
    let mut rounds = 0;
    for pair in a[1..a.len() - 1].chunks(2) {
        let vars = parse_list(&pair[0])?;
        if vars.is_empty() {
            return Err(error("foreach varlist is empty"));
        }
        let vals = parse_list(&pair[1])?;
        interp.charge(vals.len().saturating_mul(ELEMENT_COST))?;
        rounds = rounds.max(vals.len().div_ceil(vars.len()));
        groups.push((vars, vals));
    }
    for r in 0..rounds {
        for (vars, vals) in &groups {
            for (k, v) in vars.iter().enumerate() {
                let val = vals.get(r * vars.len() + k).cloned().unwrap_or_default();
                interp.set_named(v, val)?;
            }
        }
        if !run_body(interp, body)? {
            break;
        }
    }
    Ok(String::new())
}

#[derive(Clone, Copy, PartialEq)]
enum MatchMode {
    Exact,
    Glob,
    Regexp,
}

fn cmd_switch<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let usage = "switch ?-option ...? string ?pattern body ...? ?default body?";
    let (mut mode, mut nocase, mut i) = (MatchMode::Exact, false, 1);
    while i + 2 < a.len() && a[i].starts_with('-') {
        match a[i].as_str() {
            "-exact" => mode = MatchMode::Exact,
            "-glob" => mode = MatchMode::Glob,
            "-regexp" => mode = MatchMode::Regexp,
            "-nocase" => nocase = true,
            "--" => {
                i += 1;
                break;
            }
            o => {
                return Err(error(format!(
                    "bad option \"{o}\": must be -exact, -glob, -indexvar, -matchvar, -nocase, -regexp, or --"
                )))
            }
        }
        i += 1;
    }
    let Some(subject) = a.get(i) else { return Err(wrong_args(usage)) };
    let rest = &a[i + 1..];
    let pairs: Vec<String> = match rest {
        [] => return Err(wrong_args(usage)),
        [one] => parse_list(one)?,
        _ => rest.to_vec(),
    };
    interp.charge(pairs.len().saturating_mul(ELEMENT_COST))?;
    if !pairs.len().is_multiple_of(2) {
        return Err(error("extra switch pattern with no body"));
    }
    let n = pairs.len() / 2;
    for k in 0..n {
        let pat = &pairs[2 * k];
        let hit = (k + 1 == n && pat == "default")
            || match mode {
                MatchMode::Exact if nocase => pat.to_lowercase() == subject.to_lowercase(),
                MatchMode::Exact => pat == subject,
                MatchMode::Glob => interp.glob(pat, subject, nocase)?,
                MatchMode::Regexp => super::regexp_cmds::compile(pat, nocase)?.is_match(subject),
            };
        if hit {
            let body = pairs[2 * k + 1..].iter().step_by(2).find(|b| *b != "-");
            return match body {
                Some(b) => interp.eval(b),
                None => Err(error(format!("no body specified for pattern \"{pat}\""))),
            };
        }
    }
    Ok(String::new())
}

fn cmd_catch<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    if !(2..=4).contains(&a.len()) {
        return Err(wrong_args("catch script ?resultVarName? ?optionVarName?"));
    }
    let result = interp.eval(&a[1]);
    if interp.limit_reached().is_some() {
        // A limit is not the script's to handle: the evaluation ends.
        return result;
    }
    let (code, value, info) = match result {
        Ok(v) => (0, v, None),
        Err(Exception::Error(e)) => (1, e.message, Some(e.info)),
        Err(Exception::Return(v)) => {
            interp.return_code = None;
            (2, v, None)
        }
        Err(Exception::Break) => (3, String::new(), None),
        Err(Exception::Continue) => (4, String::new(), None),
        Err(Exception::Exit(c)) => return Err(Exception::Exit(c)),
    };
    if let Some(info) = &info {
        interp.set_global("errorInfo", info);
        interp.set_global("errorCode", "NONE");
    }
    if let Some(var) = a.get(2) {
        interp.set_named(var, value)?;
    }
    if let Some(var) = a.get(3) {
        let mut opts = vec!["-code".to_string(), code.to_string(), "-level".into(), "0".into()];
        if let Some(info) = info {
            opts.extend(["-errorinfo".into(), info, "-errorcode".into(), "NONE".into()]);
        }
        interp.set_named(var, format_list(&opts))?;
    }
    Ok(code.to_string())
}

fn cmd_error<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    if !(2..=4).contains(&a.len()) {
        return Err(wrong_args("error message ?errorInfo? ?errorCode?"));
    }
    let mut e = TclError::new(a[1].clone());
    if let Some(info) = a.get(2).filter(|s| !s.is_empty()) {
        e.info.clone_from(info);
    }
    Err(Exception::Error(e))
}

fn cmd_return<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let args = &a[1..];
    let (opts, value) = if args.len() % 2 == 1 {
        (&args[..args.len() - 1], args[args.len() - 1].clone())
    } else {
        (args, String::new())
    };
    let (mut code, mut info) = ("ok".to_string(), None);
    for pair in opts.chunks(2) {
        match pair[0].as_str() {
            "-code" => code.clone_from(&pair[1]),
            "-errorinfo" => info = Some(pair[1].clone()),
            "-level" | "-errorcode" | "-options" | "-errorline" => {}
            o => return Err(error(format!("bad option \"{o}\": must be -code, -errorcode, -errorinfo, or -level"))),
        }
    }
    let pending = match code.as_str() {
        "ok" | "0" | "return" | "2" => None,
        "error" | "1" => {
            let mut e = TclError::new(value.clone());
            if let Some(i) = info {
                e.info = i;
            }
            Some(Exception::Error(e))
        }
        "break" | "3" => Some(Exception::Break),
        "continue" | "4" => Some(Exception::Continue),
        c => {
            return Err(error(format!(
                "bad completion code \"{c}\": must be ok, error, return, break, continue, or an integer"
            )))
        }
    };
    interp.return_code = pending;
    Err(Exception::Return(value))
}

fn cmd_exit<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    match a {
        [_] => Err(Exception::Exit(0)),
        [_, c] => Err(Exception::Exit(int_arg(c)? as i32)),
        _ => Err(wrong_args("exit ?returnCode?")),
    }
}

fn cmd_eval<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    match a {
        [_] => Err(wrong_args("eval arg ?arg ...?")),
        [_, script] => interp.eval(script),
        _ => interp.eval(&concat(&a[1..])),
    }
}

fn looks_like_level(s: &str) -> bool {
    let d = s.strip_prefix('#').unwrap_or(s);
    !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit())
}

fn cmd_uplevel<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 2 {
        return Err(wrong_args("uplevel ?level? command ?arg ...?"));
    }
    let (spec, rest) = if a.len() > 2 && looks_like_level(&a[1]) { (a[1].as_str(), &a[2..]) } else { ("1", &a[1..]) };
    let target = interp.frame_for_level(spec).ok_or_else(|| error(format!("bad level \"{spec}\"")))?;
    let script = if rest.len() == 1 { rest[0].clone() } else { concat(rest) };
    let saved = interp.cur;
    interp.cur = target;
    let r = interp.eval(&script);
    interp.cur = saved;
    r
}

fn cmd_proc<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, name, params, body] = a else { return Err(wrong_args("proc name args body")) };
    let mut list = Vec::new();
    for p in parse_list(params)? {
        let fields = parse_list(&p)?;
        match fields.as_slice() {
            [] => return Err(error("argument with no name")),
            [n] => list.push((n.clone(), None)),
            [n, d] => list.push((n.clone(), Some(d.clone()))),
            _ => return Err(error(format!("too many fields in argument specifier \"{p}\""))),
        }
    }
    interp.define_proc(name, Proc { params: list, body: body.clone() });
    Ok(String::new())
}

fn cmd_rename<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, old, new] = a else { return Err(wrong_args("rename oldName newName")) };
    interp.rename_command(old, new)?;
    Ok(String::new())
}

fn cmd_expr<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    match a {
        [_] => Err(wrong_args("expr arg ?arg ...?")),
        [_, e] => Ok(interp.eval_expr(e)?.into_string()),
        _ => Ok(interp.eval_expr(&concat(&a[1..]))?.into_string()),
    }
}

fn cmd_subst<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(text) = a.last().filter(|_| a.len() >= 2) else {
        return Err(wrong_args("subst ?-nobackslashes? ?-nocommands? ?-novariables? string"));
    };
    let (mut bs, mut cmds, mut vars) = (true, true, true);
    for o in &a[1..a.len() - 1] {
        match o.as_str() {
            "-nobackslashes" => bs = false,
            "-nocommands" => cmds = false,
            "-novariables" => vars = false,
            _ => {
                return Err(error(format!("bad option \"{o}\": must be -nobackslashes, -nocommands, or -novariables")))
            }
        }
    }
    let mut p = Parser::new(text);
    let (mut out, mut seg) = (String::new(), 0);
    while let Some(c) = p.peek() {
        let start = p.pos;
        let piece = match c {
            b'\\' if bs => {
                let (s, np) = backslash(text, start);
                p.pos = np;
                s
            }
            b'$' if vars => match p.parse_var().map_err(error)? {
                Some(part) => interp.subst_parts(std::slice::from_ref(&part))?,
                None => "$".into(),
            },
            b'[' if cmds => {
                let script = p.parse_bracket().map_err(error)?;
                interp.eval(script)?
            }
            _ => {
                p.pos += 1;
                continue;
            }
        };
        out.push_str(text.get(seg..start).unwrap_or(""));
        out.push_str(&piece);
        check_len(out.len())?;
        seg = p.pos;
    }
    out.push_str(text.get(seg..).unwrap_or(""));
    Ok(out)
}

#[cfg(test)]
#[path = "control_tests.rs"]
mod tests;
