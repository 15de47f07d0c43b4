//! `HoldJob` (qhold) and `ReleaseJob` (qrls). Holds are kept in `Hold_Types`; a queued job with
//! any hold is `H`, and returns to `Q` when the last one is released. Users may set and clear
//! only `u` holds; `o` and `s` need a manager. Holding or releasing an array parent does the
//! same to its subjobs that have not started.

use crate::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::id::ArrayPart;
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
    if hold_types.is_empty() || !hold_types.chars().all(|c| "uos".contains(c)) {
        let message = format!("{} Hold_Types {hold_types}", ErrorCode::BadAttributeValue.text());
        return ServerReply::Error(RequestError::new(ErrorCode::BadAttributeValue, message));
    }
    let errors = ids.iter().filter_map(|id| hold_one(state, out, requester, now, id, hold_types, hold).err()).collect();
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
    let key = state.find_job(text)?;
    let id = state.jobs[&key].id.clone();
    let job = &state.jobs[&key];
    let needs_manager = hold_types != "u";
    if !state.may_modify(requester, job.owner_uid) || (needs_manager && !state.is_manager(requester)) {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    if job.state.is_finished() {
        return Err(RequestError::with_detail(ErrorCode::JobFinished, &id));
    }
    hold_key(state, out, now, key, hold_types, hold)?;
    if id.array == Some(ArrayPart::Parent) {
        // The parent's holds apply to its subjobs that have not started.
        for sub in state.subjob_keys(key) {
            if matches!(state.jobs[&sub].state, JobState::Queued | JobState::Held | JobState::Waiting) {
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
    key: u64,
    hold_types: &str,
    hold: bool,
) -> Result<(), RequestError> {
    let job = &state.jobs[&key];
    let id = job.id.clone();
    let mut held: Vec<char> = job.hold_types.chars().filter(|c| *c != 'n').collect();
    for kind in hold_types.chars() {
        if hold && !held.contains(&kind) {
            held.push(kind);
        } else if !hold {
            held.retain(|existing| *existing != kind);
        }
    }
    held.sort_unstable();
    let event = if hold {
        JobEvent::Hold
    } else if held.is_empty() {
        JobEvent::Release
    } else {
        JobEvent::Hold
    };
    state.transition(key, event, now).map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
    let job = state.jobs.get_mut(&key).expect("job exists");
    job.hold_types = if held.is_empty() { "n".to_string() } else { held.into_iter().collect() };
    out.persist(StoreOp::UpdateJob(job.clone()));
    if !hold {
        out.schedule = true;
    }
    Ok(())
}
