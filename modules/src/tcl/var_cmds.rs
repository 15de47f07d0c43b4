//! Variable commands: set, unset, append, incr, global, upvar, array.

use super::list::{format_list, parse_list};
use super::number::int_arg;
use super::{check_len, error, wrong_args, Interp, TclResult};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("set", cmd_set::<C>);
    i.register("unset", cmd_unset::<C>);
    i.register("append", cmd_append::<C>);
    i.register("incr", cmd_incr::<C>);
    i.register("global", cmd_global::<C>);
    i.register("upvar", cmd_upvar::<C>);
    i.register("array", cmd_array::<C>);
}

fn cmd_set<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    match a {
        [_, name] => Ok(interp.get_named(name)?),
        [_, name, value] => Ok(interp.set_named(name, value.clone())?),
        _ => Err(wrong_args("set varName ?newValue?")),
    }
}

fn cmd_unset<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let mut names = &a[1..];
    let mut complain = true;
    if names.first().is_some_and(|n| n == "-nocomplain") {
        complain = false;
        names = &names[1..];
    }
    if names.first().is_some_and(|n| n == "--") {
        names = &names[1..];
    }
    for n in names {
        if let Err(e) = interp.unset_named(n) {
            if complain {
                return Err(e);
            }
        }
    }
    Ok(String::new())
}

fn cmd_append<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(name) = a.get(1) else { return Err(wrong_args("append varName ?value ...?")) };
    let mut cur = if interp.var_exists(name) { interp.get_named(name)? } else { String::new() };
    for v in &a[2..] {
        check_len(cur.len().saturating_add(v.len()))?;
        cur.push_str(v);
    }
    Ok(interp.set_named(name, cur)?)
}

fn cmd_incr<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let (name, by) = match a {
        [_, n] => (n, 1),
        [_, n, b] => (n, int_arg(b)?),
        _ => return Err(wrong_args("incr varName ?increment?")),
    };
    let cur = if interp.var_exists(name) { int_arg(&interp.get_named(name)?)? } else { 0 };
    Ok(interp.set_named(name, cur.wrapping_add(by).to_string())?)
}

fn cmd_global<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 2 {
        return Err(wrong_args("global varName ?varName ...?"));
    }
    if interp.cur == 0 {
        return Ok(String::new());
    }
    for n in &a[1..] {
        let local = n.rsplit("::").next().unwrap_or(n);
        interp.link_var(0, n, local)?;
    }
    Ok(String::new())
}

fn cmd_upvar<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let usage = "upvar ?level? otherVar localVar ?otherVar localVar ...?";
    if a.len() < 3 {
        return Err(wrong_args(usage));
    }
    let (spec, pairs) = if a.len().is_multiple_of(2) { (a[1].as_str(), &a[2..]) } else { ("1", &a[1..]) };
    let target = interp.frame_for_level(spec).ok_or_else(|| error(format!("bad level \"{spec}\"")))?;
    if pairs.is_empty() {
        return Err(wrong_args(usage));
    }
    for p in pairs.chunks(2) {
        interp.link_var(target, &p[0], &p[1])?;
    }
    Ok(String::new())
}

fn cmd_array<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let (Some(sub), Some(name)) = (a.get(1), a.get(2)) else {
        return Err(wrong_args("array subcommand ?arg ...?"));
    };
    let pattern = a.get(3);
    let matches = |interp: &Interp<C>, k: &str| -> Result<bool, super::Exception> {
        pattern.map_or(Ok(true), |p| interp.glob(p, k, false))
    };
    match sub.as_str() {
        "exists" => Ok(u8::from(interp.array_ref(name).is_some()).to_string()),
        "size" => Ok(interp.array_ref(name).map_or(0, |m| m.len()).to_string()),
        "names" => {
            let mut keys = Vec::new();
            for (k, _) in interp.array_ref(name).into_iter().flatten() {
                if matches(interp, k)? {
                    keys.push(k.clone());
                }
            }
            Ok(format_list(&keys))
        }
        "get" => {
            let mut out = Vec::new();
            for (k, v) in interp.array_ref(name).into_iter().flatten() {
                if matches(interp, k)? {
                    out.push(k.clone());
                    out.push(v.clone());
                }
            }
            Ok(format_list(&out))
        }
        "set" => {
            let [_, _, _, list] = a else { return Err(wrong_args("array set arrayName list")) };
            let items = parse_list(list)?;
            interp.charge(items.len().saturating_mul(super::ELEMENT_COST))?;
            if items.len() % 2 != 0 {
                return Err(error("list must have an even number of elements"));
            }
            if let Some(arr) = interp.array_mut(name, true)? {
                for kv in items.chunks(2) {
                    arr.insert(kv[0].clone(), kv[1].clone());
                }
            }
            Ok(String::new())
        }
        "unset" => {
            match pattern {
                None => {
                    if interp.array_ref(name).is_some() {
                        interp.unset_named(name)?;
                    }
                }
                Some(_) => {
                    let mut doomed = std::collections::BTreeSet::new();
                    for (k, _) in interp.array_ref(name).into_iter().flatten() {
                        if matches(interp, k)? {
                            doomed.insert(k.clone());
                        }
                    }
                    if let Some(arr) = interp.array_mut(name, false)? {
                        arr.retain(|k, _| !doomed.contains(k));
                    }
                }
            }
            Ok(String::new())
        }
        _ => Err(error(format!(
            "unknown or ambiguous subcommand \"{sub}\": must be exists, get, names, set, size, or unset"
        ))),
    }
}
