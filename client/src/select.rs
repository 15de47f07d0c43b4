//! qselect's criteria and the predicate that applies them to a job's status record, with
//! OpenPBS's comparison rules (`src/server/req_select.c`): a comparison gives less, equal or
//! greater, and the operator (`.eq.`, `.ne.`, `.lt.`, `.le.`, `.gt.`, `.ge.`) accepts some of
//! those; a resource the job does not have compares as less; hold lists and names compare
//! only equal or not; `-s` matches when the job's state letter is in the list.
//!
//! Owns: parsing criteria values and matching. Must not: talk to the server, print, read the
//! clock (callers pass `now` for dates).

use job::duration::parse_duration;
use job::size::Size;
use proto::JobStatus;
use std::cmp::Ordering;

/// A comparison operator (`.eq.` etc.; `eq` when none is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    /// Whether a comparison result satisfies the operator.
    pub fn accepts(self, ordering: Ordering) -> bool {
        match ordering {
            Ordering::Less => matches!(self, Op::Ne | Op::Lt | Op::Le),
            Ordering::Equal => matches!(self, Op::Eq | Op::Ge | Op::Le),
            Ordering::Greater => matches!(self, Op::Ne | Op::Gt | Op::Ge),
        }
    }

    fn from_word(word: &str) -> Option<Op> {
        Some(match word {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "lt" => Op::Lt,
            "le" => Op::Le,
            "gt" => Op::Gt,
            "ge" => Op::Ge,
            _ => return None,
        })
    }
}

/// Splits an optional leading `.op.` off a value (`.gt.5` -> (Gt, "5"); `5` -> (Eq, "5")). An
/// unknown operator word is kept as part of the value, as OpenPBS's `check_op` does.
pub fn split_op(text: &str) -> (Op, &str) {
    if let Some(rest) = text.strip_prefix('.') {
        if let (Some(word), Some(value)) = (rest.get(..2), rest.get(3..)) {
            if rest.as_bytes().get(2) == Some(&b'.') {
                if let Some(op) = Op::from_word(word) {
                    return (op, value);
                }
            }
        }
    }
    (Op::Eq, text)
}

/// One criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Test {
    /// A time attribute (`Execution_Time`, `ctime`, ...) against an epoch; unset counts as 0.
    Time { attr: &'static str, op: Op, epoch: i64 },
    /// `-A`, `-N`, `-P`: a string attribute, equal or not.
    Text { attr: &'static str, op: Op, value: String },
    /// `-c`: the checkpoint attribute, in OpenPBS's order `u < c < c=N < s < n`.
    Checkpoint { op: Op, value: String },
    /// `-h`: the hold set, equal or not (`n` is the empty set).
    Hold { op: Op, holds: String },
    /// `-l`: one resource of `Resource_List`.
    Resource { name: String, op: Op, value: String },
    /// `-p`: the priority.
    Priority { op: Op, value: i64 },
    /// `-r y|n`.
    Rerunable(bool),
    /// `-s`: the state letter is (or with `.ne.`, is not) one of these.
    States { op: Op, letters: String },
    /// `-u`: the owner is one of these (`user` or `user@host`).
    Users(Vec<String>),
    /// `-J`: array jobs only.
    Array,
}

/// Everything qselect asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub tests: Vec<Test>,
    /// `-x` / `-H`: finished jobs are candidates too.
    pub history: bool,
    /// `-T` / `-t`-style subjob selection: subjobs instead of their array parents.
    pub subjobs: bool,
}

impl Selection {
    /// Whether `job` is selected.
    pub fn matches(&self, job: &JobStatus) -> bool {
        let state = job.get("job_state").unwrap_or("");
        if !self.history && matches!(state, "F" | "M") {
            return false;
        }
        let is_parent = job.id.contains("[]");
        let is_subjob = !is_parent && job.id.contains('[');
        if (self.subjobs && is_parent) || (!self.subjobs && is_subjob) {
            return false;
        }
        self.tests.iter().all(|test| test_matches(test, job, is_parent))
    }
}

fn test_matches(test: &Test, job: &JobStatus, is_parent: bool) -> bool {
    match test {
        Test::Time { attr, op, epoch } => {
            let value: i64 = job.get(attr).and_then(|text| text.parse().ok()).unwrap_or(0);
            op.accepts(value.cmp(epoch))
        }
        Test::Text { attr, op, value } => op.accepts(equal_or_not(job.get(attr) == Some(value.as_str()))),
        Test::Checkpoint { op, value } => {
            op.accepts(checkpoint_order(job.get("Checkpoint").unwrap_or("")).cmp(&checkpoint_order(value)))
        }
        Test::Hold { op, holds } => {
            let current = job.get("Hold_Types").unwrap_or("n");
            op.accepts(equal_or_not(hold_set(current) == hold_set(holds)))
        }
        Test::Resource { name, op, value } => match job.get(&format!("Resource_List.{name}")) {
            Some(have) => op.accepts(compare_resource(name, have, value)),
            None => op.accepts(Ordering::Less),
        },
        Test::Priority { op, value } => {
            let have: i64 = job.get("Priority").and_then(|text| text.parse().ok()).unwrap_or(0);
            op.accepts(have.cmp(value))
        }
        Test::Rerunable(wanted) => (job.get("Rerunable") == Some("True")) == *wanted,
        Test::States { op, letters } => {
            let state = job.get("job_state").unwrap_or("");
            op.accepts(equal_or_not(!state.is_empty() && letters.contains(state)))
        }
        Test::Users(users) => {
            let owner = job.get("Job_Owner").unwrap_or("");
            let (user, host) = owner.split_once('@').unwrap_or((owner, ""));
            users.iter().any(|entry| match entry.split_once('@') {
                Some((name, want_host)) => name == user && host_matches(want_host, host),
                None => entry == user,
            })
        }
        Test::Array => is_parent,
    }
}

fn equal_or_not(equal: bool) -> Ordering {
    if equal {
        Ordering::Equal
    } else {
        Ordering::Greater
    }
}

/// `host` matches `pattern` (`*.example.com` matches any host of that domain).
fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => host.ends_with(suffix),
        None => pattern == host,
    }
}

/// The holds of a list as a sorted set; `n` is empty.
fn hold_set(list: &str) -> Vec<char> {
    let mut set: Vec<char> = list.chars().filter(|c| "uosp".contains(*c)).collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// Whether `list` is a hold list (`u o s p n`).
pub fn valid_holds(list: &str) -> bool {
    !list.is_empty() && list.chars().all(|c| "uospn".contains(c))
}

/// OpenPBS's checkpoint order (`order_chkpnt`).
fn checkpoint_order(value: &str) -> u8 {
    match value.as_bytes() {
        [b'n', ..] => 5,
        [b's', ..] => 4,
        [b'c', _, ..] => 3,
        [b'c'] => 2,
        [b'u', ..] => 1,
        _ => 0,
    }
}

/// How values of a resource compare: sizes by bytes, durations by seconds, integers as
/// numbers, anything else as text.
fn compare_resource(name: &str, have: &str, want: &str) -> Ordering {
    match resource_kind(name) {
        Kind::Size => match (Size::parse(have), Size::parse(want)) {
            (Ok(have), Ok(want)) => have.bytes().cmp(&want.bytes()),
            _ => have.cmp(want),
        },
        Kind::Duration => match (parse_duration(have), parse_duration(want)) {
            (Ok(have), Ok(want)) => have.cmp(&want),
            _ => have.cmp(want),
        },
        Kind::Number => match (have.parse::<i64>(), want.parse::<i64>()) {
            (Ok(have), Ok(want)) => have.cmp(&want),
            _ => have.cmp(want),
        },
        Kind::Text => have.cmp(want),
    }
}

enum Kind {
    Size,
    Duration,
    Number,
    Text,
}

fn resource_kind(name: &str) -> Kind {
    match name {
        "mem" | "vmem" | "pmem" | "pvmem" | "file" => Kind::Size,
        "walltime" | "cput" => Kind::Duration,
        "ncpus" | "ngpus" | "nodect" | "procs" | "mpiprocs" => Kind::Number,
        _ => Kind::Text,
    }
}

/// Checks a `-l` value for its resource: `Err` when a size, duration or count does not parse.
pub fn check_resource_value(name: &str, value: &str) -> Result<(), String> {
    let ok = match resource_kind(name) {
        Kind::Size => Size::parse(value).is_ok(),
        Kind::Duration => parse_duration(value).is_ok(),
        Kind::Number => value.parse::<i64>().is_ok(),
        Kind::Text => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{name}={value}"))
    }
}

/// Why a `-l` list is malformed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceListError {
    /// Not `name.op.value[,...]`: OpenPBS's `illegal -l value`.
    Malformed,
    /// A name that is not a resource.
    Unknown(String),
}

/// Parses `-l name.op.value[,name.op.value...]` (the operator is required, as in OpenPBS).
pub fn parse_resource_list(text: &str, known: &[&str]) -> Result<Vec<Test>, ResourceListError> {
    let mut tests = Vec::new();
    for item in text.split(',') {
        let (name, rest) = item.split_once('.').ok_or(ResourceListError::Malformed)?;
        let (word, value) = rest.split_once('.').ok_or(ResourceListError::Malformed)?;
        let op = Op::from_word(word).ok_or(ResourceListError::Malformed)?;
        if name.is_empty() || value.is_empty() {
            return Err(ResourceListError::Malformed);
        }
        if !known.contains(&name) {
            return Err(ResourceListError::Unknown(name.to_string()));
        }
        tests.push(Test::Resource { name: name.to_string(), op, value: value.to_string() });
    }
    Ok(tests)
}

/// Parses OpenPBS's date form `[[[[CC]YY]MM]DD]hhmm[.SS]` into the local-time pieces it
/// names; `None` if malformed. The caller fills the missing pieces from now.
pub fn parse_date(text: &str) -> Option<DateParts> {
    let (main, seconds) = match text.split_once('.') {
        Some((main, seconds)) if seconds.len() == 2 => (main, Some(seconds.parse::<u32>().ok()?)),
        Some(_) => return None,
        None => (text, None),
    };
    if !main.bytes().all(|b| b.is_ascii_digit()) || !matches!(main.len(), 4 | 6 | 8 | 10 | 12) {
        return None;
    }
    let pair = |from_end: usize| -> Option<u32> {
        let end = main.len().checked_sub(from_end)?;
        main.get(end.checked_sub(2)?..end)?.parse().ok()
    };
    let mut parts = DateParts {
        minute: pair(0)?,
        hour: pair(2)?,
        day: if main.len() >= 6 { pair(4) } else { None },
        month: if main.len() >= 8 { pair(6) } else { None },
        year: None,
        second: seconds.unwrap_or(0),
    };
    if main.len() >= 10 {
        let year = pair(8)? as i32;
        let century = if main.len() == 12 {
            pair(10)? as i32
        } else if year < 69 {
            20
        } else {
            19
        };
        parts.year = Some(century * 100 + year);
    }
    let valid = parts.hour < 24
        && parts.minute < 60
        && parts.second < 61
        && parts.day.is_none_or(|day| (1..=31).contains(&day))
        && parts.month.is_none_or(|month| (1..=12).contains(&month));
    valid.then_some(parts)
}

/// The pieces of a date the user gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateParts {
    pub year: Option<i32>,
    pub month: Option<u32>,
    pub day: Option<u32>,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
