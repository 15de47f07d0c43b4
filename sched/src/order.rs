//! The order a pass considers queued jobs in: `job_sort_formula` when set, else queue
//! priority, then job priority, then fair share, then submission order.
//!
//! Owns: comparing jobs. Must not know: placement, reservations, the clock.

use std::cmp::Reverse;

use crate::view::ClusterView;

/// Indices into `view.jobs` in the order the policy considers them. Jobs equal in every key
/// keep their order in the view.
pub(crate) fn priority_order(view: &ClusterView) -> Vec<usize> {
    let jobs = &view.jobs;
    let mut keyed: Vec<(Reverse<i32>, Reverse<i32>, u64, usize)> = jobs
        .iter()
        .enumerate()
        .map(|(index, job)| (Reverse(job.queue_priority), Reverse(job.priority), job.order, index))
        .collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, _, _, index)| index).collect()
}
