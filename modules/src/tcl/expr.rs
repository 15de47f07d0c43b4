//! `expr`: a one-pass recursive-descent evaluator with Tcl's operator precedence, its own `$var`/`[cmd]`/`"..."`
//! substitution (skipped on the unevaluated side of `&&`, `||` and `?:`), and the math functions
//! (mathfunc.rs, a child of this module since it works on this module's values).

use std::cmp::Ordering;

use super::list::parse_list;
use super::number::{format_double, parse_bool, parse_number, Num};
use super::parse::{Parser, Term};
use super::{error, Exception, Interp};

#[path = "mathfunc.rs"]
mod mathfunc;

/// Nesting limit of parentheses, unary operators and right-associative chains.
const MAX_EXPR_DEPTH: usize = 600;

/// An operand or result.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Int(i64),
    Dbl(f64),
    Str(String),
}

impl Val {
    fn num(&self) -> Option<Num> {
        match self {
            Val::Int(i) => Some(Num::Int(*i)),
            Val::Dbl(d) => Some(Num::Dbl(*d)),
            Val::Str(s) => parse_number(s),
        }
    }

    /// The string form; numeric-looking strings are canonicalized as Tcl does for expr results.
    pub fn into_string(self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Dbl(d) => format_double(d),
            Val::Str(s) => parse_number(&s).map_or(s, Num::to_tcl),
        }
    }

    fn as_str(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Dbl(d) => format_double(*d),
            Val::Str(s) => s.clone(),
        }
    }
}

pub(crate) fn from_num(n: Num) -> Val {
    match n {
        Num::Int(i) => Val::Int(i),
        Num::Dbl(d) => Val::Dbl(d),
    }
}

/// Truth value of an operand in a logical context.
pub(crate) fn truthy(v: &Val) -> Result<bool, Exception> {
    match v {
        Val::Int(i) => Ok(*i != 0),
        Val::Dbl(d) => Ok(*d != 0.0),
        Val::Str(s) => parse_bool(s).ok_or_else(|| error(format!("expected boolean value but got \"{s}\""))),
    }
}

const OPS: &[(&str, u8)] = &[
    ("**", 13),
    ("<<", 10),
    (">>", 10),
    ("<=", 9),
    (">=", 9),
    ("==", 8),
    ("!=", 8),
    ("&&", 2),
    ("||", 1),
    ("eq", 7),
    ("ne", 7),
    ("in", 6),
    ("ni", 6),
    ("*", 12),
    ("/", 12),
    ("%", 12),
    ("+", 11),
    ("-", 11),
    ("<", 9),
    (">", 9),
    ("&", 5),
    ("^", 4),
    ("|", 3),
];

struct Ex<'i, 'a, C> {
    it: &'i mut Interp<C>,
    p: Parser<'a>,
    text: &'a str,
    depth: usize,
}

impl<C> Interp<C> {
    /// Evaluates an expression.
    pub(crate) fn eval_expr(&mut self, text: &str) -> Result<Val, Exception> {
        if text.trim().is_empty() {
            return Err(error("empty expression"));
        }
        self.budget().work(text.len())?;
        let mut ex = Ex { it: self, p: Parser::new(text), text, depth: 0 };
        let v = ex.ternary(false)?;
        ex.ws();
        if ex.p.peek().is_some() {
            return Err(ex.syntax());
        }
        Ok(v)
    }

    /// Evaluates an expression as a condition.
    pub(crate) fn expr_bool(&mut self, text: &str) -> Result<bool, Exception> {
        let v = self.eval_expr(text)?;
        truthy(&v)
    }
}

impl<C> Ex<'_, '_, C> {
    fn ws(&mut self) {
        loop {
            let before = self.p.pos;
            while self.p.peek().is_some_and(|c| c.is_ascii_whitespace()) {
                self.p.pos += 1;
            }
            self.p.skip_space();
            if self.p.pos == before {
                break;
            }
        }
    }

    fn syntax(&self) -> Exception {
        error(format!("syntax error in expression \"{}\"", self.text))
    }

    fn enter(&mut self) -> Result<(), Exception> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(error("expression nested too deeply"));
        }
        Ok(())
    }

    fn rest(&self) -> &[u8] {
        self.text.as_bytes().get(self.p.pos..).unwrap_or(&[])
    }

    fn ternary(&mut self, skip: bool) -> Result<Val, Exception> {
        self.enter()?;
        let cond = self.binary(0, skip)?;
        self.ws();
        if self.p.peek() != Some(b'?') {
            self.depth -= 1;
            return Ok(cond);
        }
        self.p.pos += 1;
        let c = !skip && truthy(&cond)?;
        let a = self.ternary(skip || !c)?;
        self.ws();
        if self.p.peek() != Some(b':') {
            return Err(self.syntax());
        }
        self.p.pos += 1;
        let b = self.ternary(skip || c)?;
        self.depth -= 1;
        Ok(if c { a } else { b })
    }

    fn peek_op(&mut self) -> Option<(&'static str, u8)> {
        self.ws();
        let rest = self.rest();
        OPS.iter().copied().find(|(op, _)| {
            rest.starts_with(op.as_bytes())
                && (!op.as_bytes()[0].is_ascii_alphabetic()
                    || !rest.get(op.len()).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_'))
        })
    }

    fn binary(&mut self, min: u8, skip: bool) -> Result<Val, Exception> {
        self.enter()?;
        let mut lhs = self.unary(skip)?;
        while let Some((op, prec)) = self.peek_op() {
            if prec < min {
                break;
            }
            self.p.pos += op.len();
            lhs = match op {
                "&&" => {
                    let l = !skip && truthy(&lhs)?;
                    let r = self.binary(prec + 1, skip || !l)?;
                    Val::Int(i64::from(l && truthy(&r)?))
                }
                "||" => {
                    let l = skip || truthy(&lhs)?;
                    let r = self.binary(prec + 1, skip || l)?;
                    Val::Int(i64::from(!skip && (l || truthy(&r)?)))
                }
                _ => {
                    let r = self.binary(if op == "**" { prec } else { prec + 1 }, skip)?;
                    if skip {
                        Val::Int(0)
                    } else {
                        binop(op, lhs, r)?
                    }
                }
            };
        }
        self.depth -= 1;
        Ok(lhs)
    }

    fn unary(&mut self, skip: bool) -> Result<Val, Exception> {
        self.enter()?;
        self.ws();
        let v = match self.p.peek() {
            Some(c @ (b'-' | b'+' | b'!' | b'~')) => {
                self.p.pos += 1;
                let v = self.unary(skip)?;
                if skip {
                    Val::Int(0)
                } else {
                    unop(c, v)?
                }
            }
            Some(b'(') => {
                self.p.pos += 1;
                let v = self.ternary(skip)?;
                self.ws();
                if self.p.peek() != Some(b')') {
                    return Err(error(format!("unbalanced parentheses in expression \"{}\"", self.text)));
                }
                self.p.pos += 1;
                v
            }
            _ => self.primary(skip)?,
        };
        self.depth -= 1;
        Ok(v)
    }

    fn primary(&mut self, skip: bool) -> Result<Val, Exception> {
        let Some(c) = self.p.peek() else {
            return Err(error(format!("missing operand in expression \"{}\"", self.text)));
        };
        match c {
            b'0'..=b'9' | b'.' => self.number(),
            b'$' => {
                let part = self.p.parse_var().map_err(error)?.ok_or_else(|| self.syntax())?;
                if skip {
                    return Ok(Val::Int(0));
                }
                Ok(Val::Str(self.it.subst_parts(std::slice::from_ref(&part))?))
            }
            b'[' => {
                let script = self.p.parse_bracket().map_err(error)?;
                if skip {
                    return Ok(Val::Int(0));
                }
                Ok(Val::Str(self.it.eval(script)?))
            }
            b'"' => {
                self.p.pos += 1;
                let parts = self.p.parse_parts(Term::Quote).map_err(error)?;
                if skip {
                    return Ok(Val::Int(0));
                }
                Ok(Val::Str(self.it.subst_parts(&parts)?))
            }
            b'{' => Ok(Val::Str(self.p.parse_braced().map_err(error)?)),
            c if c.is_ascii_alphabetic() => self.word(skip),
            _ => Err(self.syntax()),
        }
    }

    fn number(&mut self) -> Result<Val, Exception> {
        let start = self.p.pos;
        let hex = self.rest().len() > 1 && self.rest()[0] == b'0' && matches!(self.rest()[1], b'x' | b'X');
        while let Some(c) = self.p.peek() {
            let prev = self.text.as_bytes().get(self.p.pos.wrapping_sub(1)).copied();
            let signed_exp = (c == b'+' || c == b'-') && !hex && matches!(prev, Some(b'e' | b'E'));
            if c.is_ascii_alphanumeric() || c == b'.' || signed_exp {
                self.p.pos += 1;
            } else {
                break;
            }
        }
        let lit = self.text.get(start..self.p.pos).unwrap_or("");
        if let Some(n) = parse_number(lit) {
            return Ok(from_num(n));
        }
        if lit.bytes().all(|c| c.is_ascii_digit()) {
            if let Ok(f) = lit.parse::<f64>() {
                return Ok(Val::Dbl(f));
            }
        }
        Err(error(format!("invalid number \"{lit}\" in expression \"{}\"", self.text)))
    }

    fn word(&mut self, skip: bool) -> Result<Val, Exception> {
        let start = self.p.pos;
        while self.p.peek().is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':') {
            self.p.pos += 1;
        }
        let name = self.text.get(start..self.p.pos).unwrap_or("").to_string();
        self.ws();
        if self.p.peek() == Some(b'(') {
            self.p.pos += 1;
            let args = self.call_args(skip)?;
            return if skip { Ok(Val::Int(0)) } else { mathfunc::math_func(&name, args) };
        }
        if parse_bool(&name).is_some() && parse_number(&name).is_none() {
            return Ok(Val::Str(name));
        }
        Err(error(format!("invalid bareword \"{name}\" in expression \"{}\"", self.text)))
    }

    fn call_args(&mut self, skip: bool) -> Result<Vec<Val>, Exception> {
        let mut args = Vec::new();
        self.ws();
        if self.p.peek() == Some(b')') {
            self.p.pos += 1;
            return Ok(args);
        }
        loop {
            args.push(self.ternary(skip)?);
            self.ws();
            match self.p.peek() {
                Some(b',') => self.p.pos += 1,
                Some(b')') => {
                    self.p.pos += 1;
                    return Ok(args);
                }
                _ => return Err(self.syntax()),
            }
        }
    }
}

pub(crate) fn operand(v: &Val, op: &str) -> Result<Num, Exception> {
    v.num().ok_or_else(|| match v {
        Val::Str(s) if s.is_empty() => error(format!("can't use empty string as operand of \"{op}\"")),
        _ => error(format!("can't use non-numeric string as operand of \"{op}\"")),
    })
}

fn unop(c: u8, v: Val) -> Result<Val, Exception> {
    let op = (c as char).to_string();
    match c {
        b'!' => Ok(Val::Int(i64::from(!truthy(&v)?))),
        b'+' => Ok(from_num(operand(&v, &op)?)),
        b'-' => Ok(match operand(&v, &op)? {
            Num::Int(i) => i.checked_neg().map_or(Val::Dbl(-(i as f64)), Val::Int),
            Num::Dbl(d) => Val::Dbl(-d),
        }),
        _ => match operand(&v, &op)? {
            Num::Int(i) => Ok(Val::Int(!i)),
            Num::Dbl(_) => Err(error("can't use floating-point value as operand of \"~\"")),
        },
    }
}

pub(crate) fn compare(a: &Val, b: &Val) -> Ordering {
    match (a.num(), b.num()) {
        (Some(Num::Int(x)), Some(Num::Int(y))) => x.cmp(&y),
        (Some(x), Some(y)) => x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal),
        _ => a.as_str().cmp(&b.as_str()),
    }
}

fn binop(op: &str, a: Val, b: Val) -> Result<Val, Exception> {
    let bool_val = |x: bool| Ok(Val::Int(i64::from(x)));
    match op {
        "eq" => bool_val(a.as_str() == b.as_str()),
        "ne" => bool_val(a.as_str() != b.as_str()),
        "in" | "ni" => {
            let found = parse_list(&b.as_str())?.contains(&a.as_str());
            bool_val(found == (op == "in"))
        }
        "==" => bool_val(compare(&a, &b) == Ordering::Equal),
        "!=" => bool_val(compare(&a, &b) != Ordering::Equal),
        "<" => bool_val(compare(&a, &b) == Ordering::Less),
        ">" => bool_val(compare(&a, &b) == Ordering::Greater),
        "<=" => bool_val(compare(&a, &b) != Ordering::Greater),
        ">=" => bool_val(compare(&a, &b) != Ordering::Less),
        _ => match (operand(&a, op)?, operand(&b, op)?) {
            (Num::Int(x), Num::Int(y)) => int_arith(op, x, y),
            (x, y) => float_arith(op, x.as_f64(), y.as_f64()),
        },
    }
}

fn int_arith(op: &str, a: i64, b: i64) -> Result<Val, Exception> {
    let or_dbl = |r: Option<i64>, f: f64| Ok(r.map_or(Val::Dbl(f), Val::Int));
    let (fa, fb) = (a as f64, b as f64);
    match op {
        "+" => or_dbl(a.checked_add(b), fa + fb),
        "-" => or_dbl(a.checked_sub(b), fa - fb),
        "*" => or_dbl(a.checked_mul(b), fa * fb),
        "/" | "%" if b == 0 => Err(error("divide by zero")),
        "/" => {
            let Some(q) = a.checked_div(b) else { return Ok(Val::Dbl(-fa)) };
            Ok(Val::Int(if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q }))
        }
        "%" => {
            let r = a.checked_rem(b).unwrap_or(0);
            Ok(Val::Int(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r }))
        }
        "**" => int_pow(a, b),
        "<<" | ">>" if b < 0 => Err(error("negative shift argument")),
        "<<" => {
            let r = if b < 63 {
                a.checked_mul(1i64 << b)
            } else if a == 0 {
                Some(0)
            } else {
                None
            };
            or_dbl(r, fa * 2f64.powf(fb))
        }
        ">>" => Ok(Val::Int(if b >= 64 {
            if a < 0 {
                -1
            } else {
                0
            }
        } else {
            a >> b
        })),
        "&" => Ok(Val::Int(a & b)),
        "|" => Ok(Val::Int(a | b)),
        "^" => Ok(Val::Int(a ^ b)),
        _ => Err(error(format!("unknown operator \"{op}\""))),
    }
}

fn int_pow(a: i64, b: i64) -> Result<Val, Exception> {
    if b < 0 {
        return match a {
            0 => Err(error("exponentiation of zero by negative power")),
            1 => Ok(Val::Int(1)),
            -1 => Ok(Val::Int(if b % 2 == 0 { 1 } else { -1 })),
            _ => Ok(Val::Int(0)),
        };
    }
    let r = u32::try_from(b).ok().and_then(|e| a.checked_pow(e));
    Ok(r.map_or_else(|| Val::Dbl((a as f64).powf(b as f64)), Val::Int))
}

fn float_arith(op: &str, a: f64, b: f64) -> Result<Val, Exception> {
    let v = match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" => a / b,
        "**" => a.powf(b),
        _ => return Err(error(format!("can't use floating-point value as operand of \"{op}\""))),
    };
    if v.is_nan() {
        return Err(error("domain error: argument not in valid range"));
    }
    Ok(Val::Dbl(v))
}
