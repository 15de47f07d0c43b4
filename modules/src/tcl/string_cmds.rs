//! The `string` command (match, equal, compare, first, last, index, range, length, case, trim, map, replace,
//! repeat, reverse, cat, is) and Tcl glob matching (`glob_match`).

use super::list::{clamp, parse_index, parse_list};
use super::number::{int_arg, parse_bool, parse_int, parse_number};
use super::{check_len, error, wrong_args, Exception, Interp, Steps, TclResult};

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("string", cmd_string::<C>);
}

/// Matches one `[...]` class at `p[pi]` against `c`: `Some((matched, index after ']'))`, `None` if unclosed.
fn class_match(p: &[char], pi: usize, c: char) -> Option<(bool, usize)> {
    let mut i = pi + 1;
    let mut matched = false;
    loop {
        let lo = *p.get(i)?;
        if lo == ']' && i > pi + 1 {
            return Some((matched, i + 1));
        }
        let lo = if lo == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            lo
        };
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|&h| h != ']') {
            let hi = *p.get(i + 2)?;
            let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            matched |= a <= c && c <= b;
            i += 3;
        } else {
            matched |= lo == c;
            i += 1;
        }
    }
}

/// Tcl `string match` glob matching (`*`, `?`, `[chars]`, `\x`), with a nocase flag.
pub fn glob_match(pattern: &str, text: &str, nocase: bool) -> bool {
    glob_match_counted(pattern, text, nocase, &mut Steps::new(None)).unwrap_or(false)
}

impl<C> Interp<C> {
    /// [`glob_match`] with its steps (up to pattern length x text length) counted against the budget.
    pub(crate) fn glob(&self, pattern: &str, text: &str, nocase: bool) -> Result<bool, Exception> {
        glob_match_counted(pattern, text, nocase, &mut Steps::new(Some(self.budget())))
    }
}

pub(crate) fn glob_match_counted(
    pattern: &str,
    text: &str,
    nocase: bool,
    steps: &mut Steps,
) -> Result<bool, Exception> {
    let prep = |s: &str| -> Vec<char> {
        if nocase {
            s.chars().flat_map(char::to_lowercase).collect()
        } else {
            s.chars().collect()
        }
    };
    steps.add(pattern.len() + text.len())?;
    let (p, t) = (prep(pattern), prep(text));
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&tc) = t.get(ti) {
        steps.add(1)?;
        let step = match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
                continue;
            }
            Some('?') => Some(pi + 1),
            Some('[') => class_match(&p, pi, tc).and_then(|(m, next)| m.then_some(next)),
            Some('\\') => match p.get(pi + 1) {
                Some(&c) if c == tc => Some(pi + 2),
                None if tc == '\\' => Some(pi + 1),
                _ => None,
            },
            Some(&c) if c == tc => Some(pi + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                pi = next;
                ti += 1;
            }
            (None, Some((sp, st))) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            (None, None) => return Ok(false),
        }
    }
    Ok(p.get(pi..).is_some_and(|rest| rest.iter().all(|&c| c == '*')))
}

const SUBCOMMANDS: &str = "cat, compare, equal, first, index, is, last, length, map, match, range, repeat, \
replace, reverse, tolower, totitle, toupper, trim, trimleft, or trimright";

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn cmd_string<C>(interp: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(sub) = a.get(1) else { return Err(wrong_args("string subcommand ?arg ...?")) };
    let args = &a[2..];
    match sub.as_str() {
        "match" => str_match(interp, args),
        "equal" | "compare" => str_compare(sub == "equal", args),
        "first" | "last" => str_find(sub == "first", args),
        "index" => str_index(args),
        "range" => str_range(args),
        "length" => match args {
            [s] => Ok(s.chars().count().to_string()),
            _ => Err(wrong_args("string length string")),
        },
        "bytelength" => match args {
            [s] => Ok(s.len().to_string()),
            _ => Err(wrong_args("string bytelength string")),
        },
        "tolower" | "toupper" | "totitle" => str_case(sub, args),
        "trim" | "trimleft" | "trimright" => str_trim(sub, args),
        "map" => str_map(interp, args),
        "replace" => str_replace(args),
        "repeat" => str_repeat(args),
        "reverse" => match args {
            [s] => Ok(s.chars().rev().collect()),
            _ => Err(wrong_args("string reverse string")),
        },
        "cat" => Ok(args.concat()),
        "is" => str_is(interp, args),
        _ => Err(error(format!("unknown or ambiguous subcommand \"{sub}\": must be {SUBCOMMANDS}"))),
    }
}

fn str_match<C>(interp: &Interp<C>, args: &[String]) -> TclResult {
    match args {
        [p, s] => Ok(u8::from(interp.glob(p, s, false)?).to_string()),
        [o, p, s] if o == "-nocase" => Ok(u8::from(interp.glob(p, s, true)?).to_string()),
        _ => Err(wrong_args("string match ?-nocase? pattern string")),
    }
}

fn str_compare(equal: bool, args: &[String]) -> TclResult {
    let usage = if equal {
        "string equal ?-nocase? ?-length int? string1 string2"
    } else {
        "string compare ?-nocase? ?-length int? string1 string2"
    };
    if args.len() < 2 {
        return Err(wrong_args(usage));
    }
    let (opts, strs) = args.split_at(args.len() - 2);
    let (mut nocase, mut len) = (false, None);
    let mut i = 0;
    while let Some(o) = opts.get(i) {
        match o.as_str() {
            "-nocase" => nocase = true,
            "-length" => {
                i += 1;
                len = Some(int_arg(opts.get(i).ok_or_else(|| wrong_args(usage))?)?);
            }
            _ => return Err(error(format!("bad option \"{o}\": must be -nocase or -length"))),
        }
        i += 1;
    }
    let prep = |s: &str| -> Vec<char> {
        let v = s.chars();
        let v: Vec<char> = if nocase { v.flat_map(char::to_lowercase).collect() } else { v.collect() };
        match len.and_then(|l| usize::try_from(l).ok()) {
            Some(l) => v.into_iter().take(l).collect(),
            None => v,
        }
    };
    let ord = prep(&strs[0]).cmp(&prep(&strs[1]));
    Ok(if equal { u8::from(ord.is_eq()).to_string() } else { (ord as i8).to_string() })
}

fn str_find(first: bool, args: &[String]) -> TclResult {
    let (needle, hay, start) = match args {
        [n, h] => (n, h, None),
        [n, h, s] => (n, h, Some(s)),
        _ => {
            return Err(wrong_args(if first {
                "string first needleString haystackString ?startIndex?"
            } else {
                "string last needleString haystackString ?lastIndex?"
            }))
        }
    };
    // Byte offsets of every character (and of the end), so that the search is the standard
    // library's, linear in the haystack's length whatever the needle.
    let offsets: Vec<usize> = hay.char_indices().map(|(i, _)| i).chain([hay.len()]).collect();
    let (n_len, h_len) = (needle.chars().count(), offsets.len() - 1);
    if n_len == 0 || n_len > h_len {
        return Ok("-1".into());
    }
    let last_start = h_len - n_len;
    let at = |byte: usize| offsets.binary_search(&byte).unwrap_or(0);
    let found = if first {
        let from = match start {
            Some(s) => clamp(parse_index(s, h_len)?, h_len),
            None => 0,
        };
        hay.get(offsets[from]..).and_then(|rest| rest.find(needle.as_str())).map(|i| at(offsets[from] + i))
    } else {
        let upto = match start {
            Some(s) => {
                let i = parse_index(s, h_len)?;
                if i < 0 {
                    return Ok("-1".into());
                }
                clamp(i, last_start)
            }
            None => last_start,
        };
        hay.get(..offsets[upto + n_len]).and_then(|head| head.rfind(needle.as_str())).map(at)
    };
    Ok(found.map_or("-1".into(), |i| i.to_string()))
}

fn str_index(args: &[String]) -> TclResult {
    let [s, ix] = args else { return Err(wrong_args("string index string charIndex")) };
    let c = chars(s);
    let i = parse_index(ix, c.len())?;
    Ok(usize::try_from(i).ok().and_then(|i| c.get(i)).map(|c| c.to_string()).unwrap_or_default())
}

fn str_range(args: &[String]) -> TclResult {
    let [s, f, l] = args else { return Err(wrong_args("string range string first last")) };
    let c = chars(s);
    let first = clamp(parse_index(f, c.len())?, c.len());
    let last = parse_index(l, c.len())?;
    if last < 0 {
        return Ok(String::new());
    }
    let end = clamp(last.saturating_add(1), c.len());
    Ok(c.get(first..end.max(first)).map(|s| s.iter().collect()).unwrap_or_default())
}

fn str_case(sub: &str, args: &[String]) -> TclResult {
    let Some(s) = args.first() else { return Err(wrong_args(&format!("string {sub} string ?first? ?last?"))) };
    let c = chars(s);
    let first = match args.get(1) {
        Some(f) => clamp(parse_index(f, c.len())?, c.len()),
        None => 0,
    };
    let end = match args.get(2) {
        Some(l) => clamp(parse_index(l, c.len())?.saturating_add(1), c.len()),
        None if args.len() == 2 => (first + 1).min(c.len()),
        None => c.len(),
    };
    let mut out: String = c.get(..first).unwrap_or(&[]).iter().collect();
    for (k, ch) in c.get(first..end.max(first)).unwrap_or(&[]).iter().enumerate() {
        match sub {
            "toupper" => out.extend(ch.to_uppercase()),
            "totitle" if k == 0 => out.extend(ch.to_uppercase()),
            _ => out.extend(ch.to_lowercase()),
        }
    }
    out.extend(c.get(end.max(first)..).unwrap_or(&[]).iter());
    Ok(out)
}

fn str_trim(sub: &str, args: &[String]) -> TclResult {
    let (s, set) = match args {
        [s] => (s, " \t\n\r\x0b\x0c\0"),
        [s, set] => (s, set.as_str()),
        _ => return Err(wrong_args(&format!("string {sub} string ?chars?"))),
    };
    let pred = |c: char| set.contains(c);
    Ok(match sub {
        "trimleft" => s.trim_start_matches(pred),
        "trimright" => s.trim_end_matches(pred),
        _ => s.trim_matches(pred),
    }
    .to_string())
}

fn str_map<C>(interp: &Interp<C>, args: &[String]) -> TclResult {
    let (nocase, map, s) = match args {
        [m, s] => (false, m, s),
        [o, m, s] if o == "-nocase" => (true, m, s),
        _ => return Err(wrong_args("string map ?-nocase? charMap string")),
    };
    let pairs = parse_list(map)?;
    if pairs.len() % 2 != 0 {
        return Err(error("char map list unbalanced"));
    }
    let low = |s: &str| -> Vec<char> {
        if nocase {
            s.chars().map(|c| c.to_lowercase().next().unwrap_or(c)).collect()
        } else {
            s.chars().collect()
        }
    };
    let keys: Vec<(Vec<char>, &String)> = pairs.chunks(2).map(|p| (low(&p[0]), &p[1])).collect();
    let key_chars: usize = keys.iter().map(|(k, _)| k.len()).sum();
    let (text, orig) = (low(s), chars(s));
    let mut out = String::new();
    let mut i = 0;
    let mut steps = Steps::new(Some(interp.budget()));
    while i < text.len() {
        steps.add(key_chars.max(1))?;
        let hit = keys.iter().find(|(k, _)| !k.is_empty() && text.get(i..i + k.len()) == Some(&k[..]));
        match hit {
            Some((k, v)) => {
                out.push_str(v);
                i += k.len();
                check_len(out.len())?;
            }
            None => {
                out.extend(orig.get(i));
                i += 1;
            }
        }
    }
    Ok(out)
}

fn str_replace(args: &[String]) -> TclResult {
    let (s, f, l, new) = match args {
        [s, f, l] => (s, f, l, ""),
        [s, f, l, n] => (s, f, l, n.as_str()),
        _ => return Err(wrong_args("string replace string first last ?string?")),
    };
    let c = chars(s);
    let first = parse_index(f, c.len())?;
    let last = parse_index(l, c.len())?;
    if last < first || last < 0 || first >= c.len() as i64 {
        return Ok(s.clone());
    }
    let (fi, end) = (clamp(first, c.len()), clamp(last.saturating_add(1), c.len()));
    let mut out: String = c.get(..fi).unwrap_or(&[]).iter().collect();
    out.push_str(new);
    out.extend(c.get(end..).unwrap_or(&[]).iter());
    Ok(out)
}

fn str_repeat(args: &[String]) -> TclResult {
    let [s, n] = args else { return Err(wrong_args("string repeat string count")) };
    let n = usize::try_from(int_arg(n)?.max(0)).unwrap_or(0);
    check_len(s.len().saturating_mul(n))?;
    Ok(s.repeat(n))
}

fn class_ok(class: &str, s: &str) -> Result<bool, Exception> {
    let all = |f: fn(&char) -> bool| s.chars().all(|c| f(&c));
    Ok(match class {
        "integer" | "wide" | "entier" => parse_int(s).is_some(),
        "double" => parse_number(s).is_some(),
        "boolean" => parse_bool(s).is_some_and(|_| parse_number(s).is_none() || s == "0" || s == "1"),
        "true" => parse_bool(s) == Some(true) && (parse_number(s).is_none() || s == "1"),
        "false" => parse_bool(s) == Some(false) && (parse_number(s).is_none() || s == "0"),
        "digit" => all(|c| c.is_numeric()),
        "alpha" => all(|c| c.is_alphabetic()),
        "alnum" => all(|c| c.is_alphanumeric()),
        "space" => all(|c| c.is_whitespace()),
        "upper" => all(|c| c.is_uppercase()),
        "lower" => all(|c| c.is_lowercase()),
        "xdigit" => all(char::is_ascii_hexdigit),
        "ascii" => all(char::is_ascii),
        "wordchar" => all(|c| c.is_alphanumeric() || *c == '_'),
        "punct" => all(char::is_ascii_punctuation),
        "list" => parse_list(s).is_ok(),
        _ => return Err(error(format!("bad class \"{class}\": must be alnum, alpha, ascii, boolean, digit, double, entier, false, integer, list, lower, punct, space, true, upper, wide, wordchar, or xdigit"))),
    })
}

fn str_is<C>(interp: &mut Interp<C>, args: &[String]) -> TclResult {
    let usage = "string is class ?-strict? ?-failindex var? str";
    let (Some(class), Some(s)) = (args.first(), args.last().filter(|_| args.len() >= 2)) else {
        return Err(wrong_args(usage));
    };
    let (mut strict, mut failvar) = (false, None);
    let opts = &args[1..args.len() - 1];
    let mut i = 0;
    while let Some(o) = opts.get(i) {
        match o.as_str() {
            "-strict" => strict = true,
            "-failindex" => {
                i += 1;
                failvar = Some(opts.get(i).ok_or_else(|| wrong_args(usage))?);
            }
            _ => return Err(error(format!("bad option \"{o}\": must be -strict or -failindex"))),
        }
        i += 1;
    }
    let valid = class_ok(class, s)?;
    let ok = if s.is_empty() { !strict } else { valid };
    if !ok {
        if let Some(v) = failvar {
            interp.set_named(v, "0".into())?;
        }
    }
    Ok(u8::from(ok).to_string())
}

#[cfg(test)]
#[path = "string_tests.rs"]
mod tests;
