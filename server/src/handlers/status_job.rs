//! `StatusJob` (qstat): the status of the selected jobs. Selectors are job ids or queue names;
//! finished jobs are included only with `history` (OpenPBS `-x`), and asking for a finished
//! job by id without it is the reference's "Job has finished" error. In the torque flavor a
//! finished job stays in every listing (as `C`) for `keep_completed` seconds after it ended,
//! and asking for an older one by id without history is `Unknown Job Id` (TORQUE purged it).
//! An array shows as its parent; its subjobs are listed after it with `-t` (`subjobs`); `-J`
//! (`arrays_only`) keeps only arrays. What carries a job's environment or command line
//! (`Variable_List`, `Submit_arguments`, TORQUE's `submit_args` and `init_work_dir`) is shown
//! only to its owner, operators and managers ([`Reader`]); `schedselect` only to managers (as
//! OpenPBS: `ATR_DFLAG_MGRD` in `src/lib/Libattr/master_job_attr_def.xml`); invisible site
//! resources only to operators and managers. The same rules ([`Reader::hides`]) hold for a
//! listing answered in rows ([`rows`]).
//! A job or queue named several times (or by several spellings) is listed once, so the reply
//! is bounded by the state whatever the request repeats.

use crate::config::Flavor;
use crate::flavor::recently_completed;
use crate::state::{Job, Requester, ServerState};
use crate::status::{ArrayView, Builder, Columns, Hidden, Wanted};
use job::id::ArrayPart;
use job::JobKey;
use job::JobState;
use proto::error::{ErrorCode, RequestError};
use proto::{JobRow, JobStatus, ServerReply};
use std::collections::HashSet;

/// How arrays are listed (qstat `-t`, `-J`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArrayListing {
    /// `-t`: list each array's subjobs after its parent.
    pub subjobs: bool,
    /// `-J`: only arrays (their parents, and with `-t` their subjobs).
    pub arrays_only: bool,
}

/// What one `StatusJob` asks for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<'a> {
    /// Job ids or destinations; empty = every job.
    pub selectors: &'a [String],
    /// Include finished jobs (`-x`).
    pub history: bool,
    /// Only these owners' jobs; empty = everyone's.
    pub users: &'a [String],
    /// Only these attributes; `None` = all.
    pub wanted: Option<&'a [String]>,
    /// How arrays are listed.
    pub arrays: ArrayListing,
    /// Who asks: decides whether private attributes are shown.
    pub reader: Reader,
}

/// Who reads a listing. A job's private attributes ([`crate::status::PRIVATE`]) are shown to
/// its owner and to operators and managers only. The default sees no job's private attributes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reader {
    /// Sees no job's private attributes.
    #[default]
    Nobody,
    /// A user: sees the private attributes of the jobs of this uid.
    User(u32),
    /// An operator: sees every job's.
    Operator,
    /// A manager: sees every job's, and what only managers read ([`crate::status::MANAGER_ONLY`]).
    Manager,
}

impl Reader {
    /// The reader `requester` is.
    pub fn of(state: &ServerState, requester: &Requester) -> Reader {
        if state.is_manager(requester) {
            Reader::Manager
        } else if state.is_operator(requester) {
            Reader::Operator
        } else {
            Reader::User(requester.uid)
        }
    }

    fn sees_private(self, job: &Job) -> bool {
        match self {
            Reader::Nobody => false,
            Reader::User(uid) => uid == job.owner_uid,
            Reader::Operator | Reader::Manager => true,
        }
    }

    /// What this reader may not see of `job`.
    pub fn hides<'a>(self, state: &'a ServerState, job: &Job) -> Hidden<'a> {
        Hidden {
            private: !self.sees_private(job),
            manager_only: self != Reader::Manager,
            invisible: (!matches!(self, Reader::Manager | Reader::Operator)).then_some(&state.resources),
        }
    }
}

/// Handles qstat at time `now`: [`select`], then [`statuses`] of everything selected.
pub fn status_job(state: &ServerState, flavor: Flavor, now: i64, query: Query) -> ServerReply {
    let Selection { keys, errors } = select(state, flavor, now, &query);
    let jobs = statuses(state, flavor, now, &query, &keys);
    ServerReply::Jobs { server: state.server_name.clone(), jobs, errors, more: false, flavor }
}

/// What a listing selects: job keys in listing order, and one error per selector that matched
/// nothing. Cheap to hold (a key per job), so a long listing's statuses can be built and sent
/// a piece at a time ([`statuses`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub keys: Vec<JobKey>,
    pub errors: Vec<RequestError>,
}

/// The status records of the jobs `keys` names, as `query` asks for them; a job gone since it
/// was selected is left out.
pub fn statuses(state: &ServerState, flavor: Flavor, now: i64, query: &Query, keys: &[JobKey]) -> Vec<JobStatus> {
    let wanted = query.wanted.map(Wanted::new);
    let status = |job: &Job| {
        let mut out = Builder::attrs(wanted.as_ref(), query.reader.hides(state, job));
        record(state, job, flavor, now, &mut out);
        JobStatus { id: job.id.text(), attrs: out.into_attrs() }
    };
    keys.iter().filter_map(|key| state.jobs().get(key)).map(|job| status(job)).collect()
}

/// [`statuses`] as rows: each job's values of `columns` (the query's attributes), by the
/// same rules.
pub fn rows(
    state: &ServerState,
    flavor: Flavor,
    now: i64,
    query: &Query,
    columns: &Columns,
    keys: &[JobKey],
) -> Vec<JobRow> {
    let row = |job: &Job| {
        let mut out = Builder::row(columns, query.reader.hides(state, job));
        record(state, job, flavor, now, &mut out);
        JobRow { id: job.id.compact(), values: out.into_row() }
    };
    keys.iter().filter_map(|key| state.jobs().get(key)).map(|job| row(job)).collect()
}

/// The jobs a qstat at time `now` lists, in order (see the module's header).
pub fn select(state: &ServerState, flavor: Flavor, now: i64, query: &Query) -> Selection {
    let users: HashSet<&str> = query.users.iter().map(String::as_str).collect();
    let user_ok = |owner: &str| users.is_empty() || users.contains(owner);
    // Finished jobs show with -x, and in TORQUE for keep_completed seconds.
    let shown = |job: &Job| {
        query.history || !job.state().is_finished() || recently_completed(flavor, job, now, state.keep_completed())
    };
    // A subjob is listed (with -t) when its parent is.
    let top_listed = |job: &Job| shown(job) && user_ok(&job.owner);
    // A subjob follows its parent in key order, so its siblings ask about the same parent:
    // the last answer is kept (100,000 subjobs: one look-up per array, not one per subjob).
    let last_parent = std::cell::Cell::new(None);
    let parent_listed = |job: &Job| {
        let parent = job::JobId::parent_key(job.id.key());
        match last_parent.get() {
            Some((key, listed)) if key == parent => listed,
            _ => {
                let listed = parent_of(state, job).is_some_and(top_listed);
                last_parent.set(Some((parent, listed)));
                listed
            }
        }
    };
    let arrays = query.arrays;
    let listed = |job: &Job| match job.id.array {
        Some(ArrayPart::Sub(_)) => arrays.subjobs && parent_listed(job),
        Some(ArrayPart::Parent) => top_listed(job),
        None => !arrays.arrays_only && top_listed(job),
    };
    let mut jobs = Vec::new();
    let mut errors = Vec::new();
    if query.selectors.is_empty() {
        jobs.extend(state.jobs().iter().filter(|(_, job)| listed(job)).map(|(key, _)| *key));
    }
    // What the selectors resolve to, each listed once however many spellings name it (`1`,
    // `1.server`; `workq`, `workq@server`): the listing is bounded by the state, not the request.
    let mut named_jobs = HashSet::new();
    let mut named_queues = HashSet::new();
    for selector in state.expand_ranges(query.selectors) {
        let selector = match selector {
            Ok(selector) => selector,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        if selector.starts_with(|c: char| c.is_ascii_digit()) {
            match state.find_job_entry(&selector) {
                Ok((key, _)) if !named_jobs.insert(key) => {}
                Ok((key, job)) => {
                    // A subjob that is over (X) is still shown; a finished job needs -x.
                    if job.state() == JobState::Finished && !shown(job) {
                        errors.push(finished_error(flavor, job));
                    } else if user_ok(&job.owner) {
                        jobs.push(key);
                        if arrays.subjobs && job.id.array == Some(ArrayPart::Parent) {
                            jobs.extend(state.subjob_keys(key));
                        }
                    }
                }
                Err(error) => errors.push(error),
            }
        } else {
            // A destination: `queue`, `@server` (every job) or `queue@server`.
            match state.resolve_destination(&selector) {
                Ok(queue) if named_queues.contains(&queue) => {}
                Ok(queue) => {
                    jobs.extend(
                        state.jobs().iter().filter(|(_, job)| job.queue == queue && listed(job)).map(|(key, _)| *key),
                    );
                    named_queues.insert(queue);
                }
                Err(_) => errors.push(RequestError::new(
                    ErrorCode::UnknownQueue,
                    format!("{} {selector}", ErrorCode::UnknownQueue.text()),
                )),
            }
        }
    }
    Selection { keys: jobs, errors }
}

/// The error for a finished job asked for by id without history.
fn finished_error(flavor: Flavor, job: &Job) -> RequestError {
    match flavor {
        Flavor::OpenPbs => {
            let message = format!(
                "{} {}, use -x or -H to obtain historical job information",
                job.id,
                ErrorCode::JobFinished.text()
            );
            RequestError::new(ErrorCode::JobFinished, message)
        }
        Flavor::Torque => RequestError::with_detail(ErrorCode::UnknownJobId, &job.id),
    }
}

/// A subjob's parent.
fn parent_of<'a>(state: &'a ServerState, job: &Job) -> Option<&'a Job> {
    state.jobs().get(&job::JobId::parent_key(job.id.key())).map(|parent| &**parent)
}

/// One job's status record into `out`, with its array's counts if it is an array parent, its
/// `eligible_time` when the server's `eligible_time_enable` is True (OpenPBS flavor), and its
/// `depend`.
fn record(state: &ServerState, job: &Job, flavor: Flavor, now: i64, out: &mut Builder<'_>) {
    fill(state, job, flavor, now, out);
    if state.attrs.sched.eligible_time_enable && flavor == Flavor::OpenPbs {
        crate::status::add_eligible_time(out, job, now);
    }
    crate::status::add_depend(out, || crate::state::depend::depend_value(state, job));
}

fn fill(state: &ServerState, job: &Job, flavor: Flavor, now: i64, out: &mut Builder<'_>) {
    if job.id.array != Some(ArrayPart::Parent) {
        // The scheduler's note shows as `comment` and `estimated.*`: not looked up otherwise.
        let shown = out.wants_group("comment") || out.wants_group("estimated");
        let note = if shown { state.sched_note(job.id.key()) } else { None };
        return crate::status::fill(out, job, &state.server_name, flavor, now, None, note);
    }
    let key = job.id.key();
    let counts = state.array_counts(key);
    let remaining = || {
        state
            .subjob_keys(key)
            .iter()
            .map(|sub| &state.jobs()[sub])
            .filter(|sub| matches!(sub.state(), JobState::Queued | JobState::Held | JobState::Waiting))
            .filter_map(|sub| match sub.id.array {
                Some(ArrayPart::Sub(index)) => Some(index),
                _ => None,
            })
            .collect()
    };
    let view = ArrayView { counts: &counts, remaining: &remaining };
    crate::status::fill(out, job, &state.server_name, flavor, now, Some(&view), None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::job_ended::job_ended;
    use crate::handlers::tests::{cluster, submit};
    use crate::sched_loop::schedule_pass;
    use crate::state::outbox::Outbox;
    use proto::mom::JobObit;
    use proto::JobStatus;

    /// A server of the flavor with one job that ran from 20 to 30 and overran its walltime.
    fn server_with_overrun_job(flavor: Flavor) -> (ServerState, String) {
        let mut state = cluster(1);
        state.flavor = flavor;
        let id = submit(&mut state, 1000, &[("walltime", "00:00:05")]);
        schedule_pass(&mut state, &mut Outbox::default(), 20);
        let obit = JobObit { job_id: id.clone(), exit_status: -29, session_id: 7, ..Default::default() };
        job_ended(&mut state, &mut Outbox::default(), "node1", obit, 30);
        same_group(&mut state);
        (state, id)
    }

    fn ask(state: &ServerState, now: i64, selectors: &[String], history: bool) -> (Vec<JobStatus>, Vec<RequestError>) {
        let query = Query { selectors, history, reader: Reader::Operator, ..Default::default() };
        match status_job(state, state.flavor, now, query) {
            ServerReply::Jobs { jobs, errors, flavor, .. } => {
                assert_eq!(flavor, state.flavor);
                (jobs, errors)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn torque_keeps_completed_jobs_as_c_for_keep_completed() {
        let (state, id) = server_with_overrun_job(Flavor::Torque);
        assert_eq!(state.keep_completed(), 300);
        let by_id = std::slice::from_ref(&id);
        for selectors in [&[][..], by_id] {
            let (jobs, errors) = ask(&state, 30 + 299, selectors, false);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(jobs[0].get("job_state"), Some("C"));
            assert_eq!(jobs[0].get("exit_status"), Some("-11"));
            assert_eq!(jobs[0].get("Exit_status"), None);
        }
        let (jobs, errors) = ask(&state, 30 + 300, &[], false);
        assert!(jobs.is_empty() && errors.is_empty(), "gone from plain listings after keep_completed");
        let (jobs, errors) = ask(&state, 30 + 300, by_id, false);
        assert!(jobs.is_empty());
        assert_eq!(errors[0].code, ErrorCode::UnknownJobId);
        assert_eq!(errors[0].message, "Unknown Job Id 1.head");
        let (jobs, _) = ask(&state, 30 + 300, by_id, true);
        assert_eq!(jobs[0].get("job_state"), Some("C"), "still in history");
    }

    #[test]
    fn openpbs_shows_finished_jobs_only_with_history() {
        let (state, id) = server_with_overrun_job(Flavor::OpenPbs);
        let (jobs, errors) = ask(&state, 31, &[], false);
        assert!(jobs.is_empty() && errors.is_empty());
        let (_, errors) = ask(&state, 31, std::slice::from_ref(&id), false);
        assert_eq!(errors[0].code, ErrorCode::JobFinished);
        let (jobs, _) = ask(&state, 31, std::slice::from_ref(&id), true);
        assert_eq!(jobs[0].get("job_state"), Some("F"));
        assert_eq!(jobs[0].get("Exit_status"), Some("-29"));
    }

    #[test]
    fn torque_hides_select_and_place_derived_from_nodes() {
        let resources: Vec<String> = [Flavor::OpenPbs, Flavor::Torque]
            .into_iter()
            .map(|flavor| {
                let mut state = cluster(1);
                state.flavor = flavor;
                let id = submit(&mut state, 1000, &[("nodes", "1:ppn=2")]);
                let (jobs, _) = ask(&state, 20, &[id], false);
                let names = jobs[0].attrs.iter().filter(|attr| attr.name == "Resource_List");
                names.map(|attr| attr.full_name()).collect::<Vec<_>>().join(" ")
            })
            .collect();
        assert!(resources[0].contains("Resource_List.select"), "{resources:?}");
        assert!(!resources[1].contains("select") && !resources[1].contains("place"), "{resources:?}");
        assert!(resources[1].contains("Resource_List.nodes"), "{resources:?}");
    }

    /// The submitter's group comes from this machine's user database and the start comment's
    /// date from its time zone: fix them for snapshots.
    fn same_group(state: &mut ServerState) {
        for job in state.jobs_mut() {
            job.group = "staff".into();
            if let Some((_, place)) = job.comment.as_deref().and_then(|comment| comment.split_once(" on ")) {
                job.comment = Some(format!("Job run at <date> on {place}"));
            }
        }
    }

    /// `name = value` of every attribute, in order.
    fn attribute_lines(job: &JobStatus) -> String {
        job.attrs.iter().map(|attr| format!("{} = {}\n", attr.full_name(), attr.value)).collect()
    }

    #[test]
    fn attribute_names_and_order_per_flavor() {
        let mut text = String::new();
        for flavor in [Flavor::OpenPbs, Flavor::Torque] {
            let mut state = cluster(1);
            state.flavor = flavor;
            let running = submit(&mut state, 1000, &[("walltime", "00:10:00")]);
            schedule_pass(&mut state, &mut Outbox::default(), 20);
            same_group(&mut state);
            let (jobs, _) = ask(&state, 80, &[running], false);
            text.push_str(&format!("--- {flavor}, running at 80\n{}", attribute_lines(&jobs[0])));
            let (state, finished) = server_with_overrun_job(flavor);
            let (jobs, _) = ask(&state, 40, &[finished], true);
            text.push_str(&format!("--- {flavor}, finished at 30\n{}", attribute_lines(&jobs[0])));
        }
        insta::assert_snapshot!(text);
    }
}
