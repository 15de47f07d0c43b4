//! `#PBS` directive extraction from a job script, exactly per pbs-reference section 1:
//! where directives are recognised (the stop rule), how a line is split into words, line
//! continuation, and refusal of CRLF scripts. The words are parsed by qsub's own clap
//! definition in the client; this module only finds and tokenises them.
//!
//! Invariant: never panics, whatever the script (non-ASCII text, a lone backslash at the end,
//! unmatched quotes); every problem is a [`DirectiveError`].

#[cfg(test)]
mod tests;
mod words;

/// One directive line, split into words (quotes removed, escapes applied).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// 1-based line number of the (first physical) line.
    pub line: usize,
    /// 1-based column where the text after the prefix starts.
    pub column: usize,
    /// The text after the prefix, as written (continuations joined).
    pub text: String,
    /// The words, ready for option parsing (`["-l", "nodes=2:ppn=2"]`).
    pub words: Vec<String>,
}

/// Why a script's directives cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirectiveError {
    /// A line ends in CR LF (OpenPBS refuses such scripts); `line` is the first one, 1-based.
    #[error("script contains cr, lf (line {line}): convert it with dos2unix")]
    CrLf { line: usize },
    /// A quote in a directive is not closed; `line` and `column` (1-based) locate the opening
    /// quote, `text` is the directive's text after the prefix.
    #[error("unmatched {quote} in directive at line {line}, column {column}: {text}")]
    UnmatchedQuote { line: usize, column: usize, quote: char, text: String },
}

/// Extracts the directives of `script` for `prefix` (`#PBS`, or `-C`/`PBS_DPREFIX`). An empty
/// prefix disables directive parsing (returns no directives).
///
/// Any CRLF line ending is refused first (even with an empty prefix, as OpenPBS does). Then
/// lines are scanned until the first executable one: a line whose text after leading blanks
/// starts with `prefix` is a directive; lines starting in column 1 with `:` or `#!`, blank
/// lines and lines whose first non-blank character is `#` are skipped; anything else stops
/// the scan. A directive ending in an unescaped backslash (blanks after it allowed) continues
/// on the next physical line, appended verbatim.
pub fn extract(script: &str, prefix: &str) -> Result<Vec<Directive>, DirectiveError> {
    check_crlf(script)?;
    if prefix.is_empty() {
        return Ok(Vec::new());
    }
    let lines: Vec<&str> = script.split('\n').collect();
    let mut directives = Vec::new();
    let mut index = 0;
    while let Some(&line) = lines.get(index) {
        let body = line.trim_start_matches(is_blank);
        if let Some(after) = body.strip_prefix(prefix) {
            let column = char_count(&line[..line.len() - body.len()]) + char_count(prefix) + 1;
            let joined = join_continuations(after, index + 1, column, &lines[index + 1..]);
            let words = words::split(&joined.text).map_err(|unmatched| joined.unmatched(unmatched))?;
            index += 1 + joined.consumed;
            directives.push(Directive { line: joined.segments[0].line, column, text: joined.text, words });
        } else if is_executable(line) {
            break;
        } else {
            index += 1;
        }
    }
    Ok(directives)
}

/// White space as C's `isspace` sees it.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

fn char_count(text: &str) -> usize {
    text.chars().count()
}

/// Refuses the first line that ends in CR LF.
fn check_crlf(script: &str) -> Result<(), DirectiveError> {
    match script.split_inclusive('\n').position(|line| line.ends_with("\r\n")) {
        Some(index) => Err(DirectiveError::CrLf { line: index + 1 }),
        None => Ok(()),
    }
}

/// Whether a non-directive line stops directive scanning (pbs-reference 1.1).
fn is_executable(line: &str) -> bool {
    if line.starts_with(':') || line.starts_with("#!") {
        return false;
    }
    let body = line.trim_start_matches(is_blank);
    !(body.is_empty() || body.starts_with('#'))
}

/// Where a piece of the joined text came from: byte `offset` in the text starts at `line`,
/// 1-based `column`.
#[derive(Debug, Clone, Copy)]
struct Segment {
    offset: usize,
    line: usize,
    column: usize,
}

/// A directive's text with its continuation lines joined.
struct Joined {
    text: String,
    /// At least one: the directive's own line.
    segments: Vec<Segment>,
    /// How many physical lines after the first were joined.
    consumed: usize,
}

/// Joins `first` (the text after the prefix on 1-based line `line`, starting at `column`)
/// with the following lines while each ends in a continuation backslash.
fn join_continuations(first: &str, line: usize, column: usize, following: &[&str]) -> Joined {
    let mut joined = Joined { text: String::new(), segments: vec![Segment { offset: 0, line, column }], consumed: 0 };
    let mut current = first;
    loop {
        let (body, continued) = strip_continuation(current);
        joined.text.push_str(body);
        let next = following.get(joined.consumed).filter(|_| continued);
        let Some(&next) = next else { return joined };
        joined.consumed += 1;
        joined.segments.push(Segment { offset: joined.text.len(), line: line + joined.consumed, column: 1 });
        current = next;
    }
}

/// Splits off a continuation backslash: an odd run of backslashes at the end of the line,
/// blanks after it allowed. Returns the text before that backslash, or the line unchanged.
fn strip_continuation(line: &str) -> (&str, bool) {
    let trimmed = line.trim_end_matches(is_blank);
    let backslashes = trimmed.len() - trimmed.trim_end_matches('\\').len();
    if backslashes % 2 == 1 {
        (&trimmed[..trimmed.len() - 1], true)
    } else {
        (line, false)
    }
}

impl Joined {
    /// The error for an unmatched quote at byte `offset` of the text, with its physical
    /// line and column.
    fn unmatched(&self, unmatched: words::Unmatched) -> DirectiveError {
        let segment = self.segments.iter().rev().find(|segment| segment.offset <= unmatched.offset);
        let segment = segment.copied().unwrap_or(self.segments[0]);
        let before = self.text.get(segment.offset..unmatched.offset).unwrap_or("");
        DirectiveError::UnmatchedQuote {
            line: segment.line,
            column: segment.column + char_count(before),
            quote: unmatched.quote,
            text: self.text.clone(),
        }
    }
}
