//! Handler tests of the per-job limits at qsub (`job::limits`: script size, `Variable_List`)
//! and of `max_queued` against arrays, and of qalter -v against the same variable limits: each
//! refusal has its code and text, and stores nothing.

use super::tests::{cluster, requester, spec};
use super::*;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use job::JobSpec;
use proto::error::ErrorCode;
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::ServerReply;

const ALICE: u32 = 1000;

/// Submits `job` as alice; the error's code and message, or the id.
fn try_submit(state: &mut ServerState, job: JobSpec) -> Result<String, (ErrorCode, String)> {
    let mut out = Outbox::default();
    let reply = submit_job::submit_job(state, &mut out, &requester(ALICE), 10, job);
    match reply {
        ServerReply::JobSubmitted { id } => Ok(id),
        ServerReply::Error(error) => {
            assert!(out.persist.is_empty() && !out.schedule, "a refused job stores nothing");
            Err((error.code, error.message))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_script_over_the_limit_is_refused_with_openpbs_code_and_text() {
    let mut state = cluster(1);
    let mut job = spec(&[]);
    job.script = "#".repeat(job::limits::MAX_SCRIPT_SIZE + 1);
    let (code, message) = try_submit(&mut state, job).unwrap_err();
    assert_eq!(code, ErrorCode::JobscriptMaxSize);
    assert_eq!(code.number(), 15175);
    assert!(message.starts_with("jobscript size exceeded the jobscript_max_size"), "{message}");
    assert!(state.jobs().is_empty());
}

#[test]
fn too_many_or_too_large_variables_are_refused() {
    let mut state = cluster(1);
    let mut job = spec(&[]);
    for n in 0..job::limits::MAX_VARIABLES {
        job.variables.push(&format!("V{n}"), "x");
    }
    let (code, message) = try_submit(&mut state, job).unwrap_err();
    assert_eq!(code, ErrorCode::BadAttributeValue);
    assert!(message.contains("Variable_List:") && message.contains("maximum of 4096"), "{message}");
    let mut job = spec(&[]);
    job.variables.push("BIG", &"x".repeat(job::limits::MAX_VARIABLE_BYTES));
    let (code, _) = try_submit(&mut state, job).unwrap_err();
    assert_eq!(code, ErrorCode::BadAttributeValue);
    assert!(state.jobs().is_empty());
}

/// qmgr as root: `op` on queue `name` with `name = value` pairs.
fn qmgr_queue(state: &mut ServerState, op: ManageOp, name: &str, attrs: &[(&str, &str)]) {
    let attrs: Vec<AttrOp> = attrs
        .iter()
        .map(|(attr, value)| AttrOp {
            name: attr.to_string(),
            resource: None,
            op: SetOp::Set,
            value: value.to_string(),
        })
        .collect();
    let mut out = Outbox::default();
    let reply = manage::manage(state, &mut out, &requester(0), 10, op, ObjectKind::Queue, name, &attrs);
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
}

fn array(range: &str) -> JobSpec {
    let mut job = spec(&[]);
    job.array = Some(job::array::parse_openpbs(range).unwrap());
    job
}

#[test]
fn an_array_counts_as_its_subjobs_against_max_queued() {
    let mut state = cluster(1);
    qmgr_queue(&mut state, ManageOp::Set, "workq", &[("max_queued", "[u:PBS_GENERIC=5]")]);
    let (code, _) = try_submit(&mut state, array("1-6")).unwrap_err();
    assert_eq!(code, ErrorCode::UserLimit, "six subjobs exceed a limit of five");
    try_submit(&mut state, array("1-4")).unwrap();
    try_submit(&mut state, spec(&[])).unwrap();
    let (code, _) = try_submit(&mut state, spec(&[])).unwrap_err();
    assert_eq!(code, ErrorCode::UserLimit, "four subjobs and one job fill the limit; the parent is not counted");
}

#[test]
fn qmove_of_an_array_counts_its_subjobs_in_the_destination() {
    let mut state = cluster(1);
    let queue = [("queue_type", "execution"), ("enabled", "true"), ("started", "true")];
    qmgr_queue(&mut state, ManageOp::Create, "small", &queue);
    qmgr_queue(&mut state, ManageOp::Set, "small", &[("max_queued", "[u:PBS_GENERIC=5]")]);
    let big = try_submit(&mut state, array("1-6")).unwrap();
    let fits = try_submit(&mut state, array("1-5")).unwrap();
    let moved = |state: &mut ServerState, id: &str| {
        let reply = move_job::move_job(state, &mut Outbox::default(), &requester(ALICE), 20, "small", &[id.into()]);
        match reply {
            ServerReply::Done { errors } => errors.iter().map(|error| error.code).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(moved(&mut state, &big), [ErrorCode::UserLimit]);
    assert_eq!(moved(&mut state, &fits), []);
    assert_eq!(state.jobs().values().filter(|job| job.queue == "small").count(), 6, "the parent and its five subjobs");
}

#[test]
fn a_submitted_script_goes_to_the_store_and_not_into_the_state() {
    let mut state = cluster(1);
    let mut job = spec(&[]);
    job.script = "#!/bin/sh\necho big\n".repeat(1000);
    let mut out = Outbox::default();
    let reply = submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, job.clone());
    assert!(matches!(reply, ServerReply::JobSubmitted { .. }), "{reply:?}");
    let kept = state.jobs().values().next().unwrap();
    assert_eq!(kept.spec.script, "", "the state keeps no script");
    assert_eq!(kept.script_bytes, job.script.len() as u64);
    let stored = out.persist.iter().find_map(|op| match op {
        crate::store::StoreOp::InsertJob(stored) => Some(stored),
        _ => None,
    });
    assert_eq!(stored.unwrap().spec.script, job.script, "the store gets it");
}

#[test]
fn qalter_cannot_grow_a_variable_list_past_the_qsub_limits() {
    let mut state = cluster(1);
    let id = try_submit(&mut state, spec(&[])).unwrap();
    let big = "x".repeat(job::limits::MAX_VARIABLE_BYTES / 4);
    let alter = |state: &mut ServerState, name: &str| {
        let changes = proto::JobAlteration { variables: vec![(name.to_string(), big.clone())], ..Default::default() };
        let mut out = Outbox::default();
        let reply = alter_job::alter_job(state, &mut out, &requester(ALICE), 20, std::slice::from_ref(&id), &changes);
        match reply {
            ServerReply::Done { errors } => (errors.into_iter().map(|error| error.code).collect::<Vec<_>>(), out),
            other => panic!("{other:?}"),
        }
    };
    for name in ["A", "B", "C"] {
        let (errors, _) = alter(&mut state, name);
        assert!(errors.is_empty(), "{errors:?}");
    }
    let (errors, out) = alter(&mut state, "D");
    assert_eq!(errors, [ErrorCode::BadAttributeValue], "a fourth quarter of the limit is over it");
    assert!(out.persist.is_empty(), "nothing stored");
    let kept = state.jobs().values().next().unwrap();
    assert!(kept.spec.variables.get("D").is_none());
}
