//! `DeleteJob` (qdel): a job that is not running ends at once (state F, kept in history); a
//! running job is asked to die: its mother superior's mom kills the whole session and reports
//! the end (Exit_status 271, or 265 after SIGKILL).

use crate::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::{JobEvent, JobId, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::{ServerReply, ServerToMom};

/// Handles qdel for every id; errors are per id.
pub fn delete_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    ids: &[String],
) -> ServerReply {
    let errors = ids.iter().filter_map(|id| delete_one(state, out, requester, now, id).err()).collect();
    ServerReply::Done { errors }
}

fn delete_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
) -> Result<(), RequestError> {
    let seq = state.find_job(text)?;
    let id = JobId::new(seq, &state.server_name);
    let job = &state.jobs[&seq];
    if !state.may_modify(requester, job.owner_uid) {
        // OpenPBS's text ends with a blank, so two blanks precede the id.
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    match job.state {
        JobState::Finished => Err(RequestError::with_detail(ErrorCode::JobFinished, &id)),
        JobState::Running | JobState::Exiting => {
            let mother = job.exec.first().map(|share| share.node.clone());
            state
                .transition(seq, JobEvent::Exit, now)
                .map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
            let job = state.jobs.get_mut(&seq).expect("job exists");
            job.delete_requested = true;
            out.persist(StoreOp::UpdateJob(job.clone()));
            if let Some(mother) = mother {
                out.send(&mother, ServerToMom::KillJob { job_id: id.to_string() });
            }
            tracing::info!(job_id = %id, requestor = %requester.user, "delete of running job");
            Ok(())
        }
        JobState::Queued | JobState::Held | JobState::Waiting => {
            state
                .transition(seq, JobEvent::Delete, now)
                .map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
            let job = state.jobs.get_mut(&seq).expect("job exists");
            job.delete_requested = true;
            job.times.obittime = Some(now);
            out.persist(StoreOp::UpdateJob(job.clone()));
            tracing::info!(job_id = %id, requestor = %requester.user, "deleted queued job");
            Ok(())
        }
    }
}
