//! `qsub -a` (`Execution_Time`): a queued job whose time is ahead waits (`W`) and is queued
//! again when it comes. Runs on the scheduler's timer before its pass (`lib.rs`); the
//! scheduler itself never starts a job before its time (`sched_loop.rs`), so a job released
//! from a hold early is safe until this moves it back to `W`. Holds take precedence: a held
//! job stays `H`. Costs one look at each waiting and each queued job per tick (their indexes:
//! never the history); only jobs with an execution time change.

use crate::state::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreOp;
use job::id::ArrayPart;
use job::{JobEvent, JobState};

/// Moves waiting jobs whose time came to `Q`, and queued ones whose time is ahead to `W`.
/// Returns how many changed.
pub fn settle_waiting(state: &mut ServerState, out: &mut Outbox, now: i64) -> usize {
    let changes: Vec<(job::JobKey, JobEvent)> = state
        .waiting_jobs()
        .chain(state.queued_jobs())
        .filter_map(|job| {
            let at = job.spec.options.execution_time?;
            let event = match job.state() {
                JobState::Waiting if at <= now => JobEvent::Wake,
                JobState::Queued if at > now && job.id.array != Some(ArrayPart::Parent) => JobEvent::Defer,
                _ => return None,
            };
            Some((job.id.key(), event))
        })
        .collect();
    let mut changed = 0;
    for (key, event) in changes {
        if let Ok(job) = state.transition(key, event, now) {
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
            out.schedule |= event == JobEvent::Wake;
            changed += 1;
        }
    }
    changed
}
