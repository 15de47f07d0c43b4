//! `StatusJob` (qstat): the status of the selected jobs. Selectors are job ids or queue names;
//! finished jobs are included only with `history` (OpenPBS `-x`), and asking for a finished
//! job by id without it is the reference's "Job has finished" error. An array shows as its
//! parent; its subjobs are listed after it with `-t` (`subjobs`); `-J` (`arrays_only`) keeps
//! only arrays.

use crate::config::Flavor;
use crate::state::{Job, ServerState};
use crate::status::{job_status_with_array, ArrayView, Wanted};
use job::id::ArrayPart;
use job::JobState;
use proto::error::{ErrorCode, RequestError};
use proto::{JobStatus, ServerReply};

/// How arrays are listed (qstat `-t`, `-J`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArrayListing {
    /// `-t`: list each array's subjobs after its parent.
    pub subjobs: bool,
    /// `-J`: only arrays (their parents, and with `-t` their subjobs).
    pub arrays_only: bool,
}

/// Handles qstat.
pub fn status_job(
    state: &ServerState,
    flavor: Flavor,
    selectors: &[String],
    history: bool,
    users: &[String],
    wanted: Option<&[String]>,
    arrays: ArrayListing,
) -> ServerReply {
    let wanted = wanted.map(Wanted::new);
    let job_status = |job: &Job| status_of(state, job, flavor, wanted.as_ref());
    let user_ok = |owner: &str| users.is_empty() || users.iter().any(|user| user == owner);
    // Listings (all jobs, or a queue's) show history only with -x; a subjob is listed (with
    // -t) when its parent is.
    let top_listed = |job: &Job| (history || !job.state.is_finished()) && user_ok(&job.owner);
    let listed = |job: &Job| match job.id.array {
        Some(ArrayPart::Sub(_)) => arrays.subjobs && parent_of(state, job).is_some_and(top_listed),
        Some(ArrayPart::Parent) => top_listed(job),
        None => !arrays.arrays_only && top_listed(job),
    };
    let mut jobs = Vec::new();
    let mut errors = Vec::new();
    if selectors.is_empty() {
        jobs.extend(state.jobs.values().map(|job| &**job).filter(|job| listed(job)).map(job_status));
    }
    for selector in selectors {
        if selector.starts_with(|c: char| c.is_ascii_digit()) {
            match state.find_job(selector) {
                Ok(key) => {
                    let job = &state.jobs[&key];
                    // A subjob that is over (X) is still shown; a finished job needs -x.
                    if job.state == JobState::Finished && !history {
                        let id = state.jobs[&key].id.clone();
                        let message = format!(
                            "{id} {}, use -x or -H to obtain historical job information",
                            ErrorCode::JobFinished.text()
                        );
                        errors.push(RequestError::new(ErrorCode::JobFinished, message));
                    } else if user_ok(&job.owner) {
                        jobs.push(job_status(job));
                        if arrays.subjobs && job.id.array == Some(ArrayPart::Parent) {
                            jobs.extend(state.subjob_keys(key).iter().map(|sub| job_status(&state.jobs[sub])));
                        }
                    }
                }
                Err(error) => errors.push(error),
            }
        } else {
            // A destination: `queue`, `@server` (every job) or `queue@server`.
            match state.resolve_destination(selector) {
                Ok(queue) => jobs.extend(
                    state
                        .jobs
                        .values()
                        .map(|job| &**job)
                        .filter(|job| job.queue == queue && listed(job))
                        .map(job_status),
                ),
                Err(_) => errors.push(RequestError::new(
                    ErrorCode::UnknownQueue,
                    format!("{} {selector}", ErrorCode::UnknownQueue.text()),
                )),
            }
        }
    }
    ServerReply::Jobs { server: state.server_name.clone(), jobs, errors, more: false }
}

/// A subjob's parent.
fn parent_of<'a>(state: &'a ServerState, job: &Job) -> Option<&'a Job> {
    state.jobs.get(&job::JobId::parent_key(job.id.key())).map(|parent| &**parent)
}

/// One job's status record, with its array's counts if it is an array parent.
fn status_of(state: &ServerState, job: &Job, flavor: Flavor, wanted: Option<&Wanted>) -> JobStatus {
    if job.id.array != Some(ArrayPart::Parent) {
        return job_status_with_array(job, &state.server_name, flavor, wanted, None);
    }
    let key = job.id.key();
    let counts = state.array_counts(key);
    let remaining = || {
        state
            .subjob_keys(key)
            .iter()
            .map(|sub| &state.jobs[sub])
            .filter(|sub| matches!(sub.state, JobState::Queued | JobState::Held | JobState::Waiting))
            .filter_map(|sub| match sub.id.array {
                Some(ArrayPart::Sub(index)) => Some(index),
                _ => None,
            })
            .collect()
    };
    let view = ArrayView { counts: &counts, remaining: &remaining };
    job_status_with_array(job, &state.server_name, flavor, wanted, Some(&view))
}
