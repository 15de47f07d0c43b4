//! Run limits for one scheduling pass: which queued jobs may be considered at all (their
//! queue exists and is started) and the counters of `max_run` per queue and per user per
//! queue, as `sched::ClusterView::limits` wants them (remaining capacity = limit - jobs of
//! that queue, or that user in that queue, already running or exiting).
//!
//! Must not know: placement (the `sched` crate decides), sockets, the store.

use crate::state::{Job, ServerState};
use std::collections::HashMap;

/// Counters and, for each job passed in, the indices of the counters it uses.
#[derive(Debug, Default)]
pub struct RunLimits {
    pub capacities: Vec<u32>,
    pub per_job: Vec<Vec<usize>>,
    /// What each counter (by index, as `capacities`) limits, for the comment of a job it
    /// holds back.
    pub what: Vec<LimitOf>,
}

/// What one run-limit counter counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitOf {
    /// `max_run` of the queue: its running jobs.
    Queue(String),
    /// `max_run [u:PBS_GENERIC=N]` of the queue: one user's running jobs there.
    QueueUser { queue: String, user: String },
}

/// Whether jobs of `queue` may start (the queue exists and is started).
pub fn queue_started(state: &ServerState, queue: &str) -> bool {
    state.queue(queue).is_some_and(|queue| queue.started)
}

/// Builds the counters for `jobs` (the queued jobs the pass considers).
pub fn run_limits(state: &ServerState, jobs: &[&Job]) -> RunLimits {
    let limited = state.queues().values().any(|queue| queue.run.total.is_some() || queue.run.per_user.is_some());
    if !limited {
        return RunLimits { capacities: Vec::new(), per_job: vec![Vec::new(); jobs.len()], what: Vec::new() };
    }
    // Jobs running per queue and per (queue, owner).
    let (running, running_by_user) = state.active_counts();
    let mut limits = RunLimits::default();
    let mut queue_index: HashMap<&str, usize> = HashMap::new();
    let mut user_index: HashMap<(&str, &str), usize> = HashMap::new();
    for job in jobs {
        let mut indices = Vec::new();
        if let Some(queue) = state.queue(&job.queue) {
            if let Some(total) = queue.run.total {
                let index = *queue_index.entry(job.queue.as_str()).or_insert_with(|| {
                    limits.capacities.push(total.saturating_sub(running.get(job.queue.as_str()).copied().unwrap_or(0)));
                    limits.what.push(LimitOf::Queue(job.queue.to_string()));
                    limits.capacities.len() - 1
                });
                indices.push(index);
            }
            if let Some(per_user) = queue.run.per_user {
                let key = (job.queue.as_str(), job.owner.as_str());
                let index = *user_index.entry(key).or_insert_with(|| {
                    limits.capacities.push(per_user.saturating_sub(running_by_user.get(&key).copied().unwrap_or(0)));
                    limits.what.push(LimitOf::QueueUser { queue: job.queue.to_string(), user: job.owner.to_string() });
                    limits.capacities.len() - 1
                });
                indices.push(index);
            }
        }
        limits.per_job.push(indices);
    }
    limits
}
