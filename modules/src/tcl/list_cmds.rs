//! List commands: list, llength, lindex, lrange, lappend, linsert, lreplace, lreverse, lrepeat, lassign,
//! lsearch, lsort, join, split, concat.

use std::cmp::Ordering;

use super::list::{clamp, dictionary_cmp, format_list, parse_index, parse_list};
use super::number::{double_arg, int_arg};
use super::{check_len, check_list, error, wrong_args, Exception, Interp, TclResult, MAX_LIST};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("list", cmd_list::<C>);
    i.register("llength", cmd_llength::<C>);
    i.register("lindex", cmd_lindex::<C>);
    i.register("lrange", cmd_lrange::<C>);
    i.register("lappend", cmd_lappend::<C>);
    i.register("linsert", cmd_linsert::<C>);
    i.register("lreplace", cmd_lreplace::<C>);
    i.register("lreverse", cmd_lreverse::<C>);
    i.register("lrepeat", cmd_lrepeat::<C>);
    i.register("lassign", cmd_lassign::<C>);
    i.register("lsearch", cmd_lsearch::<C>);
    i.register("lsort", cmd_lsort::<C>);
    i.register("join", cmd_join::<C>);
    i.register("split", cmd_split::<C>);
    i.register("concat", cmd_concat::<C>);
}

fn cmd_list<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    Ok(format_list(a.get(1..).unwrap_or(&[])))
}

fn cmd_llength<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, l] = a else { return Err(wrong_args("llength list")) };
    Ok(parse_list(l)?.len().to_string())
}

fn cmd_lindex<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(list) = a.get(1) else { return Err(wrong_args("lindex list ?index ...?")) };
    let mut indices = Vec::new();
    for ix in a.get(2..).unwrap_or(&[]) {
        if a.len() == 3 {
            indices.extend(parse_list(ix)?);
        } else {
            indices.push(ix.clone());
        }
    }
    let mut cur = list.clone();
    for ix in &indices {
        let items = parse_list(&cur)?;
        let i = parse_index(ix, items.len())?;
        match usize::try_from(i).ok().and_then(|i| items.get(i)) {
            Some(v) => cur = v.clone(),
            None => return Ok(String::new()),
        }
    }
    Ok(cur)
}

fn cmd_lrange<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, l, first, last] = a else { return Err(wrong_args("lrange list first last")) };
    let items = parse_list(l)?;
    let f = clamp(parse_index(first, items.len())?, items.len());
    let e = parse_index(last, items.len())?;
    if e < 0 {
        return Ok(String::new());
    }
    let e = clamp(e.saturating_add(1), items.len());
    Ok(format_list(items.get(f..e).unwrap_or(&[])))
}

fn cmd_lappend<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(name) = a.get(1) else { return Err(wrong_args("lappend varName ?value ...?")) };
    let mut cur = if interp.var_exists(name) { interp.get_named(name)? } else { String::new() };
    parse_list(&cur)?;
    for v in a.get(2..).unwrap_or(&[]) {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(&super::list::quote_elem(v, cur.is_empty()));
        check_len(cur.len())?;
    }
    Ok(interp.set_named(name, cur)?)
}

fn cmd_linsert<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 3 {
        return Err(wrong_args("linsert list index ?element ...?"));
    }
    let mut items = parse_list(&a[1])?;
    let len = items.len();
    let ix = &a[2];
    let mut at = parse_index(ix, len)?;
    if ix.trim().starts_with("end") {
        at = at.saturating_add(1);
    }
    let at = clamp(at, len);
    items.splice(at..at, a[3..].iter().cloned());
    Ok(format_list(&items))
}

fn cmd_lreplace<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 4 {
        return Err(wrong_args("lreplace list first last ?element ...?"));
    }
    let mut items = parse_list(&a[1])?;
    let len = items.len();
    let f = clamp(parse_index(&a[2], len)?, len);
    let l = parse_index(&a[3], len)?;
    let e = if l < 0 { f } else { clamp(l.saturating_add(1), len).max(f) };
    items.splice(f..e, a[4..].iter().cloned());
    Ok(format_list(&items))
}

fn cmd_lreverse<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, l] = a else { return Err(wrong_args("lreverse list")) };
    let mut items = parse_list(l)?;
    items.reverse();
    Ok(format_list(&items))
}

fn cmd_lrepeat<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(n) = a.get(1) else { return Err(wrong_args("lrepeat count ?value ...?")) };
    let n = int_arg(n)?;
    let Ok(n) = usize::try_from(n) else { return Err(error(format!("bad count \"{n}\": must be integer >= 0"))) };
    let one = format_list(&a[2..]);
    check_len(one.len().saturating_add(1).saturating_mul(n))?;
    let mut out = String::new();
    for _ in 0..n {
        if one.is_empty() {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&one);
    }
    Ok(out)
}

fn cmd_lassign<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    if a.len() < 2 {
        return Err(wrong_args("lassign list ?varName ...?"));
    }
    let items = parse_list(&a[1])?;
    let names = &a[2..];
    for (i, name) in names.iter().enumerate() {
        interp.set_named(name, items.get(i).cloned().unwrap_or_default())?;
    }
    Ok(format_list(items.get(names.len()..).unwrap_or(&[])))
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Exact,
    Glob,
    Regexp,
}

fn cmd_lsearch<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let usage = "lsearch ?-option value ...? list pattern";
    if a.len() < 3 {
        return Err(wrong_args(usage));
    }
    let (mut mode, mut all, mut inline, mut not, mut nocase) = (Mode::Glob, false, false, false, false);
    for opt in &a[1..a.len() - 2] {
        match opt.as_str() {
            "-exact" => mode = Mode::Exact,
            "-glob" => mode = Mode::Glob,
            "-regexp" => mode = Mode::Regexp,
            "-all" => all = true,
            "-inline" => inline = true,
            "-not" => not = true,
            "-nocase" => nocase = true,
            "-ascii" | "-dictionary" => {}
            o => return Err(error(format!("bad option \"{o}\": must be -all, -ascii, -dictionary, -exact, -glob, -inline, -nocase, -not, or -regexp"))),
        }
    }
    let items = parse_list(&a[a.len() - 2])?;
    let pat = &a[a.len() - 1];
    let re = if mode == Mode::Regexp { Some(super::regexp_cmds::compile(pat, nocase)?) } else { None };
    let matches = |s: &String| -> Result<bool, Exception> {
        let m = match mode {
            Mode::Exact if nocase => s.to_lowercase() == pat.to_lowercase(),
            Mode::Exact => s == pat,
            Mode::Glob => interp.glob(pat, s, nocase)?,
            Mode::Regexp => re.as_ref().is_some_and(|r| r.is_match(s)),
        };
        Ok(m != not)
    };
    let mut hits: Vec<usize> = Vec::new();
    for (i, s) in items.iter().enumerate() {
        if matches(s)? {
            hits.push(i);
        }
    }
    let shown: Vec<String> = if inline {
        hits.iter().filter_map(|&i| items.get(i).cloned()).collect()
    } else {
        hits.iter().map(|i| i.to_string()).collect()
    };
    if all {
        return Ok(format_list(&shown));
    }
    Ok(shown.into_iter().next().unwrap_or_else(|| if inline { String::new() } else { "-1".into() }))
}

#[derive(Clone, Copy)]
enum SortKind {
    Ascii,
    Dictionary,
    Integer,
    Real,
}

struct SortOpts {
    kind: SortKind,
    decreasing: bool,
    unique: bool,
    nocase: bool,
    index: Option<String>,
}

fn sort_opts(a: &[String]) -> Result<SortOpts, Exception> {
    let mut o = SortOpts { kind: SortKind::Ascii, decreasing: false, unique: false, nocase: false, index: None };
    let mut i = 1;
    while i + 1 < a.len() {
        match a[i].as_str() {
            "-ascii" => o.kind = SortKind::Ascii,
            "-dictionary" => o.kind = SortKind::Dictionary,
            "-integer" => o.kind = SortKind::Integer,
            "-real" => o.kind = SortKind::Real,
            "-increasing" => o.decreasing = false,
            "-decreasing" => o.decreasing = true,
            "-unique" => o.unique = true,
            "-nocase" => o.nocase = true,
            "-index" if i + 2 < a.len() => {
                i += 1;
                o.index = Some(a[i].clone());
            }
            x => return Err(error(format!("bad option \"{x}\": must be -ascii, -decreasing, -dictionary, -increasing, -index, -integer, -nocase, -real, or -unique"))),
        }
        i += 1;
    }
    Ok(o)
}

#[derive(PartialEq, PartialOrd)]
enum Key {
    S(String),
    I(i64),
    R(f64),
}

fn sort_key(item: &str, o: &SortOpts) -> Result<Key, Exception> {
    let owned;
    let s = match &o.index {
        Some(ix) => {
            let l = parse_list(item)?;
            let i = parse_index(ix, l.len())?;
            owned = usize::try_from(i)
                .ok()
                .and_then(|i| l.get(i).cloned())
                .ok_or_else(|| error(format!("element {ix} missing from sublist \"{item}\"")))?;
            owned.as_str()
        }
        None => item,
    };
    Ok(match o.kind {
        SortKind::Integer => Key::I(int_arg(s)?),
        SortKind::Real => Key::R(double_arg(s)?),
        SortKind::Ascii if o.nocase => Key::S(s.to_lowercase()),
        _ => Key::S(s.to_string()),
    })
}

fn cmd_lsort<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(list) = a.last().filter(|_| a.len() >= 2) else {
        return Err(wrong_args("lsort ?-option value ...? list"));
    };
    let o = sort_opts(a)?;
    let items = parse_list(list)?;
    let mut keyed: Vec<(Key, String)> =
        items.into_iter().map(|s| sort_key(&s, &o).map(|k| (k, s))).collect::<Result<_, _>>()?;
    let dict = matches!(o.kind, SortKind::Dictionary);
    let cmp = |x: &Key, y: &Key| -> Ordering {
        let ord = match (x, y) {
            (Key::S(p), Key::S(q)) if dict => dictionary_cmp(p, q),
            _ => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        };
        if o.decreasing {
            ord.reverse()
        } else {
            ord
        }
    };
    keyed.sort_by(|x, y| cmp(&x.0, &y.0));
    if o.unique {
        let mut out: Vec<(Key, String)> = Vec::with_capacity(keyed.len());
        for item in keyed {
            match out.last_mut() {
                Some(last) if cmp(&last.0, &item.0) == Ordering::Equal => *last = item,
                _ => out.push(item),
            }
        }
        keyed = out;
    }
    Ok(format_list(&keyed.into_iter().map(|(_, s)| s).collect::<Vec<_>>()))
}

fn cmd_join<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let (list, sep) = match a {
        [_, l] => (l, " "),
        [_, l, s] => (l, s.as_str()),
        _ => return Err(wrong_args("join list ?joinString?")),
    };
    let items = parse_list(list)?;
    check_len(items.iter().map(|s| s.len() + sep.len()).sum())?;
    Ok(items.join(sep))
}

fn cmd_split<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let (s, chars) = match a {
        [_, s] => (s, " \t\n\r"),
        [_, s, c] => (s, c.as_str()),
        _ => return Err(wrong_args("split string ?splitChars?")),
    };
    if s.is_empty() {
        return Ok(String::new());
    }
    let parts: Vec<String> = if chars.is_empty() {
        s.chars().take(MAX_LIST + 1).map(String::from).collect()
    } else {
        s.split(|c| chars.contains(c)).take(MAX_LIST + 1).map(String::from).collect()
    };
    check_list(parts.len())?;
    Ok(format_list(&parts))
}

/// Tcl's `concat`: trims each argument and joins the non-empty ones with spaces.
pub(crate) fn concat(args: &[String]) -> String {
    let ws = |c: char| c.is_ascii_whitespace();
    args.iter().map(|s| s.trim_matches(ws)).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
}

fn cmd_concat<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    Ok(concat(a.get(1..).unwrap_or(&[])))
}
