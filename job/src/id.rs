//! Job identifiers: `123.server`. Users may abbreviate to `123` (the default server is implied),
//! and may give the full host name of the server (`123.head.example.com`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A job id: sequence number plus server name. Invariant: `server` is non-empty and has no
/// whitespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JobId {
    pub seq: u64,
    pub server: String,
}

/// Why a string is not a job id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("illegally formed job identifier: {0}")]
pub struct BadJobId(pub String);

impl JobId {
    pub fn new(seq: u64, server: impl Into<String>) -> Self {
        JobId { seq, server: server.into() }
    }

    /// Parses `123`, `123.server` or `123.server.domain`; a missing server part takes
    /// `default_server`. Only the first label of the server name is kept, so `123.head` and
    /// `123.head.example.com` name the same job.
    pub fn parse(text: &str, default_server: &str) -> Result<JobId, BadJobId> {
        let text = text.trim();
        let (seq_text, server) = match text.split_once('.') {
            Some((seq, rest)) => (seq, rest),
            None => (text, default_server),
        };
        if seq_text.is_empty() || !seq_text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BadJobId(text.to_string()));
        }
        let seq = seq_text.parse::<u64>().map_err(|_| BadJobId(text.to_string()))?;
        let server = server.split('.').next().unwrap_or_default();
        if server.is_empty() || server.contains(char::is_whitespace) || server.contains('@') {
            return Err(BadJobId(text.to_string()));
        }
        Ok(JobId::new(seq, server))
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.seq, self.server)
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
    }

    #[test]
    fn refuses_garbage() {
        for bad in ["", "abc", "12x", ".head", "12.", "-1", "1 2"] {
            assert!(JobId::parse(bad, "head").is_err(), "{bad:?} accepted");
        }
    }
}
