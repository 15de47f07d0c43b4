//! The order a pass considers queued jobs in.
//!
//! Without `job_sort_formula`: queue priority, then job priority (both higher first), then the
//! owner's fair-share factor (`fairshare_factor`, higher first: less usage for its share),
//! then submission order. With a formula: queue priority, then the formula's value (higher
//! first), then submission order. Queue priority stays first with a formula because OpenPBS's
//! scheduler considers jobs queue by queue in priority order (`by_queue: True`, its default)
//! and sorts by the formula within each queue (`cmp_sort` in `src/scheduler/sort.cpp`).
//! Jobs equal in every key keep their order in the view. Each job's key is computed once (the
//! formula is evaluated once per job and pass), so a pass over 100,000 jobs sorts keys, not jobs.
//!
//! Owns: comparing jobs. Must not know: placement, reservations, the clock.

use std::cmp::{Ordering, Reverse};

use crate::view::{ClusterView, PendingJob};

/// A key compared highest first that is total on the finite values the formula and the
/// fair-share factor give (NaN, which they never give, would sort as equal).
#[derive(Debug, Clone, Copy, PartialEq)]
struct High(f64);

impl Eq for High {}

impl PartialOrd for High {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for High {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.partial_cmp(&self.0).unwrap_or(Ordering::Equal)
    }
}

/// A job's sort key: queue priority, job priority (0 with a formula), the formula's value or
/// the fair-share factor, submission order, and its index in the view (the last tie-break).
type Key = (Reverse<i32>, Reverse<i32>, High, u64, usize);

/// Indices into `view.jobs` in the order the policy considers them. Jobs equal in every key
/// keep their order in the view.
pub fn priority_order(view: &ClusterView) -> Vec<usize> {
    let jobs = &view.jobs;
    let mut keyed: Vec<Key> = match view.formula {
        Some(formula) => jobs
            .iter()
            .enumerate()
            .map(|(index, job)| {
                (Reverse(job.queue_priority), Reverse(0), High(formula.value(&formula_inputs(job))), job.order, index)
            })
            .collect(),
        None => jobs
            .iter()
            .enumerate()
            .map(|(index, job)| {
                let factor = if job.fairshare.factor.is_finite() { job.fairshare.factor } else { 0.0 };
                (Reverse(job.queue_priority), Reverse(job.priority), High(factor), job.order, index)
            })
            .collect(),
    };
    keyed.sort_unstable();
    keyed.into_iter().map(|(.., index)| index).collect()
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;

/// What `job_sort_formula`'s keywords read for `job`.
pub(crate) fn formula_inputs(job: &PendingJob) -> crate::formula::Inputs {
    crate::formula::Inputs {
        queue_priority: f64::from(job.queue_priority),
        job_priority: f64::from(job.priority),
        fairshare_perc: job.fairshare.perc,
        fairshare_tree_usage: job.fairshare.usage,
        fairshare_factor: job.fairshare.factor,
        eligible_time: job.eligible_time as f64,
        ncpus: f64::from(job.request.total_ncpus()),
        ngpus: f64::from(job.request.total_ngpus()),
        walltime: job.walltime as f64,
    }
}
