//! `HoldJob` (qhold) and `ReleaseJob` (qrls). Holds are kept in `Hold_Types`; a queued job with
//! any hold is `H`, and returns to `Q` when the last one is released. Users may set and clear
//! only `u` holds; `o` and `s` need a manager.

use crate::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
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
    if job.state == JobState::Finished {
        return Err(RequestError::with_detail(ErrorCode::JobFinished, &id));
    }
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
