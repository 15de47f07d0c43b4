//! Handler tests of qsig and qrerun naming an array parent (`1[]`) or a subjob range
//! (`1[2-3]`): they reach the subjobs in the wanted state, as OpenPBS's `req_signaljob` and
//! `req_rerunjob` do; a range with none is refused, a parent that has not begun too.

use super::tests::{cluster, requester, sent_kinds, spec, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use job::array::ArraySpec;
use proto::error::RequestError;
use proto::{ErrorCode, ServerReply};

const ROOT: u32 = 0;
const CAROL: u32 = 1002;

/// Runs a handler as `Shared::apply` does (at time 30), then checks the state's invariants.
fn apply<R>(state: &mut ServerState, handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R) -> (R, Outbox) {
    let done = crate::shared::run_handler(state, 30, handler);
    state.sanity_check();
    done
}

fn submit_array(state: &mut ServerState, indices: &str, held: bool) -> String {
    let mut job = spec(&[("ncpus", "1")]);
    job.array = Some(ArraySpec { indices: indices.to_string(), limit: None });
    job.user_hold = held;
    match apply(state, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, job)).0 {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("array refused: {other:?}"),
    }
}

fn errors(reply: ServerReply) -> Vec<RequestError> {
    match reply {
        ServerReply::Done { errors } => errors,
        other => panic!("unexpected reply {other:?}"),
    }
}

fn signal(state: &mut ServerState, uid: u32, id: &str, what: &str) -> (Vec<RequestError>, Outbox) {
    let ids = [id.to_string()];
    let (reply, out) = apply(state, |state, out| signal_job::signal_job(state, out, &requester(uid), 30, &ids, what));
    (errors(reply), out)
}

fn rerun(state: &mut ServerState, uid: u32, id: &str) -> (Vec<RequestError>, Outbox) {
    let ids = [id.to_string()];
    let (reply, out) = apply(state, |state, out| rerun_job::rerun_job(state, out, &requester(uid), 30, &ids));
    (errors(reply), out)
}

/// The subjobs' state letters, by index.
fn letters(state: &ServerState, seq: u32, count: u32) -> String {
    (1..=count)
        .map(|index| state.jobs()[&state.find_job(&format!("{seq}[{index}]")).unwrap()].state().letter())
        .collect()
}

fn codes(errors: &[RequestError]) -> Vec<ErrorCode> {
    errors.iter().map(|error| error.code).collect()
}

#[test]
fn qsig_of_a_range_or_a_parent_reaches_the_subjobs_in_the_wanted_state() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-6", false);
    apply(&mut state, |state, out| schedule_pass(state, out, 20));
    assert_eq!(letters(&state, 1, 6), "RRRRQQ", "4 slots");

    let (errors, out) = signal(&mut state, ROOT, "1[2-3]", "suspend");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sent_kinds(&out), ["SignalJob->node1", "SignalJob->node1"]);
    assert_eq!(letters(&state, 1, 6), "RSSRQQ");
    // Already suspended and queued subjobs are passed over; the running one is suspended.
    let (errors, out) = signal(&mut state, ROOT, "1[2-5]", "suspend");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out.to_moms.len(), 1);
    assert_eq!(letters(&state, 1, 6), "RSSSQQ");

    // A range with no subjob in the wanted state: one error naming the range.
    let (errors, _) = signal(&mut state, ROOT, "1[5-6]", "resume");
    assert_eq!(codes(&errors), [ErrorCode::BadState]);
    assert_eq!(errors[0].message, format!("{} 1[5-6]", ErrorCode::BadState.text()));
    let (errors, _) = signal(&mut state, ROOT, "1[5-6]", "USR1");
    assert_eq!(codes(&errors), [ErrorCode::BadState]);

    // The parent resumes its suspended subjobs; a plain signal reaches running and suspended.
    let (errors, out) = signal(&mut state, ROOT, "1[]", "resume");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out.to_moms.len(), 3);
    assert_eq!(letters(&state, 1, 6), "RRRRQQ");
    signal(&mut state, ROOT, "1[1]", "suspend");
    let (errors, out) = signal(&mut state, ALICE, "1[].head", "USR1");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out.to_moms.len(), 4);
    assert!(out.persist.is_empty(), "a plain signal changes nothing");

    // Another user's array, a range the array does not have, a suspend by a user: refused,
    // nothing sent.
    for (uid, id, what, code) in [
        (CAROL, "1[]", "USR1", ErrorCode::PermissionDenied),
        (CAROL, "1[1-2]", "USR1", ErrorCode::PermissionDenied),
        (ALICE, "1[1-2]", "suspend", ErrorCode::PermissionDenied),
        (ROOT, "1[6-8]", "USR1", ErrorCode::UnknownJobId),
    ] {
        let (errors, out) = signal(&mut state, uid, id, what);
        assert_eq!(codes(&errors), [code], "{id} {what}");
        assert!(errors[0].message.ends_with(id), "{}", errors[0].message);
        assert!(out.to_moms.is_empty() && out.persist.is_empty());
    }

    // A parent that has not begun: Request invalid for state of job.
    let held = submit_array(&mut state, "1-2", true);
    let (errors, _) = signal(&mut state, ALICE, &held, "USR1");
    assert_eq!(codes(&errors), [ErrorCode::BadState]);
}

#[test]
fn qrerun_of_a_range_or_a_parent_reruns_its_running_subjobs() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-6", false);
    apply(&mut state, |state, out| schedule_pass(state, out, 20));
    signal(&mut state, ROOT, "1[4]", "suspend");
    assert_eq!(letters(&state, 1, 6), "RRRSQQ");

    let (errors, out) = rerun(&mut state, ROOT, "1[2-5]");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sent_kinds(&out), ["RerunJob->node1", "RerunJob->node1", "RerunJob->node1"]);
    assert_eq!(letters(&state, 1, 6), "REEEQQ");
    let rerun_requested = |state: &ServerState, index: u32| {
        state.jobs()[&state.find_job(&format!("1[{index}]")).unwrap()].rerun_requested
    };
    assert!((2..=4).all(|index| rerun_requested(&state, index)));

    for (uid, id, code) in [
        (ROOT, "1[5-6]", ErrorCode::BadState),
        (ALICE, "1[]", ErrorCode::PermissionDenied),
        (ALICE, "1[1-2]", ErrorCode::PermissionDenied),
        (ROOT, "1[0-1]", ErrorCode::UnknownJobId),
    ] {
        let (errors, out) = rerun(&mut state, uid, id);
        assert_eq!(codes(&errors), [code], "{id}");
        assert!(errors[0].message.ends_with(id), "{}", errors[0].message);
        assert!(out.to_moms.is_empty() && out.persist.is_empty());
    }

    let (errors, out) = rerun(&mut state, ROOT, "1[]");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(out.to_moms.len(), 1, "only 1[1] was still running");
    assert_eq!(letters(&state, 1, 6), "EEEEQQ");
}
