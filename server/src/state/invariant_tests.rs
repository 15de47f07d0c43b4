//! The state's invariants where the type system cannot carry them: a job's state changes
//! only through `ServerState::transition` (a job held at submission went through a legal
//! `Hold`, and the indexes agree), and a transition on an unknown key is an error, not a panic.
//! That `Job::state` cannot be written outside `state/` is a `compile_fail` doctest on
//! `Job::state`.

use super::{ServerState, TransitionError};
use crate::handlers::submit_job::submit_job;
use crate::handlers::tests::{cluster, requester, spec};
use crate::state::outbox::Outbox;
use job::{JobEvent, JobId, JobState};
use proto::ServerReply;

fn submit_with_depend(state: &mut ServerState, depend: &str) -> String {
    let mut job = spec(&[]);
    job.depend = job::depend::parse(depend).unwrap();
    match submit_job(state, &mut Outbox::default(), &requester(1000), 10, job) {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("refused: {other:?}"),
    }
}

#[test]
fn a_job_held_for_its_dependency_at_submission_is_held_and_indexed_so() {
    let mut state = cluster(1);
    let mut out = Outbox::default();
    let first = match submit_job(&mut state, &mut out, &requester(1000), 10, spec(&[])) {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("refused: {other:?}"),
    };
    let second = submit_with_depend(&mut state, &format!("afterok:{first}"));
    let held = state.job(state.find_job(&second).unwrap()).unwrap();
    assert_eq!(held.state(), JobState::Held);
    assert_eq!(held.hold_types, "s");
    let queued: Vec<String> = state.queued_jobs().map(|job| job.id.to_string()).collect();
    assert_eq!(queued, vec![first], "the held job is not in the queued index");
    state.sanity_check();
}

#[test]
fn a_transition_on_an_unknown_job_is_an_error() {
    let mut state = cluster(1);
    let key = JobId::new(99, "head").key();
    assert!(matches!(state.transition(key, JobEvent::Hold, 0), Err(TransitionError::UnknownJob(k)) if k == key));
    assert!(state.finish_job(key, 0, 0).is_err() && state.requeue_job(key, 0).is_err());
    state.sanity_check();
}

#[test]
fn an_illegal_transition_changes_nothing() {
    let mut state = cluster(1);
    let id = crate::handlers::tests::submit(&mut state, 1000, &[]);
    let key = state.find_job(&id).unwrap();
    let before = state.job(key).unwrap().clone();
    assert!(matches!(state.transition(key, JobEvent::Resume, 50), Err(TransitionError::Illegal(_))));
    assert_eq!(state.job(key).unwrap(), &before);
    state.sanity_check();
}
