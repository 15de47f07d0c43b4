//! Job identifiers: `123.server`, array parents `123[].server` and subjobs `123[4].server`
//! (pbs-reference 5.1). Users may abbreviate to `123` (the default server is implied), and may
//! give the full host name of the server (`123.head.example.com`).
//!
//! Also the server's internal key of a job ([`JobId::key`], a [`JobKey`]: `key.rs`).

use crate::key::JobKey;
use compact_str::CompactString;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which part of an array a job id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ArrayPart {
    /// `123[]`: the array parent (the array as a whole).
    Parent,
    /// `123[4]`: one subjob, by its array index. Invariant: below `u32::MAX`.
    Sub(u32),
}

/// A job id: sequence number, server name and, for arrays, the part. Invariant: `server` is
/// non-empty and has no whitespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobId {
    pub seq: u64,
    /// Inline up to 24 bytes (every job keeps its id: no allocation per job for the name).
    pub server: CompactString,
    /// `None` for an ordinary job.
    #[serde(default)]
    pub array: Option<ArrayPart>,
}

/// Why a string is not a job id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegally formed job identifier: {0}")]
pub struct BadJobId(pub String);

impl JobId {
    /// The full id, as `to_string` makes it, in one allocation made large enough (a listing
    /// makes one per job; `to_string` grows its buffer as the parts are written).
    pub fn text(&self) -> String {
        // The sequence number and the array index: at most 20 digits each, and `[].`.
        let mut text = String::with_capacity(self.server.len() + 43);
        self.write_parts(|part| text.push_str(part));
        text
    }

    /// The full id as a `CompactString`: held inline, with no allocation, up to 24 bytes
    /// (`123456.head`), as a listing in rows carries it (one per row: written by parts, not
    /// through `fmt`, which cost a tenth of a 10,000-job listing's server CPU).
    pub fn compact(&self) -> CompactString {
        let mut text = CompactString::with_capacity(self.server.len() + 43);
        self.write_parts(|part| text.push_str(part));
        text
    }

    /// Hands the full id's parts, in order, to `push`: what [`fmt::Display`] writes.
    fn write_parts(&self, mut push: impl FnMut(&str)) {
        let mut digits = itoa::Buffer::new();
        push(digits.format(self.seq));
        match self.array {
            None => {}
            Some(ArrayPart::Parent) => push("[]"),
            Some(ArrayPart::Sub(index)) => {
                push("[");
                push(digits.format(index));
                push("]");
            }
        }
        push(".");
        push(&self.server);
    }

    /// An ordinary job's id.
    pub fn new(seq: u64, server: impl Into<CompactString>) -> Self {
        JobId { seq, server: server.into(), array: None }
    }

    /// The id of the array parent `seq[]`.
    pub fn parent(seq: u64, server: impl Into<CompactString>) -> Self {
        JobId { seq, server: server.into(), array: Some(ArrayPart::Parent) }
    }

    /// The id of subjob `seq[index]`.
    pub fn sub(seq: u64, index: u32, server: impl Into<CompactString>) -> Self {
        JobId { seq, server: server.into(), array: Some(ArrayPart::Sub(index)) }
    }

    /// The server's key for this job (see [`JobKey`]).
    pub fn key(&self) -> JobKey {
        let index = match self.array {
            Some(ArrayPart::Sub(index)) => Some(index),
            _ => None,
        };
        JobKey::new(self.seq, index)
    }

    /// The key of the parent (or ordinary job) with this key's seq.
    pub fn parent_key(key: JobKey) -> JobKey {
        key.parent()
    }

    /// The array parent's id for a subjob's id (itself otherwise).
    pub fn to_parent(&self) -> JobId {
        match self.array {
            Some(ArrayPart::Sub(_)) => JobId::parent(self.seq, self.server.clone()),
            _ => self.clone(),
        }
    }

    /// Parses `123`, `123.server`, `123.server.domain`, `123[]`, `123[4]` and `123[4].server`;
    /// a missing server part takes `default_server`. Only the first label of the server name
    /// is kept, so `123.head` and `123.head.example.com` name the same job.
    pub fn parse(text: &str, default_server: &str) -> Result<JobId, BadJobId> {
        let text = text.trim();
        let bad = || BadJobId(text.to_string());
        let (head, server) = match text.split_once('.') {
            Some((head, rest)) => (head, rest),
            None => (text, default_server),
        };
        let (seq_text, array) = match head.split_once('[') {
            Some((seq, rest)) => {
                let inside = rest.strip_suffix(']').ok_or_else(bad)?;
                if inside.is_empty() {
                    (seq, Some(ArrayPart::Parent))
                } else if inside.bytes().all(|b| b.is_ascii_digit()) {
                    let index = inside.parse::<u32>().ok().filter(|index| *index < u32::MAX).ok_or_else(bad)?;
                    (seq, Some(ArrayPart::Sub(index)))
                } else {
                    return Err(bad());
                }
            }
            None => (head, None),
        };
        if seq_text.is_empty() || !seq_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let seq = seq_text.parse::<u64>().map_err(|_| bad())?;
        if seq >= 1 << 31 {
            return Err(bad());
        }
        let server = server.split('.').next().unwrap_or_default();
        if server.is_empty() || server.contains(char::is_whitespace) || server.contains(['@', '[', ']']) {
            return Err(bad());
        }
        Ok(JobId { seq, server: server.into(), array })
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut result = Ok(());
        self.write_parts(|part| result = result.and_then(|()| f.write_str(part)));
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_short_and_full_forms() {
        assert_eq!(JobId::parse("12", "head").unwrap(), JobId::new(12, "head"));
        assert_eq!(JobId::parse("12.head", "x").unwrap(), JobId::new(12, "head"));
        assert_eq!(JobId::parse("12.head.example.com", "x").unwrap(), JobId::new(12, "head"));
        assert_eq!(JobId::new(7, "vm").to_string(), "7.vm");
        for id in [JobId::new(7, "vm"), JobId::parent(u64::MAX, "head"), JobId::sub(12, u32::MAX, "head")] {
            assert_eq!(id.text(), id.to_string());
            assert_eq!(id.compact(), id.to_string());
        }
        assert_eq!(JobId::parent(0, "h").to_string(), "0[].h");
        assert_eq!(
            JobId::sub(18446744073709551615, 4294967295, "head").compact(),
            "18446744073709551615[4294967295].head"
        );
        assert_eq!(format!("{:>8}|", JobId::new(7, "vm")), "7.vm|", "written as parts: no padding, as before");
    }

    #[test]
    fn parses_array_forms() {
        assert_eq!(JobId::parse("12[]", "head").unwrap(), JobId::parent(12, "head"));
        assert_eq!(JobId::parse("12[4].head.example.com", "x").unwrap(), JobId::sub(12, 4, "head"));
        assert_eq!(JobId::parent(12, "vm").to_string(), "12[].vm");
        assert_eq!(JobId::sub(12, 0, "vm").to_string(), "12[0].vm");
        assert_eq!(JobId::sub(12, 4, "vm").to_parent(), JobId::parent(12, "vm"));
    }

    #[test]
    fn refuses_garbage() {
        for bad in [
            "",
            "abc",
            "12x",
            ".head",
            "12.",
            "-1",
            "1 2",
            "12[",
            "12[x]",
            "12]",
            "12[1-3]",
            "[].s",
            "99999999999",
            "1[4294967295]",
        ] {
            assert!(JobId::parse(bad, "head").is_err(), "{bad:?} accepted");
        }
    }
}
