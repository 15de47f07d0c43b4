//! `SubmitJob` (qsub): validate the job again (the server never trusts the client), refuse what
//! can never run, assign the next id and record the job. The reply goes out only after the
//! job's row is committed (the connection code commits the outbox before replying). An array
//! (`-J`/`-t`) is stored as its parent `12[]` (never scheduled itself) and one job per subjob
//! `12[4]`, all sharing the parent's spec, in the same commit. The script goes to the store
//! only: the state keeps its size (`Job::script_bytes`), checked against the server's
//! per-user bounds (`ServerState::check_user_quota`) with `max_queued`.

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::submission::{array_suffix, bad_value, check_feasible, parse_request, std_path};
use crate::state::{Job, JobTimes, Requester, ServerState, StdPath};
use crate::store::StoreOp;
use job::{JobId, JobSpec, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// Handles a submission from `requester` at time `now`.
pub fn submit_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    spec: JobSpec,
) -> ServerReply {
    let admitted = build_job(state, requester, now, spec).and_then(|mut job| {
        let admission = crate::state::depend::admit(state, requester, std::sync::Arc::make_mut(&mut job.spec))?;
        let job = crate::state::depend::hold_new(job, &admission)?;
        let indices = match &job.spec.array {
            Some(array) => array.expand().map_err(|error| bad_value(format!("array_indices_submitted: {error}")))?,
            None => Vec::new(),
        };
        Ok((job, admission, indices))
    });
    match admitted {
        Ok((mut job, admission, indices)) => {
            let id = job.id.to_string();
            let key = job.id.key();
            state.consume_seq(job.id.seq);
            // The script stays in the store only (read back when the job starts).
            // No `SetNextSeq` here: the job's own row keeps its id from being reused (the store
            // loads the larger of the stored counter and the highest key + 1); every deletion
            // of rows stores the counter instead (`delete_job.rs`, `purge_history.rs`).
            out.persist(StoreOp::InsertJob(Box::new(take_script(&mut job))));
            out.notice(NoticeKind::Queued, &job, now);
            let subjobs: Vec<Job> = indices.iter().map(|index| subjob(&job, *index)).collect();
            state.insert_job(job);
            // The subjobs' rows go in the parent's transaction; their spec is the parent's.
            for sub in subjobs {
                out.persist(StoreOp::InsertJob(Box::new(sub.clone())));
                state.insert_job(sub);
            }
            crate::state::depend::submitted(state, out, key, admission, now);
            out.schedule = true;
            ServerReply::JobSubmitted { id }
        }
        Err(error) => ServerReply::Error(error),
    }
}

/// Subjob `index` of array parent `parent`: the parent's spec (shared), request, owner and
/// times, its own id and output paths.
pub(crate) fn subjob(parent: &Job, index: u32) -> Job {
    let mut job = parent.clone();
    job.id = JobId::sub(parent.id.seq, index, parent.id.server.clone());
    job.output_path = StdPath::of_subjob(&parent.output_path, index);
    job.error_path = StdPath::of_subjob(&parent.error_path, index);
    // Its script is the parent's, counted once there.
    job.script_bytes = 0;
    job.spec_bytes = 0;
    job
}

/// Splits a new job in two: the copy returned (for the store) has the script, `job` (for the
/// state) keeps an empty one and only its size, `script_bytes`. The script is moved, never
/// copied.
fn take_script(job: &mut Job) -> Job {
    let script = std::mem::take(&mut std::sync::Arc::make_mut(&mut job.spec).script);
    let mut stored = job.clone();
    stored.spec = JobSpec { script, ..(*job.spec).clone() }.into();
    stored
}

fn build_job(state: &ServerState, requester: &Requester, now: i64, mut spec: JobSpec) -> Result<Job, RequestError> {
    job::limits::check(&spec).map_err(limit_error)?;
    if let Err(reason) = job::spec::check_job_name(&spec.name) {
        return Err(bad_value(format!("Job_Name: {reason}")));
    }
    job::mail::check_list(&spec.mail_users).map_err(|error| bad_value(format!("Mail_Users: {error}")))?;
    spec.exec.check().map_err(|error| bad_value(error.to_string()))?;
    let group = exec_group(state, requester, &spec)?;
    let queue = state.resolve_destination(spec.queue.as_deref().unwrap_or(""))?;
    state.check_site_permissions(&spec.resources, requester)?;
    state.apply_queue_defaults(&queue, &mut spec.resources);
    // Set by the server (pbs-reference 4.1): the queue first submitted to, and (TORQUE) the
    // server's name.
    for (name, value) in [("PBS_O_QUEUE", &queue), ("PBS_O_SERVER", &state.server_name)] {
        spec.variables.set(name, value);
    }
    if !(-1024..=1023).contains(&spec.priority) {
        return Err(bad_value(format!("Priority: {} is outside -1024..1023", spec.priority)));
    }
    if let Some(target) = &spec.interactive {
        target.check().map_err(|reason| bad_value(format!("interactive: {reason}")))?;
        // Interactive jobs are never rerun (pbs-reference 10.4): their qsub is gone by then.
        spec.rerunnable = false;
    }
    if state.server_uid != 0 && requester.uid != state.server_uid {
        let message = format!(
            "{}: this cluster runs as uid {} and can only run that user's jobs",
            ErrorCode::BadUser.text(),
            state.server_uid
        );
        return Err(RequestError::new(ErrorCode::BadUser, message));
    }
    // OpenPBS `set_objexid`: a job that would run as uid 0 needs its owner in `acl_roots`.
    if requester.uid == 0 && !state.root_allowed(&requester.user) {
        return Err(RequestError::new(ErrorCode::BadUser, ErrorCode::BadUser.text()));
    }
    check_options(requester, &spec)?;
    let request = parse_request(state, &spec.resources)?;
    check_feasible(state, &request)?;
    let count = match &spec.array {
        Some(array) => array.expand().map_err(|error| bad_value(format!("array_indices_submitted: {error}")))?.len(),
        None => 1,
    };
    state.check_admission_of(&queue, requester, &requester.user, &request, None, count as u32)?;
    let script = std::mem::take(&mut spec.script);
    let (spec_bytes, script_bytes) = (Job::spec_size(&spec), script.len() as u64);
    spec.script = script;
    state.check_user_quota(&requester.user, count as u32, script_bytes.saturating_add(spec_bytes))?;
    let seq = state.next_seq();
    let hold_types = if spec.user_hold { "u" } else { "n" }.to_string();
    let job_state = match spec.options.execution_time {
        _ if spec.user_hold => JobState::Held,
        Some(at) if at > now => JobState::Waiting,
        _ => JobState::Queued,
    };
    if spec.array.is_some() && !spec.rerunnable {
        return Err(bad_value("Rerunable: an array job cannot be non-rerunnable".to_string()));
    }
    let workdir = spec.workdir().unwrap_or("/").to_string();
    let suffix = array_suffix(&spec, state.flavor);
    let output_path = std_path(spec.output_path.as_deref(), &spec, &workdir, 'o', seq, &suffix);
    let error_path = std_path(spec.error_path.as_deref(), &spec, &workdir, 'e', seq, &suffix);
    let id = match spec.array {
        Some(_) => JobId::parent(seq, &state.server_name),
        None => JobId::new(seq, &state.server_name),
    };
    let run_count = spec.options.initial_run_count();
    let mut job = Job::new(id, spec.into(), request, job_state);
    job.owner = requester.user.clone().into();
    job.owner_uid = requester.uid;
    job.group = group.into();
    job.queue = queue.into();
    job.hold_types = hold_types.into();
    job.times = JobTimes { ctime: now, qtime: now, mtime: now, etime: now, stime: None, obittime: None };
    if job.state() == JobState::Queued {
        // Eligible time runs from submission; the pass stops it if the job cannot run
        // (`state/eligible.rs`).
        job.eligible.start(now);
    }
    job.run_count = run_count;
    job.output_path = output_path;
    job.error_path = error_path;
    job.script_bytes = script_bytes;
    job.spec_bytes = spec_bytes;
    Ok(job)
}

/// The options of `job::options` again (the server never trusts qsub), and `-u`: a job runs as
/// its owner only, so a `User_List` naming anyone else is refused as OpenPBS refuses a user
/// the server may not run as (`Bad UID for job execution`).
fn check_options(requester: &Requester, spec: &JobSpec) -> Result<(), RequestError> {
    spec.options.check().map_err(|error| bad_value(error.to_string()))?;
    if job::options::users_of(&spec.options.user_list).any(|user| user != requester.user) {
        return Err(RequestError::new(ErrorCode::BadUser, ErrorCode::BadUser.text()));
    }
    Ok(())
}

/// A job over one of `job::limits`: OpenPBS's code and text for the script, ours for the rest.
fn limit_error(error: job::limits::LimitError) -> RequestError {
    match error {
        job::limits::LimitError::Script { .. } => RequestError::new(ErrorCode::JobscriptMaxSize, error.to_string()),
        _ => bad_value(error.to_string()),
    }
}

/// The group the job runs as (`egroup`): the `group_list` entry for the server's host (else
/// the one without a host) when the requester is a member of it on this host, else
/// `PBSE_BADGRP` (OpenPBS `set_objexid`); without `group_list`, the requester's group. The
/// mom checks membership again on its own host.
fn exec_group(state: &ServerState, requester: &Requester, spec: &JobSpec) -> Result<String, RequestError> {
    let Some(wanted) = job::exec_opts::group_for_host(&spec.exec.group_list, &state.server_name) else {
        return Ok(group_name(requester.gid));
    };
    let refused = |why: &str| {
        let code = ErrorCode::BadGroup;
        RequestError::new(code, format!("{} ({why})", code.text()))
    };
    let group = uzers::get_group_by_name(wanted).ok_or_else(|| refused("no such group"))?;
    let member = requester.gid == group.gid()
        || uzers::get_user_by_name(&requester.user).is_some_and(|user| {
            user.primary_group_id() == group.gid()
                || uzers::get_user_groups(&requester.user, user.primary_group_id())
                    .unwrap_or_default()
                    .iter()
                    .any(|g| g.gid() == group.gid())
        });
    if !member {
        return Err(refused(&format!("{} is not a member of {wanted}", requester.user)));
    }
    Ok(wanted.to_string())
}

fn group_name(gid: u32) -> String {
    crate::names::group_name(gid).unwrap_or_else(|| gid.to_string())
}
