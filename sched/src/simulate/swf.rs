//! The Standard Workload Format of the Parallel Workloads Archive
//! (<https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>): header comments starting with
//! `;` (of which `MaxProcs:` and `MaxNodes:` are read), then one job per line of 18
//! whitespace-separated numbers, `-1` for unknown.
//!
//! Owns: reading the text into records and every bound on it (line length, record count,
//! numeric ranges). A line that is not a job record (wrong field count, a field that is not a
//! number, a value out of range) is an error naming its line: a trace that does not parse is
//! not silently half-used. Records that parse but cannot be simulated (no processors, no run
//! time) are the simulator's to skip and count, not the parser's.
//! Must not know: machines, scheduling, metrics.

use thiserror::Error;

/// Longest line accepted, in bytes (real traces use about 100; comments a few hundred).
pub const MAX_LINE: usize = 4096;
/// Most job records read from one trace (the largest archive logs hold a few million).
pub const MAX_RECORDS: usize = 10_000_000;
/// Largest time accepted in any time field, in seconds (about 317 years).
pub const MAX_TIME: i64 = 10_000_000_000;
/// Largest processor count accepted in a record or header (bigger than any machine logged).
pub const MAX_PROCS: i64 = 100_000_000;

/// The 1-based SWF fields the simulator reads.
const JOB_NUMBER: usize = 1;
const SUBMIT: usize = 2;
const RUN_TIME: usize = 4;
const ALLOCATED_PROCS: usize = 5;
const REQUESTED_PROCS: usize = 8;
const REQUESTED_TIME: usize = 9;
const FIELDS: usize = 18;

/// One job record, as written (`-1`: unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// 1-based line number in the trace.
    pub line: usize,
    /// Field 1, the job number.
    pub id: i64,
    /// Field 2, submit time (seconds).
    pub submit: i64,
    /// Field 4, run time (seconds).
    pub run: i64,
    /// Field 8 (requested processors), else field 5 (allocated).
    pub procs: i64,
    /// Field 9, requested time (seconds).
    pub requested: i64,
}

/// A parsed trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    /// `; MaxProcs:` of the header, when given and positive.
    pub max_procs: Option<u64>,
    /// `; MaxNodes:` of the header, when given and positive.
    pub max_nodes: Option<u64>,
    /// The job records in file order.
    pub records: Vec<Record>,
}

/// Why a trace does not parse; every case names its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SwfError {
    #[error("line {line}: longer than {MAX_LINE} bytes")]
    LongLine { line: usize },
    #[error("line {line}: {found} fields, a job record has {FIELDS}")]
    FieldCount { line: usize, found: usize },
    #[error("line {line}: field {field} is not a number: '{text}'")]
    NotANumber { line: usize, field: usize, text: String },
    #[error("line {line}: field {field} is out of range: {value}")]
    OutOfRange { line: usize, field: usize, value: String },
    #[error("line {line}: more than {max} job records")]
    TooManyRecords { line: usize, max: usize },
    #[error("line {line}: bad header value: '{text}'")]
    BadHeader { line: usize, text: String },
}

/// Parses `text`, reading at most `first` job records (all when `None`; lines after the last
/// record read are not looked at). Empty lines are ignored; comment lines other than
/// `MaxProcs:`/`MaxNodes:` are ignored.
pub fn parse(text: &str, first: Option<usize>) -> Result<Trace, SwfError> {
    parse_bounded(text, first, MAX_RECORDS)
}

/// [`parse`] with the record bound as an argument (tests use a small one).
pub(crate) fn parse_bounded(text: &str, first: Option<usize>, max_records: usize) -> Result<Trace, SwfError> {
    let mut trace = Trace::default();
    let wanted = first.unwrap_or(usize::MAX);
    for (index, raw) in text.lines().enumerate() {
        if trace.records.len() >= wanted {
            break;
        }
        let line = index + 1;
        if raw.len() > MAX_LINE {
            return Err(SwfError::LongLine { line });
        }
        let body = raw.trim();
        if body.is_empty() {
            continue;
        }
        if let Some(comment) = body.strip_prefix(';') {
            header(comment, line, &mut trace)?;
            continue;
        }
        if trace.records.len() == max_records {
            return Err(SwfError::TooManyRecords { line, max: max_records });
        }
        trace.records.push(record(body, line)?);
    }
    Ok(trace)
}

/// Reads `MaxProcs:` and `MaxNodes:` from one comment line (without its `;`).
fn header(comment: &str, line: usize, trace: &mut Trace) -> Result<(), SwfError> {
    let Some((key, value)) = comment.split_once(':') else { return Ok(()) };
    let slot = match key.trim() {
        "MaxProcs" => &mut trace.max_procs,
        "MaxNodes" => &mut trace.max_nodes,
        _ => return Ok(()),
    };
    let value = value.trim();
    let bad = || SwfError::BadHeader { line, text: comment.trim().to_string() };
    let number: i64 = value.parse().map_err(|_| bad())?;
    if !(-1..=MAX_PROCS).contains(&number) {
        return Err(bad());
    }
    // 0 and -1 say "unknown"; the other header line may still give the machine.
    *slot = u64::try_from(number).ok().filter(|&count| count > 0);
    Ok(())
}

/// One job record line.
fn record(body: &str, line: usize) -> Result<Record, SwfError> {
    let fields: Vec<&str> = body.split_whitespace().collect();
    if fields.len() != FIELDS {
        return Err(SwfError::FieldCount { line, found: fields.len() });
    }
    for (index, text) in fields.iter().enumerate() {
        number(text, line, index + 1)?;
    }
    let time = |field| bounded(&fields, line, field, MAX_TIME);
    let procs = |field| bounded(&fields, line, field, MAX_PROCS);
    let requested_procs = procs(REQUESTED_PROCS)?;
    Ok(Record {
        line,
        id: bounded(&fields, line, JOB_NUMBER, i64::MAX)?,
        submit: time(SUBMIT)?,
        run: time(RUN_TIME)?,
        procs: if requested_procs > 0 { requested_procs } else { procs(ALLOCATED_PROCS)? },
        requested: time(REQUESTED_TIME)?,
    })
}

/// A field as a number: an integer, or a decimal (some logs write averages such as `12.5`).
fn number(text: &str, line: usize, field: usize) -> Result<f64, SwfError> {
    let not_a_number = || SwfError::NotANumber { line, field, text: text.chars().take(40).collect() };
    if let Ok(integer) = text.parse::<i64>() {
        // Precision does not matter here: the used fields are read again as integers.
        return Ok(integer as f64);
    }
    let value: f64 = text.parse().map_err(|_| not_a_number())?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(not_a_number())
    }
}

/// Field `field` (1-based) as an integer in `-1..=max` (a decimal is truncated toward zero).
fn bounded(fields: &[&str], line: usize, field: usize, max: i64) -> Result<i64, SwfError> {
    let text = fields[field - 1];
    let out_of_range = || SwfError::OutOfRange { line, field, value: text.chars().take(40).collect() };
    let value = match text.parse::<i64>() {
        Ok(value) => value,
        Err(_) => {
            let value = number(text, line, field)?.trunc();
            if value < -1.0 || value > max as f64 {
                return Err(out_of_range());
            }
            value as i64
        }
    };
    if (-1..=max).contains(&value) {
        Ok(value)
    } else {
        Err(out_of_range())
    }
}
