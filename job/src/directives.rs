//! `#PBS` directive extraction from a job script, exactly per pbs-reference section 1:
//! where directives are recognised (the stop rule), how a line is split into words, line
//! continuation, and refusal of CRLF scripts. The words are parsed by qsub's own clap
//! definition in the client; this module only finds and tokenises them.

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
    #[error("script contains cr, lf (line {line}): convert it with dos2unix")]
    CrLf { line: usize },
    #[error("unmatched {quote} in directive at line {line}, column {column}: {text}")]
    UnmatchedQuote { line: usize, column: usize, quote: char, text: String },
}

/// Extracts the directives of `script` for `prefix` (`#PBS`, or `-C`/`PBS_DPREFIX`). An empty
/// prefix disables directive parsing (returns no directives).
pub fn extract(script: &str, prefix: &str) -> Result<Vec<Directive>, DirectiveError> {
    let _ = (script, prefix);
    unimplemented!("filled in by the parser work")
}
