//! `MoveJob` (qmove): move jobs that have not started (queued, held or waiting) to another
//! queue of this server, with the checks a submission to that queue passes (enabled, user
//! ACL, resource limits, `max_queued`). The owner, operators and managers may move a job.
//! An array moves as a whole, parent and subjobs, while its parent is queued, held or waiting
//! (no subjob has started); a subjob alone is `Invalid request` (OpenPBS `req_movejob`).

use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::id::ArrayPart;
use job::JobState;
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// Handles qmove of `ids` to `destination`.
pub fn move_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    destination: &str,
    ids: &[String],
) -> ServerReply {
    // An unknown destination is reported per job, after the job's own checks, as OpenPBS's
    // `qmove: Unknown queue 12.head`.
    let queue = state.resolve_destination(destination);
    let mut errors = Vec::new();
    for text in ids {
        if let Err(error) = move_one(state, out, requester, now, &queue, text) {
            errors.push(error);
        }
    }
    out.schedule = true;
    ServerReply::Done { errors }
}

fn move_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    queue: &Result<String, RequestError>,
    text: &str,
) -> Result<(), RequestError> {
    if job::array::parse_range_id(text).is_some() {
        // A range of subjobs cannot be altered or moved (OpenPBS: PBSE_IVALREQ).
        return Err(RequestError::with_detail(ErrorCode::InvalidRequest, text));
    }
    let (key, job) = state.find_job_entry(text)?;
    if !state.may_modify(requester, job.owner_uid) {
        // OpenPBS's text is "Unauthorized Request " and prt_job_err adds a space before the id.
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {}", ErrorCode::PermissionDenied.text(), job.id),
        ));
    }
    if matches!(job.id.array, Some(ArrayPart::Sub(_))) {
        return Err(RequestError::with_detail(ErrorCode::InvalidRequest, &job.id));
    }
    let queue =
        queue.as_deref().map_err(|error| RequestError::new(error.code, format!("{} {}", error.message, job.id)))?;
    if !matches!(job.state(), JobState::Queued | JobState::Held | JobState::Waiting) {
        return Err(RequestError::with_detail(ErrorCode::BadState, &job.id));
    }
    if job.queue == queue {
        return Ok(());
    }
    let mut keys = vec![key];
    if job.id.array == Some(ArrayPart::Parent) {
        keys.extend(state.subjob_keys(key));
    }
    // An array counts as its subjobs against the destination's `max_queued`.
    let count = if keys.len() > 1 { keys.len() - 1 } else { 1 };
    state
        .check_admission_of(queue, requester, &job.owner, &job.request, Some(key), count as u32)
        .map_err(|error| RequestError::new(error.code, format!("{} {}", error.message, job.id)))?;
    for key in keys {
        let Some(job) = state.job_mut(key) else { continue };
        job.queue = queue.into();
        job.times.mtime = now;
        out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    }
    tracing::info!(job_id = %state.jobs()[&key].id, queue, "job moved");
    Ok(())
}
