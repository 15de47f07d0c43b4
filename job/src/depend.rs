//! The `depend` attribute (`qsub -W depend=...`, pbs-reference 2.4): its grammar
//! `type:jobid[:jobid...][,type:jobid...]`, the typed form kept on a `JobSpec`, and the text
//! form `qstat -f` shows. Accepts OpenPBS's and TORQUE's types (TORQUE's `*array` forms name
//! an array as a whole and mean the same as the plain type on the array parent `123[]`).
//!
//! Pure syntax: whether the named jobs exist, and what their ends mean for a job, is the
//! server's business (`server/src/state/depend.rs`). Job ids stay text here (`12`, `12.head`,
//! `12[]`); the server normalises them against its own name.

use crate::id::{ArrayPart, JobId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A dependency type that names other jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DependKind {
    /// `after`: may start once the named jobs have started.
    After,
    /// `afterok`: may start once the named jobs have ended with exit status 0.
    AfterOk,
    /// `afternotok`: may start once the named jobs have ended with a non-zero status.
    AfterNotOk,
    /// `afterany`: may start once the named jobs have ended, however.
    AfterAny,
    /// `before`: the named jobs may start once this one has started.
    Before,
    /// `beforeok`: the named jobs may start once this one has ended with status 0.
    BeforeOk,
    /// `beforenotok`: the named jobs may start once this one has failed.
    BeforeNotOk,
    /// `beforeany`: the named jobs may start once this one has ended.
    BeforeAny,
}

impl DependKind {
    /// Every kind, in OpenPBS's table order.
    pub const ALL: [DependKind; 8] = [
        DependKind::After,
        DependKind::AfterOk,
        DependKind::AfterNotOk,
        DependKind::AfterAny,
        DependKind::Before,
        DependKind::BeforeOk,
        DependKind::BeforeNotOk,
        DependKind::BeforeAny,
    ];

    /// The name as PBS writes it.
    pub fn name(self) -> &'static str {
        match self {
            DependKind::After => "after",
            DependKind::AfterOk => "afterok",
            DependKind::AfterNotOk => "afternotok",
            DependKind::AfterAny => "afterany",
            DependKind::Before => "before",
            DependKind::BeforeOk => "beforeok",
            DependKind::BeforeNotOk => "beforenotok",
            DependKind::BeforeAny => "beforeany",
        }
    }

    /// Whether this kind waits on the named jobs (`after*`) rather than gating them.
    pub fn is_after(self) -> bool {
        matches!(self, DependKind::After | DependKind::AfterOk | DependKind::AfterNotOk | DependKind::AfterAny)
    }

    /// The mirror image: `beforeok` on A naming B is `afterok` on B naming A, and back.
    pub fn mirror(self) -> DependKind {
        match self {
            DependKind::After => DependKind::Before,
            DependKind::AfterOk => DependKind::BeforeOk,
            DependKind::AfterNotOk => DependKind::BeforeNotOk,
            DependKind::AfterAny => DependKind::BeforeAny,
            DependKind::Before => DependKind::After,
            DependKind::BeforeOk => DependKind::AfterOk,
            DependKind::BeforeNotOk => DependKind::AfterNotOk,
            DependKind::BeforeAny => DependKind::AfterAny,
        }
    }

    fn from_name(name: &str) -> Option<(DependKind, bool)> {
        let plain = DependKind::ALL.into_iter().find(|kind| kind.name() == name);
        if let Some(kind) = plain {
            return Some((kind, false));
        }
        // TORQUE's array forms: the same condition on an array as a whole.
        let array = match name {
            "afterstartarray" => DependKind::After,
            "afterokarray" => DependKind::AfterOk,
            "afternotokarray" => DependKind::AfterNotOk,
            "afteranyarray" => DependKind::AfterAny,
            "beforestartarray" => DependKind::Before,
            "beforeokarray" => DependKind::BeforeOk,
            "beforenotokarray" => DependKind::BeforeNotOk,
            "beforeanyarray" => DependKind::BeforeAny,
            _ => return None,
        };
        Some((array, true))
    }
}

/// One item of a `depend` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DependItem {
    /// `kind:job[:job...]`, job ids as text (normalised by the server at submit).
    Jobs { kind: DependKind, jobs: Vec<String> },
    /// `on:N`: held until N other jobs have named this one in a `before*` dependency.
    On(u32),
}

/// Why a `depend` value is not valid. The texts name the offending part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DependError {
    #[error("empty dependency list")]
    Empty,
    #[error("empty item in the dependency list (two commas in a row, or a comma at an end)")]
    EmptyItem,
    #[error("{0:?} is not type:jobid[:jobid...]")]
    NoColon(String),
    #[error(
        "unknown dependency type {0:?} (expected after, afterok, afternotok, afterany, before, beforeok, \
         beforenotok, beforeany or on)"
    )]
    UnknownType(String),
    #[error("dependency type {0} is not supported by minipbs")]
    Unsupported(String),
    #[error("{0}: no job id after the colon")]
    NoJobs(String),
    #[error("{kind}: illegally formed job identifier {id:?}")]
    BadJobId { kind: String, id: String },
    #[error("on: the count must be a whole number of at least 1, not {0:?}")]
    BadCount(String),
}

/// Parses a `depend` value: `type:jobid[:jobid...][,type:jobid...]` or `on:N`. Blanks around
/// items are ignored; a job id may carry OpenPBS's `@server` suffix (dropped: the id's own
/// server part decides). The `*array` forms turn a bare `12` into the array `12[]`.
pub fn parse(text: &str) -> Result<Vec<DependItem>, DependError> {
    if text.trim().is_empty() {
        return Err(DependError::Empty);
    }
    let mut items: Vec<DependItem> = Vec::new();
    for raw in text.split(',') {
        let item = parse_item(raw.trim())?;
        merge(&mut items, item);
    }
    Ok(items)
}

/// Adds `item` to a list, joining the job lists of items of the same kind (as OpenPBS keeps
/// one entry per type) and replacing an earlier `on`.
pub fn merge(items: &mut Vec<DependItem>, item: DependItem) {
    match item {
        DependItem::On(count) => {
            items.retain(|existing| !matches!(existing, DependItem::On(_)));
            items.push(DependItem::On(count));
        }
        DependItem::Jobs { kind, jobs } => {
            let same = items.iter_mut().find_map(|existing| match existing {
                DependItem::Jobs { kind: existing_kind, jobs } if *existing_kind == kind => Some(jobs),
                _ => None,
            });
            match same {
                Some(existing) => {
                    for job in jobs {
                        if !existing.contains(&job) {
                            existing.push(job);
                        }
                    }
                }
                None => items.push(DependItem::Jobs { kind, jobs }),
            }
        }
    }
}

fn parse_item(item: &str) -> Result<DependItem, DependError> {
    if item.is_empty() {
        return Err(DependError::EmptyItem);
    }
    let Some((name, rest)) = item.split_once(':') else {
        return Err(DependError::NoColon(item.to_string()));
    };
    if name == "on" {
        return match rest.parse::<u32>() {
            Ok(count) if count >= 1 && rest.bytes().all(|b| b.is_ascii_digit()) => Ok(DependItem::On(count)),
            _ => Err(DependError::BadCount(rest.to_string())),
        };
    }
    let Some((kind, array_form)) = DependKind::from_name(name) else {
        if ["runone", "syncwith", "synccount"].contains(&name) {
            return Err(DependError::Unsupported(name.to_string()));
        }
        return Err(DependError::UnknownType(name.to_string()));
    };
    if rest.is_empty() {
        return Err(DependError::NoJobs(name.to_string()));
    }
    let mut jobs = Vec::new();
    for word in rest.split(':') {
        let id = job_word(name, word, array_form)?;
        if !jobs.contains(&id) {
            jobs.push(id);
        }
    }
    Ok(DependItem::Jobs { kind, jobs })
}

/// Checks one job id of a list (syntax only) and returns it without an `@server` suffix.
fn job_word(kind: &str, word: &str, array_form: bool) -> Result<String, DependError> {
    let bad = || DependError::BadJobId { kind: kind.to_string(), id: word.to_string() };
    let id = match word.split_once('@') {
        Some((id, server)) if !server.is_empty() && !server.contains(char::is_whitespace) => id,
        Some(_) => return Err(bad()),
        None => word,
    };
    // Any server name will do to check the form; the server normalises the id later.
    let parsed = JobId::parse(id, "server").map_err(|_| bad())?;
    if id.trim() != id {
        return Err(bad());
    }
    if array_form && parsed.array.is_none() {
        // `afterokarray:12` names the array 12[].
        let (seq, server) = match id.split_once('.') {
            Some((seq, server)) => (seq, Some(server)),
            None => (id, None),
        };
        return Ok(match server {
            Some(server) => format!("{seq}[].{server}"),
            None => format!("{seq}[]"),
        });
    }
    if array_form && matches!(parsed.array, Some(ArrayPart::Sub(_))) {
        return Err(bad());
    }
    Ok(id.to_string())
}

/// Writes a list in PBS text form, job ids as stored: `afterok:12.head:13.head,on:2`.
pub struct Display<'a>(pub &'a [DependItem]);

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, item) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            match item {
                DependItem::On(count) => write!(f, "on:{count}")?,
                DependItem::Jobs { kind, jobs } => {
                    f.write_str(kind.name())?;
                    for job in jobs {
                        write!(f, ":{job}")?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
