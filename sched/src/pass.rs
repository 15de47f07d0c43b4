//! One scheduling pass: order the queued jobs, then start greedily whatever fits now.
//!
//! Owns: the policy (priority order, greedy first fit, skipping failed request classes).
//! Must not know: the clock, I/O, how the server applies decisions.
//!
//! Not done yet (design.md section 5): reservations and EASY backfill. A job that does not fit
//! is simply skipped, so a large job can wait behind a stream of small ones.

use crate::class::Classes;
use crate::mps::place_mps;
use crate::place::place;
use crate::view::{ClusterView, Decision, Outcome};
use crate::work::{Work, WorkNode};

/// The policy: which queued jobs to start now and where.
///
/// Jobs are taken by queue priority (highest first), then job priority (highest first), then
/// submission order (earliest first). Each job that fits on what is still free is placed and
/// its resources are taken from the working copy; a job that does not fit is skipped, and so
/// is every later job with an identical request (same chunks, placement and exclusivity),
/// since free resources only shrink during a pass. Deterministic: the same view gives the same
/// decisions. Jobs with no chunks are never started. A job whose run-limit counters
/// ([`ClusterView::limits`]) are exhausted is skipped; one that starts takes 1 from each. So
/// is one asking more of a server-level consumable than is left ([`ClusterView::pools`]).
pub fn schedule(view: &ClusterView) -> Outcome {
    // CONTRACT STUB (issue 16): preemption, reservations, backfill and wait reasons are being
    // written; this is the greedy pass of old.
    let phase = crate::preempt::phase(view);
    let nodes = phase.nodes.as_ref().unwrap_or(&view.nodes);
    let starts = greedy(view, nodes, &phase);
    Outcome {
        starts: phase.starts.into_iter().chain(starts).collect(),
        resumes: phase.resumes,
        preempted: phase.preempted,
        waits: Vec::new(),
    }
}

fn greedy(view: &ClusterView, nodes: &[crate::view::NodeView], phase: &crate::preempt::PreemptPhase) -> Vec<Decision> {
    let mut work = Work::new(nodes.iter().map(WorkNode::from_view).collect());
    let mut classes = Classes::default();
    // Classified in view order, which is the order the caller allocated the requests in most
    // of the time: reading 100,000 requests in priority order instead costs cache misses.
    let class_of: Vec<usize> = view.jobs.iter().map(|job| classes.class_of(job.request, &mut work)).collect();
    // The preemption phase's starts are done and have used their limits and pools.
    let mut remaining = phase.limits.clone().unwrap_or_else(|| view.limits.clone());
    let mut pools = phase.pools.clone().unwrap_or_else(|| view.pools.clone());
    let mut decisions = Vec::new();
    for index in crate::order::priority_order(view) {
        let class = class_of[index];
        let job = &view.jobs[index];
        if classes.failed(class)
            || !within_limits(job.limits, &remaining)
            || !within_pools(job.takes, &pools)
            || phase.started(job.key)
        {
            continue;
        }
        let placed = match job.request.mps_share() {
            Some(percent) => place_mps(job.request, job.user, percent, &mut work),
            None => place(classes.plan(class), &mut work),
        };
        match placed {
            Some(assignments) => {
                for &limit in job.limits {
                    remaining[limit] -= 1;
                }
                // `within_pools` checked each amount against what is left: no underflow.
                for &(pool, amount) in job.takes {
                    pools[pool] -= amount;
                }
                decisions.push(Decision { key: job.key, assignments })
            }
            // MPS shares of different users differ in what fits: never skip the class.
            None if job.request.mps_share().is_some() => {}
            None => classes.mark_failed(class),
        }
    }
    decisions
}

/// Whether every counter a job names has room left (an index past the end has none).
pub(crate) fn within_limits(limits: &[usize], remaining: &[u32]) -> bool {
    limits.iter().all(|&limit| remaining.get(limit).is_some_and(|&left| left > 0))
}

/// Whether every pool a job takes from holds its amount (an index past the end holds none).
/// Two entries naming one pool are added up (checked: a sum past `u64` never fits).
pub(crate) fn within_pools(takes: &[(usize, u64)], pools: &[u64]) -> bool {
    takes.iter().all(|&(pool, _)| {
        let wanted = takes
            .iter()
            .filter(|(other, _)| *other == pool)
            .try_fold(0u64, |sum, (_, amount)| sum.checked_add(*amount));
        wanted.is_some_and(|wanted| pools.get(pool).is_some_and(|&left| left >= wanted))
    })
}
