//! Script scanner: splits Tcl script text into commands and words (braces, quotes, backslashes, `$` variables,
//! `[...]` command substitution, `{*}`), producing word parts to substitute later. Never evaluates anything.

use super::MAX_DEPTH;

/// One piece of a word.
#[derive(Debug, Clone)]
pub(crate) enum Part<'a> {
    /// Literal text (backslash sequences already decoded).
    Lit(String),
    /// `$name`, `${name}` or `$name(index)`; the index is itself substituted.
    Var { name: String, index: Option<Vec<Part<'a>>> },
    /// `[script]`: the script text between the brackets.
    Cmd(&'a str),
}

/// One word of a command.
#[derive(Debug)]
pub(crate) struct Word<'a> {
    pub parts: Vec<Part<'a>>,
    pub expand: bool,
}

/// One command: its words and the byte range of its text (without the terminator).
#[derive(Debug)]
pub(crate) struct Command<'a> {
    pub words: Vec<Word<'a>>,
    pub start: usize,
    pub end: usize,
}

/// A syntax error and the start of the command containing it.
#[derive(Debug)]
pub(crate) struct ParseError {
    pub message: String,
    pub start: usize,
    /// Where the error was noticed (the unclosed delimiter or the stray character).
    pub at: usize,
}

/// What ends a run of word parts.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Term {
    /// A bare word: whitespace or a command terminator.
    Word,
    /// A `"` (missing one is an error).
    Quote,
    /// A `)` of an array index.
    Paren,
}

/// Tcl's word-separating whitespace (newline excluded: it ends a command).
pub(crate) fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// A scanner over script text; every position it stops at is a char boundary.
pub(crate) struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    pub pos: usize,
    nested: bool,
    depth: usize,
    err_at: usize,
}

impl<'a> Parser<'a> {
    /// A scanner at the start of `src`.
    pub fn new(src: &'a str) -> Parser<'a> {
        Parser { src, b: src.as_bytes(), pos: 0, nested: false, depth: 0, err_at: 0 }
    }

    /// The byte at the current position.
    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    fn slice(&self, a: usize, b: usize) -> &'a str {
        self.src.get(a..b).unwrap_or("")
    }

    /// The next command, `None` at the end of the text (or at `]` when scanning a bracketed script).
    pub fn next_command(&mut self) -> Result<Option<Command<'a>>, ParseError> {
        self.skip_to_command();
        match self.peek() {
            None => return Ok(None),
            Some(b']') if self.nested => return Ok(None),
            _ => {}
        }
        let start = self.pos;
        let mut words = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None => return Ok(Some(Command { words, start, end: self.pos })),
                Some(b'\n' | b';') => {
                    let end = self.pos;
                    self.pos += 1;
                    return Ok(Some(Command { words, start, end }));
                }
                Some(b']') if self.nested => return Ok(Some(Command { words, start, end: self.pos })),
                Some(_) => match self.parse_word() {
                    Ok(w) => words.push(w),
                    Err(message) => return Err(ParseError { message, start, at: self.err_at }),
                },
            }
        }
    }

    fn skip_to_command(&mut self) {
        loop {
            self.skip_space();
            match self.peek() {
                Some(b'\n' | b';') => self.pos += 1,
                Some(b'#') => self.skip_comment(),
                _ => return,
            }
        }
    }

    /// Skips spaces, tabs and backslash-newlines.
    pub fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if is_space(c) {
                self.pos += 1;
            } else if c == b'\\' && self.at(self.pos + 1) == Some(b'\n') {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == b'\\' {
                if self.peek().is_some() {
                    self.pos += 1;
                }
            } else if c == b'\n' {
                return;
            }
        }
    }

    fn parse_word(&mut self) -> Result<Word<'a>, String> {
        let mut expand = false;
        if self.b.get(self.pos..self.pos + 3) == Some(b"{*}") {
            let next = self.at(self.pos + 3);
            if next.is_some_and(|c| !is_space(c) && c != b'\n' && c != b';' && !(c == b']' && self.nested)) {
                expand = true;
                self.pos += 3;
            }
        }
        let parts = match self.peek() {
            Some(b'{') => {
                let s = self.parse_braced()?;
                self.check_word_end("close-brace")?;
                vec![Part::Lit(s)]
            }
            Some(b'"') => {
                self.err_at = self.pos;
                self.pos += 1;
                let p = self.parse_parts(Term::Quote)?;
                self.check_word_end("close-quote")?;
                p
            }
            _ => self.parse_parts(Term::Word)?,
        };
        Ok(Word { parts, expand })
    }

    fn fail(&mut self, at: usize, message: &str) -> String {
        self.err_at = at;
        message.to_string()
    }

    fn check_word_end(&mut self, what: &str) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(c) if is_space(c) || c == b'\n' || c == b';' => Ok(()),
            Some(b']') if self.nested => Ok(()),
            Some(b'\\') if self.at(self.pos + 1) == Some(b'\n') => Ok(()),
            _ => Err(self.fail(self.pos, &format!("extra characters after {what}"))),
        }
    }

    /// Scans a `{...}` word at the current `{`, returning its content (backslash-newline becomes a space).
    pub fn parse_braced(&mut self) -> Result<String, String> {
        let open = self.pos;
        self.pos += 1;
        let mut depth = 1usize;
        let mut out = String::new();
        let mut seg = self.pos;
        loop {
            match self.peek() {
                None => return Err(self.fail(open, "missing close-brace")),
                Some(b'{') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}') => {
                    depth -= 1;
                    if depth == 0 {
                        out.push_str(self.slice(seg, self.pos));
                        self.pos += 1;
                        return Ok(out);
                    }
                    self.pos += 1;
                }
                Some(b'\\') if self.at(self.pos + 1) == Some(b'\n') => {
                    out.push_str(self.slice(seg, self.pos));
                    self.pos += 2;
                    while self.peek().is_some_and(|c| c == b' ' || c == b'\t') {
                        self.pos += 1;
                    }
                    out.push(' ');
                    seg = self.pos;
                }
                Some(b'\\') => self.pos += if self.at(self.pos + 1).is_some() { 2 } else { 1 },
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Scans word parts up to the terminator `term` (consuming a closing `"` or `)`).
    pub fn parse_parts(&mut self, term: Term) -> Result<Vec<Part<'a>>, String> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut seg = self.pos;
        let open = self.pos.saturating_sub(1);
        loop {
            let Some(c) = self.peek() else {
                match term {
                    Term::Quote => return Err(self.fail(open, "missing \"")),
                    Term::Paren => return Err(self.fail(open, "missing )")),
                    Term::Word => break,
                }
            };
            let ends = match term {
                Term::Word => {
                    is_space(c)
                        || c == b'\n'
                        || c == b';'
                        || (c == b']' && self.nested)
                        || (c == b'\\' && self.at(self.pos + 1) == Some(b'\n'))
                }
                Term::Quote => c == b'"',
                Term::Paren => c == b')',
            };
            if ends {
                if term == Term::Quote || term == Term::Paren {
                    lit.push_str(self.slice(seg, self.pos));
                    self.pos += 1;
                    seg = self.pos;
                }
                break;
            }
            match c {
                b'$' => {
                    lit.push_str(self.slice(seg, self.pos));
                    match self.parse_var()? {
                        Some(part) => {
                            flush(&mut parts, &mut lit);
                            parts.push(part);
                        }
                        None => lit.push('$'),
                    }
                    seg = self.pos;
                }
                b'[' => {
                    lit.push_str(self.slice(seg, self.pos));
                    let s = self.parse_bracket()?;
                    flush(&mut parts, &mut lit);
                    parts.push(Part::Cmd(s));
                    seg = self.pos;
                }
                b'\\' => {
                    lit.push_str(self.slice(seg, self.pos));
                    let (s, np) = backslash(self.src, self.pos);
                    lit.push_str(&s);
                    self.pos = np;
                    seg = self.pos;
                }
                _ => self.pos += 1,
            }
        }
        lit.push_str(self.slice(seg, self.pos.min(self.b.len())));
        if !lit.is_empty() || parts.is_empty() {
            parts.push(Part::Lit(lit));
        }
        Ok(parts)
    }

    /// Scans a variable reference at `$`; `None` (with `$` consumed) if no name follows.
    pub fn parse_var(&mut self) -> Result<Option<Part<'a>>, String> {
        self.pos += 1;
        if self.peek() == Some(b'{') {
            let start = self.pos + 1;
            let Some(len) = self.b.get(start..).and_then(|r| r.iter().position(|&c| c == b'}')) else {
                return Err(self.fail(start - 1, "missing close-brace for variable name"));
            };
            self.pos = start + len + 1;
            return Ok(Some(Part::Var { name: self.slice(start, start + len).to_string(), index: None }));
        }
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == b'_' {
                self.pos += 1;
            } else if c == b':' && self.at(self.pos + 1) == Some(b':') {
                self.pos += 2;
                while self.peek() == Some(b':') {
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
        if self.pos == start {
            return Ok(None);
        }
        let name = self.slice(start, self.pos).to_string();
        if self.peek() == Some(b'(') {
            self.pos += 1;
            let index = self.parse_parts(Term::Paren)?;
            return Ok(Some(Part::Var { name, index: Some(index) }));
        }
        Ok(Some(Part::Var { name, index: None }))
    }

    /// Scans a `[script]` at `[`, returning the script text.
    pub fn parse_bracket(&mut self) -> Result<&'a str, String> {
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(self.pos, "too many nested evaluations (infinite loop?)"));
        }
        let start = self.pos + 1;
        let mut sub = Parser { src: self.src, b: self.b, pos: start, nested: true, depth: self.depth + 1, err_at: 0 };
        loop {
            match sub.next_command() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => return Err(self.fail(e.at, &e.message)),
            }
        }
        if sub.peek() != Some(b']') {
            return Err(self.fail(start - 1, "missing close-bracket"));
        }
        self.pos = sub.pos + 1;
        Ok(self.slice(start, sub.pos))
    }
}

fn flush<'a>(parts: &mut Vec<Part<'a>>, lit: &mut String) {
    if !lit.is_empty() {
        parts.push(Part::Lit(std::mem::take(lit)));
    }
}

/// Decodes the backslash sequence at `pos` (a `\`), returning the text and the position after it.
pub(crate) fn backslash(src: &str, pos: usize) -> (String, usize) {
    let b = src.as_bytes();
    let Some(&c) = b.get(pos + 1) else { return ("\\".into(), pos + 1) };
    let one = |ch: char| (ch.to_string(), pos + 2);
    match c {
        b'a' => one('\x07'),
        b'b' => one('\x08'),
        b'f' => one('\x0c'),
        b'n' => one('\n'),
        b'r' => one('\r'),
        b't' => one('\t'),
        b'v' => one('\x0b'),
        b'\n' => {
            let mut p = pos + 2;
            while b.get(p).is_some_and(|&c| c == b' ' || c == b'\t') {
                p += 1;
            }
            (" ".into(), p)
        }
        b'x' => radix_escape(b, pos + 2, 16, 2, 'x'),
        b'u' => radix_escape(b, pos + 2, 16, 4, 'u'),
        b'U' => radix_escape(b, pos + 2, 16, 8, 'U'),
        b'0'..=b'7' => {
            let (s, p) = radix_escape(b, pos + 1, 8, 3, '0');
            let v = s.chars().next().map_or(0, |c| c as u32) & 0xff;
            (char::from_u32(v).unwrap_or('\u{fffd}').to_string(), p)
        }
        _ => {
            let ch = src.get(pos + 1..).and_then(|s| s.chars().next()).unwrap_or('\\');
            (ch.to_string(), pos + 1 + ch.len_utf8())
        }
    }
}

fn radix_escape(b: &[u8], start: usize, radix: u32, max: usize, letter: char) -> (String, usize) {
    let mut v: u32 = 0;
    let mut p = start;
    while p < start + max {
        let Some(d) = b.get(p).and_then(|&c| (c as char).to_digit(radix)) else { break };
        v = v * radix + d;
        p += 1;
    }
    if p == start {
        return (letter.to_string(), start);
    }
    (char::from_u32(v).unwrap_or('\u{fffd}').to_string(), p)
}
