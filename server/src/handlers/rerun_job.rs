//! `RerunJob` (qrerun): a running, rerunnable job is killed on its mother superior (output
//! discarded) and queued again when the end of the killed run is reported. Operators and
//! managers only, as in OpenPBS.
//!
//! The job is marked `rerun_requested` (persisted) and goes to `E`; `job_ended.rs` hands the
//! end report of such a job to `state::requeue::requeue_killed_run` instead of finishing it.
//! A qdel that arrives meanwhile wins: the job then ends as deleted.
//!
//! As in OpenPBS, an array parent (`12[]`, once begun) or a subjob range (`12[1-3]`) reruns its
//! running subjobs (see [`rerun_text`]); finished subjobs are not queued again.

use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::{ServerReply, ServerToMom};

/// Handles qrerun for every id; errors are per id.
pub fn rerun_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    ids: &[String],
) -> ServerReply {
    let errors = ids.iter().flat_map(|id| rerun_text(state, out, requester, now, id)).collect();
    ServerReply::Done { errors }
}

/// qrerun of one id: a job, or (OpenPBS `req_rerunjob`) an array parent or a subjob range,
/// which rerun their running (or suspended) subjobs. A range with none running is refused; a
/// begun parent with none is not.
fn rerun_text(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
) -> Vec<RequestError> {
    let keys = match state.array_targets(text) {
        None => return rerun_one(state, out, requester, now, text).err().into_iter().collect(),
        Some(Err(error)) => return vec![error],
        Some(Ok(keys)) => keys,
    };
    if !state.is_operator(requester) {
        return vec![RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {text}", ErrorCode::PermissionDenied.text()),
        )];
    }
    let ids: Vec<String> = keys
        .iter()
        .filter(|key| matches!(state.jobs()[key].state(), JobState::Running | JobState::Suspended))
        .map(|key| state.jobs()[key].id.to_string())
        .collect();
    if ids.is_empty() && job::array::parse_range_id(text).is_some() {
        return vec![RequestError::with_detail(ErrorCode::BadState, text)];
    }
    ids.iter().filter_map(|id| rerun_one(state, out, requester, now, id).err()).collect()
}

fn rerun_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
) -> Result<(), RequestError> {
    let (key, job) = state.find_job_entry(text)?;
    let id = job.id.clone();
    if !state.is_operator(requester) {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    match job.state() {
        JobState::Finished => return Err(RequestError::with_detail(ErrorCode::JobFinished, &id)),
        JobState::Running | JobState::Suspended => {}
        _ => return Err(RequestError::with_detail(ErrorCode::BadState, &id)),
    }
    if !job.spec.rerunnable {
        return Err(RequestError::with_detail(ErrorCode::NotRerunnable, &id));
    }
    let mother = job.exec.first().map(|share| share.node.clone());
    let job =
        state.transition(key, JobEvent::Exit, now).map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
    job.rerun_requested = true;
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    if let Some(mother) = mother {
        out.send(&mother, ServerToMom::RerunJob { job_id: id.to_string() });
    }
    tracing::info!(job_id = %id, requestor = %requester.user, "rerun of running job");
    Ok(())
}
