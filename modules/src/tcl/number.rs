//! Numbers as Tcl reads and prints them: integers (decimal, 0x, 0o, 0b, leading-zero octal), doubles,
//! boolean words, Tcl-style double formatting, and the "expected integer" argument helpers.

use super::{error, Exception};

/// A parsed number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(i64),
    Dbl(f64),
}

impl Num {
    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Dbl(d) => d,
        }
    }

    /// Tcl's string form.
    pub fn to_tcl(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Dbl(d) => format_double(d),
        }
    }
}

fn digits_value(digits: &str, radix: u32) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for c in digits.chars() {
        v = v.checked_mul(radix as u64)?.checked_add(c.to_digit(radix)? as u64)?;
    }
    Some(v)
}

/// Parses a Tcl integer (surrounding whitespace allowed); `None` if not an integer or out of 64-bit range.
pub(crate) fn parse_int(s: &str) -> Option<i64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, t.get(1..)?),
        Some(b'+') => (false, t.get(1..)?),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let mag = if let Some(h) = lower.strip_prefix("0x") {
        digits_value(h, 16)?
    } else if let Some(o) = lower.strip_prefix("0o") {
        digits_value(o, 8)?
    } else if let Some(b) = lower.strip_prefix("0b") {
        digits_value(b, 2)?
    } else if let Some(d) = lower.strip_prefix("0d") {
        digits_value(d, 10)?
    } else if lower.len() > 1 && lower.starts_with('0') {
        digits_value(&lower, 8)?
    } else {
        digits_value(&lower, 10)?
    };
    if neg {
        if mag == 1u64 << 63 {
            Some(i64::MIN)
        } else {
            i64::try_from(mag).ok().map(|v| -v)
        }
    } else {
        i64::try_from(mag).ok()
    }
}

/// Parses a double as Tcl does (no NaN, no hex); surrounding whitespace allowed.
pub(crate) fn parse_double(s: &str) -> Option<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() || !t.bytes().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-')) {
        return None;
    }
    let f: f64 = t.parse().ok()?;
    if f.is_nan() {
        None
    } else {
        Some(f)
    }
}

/// Parses an integer, else a double.
pub(crate) fn parse_number(s: &str) -> Option<Num> {
    if let Some(i) = parse_int(s) {
        return Some(Num::Int(i));
    }
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.starts_with('0') && digits.bytes().all(|c| c.is_ascii_digit()) {
        // Invalid octal such as 08 is not a number at all in Tcl 8.6.
        return None;
    }
    parse_double(t).map(Num::Dbl)
}

/// Tcl's boolean forms: numbers, and prefixes of true/false/yes/no/on/off (case-insensitive).
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    if let Some(n) = parse_number(s) {
        return Some(n.as_f64() != 0.0);
    }
    let l = s.trim().to_ascii_lowercase();
    if l.is_empty() {
        return None;
    }
    let pre = |w: &str, min: usize| l.len() >= min && w.starts_with(l.as_str());
    if pre("true", 1) || pre("yes", 1) || pre("on", 2) {
        Some(true)
    } else if pre("false", 1) || pre("no", 1) || pre("off", 2) {
        Some(false)
    } else {
        None
    }
}

/// Formats a double as Tcl does: shortest round-trip digits, `.0` for integral values, exponent past 1e17.
pub(crate) fn format_double(f: f64) -> String {
    if f.is_infinite() {
        return if f > 0.0 { "Inf".into() } else { "-Inf".into() };
    }
    if f.is_nan() {
        return "NaN".into();
    }
    let sci = format!("{f:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..17).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{}", exp.abs());
    }
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        s + ".0"
    }
}

/// Parses an integer argument or fails with `expected integer but got "s"`.
pub(crate) fn int_arg(s: &str) -> Result<i64, Exception> {
    parse_int(s).ok_or_else(|| error(format!("expected integer but got \"{s}\"")))
}

/// Parses a floating-point argument or fails with `expected floating-point number but got "s"`.
pub(crate) fn double_arg(s: &str) -> Result<f64, Exception> {
    parse_number(s).map(Num::as_f64).ok_or_else(|| error(format!("expected floating-point number but got \"{s}\"")))
}
