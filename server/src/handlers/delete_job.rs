//! `DeleteJob` (qdel): a job that is not running ends at once (state F, kept in history); a
//! running job is asked to die: its mother superior's mom kills the whole session and reports
//! the end (Exit_status 271, or 265 after SIGKILL). With `-W force` a manager ends a running
//! job at once (265) without waiting for its mom (which may be gone for good); with `-x`
//! finished jobs are removed from history. An array parent's delete deletes every subjob that
//! is not over; the parent ends when they all are.

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::id::ArrayPart;
use job::JobKey;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::{ServerReply, ServerToMom};

/// Exit status recorded by a forced delete (as if the job had been SIGKILLed).
pub const FORCED_EXIT_STATUS: i32 = 256 + 9;

/// The qdel options that change what a delete does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct How {
    pub force: bool,
    pub history: bool,
}

/// Handles qdel for every id; errors are per id.
pub fn delete_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    ids: &[String],
    how: How,
) -> ServerReply {
    if how.force && !state.is_manager(requester) {
        let message = format!("{} (qdel -W force is for managers)", ErrorCode::PermissionDenied.text());
        return ServerReply::Error(RequestError::new(ErrorCode::PermissionDenied, message));
    }
    let errors = state
        .expand_ranges(ids)
        .into_iter()
        .filter_map(|id| id.and_then(|id| delete_one(state, out, requester, now, &id, how)).err())
        .collect();
    ServerReply::Done { errors }
}

fn delete_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
    how: How,
) -> Result<(), RequestError> {
    let (key, job) = state.find_job_entry(text)?;
    let id = job.id.clone();
    if !state.may_modify(requester, job.owner_uid) {
        // OpenPBS's text ends with a blank, so two blanks precede the id.
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    if id.array == Some(ArrayPart::Parent) && !job.state().is_finished() {
        return delete_array(state, out, requester, now, key, how);
    }
    delete_key(state, out, requester, now, key, how)
}

/// qdel of an array parent (`123[]` or `123`): queued subjobs end at once (X), running ones
/// are killed; the parent ends (F) when the last subjob is over (`settle_arrays`).
fn delete_array(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    key: JobKey,
    how: How,
) -> Result<(), RequestError> {
    let Some(parent) = state.job_mut(key) else {
        return Err(RequestError::new(ErrorCode::UnknownJobId, ErrorCode::UnknownJobId.text()));
    };
    parent.delete_requested = true;
    out.persist(StoreOp::UpdateJob(Box::new(parent.clone())));
    for sub in state.subjob_keys(key) {
        let Some(job) = state.job(sub) else { continue };
        if job.state().is_finished() || (job.delete_requested && !how.force) {
            continue;
        }
        if let Err(error) = delete_key(state, out, requester, now, sub, how) {
            tracing::warn!(job_key = %sub, error = %error.message, "subjob of a deleted array not deleted");
        }
    }
    // Every subjob may be over already (all were queued): the parent follows in this commit.
    state.settle_arrays(out, now);
    tracing::info!(job_id = %state.jobs()[&key].id, requestor = %requester.user, "delete of array");
    Ok(())
}

/// Deletes one job (or subjob) the requester may modify.
fn delete_key(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    key: JobKey,
    how: How,
) -> Result<(), RequestError> {
    let job = state.known_job(key)?;
    let id = job.id.clone();
    let bad_state = |_| RequestError::with_detail(ErrorCode::BadState, &id);
    match job.state() {
        JobState::Finished | JobState::Expired if how.history => {
            if matches!(id.array, Some(ArrayPart::Sub(_))) {
                // A subjob's history goes with its array.
                return Err(RequestError::with_detail(ErrorCode::JobFinished, &id));
            }
            for removed in state.remove_finished_job(key) {
                out.persist(StoreOp::DeleteJob(removed));
            }
            // Ids are never reused: the counter is stored with the deletions (submissions do
            // not store it, their rows do).
            out.persist(StoreOp::SetNextSeq(state.next_seq()));
            Ok(())
        }
        JobState::Finished | JobState::Expired => Err(RequestError::with_detail(ErrorCode::JobFinished, &id)),
        JobState::Begun => Err(RequestError::with_detail(ErrorCode::BadState, &id)),
        JobState::Running | JobState::Exiting | JobState::Suspended if how.force => {
            out.notice(NoticeKind::Deleted { requestor: requestor(state, requester) }, job, now);
            force_end(state, out, key, now);
            tracing::info!(job_id = %id, requestor = %requester.user, "forced delete of running job");
            Ok(())
        }
        JobState::Running | JobState::Exiting | JobState::Suspended => {
            let mother = job.exec.first().map(|share| share.node.clone());
            let requestor = requestor(state, requester);
            let job = state.transition(key, JobEvent::Exit, now).map_err(bad_state)?;
            job.delete_requested = true;
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
            out.notice(NoticeKind::Deleted { requestor }, job, now);
            if let Some(mother) = mother {
                out.send(&mother, ServerToMom::KillJob { job_id: id.to_string() });
            }
            tracing::debug!(job_id = %id, requestor = %requester.user, "delete of running job");
            Ok(())
        }
        JobState::Queued | JobState::Held | JobState::Waiting => {
            // A subjob that never ran is over (X); anything else goes to history (F).
            let event = if matches!(id.array, Some(ArrayPart::Sub(_))) { JobEvent::Expire } else { JobEvent::Delete };
            let requestor = requestor(state, requester);
            let job = state.transition(key, event, now).map_err(bad_state)?;
            job.delete_requested = true;
            job.times.obittime = Some(now);
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
            out.notice(NoticeKind::Deleted { requestor }, job, now);
            tracing::debug!(job_id = %id, requestor = %requester.user, "deleted queued job");
            crate::state::depend::job_changed(state, out, key, now);
            Ok(())
        }
    }
}

/// Ends a running job now: frees its nodes, records 265, and still tells its moms to kill
/// and drop it in case they are alive.
fn force_end(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    let job = state.finish_job(key, FORCED_EXIT_STATUS, now).expect("an active job may finish");
    job.delete_requested = true;
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.notice(NoticeKind::Ended, job, now);
    let id = job.id.to_string();
    for (index, share) in job.exec.iter().enumerate() {
        let message = if index == 0 {
            ServerToMom::KillJob { job_id: id.clone() }
        } else {
            ServerToMom::EndJob { job_id: id.clone() }
        };
        out.send(&share.node, message);
    }
    out.schedule = true;
    crate::state::depend::job_changed(state, out, key, now);
}

/// The accounting log's `requestor`: `user@host`. Over the local socket the requester is on the
/// server's own host, named as the server.
fn requestor(state: &ServerState, requester: &Requester) -> String {
    format!("{}@{}", requester.user, state.server_name)
}
