//! `AlterJob` (qalter): change attributes of jobs. Every value is validated again as at
//! submission (job name, priority range, resource grammar, feasibility against the known nodes)
//! and a job changes in all its attributes or in none. The changed spec is persisted with
//! `StoreOp::UpdateJobSpec`, and the parsed request is recomputed, so the scheduler and the
//! mom (walltime) see the new values.
//!
//! Rules (OpenPBS `req_modifyjob`): the owner, an operator or a manager (holds as qhold: `o`
//! an operator, `s` a manager); a job that runs as root only by a manager (ours: an operator
//! must not choose a root job's shell, variables or output path); a running job only by a manager
//! and only the attributes OpenPBS lets change while running (of the resources only walltime,
//! which goes to the mother superior as `SetWalltime`; not account, shell or variables), else
//! `Cannot modify attribute while job running`; an exiting job is in the wrong state; a
//! finished job answers `Job has finished`.
//!
//! Arrays (OpenPBS `req_modifyjob`): the parent may be altered while queued, held or begun
//! (B is not "running" there); the change reaches the subjobs that have not started
//! (`alter_job/array.rs`, a child module: no other handler uses it). A subjob alone, or a
//! range of them, is `Invalid request`.

mod array;

use crate::state::holds::{hold_event, new_holds};
use crate::state::outbox::Outbox;
use crate::state::submission::{array_suffix, bad_value, check_feasible, parse_request, std_path};
use crate::state::{Job, Requester, ServerState};
use crate::store::StoreOp;
use job::id::ArrayPart;
use job::{JobEvent, JobState};
use proto::error::{ErrorCode, RequestError};
use proto::{JobAlteration, ServerReply, ServerToMom};

/// Handles qalter for every id; errors are per id.
pub fn alter_job(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    ids: &[String],
    changes: &JobAlteration,
) -> ServerReply {
    let errors = ids.iter().filter_map(|id| alter_one(state, out, requester, now, id, changes).err()).collect();
    ServerReply::Done { errors }
}

fn alter_one(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    text: &str,
    changes: &JobAlteration,
) -> Result<(), RequestError> {
    if job::array::parse_range_id(text).is_some() {
        // A range of subjobs cannot be altered or moved (OpenPBS: PBSE_IVALREQ).
        return Err(RequestError::with_detail(ErrorCode::InvalidRequest, text));
    }
    let (key, job) = state.find_job_entry(text)?;
    let id = job.id.clone();
    let manager = state.is_manager(requester);
    if !state.may_alter(requester, job.owner_uid) {
        return Err(RequestError::new(
            ErrorCode::PermissionDenied,
            format!("{}  {id}", ErrorCode::PermissionDenied.text()),
        ));
    }
    if matches!(id.array, Some(ArrayPart::Sub(_))) {
        // Subjobs take their attributes from the parent (OpenPBS: PBSE_IVALREQ).
        return Err(RequestError::with_detail(ErrorCode::InvalidRequest, &id));
    }
    let parent = id.array == Some(ArrayPart::Parent);
    match job.state() {
        JobState::Finished | JobState::Expired => return Err(RequestError::with_detail(ErrorCode::JobFinished, &id)),
        JobState::Begun if parent => {}
        JobState::Exiting | JobState::Begun => return Err(RequestError::with_detail(ErrorCode::BadState, &id)),
        JobState::Running | JobState::Suspended => check_running(changes, manager, &id)?,
        JobState::Queued | JobState::Held | JobState::Waiting => {}
    }
    state.check_site_permissions(&changes.resources, requester)?;
    if changes.is_empty() {
        // Nothing to change (OpenPBS acknowledges such a request).
        return Ok(());
    }
    let old_spec = std::sync::Arc::clone(&job.spec);
    let mut altered: Job = job.clone();
    let hold_letters = match (manager, state.is_operator(requester)) {
        (true, _) => "soup",
        (false, true) => "ou",
        (false, false) => "u",
    };
    apply(state, &mut altered, changes, hold_letters).map_err(|error| match error.code {
        // A hold the requester may not set: OpenPBS's text, as for another user's job.
        ErrorCode::PermissionDenied => {
            RequestError::new(ErrorCode::PermissionDenied, format!("{}  {id}", ErrorCode::PermissionDenied.text()))
        }
        _ => error,
    })?;
    let event = hold_event(&altered);
    if let Some(event) = event {
        altered.state().apply(event).map_err(|_| RequestError::with_detail(ErrorCode::BadState, &id))?;
    }
    altered.times.mtime = now;
    let unknown = || RequestError::with_detail(ErrorCode::UnknownJobId, &id);
    if !state.replace_job_keeping_state(key, altered) {
        return Err(unknown());
    }
    if let Some(event) = event {
        state.transition(key, event, now).expect("checked on the altered copy");
    }
    if let Some(event) = changes.execution_time.and_then(|at| execution_time_event(state.jobs()[&key].state(), at, now))
    {
        state.transition(key, event, now).expect("a queued job waits, a waiting one is queued");
    }
    let job = &state.jobs()[&key];
    out.persist(StoreOp::UpdateJobSpec(job.clone()));
    if parent {
        array::follow_parent(state, out, key, &old_spec, changes, hold_letters, now);
    }
    let job = &state.jobs()[&key];
    if job.state().is_active() && !changes.resources.is_empty() {
        if let Some(mother) = job.exec.first() {
            let message = ServerToMom::SetWalltime { job_id: id.to_string(), walltime: job.request.walltime };
            out.send(&mother.node, message);
        }
    }
    out.schedule = true;
    tracing::info!(job_id = %id, requestor = %requester.user, attributes = ?changes.attribute_names(), "job altered");
    Ok(())
}

/// The attributes OpenPBS lets change while a job runs (`ATR_DFLAG_ALTRUN`; of the resources,
/// walltime); most others take effect if the job is rerun. Only managers may change a running
/// job here.
fn check_running(changes: &JobAlteration, manager: bool, id: &job::JobId) -> Result<(), RequestError> {
    let only_walltime = changes.resources.iter().all(|(name, _)| name == "walltime");
    let not_while_running = [
        (!only_walltime, "Resource_List"),
        (changes.account.is_some(), "Account_Name"),
        (changes.shell.is_some(), "Shell_Path_List"),
        (!changes.variables.is_empty(), "Variable_List"),
        (changes.execution_time.is_some(), "Execution_Time"),
    ];
    let refused = match not_while_running.iter().find(|(set, _)| *set) {
        Some((_, name)) => Some(*name),
        None if !manager => changes.attribute_names().first().copied(),
        None => None,
    };
    match refused {
        Some(name) => Err(RequestError::new(
            ErrorCode::ModifyWhileRunning,
            format!("{}  {name} {id}", ErrorCode::ModifyWhileRunning.text()),
        )),
        None => Ok(()),
    }
}

/// Validates every change and applies it to `job` (a copy: the caller commits it or drops it).
/// `hold_letters`: the holds the requester may set and clear (see [`new_holds`]).
fn apply(state: &ServerState, job: &mut Job, changes: &JobAlteration, hold_letters: &str) -> Result<(), RequestError> {
    let spec = std::sync::Arc::make_mut(&mut job.spec);
    if let Some(name) = &changes.name {
        job::spec::check_job_name(name).map_err(|reason| bad_value(format!("Job_Name: {reason}")))?;
        spec.name = name.clone();
    }
    if let Some(priority) = changes.priority {
        if !(-1024..=1023).contains(&priority) {
            return Err(bad_value(format!("Priority: {priority} is outside -1024..1023")));
        }
        spec.priority = priority;
    }
    if !changes.resources.is_empty() {
        let resources = merged_resources(&spec.resources, &changes.resources);
        let request = parse_request(state, &resources)?;
        check_feasible(state, &request)?;
        spec.resources = resources;
        job.request = request.into();
    }
    if let Some(holds) = &changes.hold_types {
        job.hold_types = new_holds(&job.hold_types, holds, hold_letters)?.into();
    }
    if let Some(users) = &changes.mail_users {
        job::mail::check_list(users).map_err(|error| bad_value(format!("Mail_Users: {error}")))?;
    }
    let spec = std::sync::Arc::make_mut(&mut job.spec);
    for (name, value) in &changes.variables {
        if name.is_empty() || name.contains(['=', '\0']) || value.contains('\0') {
            return Err(bad_value(format!("Variable_List: {name:?} is not a variable name and value")));
        }
        spec.variables.set(name, value);
    }
    // The same bounds as at qsub: repeated `qalter -v` cannot grow a job without limit.
    if !changes.variables.is_empty() {
        job::limits::check(spec).map_err(|error| bad_value(error.to_string()))?;
    }
    macro_rules! copy {
        ($($field:ident),*) => { $( if let Some(value) = &changes.$field { spec.$field = value.clone().into(); } )* };
    }
    copy!(keep, mail_points, mail_users, rerunnable, join);
    if let Some(account) = &changes.account {
        spec.account = Some(account.clone());
    }
    if let Some(shell) = &changes.shell {
        spec.shell = Some(shell.clone());
    }
    let workdir = spec.workdir().unwrap_or("/").to_string();
    for (given, kind) in [(&changes.output_path, 'o'), (&changes.error_path, 'e')] {
        let Some(path) = given else { continue };
        if !path.split_once(':').is_some_and(|(_, path)| path.starts_with('/')) {
            let name = if kind == 'o' { "Output_Path" } else { "Error_Path" };
            return Err(bad_value(format!("{name}: {path} is not host:/absolute/path")));
        }
        let suffix = array_suffix(&job.spec, state.flavor);
        let resolved = std_path(Some(path), &job.spec, &workdir, kind, job.id.seq, &suffix);
        if kind == 'o' {
            std::sync::Arc::make_mut(&mut job.spec).output_path = Some(path.clone());
            job.output_path = resolved;
        } else {
            std::sync::Arc::make_mut(&mut job.spec).error_path = Some(path.clone());
            job.error_path = resolved;
        }
    }
    apply_options(std::sync::Arc::make_mut(&mut job.spec), changes)?;
    job.spec_bytes = Job::spec_size(&job.spec);
    // A spec grown by qalter counts against its owner's `max_user_kept_bytes` as a new one would.
    let before = state.jobs().get(&job.id.key()).map_or(0, |old| old.spec_bytes);
    if job.spec_bytes > before {
        state.check_kept_bytes(&job.owner, job.spec_bytes - before)?;
    }
    Ok(())
}

/// `-a`, `-c`, `-P`, checked as at submission (`job::options`).
fn apply_options(spec: &mut job::JobSpec, changes: &JobAlteration) -> Result<(), RequestError> {
    let options = &mut spec.options;
    if let Some(at) = changes.execution_time {
        options.execution_time = Some(at);
    }
    if let Some(checkpoint) = &changes.checkpoint {
        options.checkpoint = Some(checkpoint.clone());
    }
    if let Some(project) = &changes.project {
        options.project = Some(project.clone());
    }
    options.check().map_err(|error| bad_value(error.to_string()))
}

/// A new execution time `at` moves a queued job to `W` when it is ahead, a waiting one to `Q`
/// when it is not; held and running jobs keep their state.
fn execution_time_event(current: JobState, at: i64, now: i64) -> Option<JobEvent> {
    match current {
        JobState::Queued if at > now => Some(JobEvent::Defer),
        JobState::Waiting if at <= now => Some(JobEvent::Wake),
        _ => None,
    }
}

/// The job's `-l` pairs with the changes merged in, per resource. A new chunk shape (`select`
/// or `nodes`) replaces the old one, whichever syntax it was given in.
fn merged_resources(current: &[(String, String)], changes: &[(String, String)]) -> Vec<(String, String)> {
    let is_shape = |name: &str| name == "select" || name == "nodes";
    let new_shape = changes.iter().any(|(name, _)| is_shape(name));
    let mut merged: Vec<(String, String)> =
        current.iter().filter(|(name, _)| !(new_shape && is_shape(name))).cloned().collect();
    job::resources::merge_override(&mut merged, changes);
    merged
}
