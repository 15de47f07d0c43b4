//! `job_sort_formula` (OpenPBS syntax): parsing it once, evaluating it per job.
//!
//! Owns: the formula grammar, its keywords and their values for one job.
//! Must not know: where the formula text comes from, or how jobs are stored.
//!
//! OpenPBS evaluates the formula as a Python expression with `from math import *`
//! (`src/scheduler/job_info.cpp`, `formula_evaluate`; `src/server/sched_func.c` validates it).
//! This is the arithmetic subset of that: numbers (`2`, `0.5`, `1e3`), `+ - * / // % **`
//! with Python's precedence (`**` binds tighter than unary minus and is right-associative;
//! `%` and `//` floor as Python's do), parentheses, unary `+`/`-`, and the functions
//! `abs min max pow sqrt exp log log10 floor ceil` (`log(x, base)` too). Keywords:
//! `queue_priority`, `job_priority`, `fair_share_perc` = `fairshare_perc` (the owner's share of
//! the tree, 0..1), `fairshare_tree_usage`, `fairshare_factor`, `eligible_time` (seconds),
//! `ncpus`, `ngpus` (totals of the request) and `walltime` (seconds: the job's, or the
//! default the server applied). Other OpenPBS resources and `accrue_type` are refused by name.
//!
//! Where Python would raise (division or `%` by zero, `sqrt(-1)`, `log(0)`, overflow), OpenPBS
//! logs it and uses 0 for the job; so does [`Formula::value`]: any error, infinity or NaN
//! anywhere gives the whole formula the value 0, so the sort always sees a finite number.
//!
//! Bounds (the text is user input): [`MAX_TEXT_BYTES`], [`MAX_TOKENS`], [`MAX_DEPTH`] (nesting
//! of parentheses, calls and unary operators), and [`MAX_ARGS`] per call.

/// What a formula's keywords read for one job (`order.rs` fills it from a `PendingJob`: this
/// module does not know the view, which holds the formula).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Inputs {
    pub queue_priority: f64,
    pub job_priority: f64,
    pub fairshare_perc: f64,
    pub fairshare_tree_usage: f64,
    pub fairshare_factor: f64,
    pub eligible_time: f64,
    pub ncpus: f64,
    pub ngpus: f64,
    pub walltime: f64,
}

/// The longest formula text accepted, bytes (the server caps the attribute at the same).
pub const MAX_TEXT_BYTES: usize = 4096;
/// The most tokens a formula may have.
pub const MAX_TOKENS: usize = 1024;
/// The deepest nesting accepted (parentheses, calls, unary operators, `**` chains).
pub const MAX_DEPTH: usize = 64;
/// The most arguments of one call (`min`, `max`).
pub const MAX_ARGS: usize = 32;

/// A parsed `job_sort_formula`.
#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    text: String,
    expr: Expr,
}

/// Why a formula text was refused (the server words it for qmgr).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormulaError(pub String);

impl Formula {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Formula, FormulaError> {
        if text.len() > MAX_TEXT_BYTES {
            return Err(FormulaError(format!("formula longer than {MAX_TEXT_BYTES} bytes")));
        }
        if text.trim().is_empty() {
            return Err(FormulaError("empty formula".to_string()));
        }
        let tokens = tokenize(text)?;
        let mut parser = Parser { tokens: &tokens, at: 0, depth: 0 };
        let expr = parser.expr()?;
        if let Some(token) = parser.peek() {
            return Err(FormulaError(format!("unexpected {} in formula", token.describe())));
        }
        Ok(Formula { text: text.to_string(), expr })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The formula's value for `job` (higher goes first): always finite, 0 where Python would
    /// have raised.
    pub fn value(&self, job: &Inputs) -> f64 {
        match self.expr.eval(job) {
            Some(value) if value.is_finite() => value,
            _ => 0.0,
        }
    }
}

/// A keyword's value for one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    QueuePriority,
    JobPriority,
    FairSharePerc,
    FairShareTreeUsage,
    FairShareFactor,
    EligibleTime,
    Ncpus,
    Ngpus,
    Walltime,
}

impl Keyword {
    fn from_name(name: &str) -> Option<Keyword> {
        Some(match name {
            "queue_priority" => Keyword::QueuePriority,
            "job_priority" => Keyword::JobPriority,
            "fairshare_perc" | "fair_share_perc" => Keyword::FairSharePerc,
            "fairshare_tree_usage" => Keyword::FairShareTreeUsage,
            "fairshare_factor" => Keyword::FairShareFactor,
            "eligible_time" => Keyword::EligibleTime,
            "ncpus" => Keyword::Ncpus,
            "ngpus" => Keyword::Ngpus,
            "walltime" => Keyword::Walltime,
            _ => return None,
        })
    }

    fn value(self, job: &Inputs) -> f64 {
        match self {
            Keyword::QueuePriority => job.queue_priority,
            Keyword::JobPriority => job.job_priority,
            Keyword::FairSharePerc => job.fairshare_perc,
            Keyword::FairShareTreeUsage => job.fairshare_tree_usage,
            Keyword::FairShareFactor => job.fairshare_factor,
            Keyword::EligibleTime => job.eligible_time,
            Keyword::Ncpus => job.ncpus,
            Keyword::Ngpus => job.ngpus,
            Keyword::Walltime => job.walltime,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Abs,
    Min,
    Max,
    Pow,
    Sqrt,
    Exp,
    Log,
    Log10,
    Floor,
    Ceil,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "abs" => Func::Abs,
            "min" => Func::Min,
            "max" => Func::Max,
            "pow" => Func::Pow,
            "sqrt" => Func::Sqrt,
            "exp" => Func::Exp,
            "log" => Func::Log,
            "log10" => Func::Log10,
            "floor" => Func::Floor,
            "ceil" => Func::Ceil,
            _ => return None,
        })
    }

    /// The accepted argument counts, inclusive.
    fn arity(self) -> (usize, usize) {
        match self {
            Func::Min | Func::Max => (1, MAX_ARGS),
            Func::Pow => (2, 2),
            Func::Log => (1, 2),
            _ => (1, 1),
        }
    }

    /// `None` where Python's `math` raises.
    fn apply(self, args: &[f64]) -> Option<f64> {
        let x = args[0];
        Some(match self {
            Func::Abs => x.abs(),
            Func::Min => args.iter().copied().fold(f64::INFINITY, f64::min),
            Func::Max => args.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            Func::Pow => power(x, args[1])?,
            Func::Sqrt if x < 0.0 => return None,
            Func::Sqrt => x.sqrt(),
            Func::Exp => x.exp(),
            Func::Log | Func::Log10 if x <= 0.0 => return None,
            Func::Log if args.len() == 2 => {
                let base = args[1];
                if base <= 0.0 || base == 1.0 {
                    return None;
                }
                x.ln() / base.ln()
            }
            Func::Log => x.ln(),
            Func::Log10 => x.log10(),
            Func::Floor => x.floor(),
            Func::Ceil => x.ceil(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
}

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Number(f64),
    Keyword(Keyword),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

impl Expr {
    /// `None` where Python would raise; the depth is bounded by the parser.
    fn eval(&self, job: &Inputs) -> Option<f64> {
        Some(match self {
            Expr::Number(value) => *value,
            Expr::Keyword(keyword) => keyword.value(job),
            Expr::Neg(inner) => -inner.eval(job)?,
            Expr::Binary(op, left, right) => binary(*op, left.eval(job)?, right.eval(job)?)?,
            Expr::Call(func, args) => {
                let values = args.iter().map(|arg| arg.eval(job)).collect::<Option<Vec<f64>>>()?;
                func.apply(&values)?
            }
        })
    }
}

fn binary(op: BinOp, left: f64, right: f64) -> Option<f64> {
    Some(match op {
        BinOp::Add => left + right,
        BinOp::Sub => left - right,
        BinOp::Mul => left * right,
        BinOp::Div if right == 0.0 => return None,
        BinOp::Div => left / right,
        BinOp::FloorDiv if right == 0.0 => return None,
        BinOp::FloorDiv => (left / right).floor(),
        BinOp::Mod if right == 0.0 => return None,
        // Python: the result takes the divisor's sign.
        BinOp::Mod => left - right * (left / right).floor(),
        BinOp::Pow => power(left, right)?,
    })
}

/// Python's float `**`: 0 to a negative power raises; a negative base to a fractional power
/// gives a complex number (which the sort cannot use: treated as an error too).
fn power(base: f64, exponent: f64) -> Option<f64> {
    if base == 0.0 && exponent < 0.0 {
        return None;
    }
    if base < 0.0 && exponent.fract() != 0.0 {
        return None;
    }
    let value = base.powf(exponent);
    value.is_finite().then_some(value)
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Op(&'static str),
    Open,
    Close,
    Comma,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Number(value) => format!("number {value}"),
            Token::Name(name) => format!("'{name}'"),
            Token::Op(op) => format!("'{op}'"),
            Token::Open => "'('".to_string(),
            Token::Close => "')'".to_string(),
            Token::Comma => "','".to_string(),
        }
    }
}

const OPERATORS: [&str; 7] = ["**", "//", "+", "-", "*", "/", "%"];

fn tokenize(text: &str) -> Result<Vec<Token>, FormulaError> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_whitespace() {
            at += 1;
            continue;
        }
        if tokens.len() >= MAX_TOKENS {
            return Err(FormulaError(format!("formula has more than {MAX_TOKENS} tokens")));
        }
        let start = at;
        if byte.is_ascii_digit() || (byte == b'.' && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)) {
            at = number_end(bytes, at);
            let literal = &text[start..at];
            let value =
                literal.parse::<f64>().map_err(|_| FormulaError(format!("bad number '{literal}' in formula")))?;
            tokens.push(Token::Number(value));
        } else if byte.is_ascii_alphabetic() || byte == b'_' {
            while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                at += 1;
            }
            tokens.push(Token::Name(text[start..at].to_string()));
        } else if let Some(op) = OPERATORS.iter().find(|op| text[at..].starts_with(**op)) {
            at += op.len();
            tokens.push(Token::Op(op));
        } else {
            at += 1;
            tokens.push(match byte {
                b'(' => Token::Open,
                b')' => Token::Close,
                b',' => Token::Comma,
                _ => {
                    let ch = text[start..].chars().next().unwrap_or('?');
                    return Err(FormulaError(format!("unexpected character '{ch}' in formula")));
                }
            });
        }
    }
    Ok(tokens)
}

/// The end of a number literal starting at `at`: digits, a fraction, an exponent.
fn number_end(bytes: &[u8], mut at: usize) -> usize {
    let digits = |bytes: &[u8], mut at: usize| {
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        at
    };
    at = digits(bytes, at);
    if bytes.get(at) == Some(&b'.') {
        at = digits(bytes, at + 1);
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        let mut next = at + 1;
        if matches!(bytes.get(next), Some(b'+' | b'-')) {
            next += 1;
        }
        if bytes.get(next).is_some_and(u8::is_ascii_digit) {
            at = digits(bytes, next);
        }
    }
    at
}

/// Recursive descent with Python's precedence:
/// `expr := term (('+'|'-') term)*`, `term := unary (('*'|'/'|'//'|'%') unary)*`,
/// `unary := ('-'|'+') unary | power`, `power := atom ('**' unary)?`,
/// `atom := number | keyword | func '(' expr (',' expr)* ')' | '(' expr ')'`.
struct Parser<'t> {
    tokens: &'t [Token],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<&Token> {
        let token = self.tokens.get(self.at);
        self.at += 1;
        token
    }

    fn eat_op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        match self.peek() {
            Some(Token::Op(op)) if ops.contains(op) => {
                let op = *op;
                self.at += 1;
                Some(op)
            }
            _ => None,
        }
    }

    fn enter(&mut self) -> Result<(), FormulaError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(FormulaError(format!("formula nested deeper than {MAX_DEPTH}")));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.term()?;
        while let Some(op) = self.eat_op(&["+", "-"]) {
            let right = self.term()?;
            let op = if op == "+" { BinOp::Add } else { BinOp::Sub };
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn term(&mut self) -> Result<Expr, FormulaError> {
        let mut left = self.unary()?;
        while let Some(op) = self.eat_op(&["*", "/", "//", "%"]) {
            let right = self.unary()?;
            let op = match op {
                "*" => BinOp::Mul,
                "/" => BinOp::Div,
                "//" => BinOp::FloorDiv,
                _ => BinOp::Mod,
            };
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, FormulaError> {
        let Some(op) = self.eat_op(&["-", "+"]) else { return self.power() };
        self.enter()?;
        let inner = self.unary()?;
        self.depth -= 1;
        Ok(if op == "-" { Expr::Neg(Box::new(inner)) } else { inner })
    }

    fn power(&mut self) -> Result<Expr, FormulaError> {
        let base = self.atom()?;
        if self.eat_op(&["**"]).is_some() {
            self.enter()?;
            let exponent = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Binary(BinOp::Pow, Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, FormulaError> {
        match self.next().cloned() {
            Some(Token::Number(value)) => Ok(Expr::Number(value)),
            Some(Token::Open) => {
                self.enter()?;
                let inner = self.expr()?;
                self.expect_close()?;
                self.depth -= 1;
                Ok(inner)
            }
            Some(Token::Name(name)) if self.peek() == Some(&Token::Open) => self.call(&name),
            Some(Token::Name(name)) => match Keyword::from_name(&name) {
                Some(keyword) => Ok(Expr::Keyword(keyword)),
                None => Err(FormulaError(format!("Formula contains invalid keyword: {name}"))),
            },
            Some(token) => Err(FormulaError(format!("unexpected {} in formula", token.describe()))),
            None => Err(FormulaError("formula ends too early".to_string())),
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, FormulaError> {
        let func =
            Func::from_name(name).ok_or_else(|| FormulaError(format!("Formula contains invalid function: {name}")))?;
        self.at += 1; // the '('
        self.enter()?;
        let mut args = vec![self.expr()?];
        while self.peek() == Some(&Token::Comma) {
            self.at += 1;
            if args.len() >= MAX_ARGS {
                return Err(FormulaError(format!("{name}() takes at most {MAX_ARGS} arguments")));
            }
            args.push(self.expr()?);
        }
        self.expect_close()?;
        self.depth -= 1;
        let (least, most) = func.arity();
        if args.len() < least || args.len() > most {
            return Err(FormulaError(format!("{name}() takes {least} to {most} arguments, not {}", args.len())));
        }
        Ok(Expr::Call(func, args))
    }

    fn expect_close(&mut self) -> Result<(), FormulaError> {
        match self.next() {
            Some(Token::Close) => Ok(()),
            Some(token) => Err(FormulaError(format!("expected ')' in formula, found {}", token.describe()))),
            None => Err(FormulaError("missing ')' in formula".to_string())),
        }
    }
}

#[cfg(test)]
#[path = "formula_tests.rs"]
mod tests;
