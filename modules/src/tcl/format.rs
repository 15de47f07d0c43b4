//! The `format` command: C-style `%` conversions (s d i u x X o b c f e E g G %) with flags, width,
//! precision and `*`, capped so a huge width cannot allocate gigabytes.

use super::number::{double_arg, int_arg};
use super::{error, wrong_args, Exception, Interp, TclResult};

/// Largest width or precision accepted.
const MAX_FIELD: usize = 1 << 20;

pub(crate) fn register<C>(i: &mut Interp<C>) {
    i.register("format", cmd_format::<C>);
}

#[derive(Default)]
struct Spec {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    alt: bool,
    width: usize,
    prec: Option<usize>,
}

fn cmd_format<C>(_: &mut Interp<C>, a: &[String]) -> TclResult {
    let Some(fmt) = a.get(1) else { return Err(wrong_args("format formatString ?arg ...?")) };
    let mut args = a[2..].iter();
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut sp = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => sp.left = true,
                '0' => sp.zero = true,
                '+' => sp.plus = true,
                ' ' => sp.space = true,
                '#' => sp.alt = true,
                _ => break,
            }
            chars.next();
        }
        sp.width = field(&mut chars, &mut args, &mut sp.left)?.unwrap_or(0);
        if chars.peek() == Some(&'.') {
            chars.next();
            sp.prec = Some(field(&mut chars, &mut args, &mut false)?.unwrap_or(0));
        }
        while matches!(chars.peek(), Some('l' | 'h' | 'L' | 'j' | 'z' | 't')) {
            chars.next();
        }
        let Some(conv) = chars.next() else { return Err(error("format string ended in middle of field specifier")) };
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = args.next().ok_or_else(|| error("not enough arguments for all format specifiers"))?;
        let body = convert(conv, arg, &sp)?;
        pad(&mut out, body, &sp, conv);
        super::check_len(out.len())?;
    }
    Ok(out)
}

fn field<'a>(
    chars: &mut std::iter::Peekable<std::str::Chars>,
    args: &mut impl Iterator<Item = &'a String>,
    left: &mut bool,
) -> Result<Option<usize>, Exception> {
    if chars.peek() == Some(&'*') {
        chars.next();
        let v = int_arg(args.next().ok_or_else(|| error("not enough arguments for all format specifiers"))?)?;
        if v < 0 {
            *left = true;
        }
        return limit(v.unsigned_abs()).map(Some);
    }
    let mut n: Option<u64> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        chars.next();
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(u64::from(d)));
    }
    n.map(limit).transpose()
}

fn limit(v: u64) -> Result<usize, Exception> {
    usize::try_from(v).ok().filter(|&v| v <= MAX_FIELD).ok_or_else(|| error("format field width too large"))
}

fn convert(conv: char, arg: &str, sp: &Spec) -> Result<String, Exception> {
    let sign = |neg: bool| {
        if neg {
            "-"
        } else if sp.plus {
            "+"
        } else if sp.space {
            " "
        } else {
            ""
        }
    };
    Ok(match conv {
        's' => match sp.prec {
            Some(p) => arg.chars().take(p).collect(),
            None => arg.to_string(),
        },
        'd' | 'i' => {
            let v = int_arg(arg)?;
            format!("{}{}", sign(v < 0), v.unsigned_abs())
        }
        'u' => (int_arg(arg)? as u64).to_string(),
        'x' | 'X' | 'o' | 'b' => {
            let v = int_arg(arg)? as u64;
            let (s, prefix) = match conv {
                'x' => (format!("{v:x}"), "0x"),
                'X' => (format!("{v:X}"), "0X"),
                'o' => (format!("{v:o}"), "0"),
                _ => (format!("{v:b}"), "0b"),
            };
            if sp.alt && v != 0 {
                format!("{prefix}{s}")
            } else {
                s
            }
        }
        'c' => {
            let v = int_arg(arg)?;
            u32::try_from(v).ok().and_then(char::from_u32).unwrap_or('\u{fffd}').to_string()
        }
        'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
            let v = double_arg(arg)?;
            let body = float_body(conv, v.abs(), sp.prec.unwrap_or(6), sp.alt);
            format!("{}{}", sign(v.is_sign_negative() && v != 0.0), body)
        }
        _ => return Err(error(format!("bad field specifier \"{conv}\""))),
    })
}

/// C-style exponent notation: `1.500000e+02`.
fn exp_form(v: f64, prec: usize, upper: bool) -> String {
    let s = format!("{v:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let e: i32 = e.parse().unwrap_or(0);
    let sign = if e < 0 { '-' } else { '+' };
    let out = format!("{m}e{sign}{:02}", e.abs());
    if upper {
        out.to_uppercase()
    } else {
        out
    }
}

fn float_body(conv: char, v: f64, prec: usize, alt: bool) -> String {
    if !v.is_finite() {
        let s = if v.is_nan() { "nan" } else { "inf" };
        return if conv.is_uppercase() { s.to_uppercase() } else { s.to_string() };
    }
    match conv {
        'f' | 'F' => format!("{v:.prec$}"),
        'e' | 'E' => exp_form(v, prec, conv == 'E'),
        _ => {
            let p = prec.max(1);
            let x: i32 = exp_form(v, p - 1, false).split_once('e').and_then(|(_, e)| e.parse().ok()).unwrap_or(0);
            let mut s = if x < -4 || x >= p as i32 {
                exp_form(v, p - 1, conv == 'G')
            } else {
                let decimals = usize::try_from(p as i32 - 1 - x).unwrap_or(0);
                format!("{v:.decimals$}")
            };
            if !alt {
                s = strip_zeros(&s);
            }
            s
        }
    }
}

fn strip_zeros(s: &str) -> String {
    let (m, e) = match s.find(['e', 'E']) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let m = if m.contains('.') { m.trim_end_matches('0').trim_end_matches('.') } else { m };
    format!("{m}{e}")
}

fn pad(out: &mut String, body: String, sp: &Spec, conv: char) {
    let len = body.chars().count();
    if len >= sp.width {
        out.push_str(&body);
        return;
    }
    let fill = sp.width - len;
    if sp.left {
        out.push_str(&body);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if sp.zero && conv != 's' && conv != 'c' {
        let split = body.find(|c: char| c.is_ascii_alphanumeric()).unwrap_or(0);
        let (sign, digits) = body.split_at(split);
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(digits);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(&body);
    }
}
