//! The server attributes that steer the scheduler (issue 16): `backfill_depth`,
//! `job_sort_formula`, `fairshare_decay_time`, `fairshare_decay_factor`, `fairshare_weights`
//! (a minipbs extension), `preempt_queue_prio` and `preempt_order`. OpenPBS keeps some of these
//! on its scheduler object (`qmgr set sched ...`); minipbs has one server, so they are server
//! attributes (docs/scheduling.md). Owns their defaults, their grammar and their text form.
//!
//! Must not know: jobs, queues, the store, how the scheduler uses them.

use super::values::{bad_value, parse_bool, show_bool, unknown_attribute};
use proto::error::RequestError;
use proto::manage::{AttrOp, SetOp};

/// The names, in the order `qstat -Bf` and `qmgr print server` show them.
pub const NAMES: [&str; 8] = [
    "backfill_depth",
    "job_sort_formula",
    "fairshare_decay_time",
    "fairshare_decay_factor",
    "fairshare_weights",
    "preempt_queue_prio",
    "preempt_order",
    "eligible_time_enable",
];

/// OpenPBS's defaults.
pub const BACKFILL_DEPTH: u32 = 1;
pub const FAIRSHARE_DECAY_TIME: i64 = 24 * 3600;
pub const FAIRSHARE_DECAY_FACTOR: f64 = 0.5;
pub const PREEMPT_QUEUE_PRIO: i32 = 150;
pub const PREEMPT_ORDER: &str = "SCR";
/// The largest `backfill_depth` accepted (a plan per job beyond this costs more than it helps).
pub const MAX_BACKFILL_DEPTH: u32 = 100_000;
/// The longest accepted `job_sort_formula`, bytes.
pub const MAX_FORMULA_BYTES: usize = 4096;

/// Weights of the resources fair-share usage counts, per hour held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UsageWeights {
    pub ncpus: f64,
    pub ngpus: f64,
}

impl Default for UsageWeights {
    fn default() -> Self {
        UsageWeights { ncpus: 1.0, ngpus: 1.0 }
    }
}

/// The scheduling attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedAttrs {
    pub backfill_depth: u32,
    /// The formula as the user wrote it, parsed (`None`: the default order).
    pub job_sort_formula: Option<sched::Formula>,
    /// Seconds after which usage is multiplied by `fairshare_decay_factor`.
    pub fairshare_decay_time: i64,
    pub fairshare_decay_factor: f64,
    pub fairshare_weights: UsageWeights,
    pub preempt_queue_prio: i32,
    /// OpenPBS `preempt_order`: letters `S`, `C`, `R` with optional percentages of walltime
    /// used between them (`SCR`, `SR 50 S`); checked here, read by `state/preempt.rs`.
    pub preempt_order: String,
    /// OpenPBS `eligible_time_enable` (default False): `qstat -f` shows jobs' `eligible_time`.
    /// minipbs keeps eligible time either way (`state/eligible.rs`).
    pub eligible_time_enable: bool,
}

impl Default for SchedAttrs {
    fn default() -> Self {
        SchedAttrs {
            backfill_depth: BACKFILL_DEPTH,
            job_sort_formula: None,
            fairshare_decay_time: FAIRSHARE_DECAY_TIME,
            fairshare_decay_factor: FAIRSHARE_DECAY_FACTOR,
            fairshare_weights: UsageWeights::default(),
            preempt_queue_prio: PREEMPT_QUEUE_PRIO,
            preempt_order: PREEMPT_ORDER.to_string(),
            eligible_time_enable: false,
        }
    }
}

impl SchedAttrs {
    /// Applies one operation to attribute `name` (one of [`NAMES`]).
    pub fn apply(&mut self, name: &str, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
        let value = attr.value.trim();
        if !unset && attr.op != SetOp::Set {
            return Err(bad_value(attr, "only = applies"));
        }
        let defaults = SchedAttrs::default();
        match name {
            "backfill_depth" if unset => self.backfill_depth = defaults.backfill_depth,
            "backfill_depth" => self.backfill_depth = parse_depth(attr, value)?,
            "job_sort_formula" if unset => self.job_sort_formula = None,
            "job_sort_formula" => self.job_sort_formula = Some(parse_formula(attr, value)?),
            "fairshare_decay_time" if unset => self.fairshare_decay_time = defaults.fairshare_decay_time,
            "fairshare_decay_time" => {
                let seconds = job::duration::parse_duration(value).map_err(|reason| bad_value(attr, &reason))?;
                self.fairshare_decay_time = match i64::try_from(seconds) {
                    Ok(seconds) if seconds > 0 => seconds,
                    _ => return Err(bad_value(attr, "expected a duration of at least 1 second")),
                };
            }
            "fairshare_decay_factor" if unset => self.fairshare_decay_factor = defaults.fairshare_decay_factor,
            "fairshare_decay_factor" => self.fairshare_decay_factor = parse_factor(attr, value)?,
            "fairshare_weights" if unset => self.fairshare_weights = defaults.fairshare_weights,
            "fairshare_weights" => self.fairshare_weights = parse_weights(attr, value)?,
            "preempt_queue_prio" if unset => self.preempt_queue_prio = defaults.preempt_queue_prio,
            "preempt_queue_prio" => {
                self.preempt_queue_prio = value.parse().map_err(|_| bad_value(attr, "expected an integer"))?
            }
            "preempt_order" if unset => self.preempt_order = defaults.preempt_order,
            "preempt_order" => self.preempt_order = parse_preempt_order(attr, value)?,
            "eligible_time_enable" if unset => self.eligible_time_enable = false,
            "eligible_time_enable" => self.eligible_time_enable = parse_bool(attr, value)?,
            _ => return Err(unknown_attribute(attr)),
        }
        Ok(())
    }

    /// The value of `name` as text, as stored and shown.
    pub fn value(&self, name: &str) -> String {
        match name {
            "backfill_depth" => self.backfill_depth.to_string(),
            "job_sort_formula" => {
                self.job_sort_formula.as_ref().map(|formula| formula.text().to_string()).unwrap_or_default()
            }
            "fairshare_decay_time" => job::duration::format_hms(self.fairshare_decay_time.max(0) as u64),
            "fairshare_decay_factor" => self.fairshare_decay_factor.to_string(),
            "fairshare_weights" => {
                format!("ncpus={},ngpus={}", self.fairshare_weights.ncpus, self.fairshare_weights.ngpus)
            }
            "preempt_queue_prio" => self.preempt_queue_prio.to_string(),
            "preempt_order" => self.preempt_order.clone(),
            "eligible_time_enable" => show_bool(self.eligible_time_enable).to_string(),
            _ => String::new(),
        }
    }
}

fn parse_depth(attr: &AttrOp, value: &str) -> Result<u32, RequestError> {
    match value.parse::<u32>() {
        Ok(depth) if depth <= MAX_BACKFILL_DEPTH => Ok(depth),
        _ => Err(bad_value(attr, &format!("expected an integer from 0 to {MAX_BACKFILL_DEPTH}"))),
    }
}

fn parse_formula(attr: &AttrOp, value: &str) -> Result<sched::Formula, RequestError> {
    if value.len() > MAX_FORMULA_BYTES {
        return Err(bad_value(attr, &format!("longer than {MAX_FORMULA_BYTES} bytes")));
    }
    // qmgr users quote the formula: `set server job_sort_formula = "ncpus * 2"`.
    let unquoted = value.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')).unwrap_or(value);
    sched::Formula::parse(unquoted).map_err(|error| bad_value(attr, &error.to_string()))
}

fn parse_factor(attr: &AttrOp, value: &str) -> Result<f64, RequestError> {
    match value.parse::<f64>() {
        Ok(factor) if factor > 0.0 && factor < 1.0 => Ok(factor),
        _ => Err(bad_value(attr, "expected a number between 0 and 1, both excluded")),
    }
}

/// `ncpus=W,ngpus=W` (either may be left out: it keeps its default of 1).
fn parse_weights(attr: &AttrOp, value: &str) -> Result<UsageWeights, RequestError> {
    let mut weights = UsageWeights::default();
    for item in value.split(',').map(str::trim) {
        let Some((name, weight)) = item.split_once('=') else {
            return Err(bad_value(attr, &format!("{item}: expected ncpus=WEIGHT or ngpus=WEIGHT")));
        };
        let weight = match weight.trim().parse::<f64>() {
            Ok(weight) if weight.is_finite() && (0.0..=1e6).contains(&weight) => weight,
            _ => return Err(bad_value(attr, &format!("{item}: a weight is a number from 0 to 1000000"))),
        };
        match name.trim() {
            "ncpus" => weights.ncpus = weight,
            "ngpus" => weights.ngpus = weight,
            other => return Err(bad_value(attr, &format!("{other}: only ncpus and ngpus are counted"))),
        }
    }
    Ok(weights)
}

/// `preempt_order`: groups of the letters S, C and R (each at most once per group), separated
/// by percentages of walltime used, strictly decreasing, each from 1 to 99 (`SCR`, `SR 50 S`).
fn parse_preempt_order(attr: &AttrOp, value: &str) -> Result<String, RequestError> {
    let words: Vec<&str> = value.split_whitespace().collect();
    let mut last_percent = 100;
    for (index, word) in words.iter().enumerate() {
        if index % 2 == 0 {
            let letters_ok = !word.is_empty()
                && word.chars().all(|letter| matches!(letter, 'S' | 'C' | 'R'))
                && word.chars().enumerate().all(|(at, letter)| !word[..at].contains(letter));
            if !letters_ok {
                return Err(bad_value(attr, &format!("{word}: expected the letters S, C and R, each at most once")));
            }
        } else {
            match word.parse::<u32>() {
                Ok(percent) if percent >= 1 && percent < last_percent && index + 1 < words.len() => {
                    last_percent = percent
                }
                _ => {
                    return Err(bad_value(
                        attr,
                        &format!("{word}: expected a decreasing percentage from 99 to 1 followed by letters"),
                    ))
                }
            }
        }
    }
    if words.is_empty() {
        return Err(bad_value(attr, "empty"));
    }
    Ok(words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(name: &str, value: &str) -> Result<SchedAttrs, RequestError> {
        let mut attrs = SchedAttrs::default();
        let op = AttrOp { name: name.to_string(), resource: None, op: SetOp::Set, value: value.to_string() };
        attrs.apply(name, &op, false).map(|()| attrs)
    }

    #[test]
    fn values_round_trip_and_bad_ones_are_refused() {
        assert_eq!(set("backfill_depth", "5").unwrap().value("backfill_depth"), "5");
        assert!(set("backfill_depth", "-1").is_err());
        assert!(set("backfill_depth", "100001").is_err());
        assert_eq!(set("fairshare_decay_time", "12:00:00").unwrap().value("fairshare_decay_time"), "12:00:00");
        assert!(set("fairshare_decay_time", "0").is_err());
        assert!(set("fairshare_decay_factor", "1").is_err());
        assert!(set("fairshare_decay_factor", "NaN").is_err());
        assert_eq!(set("fairshare_weights", "ngpus=10").unwrap().value("fairshare_weights"), "ncpus=1,ngpus=10");
        assert!(set("fairshare_weights", "mem=1").is_err());
        assert!(set("fairshare_weights", "ncpus=inf").is_err());
        assert_eq!(set("preempt_order", "SR  50 S").unwrap().value("preempt_order"), "SR 50 S");
        for bad in ["", "SS", "X", "S 50", "S 50 R 60 C", "S 0 R", "S 100 R"] {
            assert!(set("preempt_order", bad).is_err(), "{bad:?} accepted");
        }
        assert!(set("job_sort_formula", &"x".repeat(MAX_FORMULA_BYTES + 1)).is_err());
        assert!(set("job_sort_formula", "ncpus + mem").is_err());
        assert_eq!(set("eligible_time_enable", "true").unwrap().value("eligible_time_enable"), "True");
        assert!(set("eligible_time_enable", "maybe").is_err());
    }
}
