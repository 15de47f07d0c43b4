//! Handler tests of the server-wide per-user bounds at qsub (issue 12 item 8): the server's
//! `max_queued` (a default per user) and `max_user_kept_bytes` (the scripts and specs one user
//! keeps, history included). Each refusal has its code and text and stores nothing.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::state::outbox::Outbox;
use crate::state::server_attrs::{MAX_QUEUED_PER_USER, MAX_USER_KEPT_BYTES};
use crate::state::ServerState;
use job::JobSpec;
use proto::error::ErrorCode;
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::ServerReply;

const BOB: u32 = 1001;

fn try_submit(state: &mut ServerState, uid: u32, job: JobSpec) -> Result<String, (ErrorCode, String)> {
    let mut out = Outbox::default();
    match submit_job::submit_job(state, &mut out, &requester(uid), 10, job) {
        ServerReply::JobSubmitted { id } => Ok(id),
        ServerReply::Error(error) => {
            assert!(out.persist.is_empty() && !out.schedule, "a refused job stores nothing");
            Err((error.code, error.message))
        }
        other => panic!("{other:?}"),
    }
}

/// qmgr as root on the server: `op` with `name = value`.
fn qmgr_server(state: &mut ServerState, op: ManageOp, name: &str, value: &str) -> ServerReply {
    let attrs = [AttrOp { name: name.to_string(), resource: None, op: SetOp::Set, value: value.to_string() }];
    manage::manage(state, &mut Outbox::default(), &requester(0), 10, op, ObjectKind::Server, "", &attrs)
}

fn with_script(bytes: usize) -> JobSpec {
    let mut job = spec(&[]);
    job.script = "#".repeat(bytes);
    job
}

fn shown(state: &ServerState, name: &str) -> Option<String> {
    state.server_status().into_iter().find(|attr| attr.name == name).map(|attr| attr.value)
}

#[test]
fn the_server_has_a_default_per_user_max_queued_and_script_quota() {
    let state = cluster(1);
    assert_eq!(state.attrs.max_queued.per_user, Some(MAX_QUEUED_PER_USER));
    assert_eq!(state.attrs.max_queued.total, None);
    assert_eq!(state.attrs.max_user_kept_bytes, MAX_USER_KEPT_BYTES);
    assert_eq!(shown(&state, "max_queued"), None, "defaults are not listed");
}

#[test]
fn the_servers_per_user_max_queued_counts_every_queue_and_arrays_as_subjobs() {
    let mut state = cluster(1);
    let reply = qmgr_server(&mut state, ManageOp::Set, "max_queued", "[u:PBS_GENERIC=3]");
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
    assert_eq!(shown(&state, "max_queued").as_deref(), Some("[u:PBS_GENERIC=3]"));
    let mut array = spec(&[]);
    array.array = Some(job::array::parse_openpbs("1-4").unwrap());
    let (code, message) = try_submit(&mut state, ALICE, array).unwrap_err();
    assert_eq!((code, message.as_str()), (ErrorCode::UserLimit, "would exceed complex's per-user limit"));
    for _ in 0..3 {
        try_submit(&mut state, ALICE, spec(&[])).unwrap();
    }
    let (code, _) = try_submit(&mut state, ALICE, spec(&[])).unwrap_err();
    assert_eq!(code, ErrorCode::UserLimit);
    assert_eq!(code.exit_code(), 38);
    try_submit(&mut state, BOB, spec(&[])).expect("another user has a limit of his own");
    // A finished job no longer counts.
    let key = state.jobs().values().find(|job| job.owner_uid == ALICE).unwrap().id.key();
    state.transition(key, job::JobEvent::Delete, 0).unwrap();
    try_submit(&mut state, ALICE, spec(&[])).unwrap();
    let reply = qmgr_server(&mut state, ManageOp::Unset, "max_queued", "");
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
    assert_eq!(state.attrs.max_queued.per_user, Some(MAX_QUEUED_PER_USER), "unset restores the default");
}

#[test]
fn the_quota_counts_the_scripts_kept_history_included() {
    let mut state = cluster(1);
    let reply = qmgr_server(&mut state, ManageOp::Set, "max_user_kept_bytes", "64kb");
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
    assert_eq!(shown(&state, "max_user_kept_bytes").as_deref(), Some("65536b"));
    try_submit(&mut state, ALICE, with_script(40_000)).unwrap();
    // Finished, in history: its script is still kept.
    let key = *state.jobs().keys().next().unwrap();
    state.transition(key, job::JobEvent::Delete, 0).unwrap();
    let (code, message) = try_submit(&mut state, ALICE, with_script(40_000)).unwrap_err();
    assert_eq!(code, ErrorCode::UserLimit);
    assert!(message.starts_with("would exceed complex's per-user limit of kept job bytes"), "{message}");
    assert!(message.contains("max_user_kept_bytes = 65536b"), "{message}");
    try_submit(&mut state, ALICE, with_script(20_000)).expect("what fits is accepted");
    try_submit(&mut state, BOB, with_script(60_000)).expect("another user has a quota of his own");
    // An array's subjobs share the parent's script and spec: counted once.
    let mut array = with_script(10);
    array.array = Some(job::array::parse_openpbs("1-50").unwrap());
    try_submit(&mut state, BOB, array).unwrap();
}

#[test]
fn the_quota_counts_the_environment_the_state_keeps_history_included() {
    let mut state = cluster(1);
    qmgr_server(&mut state, ManageOp::Set, "max_user_kept_bytes", "64kb");
    let mut job = spec(&[]);
    job.variables.push("BIG", &"x".repeat(40_000));
    try_submit(&mut state, ALICE, job.clone()).unwrap();
    let kept = state.jobs().values().next().unwrap();
    assert!(kept.spec_bytes > 40_000, "{}", kept.spec_bytes);
    state.transition(kept.id.key(), job::JobEvent::Delete, 0).unwrap();
    let (code, _) = try_submit(&mut state, ALICE, job).unwrap_err();
    assert_eq!(code, ErrorCode::UserLimit, "a finished job's environment is still in memory");
}

#[test]
fn a_bad_quota_value_is_refused() {
    let mut state = cluster(1);
    let reply = qmgr_server(&mut state, ManageOp::Set, "max_user_kept_bytes", "lots");
    let ServerReply::Error(error) = reply else { panic!("{reply:?}") };
    assert_eq!(error.code, ErrorCode::BadAttributeValue);
    assert!(error.message.contains("max_user_kept_bytes"), "{}", error.message);
    assert_eq!(state.attrs.max_user_kept_bytes, MAX_USER_KEPT_BYTES);
}

#[test]
fn qalter_cannot_grow_a_spec_past_the_quota() {
    let mut state = cluster(1);
    qmgr_server(&mut state, ManageOp::Set, "max_user_kept_bytes", "64kb");
    let id = try_submit(&mut state, ALICE, spec(&[])).unwrap();
    let alter = |state: &mut ServerState, account: String| {
        let changes = proto::JobAlteration { account: Some(account), ..Default::default() };
        let mut out = Outbox::default();
        match alter_job::alter_job(state, &mut out, &requester(ALICE), 20, std::slice::from_ref(&id), &changes) {
            ServerReply::Done { errors } => (errors.into_iter().map(|error| error.code).collect::<Vec<_>>(), out),
            other => panic!("{other:?}"),
        }
    };
    let (errors, _) = alter(&mut state, "a".repeat(30_000));
    assert!(errors.is_empty(), "{errors:?}");
    let (errors, out) = alter(&mut state, "a".repeat(100_000));
    assert_eq!(errors, [ErrorCode::UserLimit]);
    assert!(out.persist.is_empty(), "nothing stored");
    let kept = state.jobs().values().next().unwrap();
    assert_eq!(kept.spec.account.as_ref().map(String::len), Some(30_000));
    let (errors, _) = alter(&mut state, "short".to_string());
    assert!(errors.is_empty(), "a spec that shrinks is always accepted: {errors:?}");
}
