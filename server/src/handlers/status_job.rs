//! `StatusJob` (qstat): the status of the selected jobs. Selectors are job ids or queue names;
//! finished jobs are included only with `history` (OpenPBS `-x`), and asking for a finished
//! job by id without it is the reference's "Job has finished" error.

use crate::config::Flavor;
use crate::state::ServerState;
use crate::status::{job_status_filtered, Wanted};
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// Handles qstat.
pub fn status_job(
    state: &ServerState,
    flavor: Flavor,
    selectors: &[String],
    history: bool,
    users: &[String],
    wanted: Option<&[String]>,
) -> ServerReply {
    let wanted = wanted.map(Wanted::new);
    let job_status = |job| {
        let status = job_status_filtered(job, &state.server_name, flavor, wanted.as_ref());
        crate::status::with_depend(status, wanted.as_ref(), || crate::depend::depend_value(state, job))
    };
    let user_ok = |owner: &str| users.is_empty() || users.iter().any(|user| user == owner);
    // Listings (all jobs, or a queue's) show history only with -x.
    let listed = |job: &crate::state::Job| (history || !job.state.is_finished()) && user_ok(&job.owner);
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
                    if job.state.is_finished() && !history {
                        let id = state.jobs[&key].id.clone();
                        let message = format!(
                            "{id} {}, use -x or -H to obtain historical job information",
                            ErrorCode::JobFinished.text()
                        );
                        errors.push(RequestError::new(ErrorCode::JobFinished, message));
                    } else if user_ok(&job.owner) {
                        jobs.push(job_status(job));
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
