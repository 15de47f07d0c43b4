//! `job_sort_formula` (OpenPBS syntax): parsing it once, evaluating it per job.
//!
//! Owns: the formula grammar, its keywords (`queue_priority`, `job_priority`,
//! `fair_share_perc`/`fairshare_perc`, `fairshare_tree_usage`, `fairshare_factor`,
//! `eligible_time`, `ncpus`, `ngpus`, `walltime`) and their values for one job.
//! Must not know: where the formula text comes from, or how jobs are stored.
//!
//! CONTRACT STUB (issue 16): the parser and evaluator are being written; this accepts any
//! non-empty text and values every job 0.

use crate::view::PendingJob;

/// A parsed `job_sort_formula`.
#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    text: String,
}

/// Why a formula text was refused (the server words it for qmgr).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FormulaError(pub String);

impl Formula {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Formula, FormulaError> {
        if text.trim().is_empty() {
            return Err(FormulaError("empty formula".to_string()));
        }
        Ok(Formula { text: text.to_string() })
    }

    /// The text it was parsed from.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The formula's value for `job` (higher goes first).
    pub fn value(&self, _job: &PendingJob) -> f64 {
        0.0
    }
}
