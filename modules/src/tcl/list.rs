//! Tcl lists as strings: splitting (`parse_list`), canonical quoting (`format_list`), `lsort -dictionary`
//! order (`dictionary_cmp`) and list index parsing (`end-N`, `N+M`).

use std::cmp::Ordering;

use super::parse::backslash;
use super::{check_list, error, Exception, TclError};

fn is_list_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Splits a Tcl list (braces, quotes, backslashes as Tcl's list rules).
pub fn parse_list(text: &str) -> Result<Vec<String>, TclError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    loop {
        while b.get(pos).is_some_and(|&c| is_list_space(c)) {
            pos += 1;
        }
        let Some(&c) = b.get(pos) else { return Ok(out) };
        let (word, next) = match c {
            b'{' => braced_elem(text, pos)?,
            b'"' => quoted_elem(text, pos)?,
            _ => bare_elem(text, pos),
        };
        out.push(word);
        check_list(out.len())?;
        pos = next;
    }
}

fn after_close(text: &str, pos: usize, what: &str) -> Result<(), TclError> {
    match text.as_bytes().get(pos) {
        Some(&c) if !is_list_space(c) => {
            let ch = text.get(pos..).and_then(|s| s.chars().next()).unwrap_or('?');
            Err(TclError::new(format!("list element in {what} followed by \"{ch}\" instead of space")))
        }
        _ => Ok(()),
    }
}

fn braced_elem(text: &str, start: usize) -> Result<(String, usize), TclError> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut pos = start;
    while let Some(&c) = b.get(pos) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    after_close(text, pos + 1, "braces")?;
                    return Ok((text.get(start + 1..pos).unwrap_or("").to_string(), pos + 1));
                }
            }
            b'\\' => pos += 1,
            _ => {}
        }
        pos += 1;
    }
    Err(TclError::new("unmatched open brace in list"))
}

fn quoted_elem(text: &str, start: usize) -> Result<(String, usize), TclError> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut pos = start + 1;
    let mut seg = pos;
    while let Some(&c) = b.get(pos) {
        match c {
            b'"' => {
                out.push_str(text.get(seg..pos).unwrap_or(""));
                after_close(text, pos + 1, "quotes")?;
                return Ok((out, pos + 1));
            }
            b'\\' => {
                out.push_str(text.get(seg..pos).unwrap_or(""));
                let (s, np) = backslash(text, pos);
                out.push_str(&s);
                pos = np;
                seg = pos;
            }
            _ => pos += 1,
        }
    }
    Err(TclError::new("unmatched open quote in list"))
}

fn bare_elem(text: &str, start: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut pos = start;
    let mut seg = pos;
    while let Some(&c) = b.get(pos) {
        if is_list_space(c) {
            break;
        }
        if c == b'\\' {
            out.push_str(text.get(seg..pos).unwrap_or(""));
            let (s, np) = backslash(text, pos);
            out.push_str(&s);
            pos = np;
            seg = pos;
        } else {
            pos += 1;
        }
    }
    out.push_str(text.get(seg..pos).unwrap_or(""));
    (out, pos)
}

/// How an element must be written in a list.
#[derive(PartialEq)]
enum Quoting {
    None,
    Braces,
    Escapes,
}

/// Tcl's choice (TclScanElement): braces unless they cannot round-trip, or only `]`/`"` need protection.
fn quoting(s: &str, first: bool) -> Quoting {
    let (mut forbid_none, mut require_escape, mut prefer_escape, mut prefer_brace) = (false, false, false, false);
    let mut depth = 0i64;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' => {
                depth += if c == '{' { 1 } else { -1 };
                require_escape |= depth < 0;
                forbid_none = true;
            }
            '[' | '$' | ';' | ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' => {
                forbid_none = true;
                prefer_brace = true;
            }
            '\\' => {
                match chars.peek() {
                    None | Some('\n') => require_escape = true,
                    Some('{' | '}' | '\\') => {
                        chars.next();
                    }
                    Some(_) => {}
                }
                forbid_none = true;
                prefer_brace = true;
            }
            ']' | '"' => {
                forbid_none = true;
                prefer_escape = true;
            }
            _ => {}
        }
    }
    if first && s.starts_with('#') {
        forbid_none = true;
        prefer_brace = true;
    }
    if !forbid_none {
        Quoting::None
    } else if require_escape || depth != 0 || (prefer_escape && !prefer_brace) {
        Quoting::Escapes
    } else {
        Quoting::Braces
    }
}

/// Quotes one list element; `first` tells whether a leading `#` must be protected.
pub(crate) fn quote_elem(s: &str, first: bool) -> String {
    if s.is_empty() {
        return "{}".into();
    }
    let special = |c: char| {
        matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' | ';' | '$' | '[' | ']' | '\\' | '"' | '{' | '}')
    };
    match quoting(s, first) {
        Quoting::None => return s.to_string(),
        Quoting::Braces => return format!("{{{s}}}"),
        Quoting::Escapes => {}
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.chars().enumerate() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '#' if i == 0 && first => out.push_str("\\#"),
            c if special(c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Renders words as a canonical Tcl list.
pub fn format_list(words: &[String]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&quote_elem(w, i == 0));
    }
    out
}

fn digit_run(s: &[char], i: usize) -> usize {
    s.get(i..).map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count())
}

/// Tcl's `lsort -dictionary` order: case-insensitive except as a tie-breaker, digit runs compared as numbers.
pub fn dictionary_cmp(a: &str, b: &str) -> Ordering {
    let (l, r): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (mut i, mut j) = (0, 0);
    let mut secondary = Ordering::Equal;
    loop {
        let (lc, rc) = (l.get(i).copied(), r.get(j).copied());
        if lc.is_some_and(|c| c.is_ascii_digit()) && rc.is_some_and(|c| c.is_ascii_digit()) {
            let (mut zl, mut zr) = (0, 0);
            while l.get(i) == Some(&'0') && l.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
                zl += 1;
            }
            while r.get(j) == Some(&'0') && r.get(j + 1).is_some_and(|c| c.is_ascii_digit()) {
                j += 1;
                zr += 1;
            }
            if secondary == Ordering::Equal {
                secondary = zl.cmp(&zr);
            }
            let (nl, nr) = (digit_run(&l, i), digit_run(&r, j));
            let ord = nl.cmp(&nr).then_with(|| l[i..i + nl].cmp(&r[j..j + nr]));
            if ord != Ordering::Equal {
                return ord;
            }
            i += nl;
            j += nr;
            continue;
        }
        let (Some(x), Some(y)) = (lc, rc) else {
            return lc.is_some().cmp(&rc.is_some()).then(secondary);
        };
        if x != y {
            let (xl, yl) = (x.to_lowercase().next().unwrap_or(x), y.to_lowercase().next().unwrap_or(y));
            if xl != yl {
                return xl.cmp(&yl);
            }
            if secondary == Ordering::Equal {
                secondary = if x.is_uppercase() { Ordering::Less } else { Ordering::Greater };
            }
        }
        i += 1;
        j += 1;
    }
}

/// Parses a list index (`N`, `end`, `end-N`, `end+N`, `N+M`, `N-M`) against a list of `len` elements.
/// Huge values saturate, so they are simply out of range.
pub(crate) fn parse_index(s: &str, len: usize) -> Result<i64, Exception> {
    let bad = || error(format!("bad index \"{s}\": must be integer?[+-]integer? or end?[+-]integer?"));
    let t = s.trim();
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    if let Some(rest) = t.strip_prefix("end") {
        if rest.is_empty() {
            return Ok(len - 1);
        }
        let off = sat_int(rest.get(1..).unwrap_or("")).ok_or_else(bad)?;
        return match rest.as_bytes().first() {
            Some(b'-') => Ok((len - 1).saturating_sub(off)),
            Some(b'+') => Ok((len - 1).saturating_add(off)),
            _ => Err(bad()),
        };
    }
    if let Some(v) = sat_int(t) {
        return Ok(v);
    }
    let split = t.get(1..).and_then(|r| r.find(['+', '-'])).map(|p| p + 1).ok_or_else(bad)?;
    let (a, b) = (t.get(..split).unwrap_or(""), t.get(split + 1..).unwrap_or(""));
    let (x, y) = (sat_int(a).ok_or_else(bad)?, sat_int(b).ok_or_else(bad)?);
    Ok(if t.as_bytes().get(split) == Some(&b'-') { x.saturating_sub(y) } else { x.saturating_add(y) })
}

/// An integer in Tcl syntax, saturating decimal values that overflow 64 bits.
fn sat_int(s: &str) -> Option<i64> {
    if let Some(v) = super::number::parse_int(s) {
        return Some(v);
    }
    let t = s.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        return Some(if neg { i64::MIN } else { i64::MAX });
    }
    None
}

/// Clamps a parsed index into `0..=len` for range starts/ends.
pub(crate) fn clamp(i: i64, len: usize) -> usize {
    usize::try_from(i.max(0)).unwrap_or(usize::MAX).min(len)
}

#[cfg(test)]
#[path = "list_tests.rs"]
mod tests;
