//! Job dependencies (`qsub -W depend=`, pbs-reference 2.4): checking them at submit, holding a
//! job (system hold `s`, state `H`) while they are unmet, releasing it when they are met, and
//! deleting it (with its own dependents, down the chain) when they never can be. Also the
//! `depend` value `qstat -f` shows. Pure functions over `ServerState` + `Outbox`; the handlers
//! call [`job_changed`] where a job starts or ends.
//!
//! What is stored: only each job's `spec.depend` (as submitted, ids normalised). Everything
//! else is derived, so a restarted server recomputes it ([`rebuild`]): which jobs wait on
//! which ([`Index`]) and the `after*` dependencies a job received from other jobs' `before*`.
//! Whether a dependency is met is read from the named job's state when it is evaluated. A
//! named job purged from history counts as met: it ended before it could be purged, and its
//! dependents were evaluated at that end (released or deleted), so only met conditions can
//! still refer to it; a purged job's own entries go with it ([`forget`]). One gap: [`rebuild`]
//! recounts `on:N` from the jobs still stored, so a `before*` job purged from history before
//! its target was released no longer counts after a restart.
//!
//! Must not: touch sockets or the store directly, or change a job's state other than through
//! `ServerState::transition`.

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::records::StoreOp;
use crate::state::{Job, Requester, ServerState};
use job::depend::{merge, DependItem, DependKind};
use job::JobKey;
use job::{JobEvent, JobId, JobSpec, JobState};
use proto::error::{ErrorCode, RequestError};
use std::collections::{BTreeMap, BTreeSet};

/// Who waits on whom; derived from the jobs' specs (see [`rebuild`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Index {
    /// A job's key -> the keys of jobs with a dependency on it that may still be unmet.
    /// Dropped when the job finishes (its dependents were evaluated then).
    children: BTreeMap<JobKey, BTreeSet<JobKey>>,
    /// A job's key -> the `after*` dependencies other jobs' `before*` gave it: (kind, key of
    /// the job that named it).
    registered: BTreeMap<JobKey, Vec<(DependKind, JobKey)>>,
}

/// What a job named in a dependency has done so far: the one place that says it. (An array
/// parent's outcome, all its subjobs together, belongs here too.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Purged from history (it had ended).
    Gone,
    /// Not finished; `started` if it has run at least once (it may have been requeued).
    Pending { started: bool },
    /// Finished. `ok`: exit status 0. `dependency_held`: deleted before it ever ran while held
    /// by a dependency, which OpenPBS treats as failing every kind of dependency on it.
    Ended { started: bool, ok: bool, dependency_held: bool },
}

/// Whether one dependency is met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Met,
    Pending,
    /// Can never be met: the dependent is deleted.
    Never,
}

/// The outcome of job `key` so far.
/// An array parent's outcome is its subjobs': started when one started, ended when all are
/// over, ok when every one exited 0.
pub fn outcome(state: &ServerState, key: JobKey) -> Outcome {
    let Some(job) = state.jobs().get(&key) else { return Outcome::Gone };
    let is_parent = job.id.array == Some(job::id::ArrayPart::Parent);
    let subjobs = || state.subjob_keys(key).into_iter().filter_map(|sub| state.job(sub));
    let started = if is_parent {
        job.state() == job::JobState::Begun || subjobs().any(|sub| sub.run_count > 0 || sub.times.stime.is_some())
    } else {
        job.run_count > 0 || job.times.stime.is_some()
    };
    if !job.state().is_finished() {
        return Outcome::Pending { started };
    }
    let ok = if is_parent { subjobs().all(|sub| sub.exit_status == Some(0)) } else { job.exit_status == Some(0) };
    Outcome::Ended { started, ok, dependency_held: !started && job.hold_types.contains('s') }
}

/// `key` and, if it is an array parent, its subjobs that have not started: a dependency of
/// an array holds, releases or deletes all of them.
fn with_waiting_subjobs(state: &ServerState, key: JobKey) -> Vec<JobKey> {
    let mut keys = vec![key];
    if state.jobs().get(&key).is_some_and(|job| job.id.array == Some(job::id::ArrayPart::Parent)) {
        keys.extend(state.subjob_keys(key).into_iter().filter(|sub| {
            matches!(state.jobs()[sub].state(), job::JobState::Queued | job::JobState::Held | job::JobState::Waiting)
        }));
    }
    keys
}

/// Whether an `after*` dependency of `kind` on a job with `outcome` is met (a `before*` one
/// never gates its own job: it is met).
pub fn status(kind: DependKind, outcome: Outcome) -> Status {
    use DependKind as K;
    if !kind.is_after() {
        return Status::Met;
    }
    let Outcome::Ended { started, ok, dependency_held } = outcome else {
        return match outcome {
            Outcome::Pending { started: true } if kind == K::After => Status::Met,
            Outcome::Pending { .. } => Status::Pending,
            _ => Status::Met,
        };
    };
    let met = match kind {
        K::After => started,
        K::AfterOk => ok,
        K::AfterNotOk => !ok,
        _ => true,
    };
    if met && !dependency_held {
        Status::Met
    } else {
        Status::Never
    }
}

/// Like [`status`], for a job named at submit: OpenPBS judges a job that has already finished
/// by its exit status alone (`after` and `afterany` are met by any end).
fn status_at_submit(kind: DependKind, outcome: Outcome) -> Status {
    match outcome {
        Outcome::Ended { ok, .. } => match kind {
            DependKind::AfterOk if !ok => Status::Never,
            DependKind::AfterNotOk if ok => Status::Never,
            _ => Status::Met,
        },
        _ => status(kind, outcome),
    }
}

/// What [`admit`] decided for a new job.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Admission {
    /// Some dependency is not met yet: the job starts held (`s`).
    pub hold: bool,
    /// A dependency can never be met: the job is created and deleted at once, as OpenPBS does.
    pub never: Option<String>,
    /// `before*` targets: (key of the job that gets the dependency, its `after*` kind).
    pub registrations: Vec<(JobKey, DependKind)>,
}

/// Checks a new job's dependencies and normalises their ids (`12` -> `12.<server>`). Every
/// named job must exist (`Unknown Job Id`); a `before*` target must belong to the submitter
/// and must not have started (`Invalid Job Dependency`).
pub fn admit(state: &ServerState, requester: &Requester, spec: &mut JobSpec) -> Result<Admission, RequestError> {
    let mut admission = Admission::default();
    for item in &mut spec.depend {
        let DependItem::Jobs { kind, jobs } = item else {
            admission.hold = true;
            continue;
        };
        let mut kept: Vec<String> = Vec::new();
        for text in jobs.iter() {
            if let Some(id) = admit_one(state, requester, *kind, text, &mut admission)? {
                if !kept.contains(&id) {
                    kept.push(id);
                }
            }
        }
        *jobs = kept;
    }
    spec.depend.retain(|item| !matches!(item, DependItem::Jobs { jobs, .. } if jobs.is_empty()));
    Ok(admission)
}

/// Checks one named job; returns its normalised id, or `None` if the dependency is met for
/// good already (a finished job: dropped from the list, as OpenPBS does).
fn admit_one(
    state: &ServerState,
    requester: &Requester,
    kind: DependKind,
    text: &str,
    admission: &mut Admission,
) -> Result<Option<String>, RequestError> {
    let (key, target) = state.find_job_entry(text)?;
    let id = target.id.to_string();
    let outcome = outcome(state, key);
    if !kind.is_after() {
        if target.owner_uid != requester.uid {
            let message = format!("{}  {id}", ErrorCode::PermissionDenied.text());
            return Err(RequestError::new(ErrorCode::PermissionDenied, message));
        }
        if matches!(outcome, Outcome::Pending { started: true }) {
            let message = format!("{} {}:{id} has already started", ErrorCode::BadDepend.text(), kind.name());
            return Err(RequestError::new(ErrorCode::BadDepend, message));
        }
        if target.state().is_finished() {
            admission.never.get_or_insert_with(|| rejected(&id));
        } else {
            admission.registrations.push((key, kind.mirror()));
        }
        return Ok(Some(id));
    }
    match status_at_submit(kind, outcome) {
        Status::Never => {
            admission.never.get_or_insert_with(|| rejected(&id));
        }
        Status::Pending => admission.hold = true,
        Status::Met if target.state().is_finished() => return Ok(None),
        Status::Met => {}
    }
    Ok(Some(id))
}

/// OpenPBS's words when a job named at submit has already ended the wrong way.
fn rejected(id: &str) -> String {
    format!("Dependency request for job rejected by {id} Finished job did not satisfy dependency")
}

/// Applies [`Admission::hold`] to a job being created, through a legal `Hold` (a new job is
/// `Q`, `W` or `H`, which may all be held).
pub fn hold_new(mut job: Job, admission: &Admission) -> Result<Job, RequestError> {
    if !admission.hold {
        return Ok(job);
    }
    job.hold_types = crate::state::holds::merge_holds(&job.hold_types, "s", true).into();
    job.with_event(JobEvent::Hold).map_err(|_| RequestError::new(ErrorCode::BadState, ErrorCode::BadState.text()))
}

/// Records a new job's dependencies once it is in the state: indexes them, gives `before*`
/// targets their `after*` dependency (holding them), and deletes the job at once if one can
/// never be met.
pub fn submitted(state: &mut ServerState, out: &mut Outbox, key: JobKey, admission: Admission, now: i64) {
    index_job(state, key);
    for (target, kind) in admission.registrations {
        state.depend_mut().registered.entry(target).or_default().push((kind, key));
        state.depend_mut().children.entry(key).or_default().insert(target);
        hold_for_dependency(state, out, target, now);
    }
    if let Some(reason) = admission.never {
        abort(state, out, key, reason, now);
        // Jobs it just gave a `before*` dependency learn that it never ran.
        job_changed(state, out, key, now);
    }
}

/// A job started, ended, was deleted or requeued: re-evaluates the jobs waiting on it, and on
/// down the chain for the ones deleted because of it.
pub fn job_changed(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    let mut work = vec![key];
    while let Some(parent) = work.pop() {
        let finished = state.jobs().get(&parent).is_none_or(|job| job.state().is_finished());
        let children = if finished {
            state.depend_mut().children.remove(&parent)
        } else {
            state.depend().children.get(&parent).cloned()
        };
        for child in children.unwrap_or_default() {
            if evaluate(state, out, child, now) == Status::Never {
                work.push(child);
            }
        }
    }
}

/// Drops the entries naming job `key`, which is being purged from history (call while it is
/// still stored: its spec says where it is listed). One is kept: its `before*` registration
/// on a target still waiting for `on:N`, which counts it.
pub fn forget(state: &mut ServerState, key: JobKey) {
    let named: Vec<(DependKind, JobKey)> = waits_named(state, key).map(|(kind, parent, _)| (kind, parent)).collect();
    let (jobs, index) = state.jobs_and_depend_mut();
    index.children.remove(&key);
    let registered = index.registered.remove(&key).unwrap_or_default();
    let parents = named.iter().filter(|(kind, _)| kind.is_after()).map(|(_, parent)| *parent);
    for parent in parents.chain(registered.iter().map(|(_, from)| *from)) {
        if let Some(children) = index.children.get_mut(&parent) {
            children.remove(&key);
            if children.is_empty() {
                index.children.remove(&parent);
            }
        }
    }
    for (_, target) in named.iter().filter(|(kind, _)| !kind.is_after()) {
        let counts = jobs.get(target).is_some_and(|job| !job.state().is_finished() && on_wanted(job).is_some());
        if let (false, Some(list)) = (counts, index.registered.get_mut(target)) {
            list.retain(|(_, from)| *from != key);
            if list.is_empty() {
                index.registered.remove(target);
            }
        }
    }
}

/// Rebuilds the derived index from the jobs' specs (after loading them from the store).
pub fn rebuild(state: &mut ServerState) {
    *state.depend_mut() = Index::default();
    // A subjob's dependencies are its array's (they share the spec): only parents are indexed.
    let keys: Vec<JobKey> = state.jobs().keys().copied().filter(|key| !key.is_subjob()).collect();
    for key in keys {
        index_job(state, key);
        let befores: Vec<(DependKind, JobKey)> = waits_named(state, key)
            .filter(|(kind, _, _)| !kind.is_after())
            .map(|(kind, target, _)| (kind, target))
            .collect();
        for (kind, target) in befores {
            if !state.jobs().contains_key(&target) {
                continue;
            }
            state.depend_mut().registered.entry(target).or_default().push((kind.mirror(), key));
            if state.jobs().get(&target).is_some_and(|job| !job.state().is_finished()) {
                state.depend_mut().children.entry(key).or_default().insert(target);
            }
        }
    }
}

/// The `depend` value `qstat -f` shows for `job`, in OpenPBS's form
/// (`afterok:12.head@head,beforeok:14.head@head`; TORQUE flavor without `@server`): its
/// dependencies not yet met, the `before*` ones it named, the `after*` ones other jobs gave
/// it, the jobs waiting on it as `before*`, and what is left of `on:N`. `None` if empty.
pub fn depend_value(state: &ServerState, job: &Job) -> Option<String> {
    let key = job.id.key();
    let suffix = match state.flavor {
        proto::Flavor::Torque => String::new(),
        _ => format!("@{}", state.server_name),
    };
    let mut items = Vec::new();
    let mut add = |kind: DependKind, id: &str| {
        merge(&mut items, DependItem::Jobs { kind, jobs: vec![format!("{id}{suffix}")] });
    };
    for (kind, parent, text) in waits_named(state, key) {
        if !kind.is_after() || status(kind, outcome(state, parent)) != Status::Met {
            add(kind, &text);
        }
    }
    for (kind, parent) in state.depend().registered.get(&key).into_iter().flatten() {
        if status(*kind, outcome(state, *parent)) != Status::Met {
            add(*kind, &state.jobs().get(parent).map(|job| job.id.to_string()).unwrap_or_default());
        }
    }
    for child in state.depend().children.get(&key).into_iter().flatten() {
        for (kind, parent, _) in waits_named(state, *child) {
            if parent == key && kind.is_after() {
                add(kind.mirror(), &state.jobs()[child].id.to_string());
            }
        }
    }
    if let Some(left) = on_left(state, job) {
        merge(&mut items, DependItem::On(left));
    }
    (!items.is_empty()).then(|| job::depend::Display(&items).to_string())
}

/// Checks the index against the jobs (for tests): every job held by a dependency that is not
/// met yet is listed under the job it waits on.
pub fn sanity_check(state: &ServerState) {
    for (key, job) in state.jobs() {
        if job.state().is_finished() || job.state().is_active() || key.is_subjob() {
            continue;
        }
        for (kind, parent, text) in waits(state, *key) {
            if kind.is_after() && status(kind, outcome(state, parent)) == Status::Pending {
                let listed = state.depend().children.get(&parent).is_some_and(|children| children.contains(key));
                assert!(listed, "{} waits on {text} but is not indexed under it", job.id);
            }
        }
    }
    // Nothing names a job that is gone, but a registration an `on:N` target still counts.
    let stored = |key: &JobKey| state.jobs().contains_key(key);
    for (parent, children) in &state.depend().children {
        assert!(stored(parent) && children.iter().all(stored), "index names a purged job: {parent} {children:?}");
    }
    for (target, list) in &state.depend().registered {
        assert!(stored(target), "index names a purged job: {target}");
        let counting = !state.jobs()[target].state().is_finished() && on_wanted(&state.jobs()[target]).is_some();
        assert!(list.iter().all(|(_, from)| stored(from) || counting), "registration of a purged job on {target}");
    }
}

/// A job's own dependencies as (kind, key of the named job, its id as stored).
fn waits_named(state: &ServerState, key: JobKey) -> impl Iterator<Item = (DependKind, JobKey, String)> + '_ {
    let items = state.jobs().get(&key).map(|job| job.spec.depend.as_slice()).unwrap_or_default();
    items.iter().flat_map(move |item| match item {
        DependItem::Jobs { kind, jobs } => jobs
            .iter()
            .filter_map(|text| JobId::parse(text, &state.server_name).ok().map(|id| (*kind, id.key(), text.clone())))
            .collect(),
        DependItem::On(_) => Vec::new(),
    })
}

/// Everything job `key` waits on: its own `after*` dependencies and the registered ones.
fn waits(state: &ServerState, key: JobKey) -> Vec<(DependKind, JobKey, String)> {
    let mut all: Vec<_> = waits_named(state, key).filter(|(kind, _, _)| kind.is_after()).collect();
    for (kind, parent) in state.depend().registered.get(&key).into_iter().flatten() {
        let text = state.jobs().get(parent).map(|job| job.id.to_string()).unwrap_or_default();
        all.push((*kind, *parent, text));
    }
    all
}

/// What is left of a job's `on:N` (N minus the `before*` registrations it received).
fn on_left(state: &ServerState, job: &Job) -> Option<u32> {
    let wanted = on_wanted(job)?;
    let got = state.depend().registered.get(&job.id.key()).map_or(0, Vec::len) as u32;
    Some(wanted.saturating_sub(got)).filter(|left| *left > 0)
}

/// A job's `on:N`.
fn on_wanted(job: &Job) -> Option<u32> {
    job.spec.depend.iter().find_map(|item| match item {
        DependItem::On(count) => Some(*count),
        DependItem::Jobs { .. } => None,
    })
}

/// Lists a not-finished job under every job its own `after*` dependencies name.
fn index_job(state: &mut ServerState, key: JobKey) {
    if state.jobs().get(&key).is_none_or(|job| job.state().is_finished()) {
        return;
    }
    // A purged parent is met for good (see [`Outcome::Gone`]): nothing to list under it.
    let parents: Vec<JobKey> = waits_named(state, key)
        .filter(|(kind, parent, _)| kind.is_after() && state.jobs().contains_key(parent))
        .map(|(_, parent, _)| parent)
        .collect();
    for parent in parents {
        state.depend_mut().children.entry(parent).or_default().insert(key);
    }
}

/// Evaluates one waiting job: releases its system hold if everything is met, deletes it if
/// something never can be. Returns what it found.
fn evaluate(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) -> Status {
    let Some(job) = state.jobs().get(&key) else { return Status::Met };
    if !matches!(job.state(), JobState::Queued | JobState::Held | JobState::Waiting) {
        return Status::Met;
    }
    let mut verdict = if on_left(state, job).is_some() { Status::Pending } else { Status::Met };
    for (kind, parent, text) in waits(state, key) {
        match status(kind, outcome(state, parent)) {
            Status::Never => {
                abort(state, out, key, format!("Job deleted as result of dependency on job {text}"), now);
                return Status::Never;
            }
            Status::Pending => verdict = Status::Pending,
            Status::Met => {}
        }
    }
    if verdict == Status::Met {
        release(state, out, key, now);
    }
    verdict
}

/// Clears the system hold of a job whose dependencies are all met (state `Q` unless other
/// holds remain).
fn release(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    for key in with_waiting_subjobs(state, key) {
        release_one(state, out, key, now);
    }
}

fn release_one(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    let Some(job) = state.job(key) else { return };
    if !job.hold_types.contains('s') {
        return;
    }
    let left: String = job.hold_types.chars().filter(|c| *c != 's' && *c != 'n').collect();
    let event = if left.is_empty() { JobEvent::Release } else { JobEvent::Hold };
    let Ok(job) = state.transition(key, event, now) else { return };
    job.hold_types = if left.is_empty() { "n".into() } else { left.into() };
    tracing::info!(job_id = %job.id, "dependencies met, system hold released");
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.schedule = true;
}

/// Gives a job a system hold for a dependency it just received (a `before*` registration).
fn hold_for_dependency(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    for key in with_waiting_subjobs(state, key) {
        hold_one_for_dependency(state, out, key, now);
    }
}

fn hold_one_for_dependency(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) {
    if state.job(key).is_none_or(|job| job.hold_types.contains('s')) {
        return;
    }
    let Ok(job) = state.transition(key, JobEvent::Hold, now) else { return };
    job.hold_types = crate::state::holds::merge_holds(&job.hold_types, "s", true).into();
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
}

/// Deletes a waiting job whose dependency can never be met (state `F`, the reason as its
/// comment), as the server does on its own behalf.
fn abort(state: &mut ServerState, out: &mut Outbox, key: JobKey, reason: String, now: i64) {
    // An array's waiting subjobs end first (X); the parent follows.
    for sub in with_waiting_subjobs(state, key).into_iter().skip(1) {
        if let Ok(job) = state.transition(sub, JobEvent::Expire, now) {
            job.times.obittime = Some(now);
            job.comment = Some(reason.clone());
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
        }
    }
    let Ok(job) = state.transition(key, JobEvent::Delete, now) else { return };
    job.times.obittime = Some(now);
    tracing::info!(job_id = %job.id, reason = %reason, "deleted: dependency can never be met");
    job.comment = Some(reason);
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.notice(NoticeKind::Aborted, job, now);
}

#[cfg(test)]
mod tests;
