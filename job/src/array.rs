//! Job array ranges (pbs-reference 2.2): OpenPBS `-J X-Y[:Z][%max]` and TORQUE
//! `-t 1-10,15,20-30%2`, expanded to a sorted list of distinct subjob indices.
//!
//! Owns the grammar, its limits (at most [`MAX_ARRAY_SIZE`] subjobs, as OpenPBS's
//! `max_array_size` default) and the text forms `qstat -f` shows. Pure: the server parses the
//! stored text again with [`ArraySpec::expand`] and never trusts the client's expansion.

use serde::{Deserialize, Serialize};

/// Most subjobs one array may have (OpenPBS `max_array_size` default).
pub const MAX_ARRAY_SIZE: usize = 10_000;

/// The array a job was submitted as: the index text as given (without the slot limit) and the
/// slot limit (`%max`: at most this many subjobs run at once).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArraySpec {
    /// `1-10:2` (OpenPBS) or `1-10,15,20-30` (TORQUE); `array_indices_submitted`.
    pub indices: String,
    /// `%max`; `None` = no limit.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Why an array range is refused. The texts are what qsub and the server print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArrayError {
    #[error("array range is empty")]
    Empty,
    #[error("{0:?} is not an array range: expected {1}")]
    Garbage(String, &'static str),
    #[error("range {0:?} is reversed: its end is below its start")]
    Reversed(String),
    #[error("range {0:?} has a step of 0")]
    ZeroStep(String),
    #[error("index {0:?} is too large")]
    TooLarge(String),
    #[error("the array would have {0} subjobs, more than the maximum of {MAX_ARRAY_SIZE}")]
    TooMany(u64),
    #[error("slot limit {0:?} is not a number of at least 1")]
    BadLimit(String),
}

const PBS_FORM: &str = "X-Y[:Z][%max], e.g. 1-10:2%3";
const TORQUE_FORM: &str = "numbers and ranges separated by commas, e.g. 1-10,15%2";

/// Parses OpenPBS `-J X-Y[:Z][%max]`.
pub fn parse_openpbs(text: &str) -> Result<ArraySpec, ArrayError> {
    let (indices, limit) = split_limit(text)?;
    let garbage = || ArrayError::Garbage(indices.to_string(), PBS_FORM);
    if indices.contains(',') || !indices.contains('-') {
        return Err(garbage());
    }
    let spec = ArraySpec { indices: indices.to_string(), limit };
    spec.expand().map_err(|error| match error {
        ArrayError::Garbage(..) => garbage(),
        other => other,
    })?;
    Ok(spec)
}

/// Parses TORQUE `-t 1-10,15,20-30[%limit]` (no steps).
pub fn parse_torque(text: &str) -> Result<ArraySpec, ArrayError> {
    let (indices, limit) = split_limit(text)?;
    if indices.contains(':') {
        return Err(ArrayError::Garbage(indices.to_string(), TORQUE_FORM));
    }
    let spec = ArraySpec { indices: indices.to_string(), limit };
    spec.expand()?;
    Ok(spec)
}

/// `indices[%limit]`.
fn split_limit(text: &str) -> Result<(&str, Option<u32>), ArrayError> {
    let text = text.trim();
    match text.split_once('%') {
        None => Ok((text, None)),
        Some((indices, limit)) => {
            let value = parse_number(limit)
                .filter(|value| *value >= 1)
                .ok_or_else(|| ArrayError::BadLimit(limit.to_string()))?;
            Ok((indices, Some(value)))
        }
    }
}

fn parse_number(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<u32>().ok()
}

/// One comma-separated item: `N`, `X-Y` or `X-Y:Z`, as (start, end, step).
fn parse_item(item: &str) -> Result<(u32, u32, u32), ArrayError> {
    let garbage = || ArrayError::Garbage(item.to_string(), TORQUE_FORM);
    let number = |text: &str| -> Result<u32, ArrayError> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(garbage());
        }
        // Subjob keys keep index + 1 in 32 bits.
        parse_number(text).filter(|value| *value < u32::MAX).ok_or_else(|| ArrayError::TooLarge(text.to_string()))
    };
    let (range, step) = match item.split_once(':') {
        Some((range, step)) => (range, Some(number(step)?)),
        None => (item, None),
    };
    let (start, end) = match range.split_once('-') {
        Some((start, end)) => (number(start)?, number(end)?),
        None if step.is_none() => {
            let value = number(range)?;
            (value, value)
        }
        None => return Err(garbage()),
    };
    if end < start {
        return Err(ArrayError::Reversed(item.to_string()));
    }
    match step {
        Some(0) => Err(ArrayError::ZeroStep(item.to_string())),
        step => Ok((start, end, step.unwrap_or(1))),
    }
}

impl ArraySpec {
    /// How many indices the text names (overlaps counted twice), read item by item without
    /// allocating: refuses what [`Self::expand`] refuses, and stops at the first item past
    /// [`MAX_ARRAY_SIZE`], so a long text costs no more than reading it.
    pub fn count(&self) -> Result<u64, ArrayError> {
        if self.limit == Some(0) {
            return Err(ArrayError::BadLimit("0".to_string()));
        }
        let text = self.indices.trim();
        if text.is_empty() {
            return Err(ArrayError::Empty);
        }
        let mut count = 0u64;
        for item in text.split(',') {
            let (start, end, step) = parse_item(item.trim())?;
            count += u64::from((end - start) / step) + 1;
            if count > MAX_ARRAY_SIZE as u64 {
                return Err(ArrayError::TooMany(count));
            }
        }
        Ok(count)
    }

    /// The subjob indices, sorted and without duplicates. Refuses an empty text, garbage,
    /// reversed ranges, zero steps, a zero slot limit and more than [`MAX_ARRAY_SIZE`] subjobs
    /// (counted before anything is allocated: [`Self::count`]).
    pub fn expand(&self) -> Result<Vec<u32>, ArrayError> {
        let count = self.count()?;
        let items = self.indices.trim().split(',').filter_map(|item| parse_item(item.trim()).ok());
        let mut indices = Vec::with_capacity(count as usize);
        indices.extend(items.flat_map(|(start, end, step)| (start..=end).step_by(step as usize)));
        indices.sort_unstable();
        indices.dedup();
        Ok(indices)
    }

    /// The step of a single stepped range (`1-9:2` -> 2), else 1: how `qstat -f` groups the
    /// remaining indices.
    pub fn step(&self) -> u32 {
        match self.indices.split_once(':') {
            Some((_, step)) if !self.indices.contains(',') => parse_number(step.trim()).unwrap_or(1).max(1),
            _ => 1,
        }
    }
}

/// Sorted indices in range form (`array_indices_remaining`): runs spaced by `step` become
/// `X-Y` (`X-Y:step` when `step` > 1), runs joined by commas: `1-3,7,9-13:2`.
pub fn format_indices(indices: &[u32], step: u32) -> String {
    let step = step.max(1);
    let mut parts = Vec::new();
    let mut index = 0;
    while index < indices.len() {
        let start = indices[index];
        let mut end = start;
        while index + 1 < indices.len() && indices[index + 1] == end.wrapping_add(step) {
            index += 1;
            end = indices[index];
        }
        parts.push(match (end == start, step) {
            (true, _) => start.to_string(),
            (false, 1) => format!("{start}-{end}"),
            (false, step) => format!("{start}-{end}:{step}"),
        });
        index += 1;
    }
    parts.join(",")
}

/// A subjob range id (pbs-reference 5.1): `123[1-3]`, `123[1-9:2].head`, `123[1,4]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeId {
    /// The array parent's id text: `123[]` or `123[].head`.
    pub parent: String,
    /// The range between the brackets.
    pub spec: ArraySpec,
    /// How many indices it names ([`ArraySpec::count`]: overlaps counted twice), at most
    /// [`MAX_ARRAY_SIZE`].
    pub count: u64,
}

impl RangeId {
    /// The selected indices, sorted and distinct (at most [`Self::count`]).
    pub fn indices(&self) -> Vec<u32> {
        self.spec.expand().unwrap_or_default()
    }
}

/// Reads `text` as a subjob range id: `seq[range]` with an optional `.server`, where `range` is
/// OpenPBS's `X-Y[:Z]` or a TORQUE-style list `1-3,7`. `None` when `text` is not a range id
/// (a plain job, a parent `123[]`, a subjob `123[4]`); `Some(Err)` when the brackets hold a
/// range that does not parse. Nothing is expanded: the indices are counted
/// ([`RangeId::count`]) so a caller can bound its work before asking for them.
pub fn parse_range_id(text: &str) -> Option<Result<RangeId, ArrayError>> {
    let (seq, rest) = text.split_once('[')?;
    let (range, server) = rest.split_once(']')?;
    if seq.is_empty() || !seq.bytes().all(|b| b.is_ascii_digit()) || !range.contains(['-', ',', ':']) {
        return None;
    }
    let spec = ArraySpec { indices: range.to_string(), limit: None };
    Some(spec.count().map(|count| RangeId { parent: format!("{seq}[]{server}"), spec, count }))
}

/// The id TORQUE's `-t range` names with `id`: `123[]` (or `123`) with `-t 1-3` is `123[1-3]`.
/// Keeps the server part.
pub fn with_range(id: &str, range: &str) -> String {
    let (seq, rest) = match id.split_once('[') {
        Some((seq, rest)) => (seq, rest.split_once(']').map_or("", |(_, server)| server)),
        None => match id.split_once('.') {
            Some((seq, _)) => (seq, &id[seq.len()..]),
            None => (id, ""),
        },
    };
    format!("{seq}[{range}]{rest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_pbs(text: &str) -> Vec<u32> {
        parse_openpbs(text).unwrap().expand().unwrap()
    }

    #[test]
    fn openpbs_ranges_with_steps_and_limits() {
        assert_eq!(expand_pbs("1-5"), vec![1, 2, 3, 4, 5]);
        assert_eq!(expand_pbs("0-10:3"), vec![0, 3, 6, 9]);
        assert_eq!(expand_pbs("4-4"), vec![4]);
        let spec = parse_openpbs("1-10%2").unwrap();
        assert_eq!(spec, ArraySpec { indices: "1-10".to_string(), limit: Some(2) });
        assert_eq!(parse_openpbs("1-10:2%3").unwrap().step(), 2);
    }

    #[test]
    fn torque_lists_sorted_and_deduplicated() {
        let spec = parse_torque("20-22,1-3,15,2%2").unwrap();
        assert_eq!(spec.limit, Some(2));
        assert_eq!(spec.indices, "20-22,1-3,15,2");
        assert_eq!(spec.expand().unwrap(), vec![1, 2, 3, 15, 20, 21, 22]);
        assert_eq!(parse_torque("7").unwrap().expand().unwrap(), vec![7]);
        assert_eq!(parse_torque("0-299%5").unwrap().expand().unwrap().len(), 300);
    }

    #[test]
    fn the_maximum_size_is_allowed_one_more_is_not() {
        assert_eq!(expand_pbs("1-10000").len(), 10_000);
        assert!(matches!(parse_openpbs("0-10000"), Err(ArrayError::TooMany(10_001))));
        assert!(matches!(parse_torque("1-4000000000"), Err(ArrayError::TooMany(_))));
    }

    #[test]
    fn error_messages() {
        let mut text = String::new();
        for (flag, input) in [
            ("J", ""),
            ("J", "5"),
            ("J", "1-10,12"),
            ("J", "a-b"),
            ("J", "10-1"),
            ("J", "1-10:0"),
            ("J", "1-10%0"),
            ("J", "1-10%x"),
            ("J", "1-20000"),
            ("J", "1-4294967295"),
            ("J", "-3"),
            ("t", ""),
            ("t", "1-10:2"),
            ("t", "1,,2"),
            ("t", "3-1,5"),
            ("t", "1-5%"),
            ("t", "1 - 5"),
        ] {
            let result = if flag == "J" { parse_openpbs(input) } else { parse_torque(input) };
            let message = result.map(|spec| format!("ok {spec:?}")).unwrap_or_else(|error| error.to_string());
            text.push_str(&format!("-{flag} {input:?}: {message}\n"));
        }
        insta::assert_snapshot!(text);
    }

    #[test]
    fn remaining_indices_in_range_form() {
        assert_eq!(format_indices(&[1, 2, 3, 7, 9, 10], 1), "1-3,7,9-10");
        assert_eq!(format_indices(&[1, 3, 5, 9], 2), "1-5:2,9");
        assert_eq!(format_indices(&[], 1), "");
        assert_eq!(format_indices(&[4], 1), "4");
    }

    #[test]
    fn range_ids_in_either_form() {
        let range = |text: &str| parse_range_id(text).map(|result| result.map(|id| (id.parent.clone(), id.indices())));
        assert_eq!(range("12[1-3]"), Some(Ok(("12[]".to_string(), vec![1, 2, 3]))));
        assert_eq!(range("12[1-9:4].head"), Some(Ok(("12[].head".to_string(), vec![1, 5, 9]))));
        assert_eq!(range("12[7,2-3].h.x"), Some(Ok(("12[].h.x".to_string(), vec![2, 3, 7]))));
        assert_eq!(range("12[]"), None);
        assert_eq!(range("12[4].head"), None);
        assert_eq!(range("12.head"), None);
        assert_eq!(range("x[1-2]"), None);
        assert!(matches!(range("12[3-1]"), Some(Err(ArrayError::Reversed(_)))));
        assert!(matches!(range("12[1-a]"), Some(Err(ArrayError::Garbage(..)))));
        assert_eq!(with_range("12[]", "1-3"), "12[1-3]");
        assert_eq!(with_range("12[].head", "2"), "12[2].head");
        assert_eq!(with_range("12.head", "1,4"), "12[1,4].head");
        assert_eq!(with_range("12", "1-2"), "12[1-2]");
    }

    #[test]
    fn ranges_are_counted_before_they_are_expanded() {
        let id = parse_range_id("12[1-9:4,1-2]").unwrap().unwrap();
        assert_eq!((id.count, id.indices()), (5, vec![1, 2, 5, 9]), "overlaps count twice, list once");
        // A million one-index items: refused at the first past the limit, nothing kept.
        let many = format!("12[{}]", "0,".repeat(1_000_000));
        assert_eq!(parse_range_id(&many).unwrap().unwrap_err(), ArrayError::TooMany(MAX_ARRAY_SIZE as u64 + 1));
    }

    #[test]
    fn spec_round_trips_through_json_and_limit_defaults() {
        let spec: ArraySpec = serde_json::from_str(r#"{"indices":"1-3"}"#).unwrap();
        assert_eq!(spec.limit, None);
        assert_eq!(spec.expand().unwrap(), vec![1, 2, 3]);
    }
}
