//! File-system and I/O commands: file (path manipulation and tests), glob, source, puts, pwd, clock.

use std::io::Write;
use std::path::Path;

use super::list::{format_list, parse_list};
use super::string_cmds::glob_match_counted;
use super::{error, wrong_args, Exception, Interp, Steps, TclResult};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("file", cmd_file::<C>);
    i.register("glob", cmd_glob::<C>);
    i.register("source", cmd_source::<C>);
    i.register("puts", cmd_puts::<C>);
    i.register("pwd", cmd_pwd::<C>);
    i.register("clock", cmd_clock::<C>);
}

/// Tcl's `file join`: an absolute element restarts the path; separators are not doubled.
pub(crate) fn join(parts: &[String]) -> String {
    let mut out = String::new();
    for p in parts {
        if p.starts_with('/') {
            out.clear();
            out.push('/');
        }
        for comp in p.split('/').filter(|c| !c.is_empty()) {
            if !out.is_empty() && !out.ends_with('/') {
                out.push('/');
            }
            out.push_str(comp);
        }
    }
    out
}

/// Tcl's `file split`.
pub(crate) fn split(path: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    if path.starts_with('/') {
        v.push("/".into());
    }
    v.extend(path.split('/').filter(|c| !c.is_empty()).map(String::from));
    v
}

/// Tcl's `file dirname`.
pub(crate) fn dirname(path: &str) -> String {
    let mut parts = split(path);
    parts.pop();
    match parts.as_slice() {
        [] if path.starts_with('/') => "/".into(),
        [] => ".".into(),
        _ => join(&parts),
    }
}

/// Tcl's `file tail`.
pub(crate) fn tail(path: &str) -> String {
    split(path).into_iter().rfind(|c| c != "/").unwrap_or_default()
}

/// Byte offset of the extension's dot in `path`, if the last component has one.
fn ext_start(path: &str) -> Option<usize> {
    let dot = path.rfind('.')?;
    match path.rfind('/') {
        Some(sep) if sep > dot => None,
        _ => Some(dot),
    }
}

/// Tcl's `file extension`.
pub(crate) fn extension(path: &str) -> String {
    ext_start(path).and_then(|i| path.get(i..)).unwrap_or("").to_string()
}

/// Tcl's `file rootname`.
pub(crate) fn rootname(path: &str) -> String {
    ext_start(path).and_then(|i| path.get(..i)).unwrap_or(path).to_string()
}

/// Absolute path with `.` and `..` resolved lexically.
pub(crate) fn normalize(path: &str) -> String {
    let abs = if path.starts_with('/') {
        path.to_string()
    } else {
        let cwd = std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into());
        join(&[cwd, path.to_string()])
    };
    let mut stack: Vec<&str> = Vec::new();
    for c in abs.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                stack.pop();
            }
            c => stack.push(c),
        }
    }
    format!("/{}", stack.join("/"))
}

/// Tcl's `file readable`: access(2) with `R_OK`, which opens nothing (a FIFO is not waited on).
fn readable(p: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(p.as_os_str().as_bytes()) else { return false };
    // SAFETY: `path` is a NUL-terminated string that lives across the call.
    unsafe { libc::access(path.as_ptr(), libc::R_OK) == 0 }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

fn cmd_file<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(sub) = a.get(1) else { return Err(wrong_args("file subcommand ?arg ...?")) };
    let args = &a[2..];
    if sub == "separator" && args.is_empty() {
        return Ok("/".into());
    }
    if sub == "join" {
        return if args.is_empty() { Err(wrong_args("file join name ?name ...?")) } else { Ok(join(args)) };
    }
    let [name] = args else { return Err(wrong_args(&format!("file {sub} name"))) };
    let p = Path::new(name);
    let b = |v: bool| Ok(u8::from(v).to_string());
    match sub.as_str() {
        "dirname" => Ok(dirname(name)),
        "tail" => Ok(tail(name)),
        "rootname" => Ok(rootname(name)),
        "extension" => Ok(extension(name)),
        "split" => Ok(format_list(&split(name))),
        "normalize" => Ok(normalize(name)),
        "exists" => b(p.exists()),
        "isdirectory" => b(p.is_dir()),
        "isfile" => b(p.is_file()),
        "readable" => b(readable(p)),
        "executable" => b(is_executable(p)),
        "size" => std::fs::metadata(p)
            .map(|m| m.len().to_string())
            .map_err(|_| error(format!("could not read \"{name}\": no such file or directory"))),
        "type" => match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => Ok("link".into()),
            Ok(m) if m.is_dir() => Ok("directory".into()),
            Ok(_) => Ok("file".into()),
            Err(_) => Err(error(format!("could not read \"{name}\": no such file or directory"))),
        },
        "readlink" => std::fs::read_link(p)
            .map(|t| t.to_string_lossy().into_owned())
            .map_err(|_| error(format!("could not read link \"{name}\": invalid argument"))),
        "separator" => Ok("/".into()),
        _ => Err(error(format!(
            "unknown or ambiguous subcommand \"{sub}\": must be dirname, executable, exists, extension, \
             isdirectory, isfile, join, normalize, readable, readlink, rootname, separator, size, split, tail, or type"
        ))),
    }
}

/// Expands Tcl glob braces `{a,b}` (one level per pass, bounded).
fn expand_braces(pat: &str, out: &mut Vec<String>, budget: &mut usize) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let (Some(open), Some(close)) = (pat.find('{'), pat.find('}')) else {
        out.push(pat.to_string());
        return;
    };
    if close < open {
        out.push(pat.to_string());
        return;
    }
    let (pre, inner, post) = (&pat[..open], &pat[open + 1..close], &pat[close + 1..]);
    for alt in inner.split(',') {
        expand_braces(&format!("{pre}{alt}{post}"), out, budget);
    }
}

/// Where [`glob_one`] looks and what it keeps.
struct GlobIn<'a> {
    dir: Option<&'a str>,
    types: Option<&'a str>,
}

fn glob_one(pattern: &str, how: &GlobIn, steps: &mut Steps, out: &mut Vec<String>) -> Result<(), Exception> {
    let (dir, types) = (how.dir, how.types);
    let abs = pattern.starts_with('/');
    let mut paths: Vec<String> = vec![if abs { "/".into() } else { String::new() }];
    let comps: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    for (k, comp) in comps.iter().enumerate() {
        let last = k + 1 == comps.len();
        let mut next = Vec::new();
        for base in &paths {
            let real = match (dir, base.is_empty()) {
                (Some(d), true) => d.to_string(),
                (Some(d), false) if !abs => join(&[d.to_string(), base.clone()]),
                (_, true) => ".".into(),
                _ => base.clone(),
            };
            let Ok(rd) = std::fs::read_dir(&real) else { continue };
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                if (n.starts_with('.') && !comp.starts_with('.')) || !glob_match_counted(comp, &n, false, steps)? {
                    continue;
                }
                let is_dir = e.path().is_dir();
                let ok = !last || types.is_none_or(|t| (t.contains('d') && is_dir) || (t.contains('f') && !is_dir));
                if ok && (last || is_dir) {
                    next.push(if base.is_empty() { n } else { join(&[base.clone(), n]) });
                }
            }
        }
        paths = next;
    }
    if !comps.is_empty() {
        out.extend(paths);
    }
    Ok(())
}

fn cmd_glob<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let (mut nocomplain, mut tails, mut dir, mut types, mut i) = (false, false, None, None, 1);
    while let Some(o) = a.get(i).filter(|o| o.starts_with('-')) {
        i += 1;
        match o.as_str() {
            "-nocomplain" => nocomplain = true,
            "-directory" | "-path" | "-types" => {
                let v = a.get(i).ok_or_else(|| error(format!("missing argument to \"{o}\"")))?;
                i += 1;
                if o == "-types" {
                    types = Some(parse_list(v)?.join(" "));
                } else {
                    dir = Some(v.clone());
                }
            }
            "-tails" => tails = true,
            "--" => break,
            _ => {
                return Err(error(format!(
                    "bad option \"{o}\": must be -directory, -nocomplain, -path, -tails, -types, or --"
                )))
            }
        }
    }
    let pats = &a[i.min(a.len())..];
    if pats.is_empty() {
        return Err(wrong_args("glob ?switches? name ?name ...?"));
    }
    let mut found = Vec::new();
    let how = GlobIn { dir: dir.as_deref(), types: types.as_deref() };
    let mut steps = Steps::new(Some(interp.budget()));
    for p in pats {
        let mut expanded = Vec::new();
        expand_braces(p, &mut expanded, &mut 1000);
        for e in expanded {
            glob_one(&e, &how, &mut steps, &mut found)?;
        }
    }
    if let (Some(d), false) = (&dir, tails) {
        found = found.into_iter().map(|f| if f.starts_with('/') { f } else { join(&[d.clone(), f]) }).collect();
    }
    found.sort();
    found.dedup();
    if found.is_empty() && !nocomplain {
        let what = if pats.len() == 1 { "pattern" } else { "patterns" };
        return Err(error(format!("no files matched glob {what} \"{}\"", pats.join(" "))));
    }
    Ok(format_list(&found))
}

fn cmd_source<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let [_, name] = a else { return Err(wrong_args("source fileName")) };
    let text = super::read_script(Path::new(name)).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidData => error(format!("couldn't read file \"{name}\": {e}")),
        _ => error(format!("couldn't read file \"{name}\": no such file or directory")),
    })?;
    interp.eval_file_text(&text, name)
}

fn cmd_puts<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let mut args = &a[1..];
    let newline = args.first().is_none_or(|s| s != "-nonewline" || args.len() == 1);
    if !newline {
        args = &args[1..];
    }
    let (chan, text) = match args {
        [t] => ("stdout", t),
        [c, t] => (c.as_str(), t),
        _ => return Err(wrong_args("puts ?-nonewline? ?channelId? string")),
    };
    let nl = if newline { "\n" } else { "" };
    let r = match chan {
        "stdout" => write!(std::io::stdout(), "{text}{nl}"),
        "stderr" => write!(std::io::stderr(), "{text}{nl}"),
        _ => return Err(error(format!("can not find channel named \"{chan}\""))),
    };
    r.map_err(|e| error(format!("error writing \"{chan}\": {e}")))?;
    Ok(String::new())
}

fn cmd_pwd<C>(_: &mut Interp<C>, _: &[String]) -> TclResult {
    std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| error(format!("error getting working directory name: {e}")))
}

fn cmd_clock<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    match a.get(1).map(String::as_str) {
        Some("seconds") => Ok(now.as_secs().to_string()),
        Some("milliseconds") => Ok(now.as_millis().to_string()),
        Some("microseconds") => Ok(now.as_micros().to_string()),
        _ => Err(Exception::Error(super::TclError::new(
            "unknown or ambiguous subcommand: must be seconds, milliseconds, or microseconds",
        ))),
    }
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
