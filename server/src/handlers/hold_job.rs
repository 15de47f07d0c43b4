//! `HoldJob` (qhold) and `ReleaseJob` (qrls). Holds are kept in `Hold_Types` (`n`, or the set
//! letters in OpenPBS's order `s o u p`); a queued job with any hold is `H`, and returns to `Q`
//! when the last one is released; a running job keeps running with the hold recorded. Users may
//! set and clear only `u` holds; `o` needs an operator, `s` (system) and `p` (bad password) a
//! manager; `n` sets or clears nothing. Holding or releasing an array
//! parent does the same to its subjobs that have not started.

use crate::state::holds::{merge_holds, HOLD_ORDER};
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::JobProgress;
use job::id::ArrayPart;
use job::JobKey;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// Handles qhold (`hold = true`) or qrls for every id.
pub fn hold_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    ids: &[String],
    hold_types: &str,
    hold: bool,
) -> ServerReply {
    if hold_types.is_empty() || !hold_types.chars().all(|c| HOLD_ORDER.contains(c) || c == 'n') {
        let message = format!("{} Hold_Types {hold_types}", ErrorCode::BadAttributeValue.text());
        return ServerReply::Error(RequestError::new(ErrorCode::BadAttributeValue, message));
    }
    let errors = state
        .expand_ranges(ids)
        .into_iter()
        .filter_map(|id| id.and_then(|id| hold_one(state, out, requester, now, &id, hold_types, hold)).err())
        .collect();
    ServerReply::Done { errors }
}

fn hold_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
    hold_types: &str,
    hold: bool,
) -> Result<(), RequestError> {
    let (key, job) = state.find_job_entry(text)?;
    let id = job.id.clone();
    // OpenPBS: `o` needs an operator, `s` and `p` a manager (`u`: the owner will do).
    let needs_manager = hold_types.chars().any(|c| "sp".contains(c));
    let needs_operator = hold_types.contains('o');
    if !state.may_modify(requester, job.owner_uid)
        || (needs_manager && !state.is_manager(requester))
        || (needs_operator && !state.is_operator(requester))
    {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    if job.state().is_finished() {
        return Err(RequestError::with_detail(ErrorCode::JobFinished, &id));
    }
    hold_key(state, out, now, key, hold_types, hold)?;
    if id.array == Some(ArrayPart::Parent) {
        // The parent's holds apply to its subjobs that have not started.
        for sub in state.subjob_keys(key) {
            if state
                .job(sub)
                .is_some_and(|job| matches!(job.state(), JobState::Queued | JobState::Held | JobState::Waiting))
            {
                hold_key(state, out, now, sub, hold_types, hold)?;
            }
        }
    }
    Ok(())
}

/// Sets or clears `hold_types` on job `key` (permission already checked).
fn hold_key(
    state: &mut ServerState,
    out: &mut Outbox,
    now: i64,
    key: JobKey,
    hold_types: &str,
    hold: bool,
) -> Result<(), RequestError> {
    let job = state.known_job(key)?;
    let id = job.id.clone();
    let held = merge_holds(&job.hold_types, hold_types, hold);
    let event = if held == "n" { JobEvent::Release } else { JobEvent::Hold };
    let job = state.transition(key, event, now).map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
    job.hold_types = held.into();
    out.persist(JobProgress::op(job));
    if job.state() == JobState::Queued {
        out.schedule = true;
    }
    Ok(())
}
