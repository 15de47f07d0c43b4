//! `regexp` and `regsub` on top of the `regex` crate (Rust regex syntax, which covers the common subset of
//! Tcl's AREs; no back-references or lookaround).

use regex::{Captures, Regex, RegexBuilder};

use super::list::format_list;
use super::{check_len, check_list, error, wrong_args, Exception, Interp, Steps, TclResult, MAX_LIST};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("regexp", cmd_regexp::<C>);
    i.register("regsub", cmd_regsub::<C>);
}

/// Compiles a pattern with size limits, mapping failures to Tcl's error message.
pub(crate) fn compile(pat: &str, nocase: bool) -> Result<Regex, Exception> {
    RegexBuilder::new(pat)
        .case_insensitive(nocase)
        .size_limit(1 << 22)
        .dfa_size_limit(1 << 22)
        .nest_limit(200)
        .build()
        .map_err(|e| error(format!("couldn't compile regular expression pattern: {e}")))
}

struct Flags {
    nocase: bool,
    all: bool,
    inline: bool,
    indices: bool,
}

/// Parses leading switches; returns them and the index of the first non-switch argument.
fn flags(a: &[String], allowed: &[&str]) -> Result<(Flags, usize), Exception> {
    let mut f = Flags { nocase: false, all: false, inline: false, indices: false };
    let mut i = 1;
    while let Some(o) = a.get(i).filter(|o| o.starts_with('-')) {
        i += 1;
        match o.as_str() {
            "--" => break,
            "-nocase" => f.nocase = true,
            "-all" => f.all = true,
            "-inline" if allowed.contains(&"-inline") => f.inline = true,
            "-indices" if allowed.contains(&"-indices") => f.indices = true,
            "-expanded" | "-line" | "-linestop" | "-lineanchor" => {}
            _ => return Err(error(format!("bad option \"{o}\": must be {}", allowed.join(", ")))),
        }
    }
    Ok((f, i))
}

fn group_texts(c: &Captures, text: &str, indices: bool) -> Vec<String> {
    let at = |b: usize| text.get(..b).map_or(0, |s| s.chars().count());
    c.iter()
        .map(|m| match (m, indices) {
            (Some(m), true) => format!("{} {}", at(m.start()), at(m.end()) as i64 - 1),
            (Some(m), false) => m.as_str().to_string(),
            (None, true) => "-1 -1".into(),
            (None, false) => String::new(),
        })
        .collect()
}

fn cmd_regexp<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let usage = "regexp ?-option ...? exp string ?matchVar? ?subMatchVar ...?";
    let (f, i) = flags(a, &["-all", "-indices", "-inline", "-nocase", "--"])?;
    let (Some(pat), Some(text)) = (a.get(i), a.get(i + 1)) else { return Err(wrong_args(usage)) };
    let vars = &a[i + 2..];
    if f.inline && !vars.is_empty() {
        return Err(error("regexp match variables not allowed when using -inline"));
    }
    let re = compile(pat, f.nocase)?;
    let mut caps: Vec<Captures> = Vec::new();
    let mut steps = Steps::new(Some(interp.budget()));
    for c in re.captures_iter(text).take(if f.all { MAX_LIST + 1 } else { 1 }) {
        steps.add(c.get(0).map_or(0, |m| m.len()) + 64 * c.len())?;
        caps.push(c);
    }
    check_list(caps.len())?;
    if f.inline {
        let mut all: Vec<String> = Vec::new();
        for c in &caps {
            all.extend(group_texts(c, text, f.indices));
            check_list(all.len())?;
            steps.add(c.len() * 64)?;
        }
        return Ok(format_list(&all));
    }
    if let Some(last) = caps.last() {
        let texts = group_texts(last, text, f.indices);
        for (k, v) in vars.iter().enumerate() {
            interp.set_named(v, texts.get(k).cloned().unwrap_or_default())?;
        }
    } else if !f.all {
        for v in vars {
            interp.set_named(v, String::new())?;
        }
    }
    Ok(if f.all { caps.len().to_string() } else { u8::from(!caps.is_empty()).to_string() })
}

/// Expands a Tcl substitution spec (`&`, `\0`..`\9`, `\&`, `\\`) for one match.
fn expand(spec: &str, c: &Captures, out: &mut String) {
    let mut it = spec.chars().peekable();
    while let Some(ch) = it.next() {
        match ch {
            '&' => out.push_str(c.get(0).map_or("", |m| m.as_str())),
            '\\' => match it.peek().copied() {
                Some(d @ '0'..='9') => {
                    it.next();
                    let n = d as usize - '0' as usize;
                    out.push_str(c.get(n).map_or("", |m| m.as_str()));
                }
                Some(x @ ('&' | '\\')) => {
                    it.next();
                    out.push(x);
                }
                _ => out.push('\\'),
            },
            _ => out.push(ch),
        }
    }
}

fn cmd_regsub<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let (f, i) = flags(a, &["-all", "-nocase", "--"])?;
    let rest = &a[i..];
    if rest.len() != 3 && rest.len() != 4 {
        return Err(wrong_args("regsub ?-option ...? exp string subSpec ?varName?"));
    }
    let (pat, text, spec) = (&rest[0], &rest[1], &rest[2]);
    let re = compile(pat, f.nocase)?;
    let mut out = String::new();
    let mut last = 0;
    let mut count = 0usize;
    let mut steps = Steps::new(Some(interp.budget()));
    for c in re.captures_iter(text) {
        let Some(m) = c.get(0) else { continue };
        steps.add(m.len() + spec.len() + 64)?;
        out.push_str(text.get(last..m.start()).unwrap_or(""));
        expand(spec, &c, &mut out);
        check_len(out.len())?;
        last = m.end();
        count += 1;
        if !f.all {
            break;
        }
    }
    out.push_str(text.get(last..).unwrap_or(""));
    match rest.get(3) {
        Some(var) => {
            interp.set_named(var, out)?;
            Ok(count.to_string())
        }
        None => Ok(out),
    }
}
