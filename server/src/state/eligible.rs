//! Eligible time (OpenPBS `eligible_time`): which queued jobs accrue it now.
//!
//! A job accrues eligible time only while it could run: queued (`Q`: not held `H`, not waiting
//! for its `-a` time `W`, not running), in a started queue, and not over a per-user run limit
//! (`max_run` `[u:...]`/`max_user_run` of its queue: OpenPBS makes jobs over user, group or
//! project limits ineligible, and lets jobs over a queue's or the server's overall limit
//! accrue). The clock ([`EligibleClock`](super::EligibleClock)) starts at submission in `Q` and
//! whenever a job enters `Q`, and stops when it leaves (`ServerState::transition`: the caller
//! stores the job). [`settle`] runs at the start of each scheduling pass and corrects the queued
//! jobs that cannot run (stopped queue, over a limit) or can again; a clock it changes is stored
//! with its job, so a restart keeps it. So the usual job costs no write of its own.
//!
//! `eligible_time` is always kept; `qstat -f` shows it as OpenPBS does when the server's
//! `eligible_time_enable` is True (`status.rs`).
//!
//! Must not know: the store's rows, the scheduler's policy.

use std::collections::HashMap;

use super::outbox::Outbox;
use super::records::StoreOp;
use super::ServerState;
use job::JobKey;

/// Starts or stops the eligible-time clock of every queued job by whether it could run now;
/// records the jobs whose clock changed.
pub fn settle(state: &mut ServerState, out: &mut Outbox, now: i64) {
    // Nothing can hold a queued job back and no clock is stopped: no scan (the usual pass).
    let restricted = state.queues().values().any(|queue| !queue.started || queue.run.per_user.is_some());
    if !restricted && !state.eligible_paused {
        return;
    }
    let changes = changes(state);
    state.eligible_paused = restricted;
    for (key, eligible) in changes {
        let Some(job) = state.job_mut(key) else { continue };
        let changed = if eligible { job.eligible.start(now) } else { job.eligible.stop(now) };
        if changed {
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
        }
    }
}

/// The queued jobs whose clock must change, with whether they are eligible now.
fn changes(state: &ServerState) -> Vec<(JobKey, bool)> {
    let per_user_limits = state.queues().values().any(|queue| queue.run.per_user.is_some());
    let running_by_user = if per_user_limits { state.active_counts().1 } else { HashMap::new() };
    let mut started: HashMap<&str, (bool, Option<u32>)> = HashMap::new();
    let mut last: Option<(&str, (bool, Option<u32>))> = None;
    let mut changes = Vec::new();
    for job in state.queued_jobs() {
        // Queued jobs come in runs of one queue's: the last answer first, then the map.
        let (queue_started, per_user) = match last {
            Some((queue, answer)) if queue == job.queue => answer,
            _ => {
                let answer = *started.entry(job.queue.as_str()).or_insert_with(|| {
                    state.queue(&job.queue).map_or((false, None), |queue| (queue.started, queue.run.per_user))
                });
                last = Some((job.queue.as_str(), answer));
                answer
            }
        };
        let over_user_limit = per_user.is_some_and(|limit| {
            running_by_user.get(&(job.queue.as_str(), job.owner.as_str())).copied().unwrap_or(0) >= limit
        });
        let eligible = queue_started && !over_user_limit;
        if eligible != job.eligible.since.is_some() {
            changes.push((job.id.key(), eligible));
        }
    }
    changes
}

#[cfg(test)]
#[path = "eligible_tests.rs"]
mod tests;
