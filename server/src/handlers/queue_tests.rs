//! Handler tests of queues and server attributes: qmgr changes (managers only, all or
//! nothing), admission at qsub and qmove, and run limits and queue priority in a pass.

use super::manage::manage;
use super::tests::{cluster, requester, spec};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::JobState;
use proto::error::ErrorCode;
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::ServerReply;

const ROOT: u32 = 0;
const ALICE: u32 = 1000;
const BOB: u32 = 1001;

fn attr(text: &str) -> AttrOp {
    let (op, (name, value)) = if let Some(split) = text.split_once("+=") {
        (SetOp::Incr, split)
    } else if let Some(split) = text.split_once("-=") {
        (SetOp::Decr, split)
    } else {
        (SetOp::Set, text.split_once('=').unwrap_or((text, "")))
    };
    let name = name.trim();
    let (name, resource) = match name.split_once('.') {
        Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
        None => (name.to_string(), None),
    };
    AttrOp { name, resource, op, value: value.trim().to_string() }
}

fn qmgr(state: &mut ServerState, who: u32, op: ManageOp, kind: ObjectKind, name: &str, attrs: &[&str]) -> ServerReply {
    let attrs: Vec<AttrOp> = attrs.iter().map(|text| attr(text)).collect();
    let mut out = Outbox::default();
    let reply = manage(state, &mut out, &requester(who), 30, op, kind, name, &attrs);
    if matches!(reply, ServerReply::Done { .. }) {
        assert!(matches!(out.persist.last(), Some(StoreOp::SetServerAttrs(_))), "configuration persisted");
    } else {
        assert!(out.persist.is_empty(), "a refused command persists nothing");
    }
    reply
}

fn ok(reply: ServerReply) {
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
}

fn code(reply: ServerReply) -> ErrorCode {
    match reply {
        ServerReply::Error(error) => error.code,
        other => panic!("expected an error, got {other:?}"),
    }
}

fn submit_to(state: &mut ServerState, uid: u32, queue: &str, resources: &[(&str, &str)]) -> Result<String, ErrorCode> {
    let mut job_spec = spec(resources);
    job_spec.queue = Some(queue.to_string());
    match submit_job::submit_job(state, &mut Outbox::default(), &requester(uid), 10, job_spec) {
        ServerReply::JobSubmitted { id } => Ok(id),
        ServerReply::Error(error) => Err(error.code),
        other => panic!("{other:?}"),
    }
}

fn create_exec_queue(state: &mut ServerState, name: &str, extra: &[&str]) {
    let mut attrs = vec!["queue_type = execution", "enabled = true", "started = true"];
    attrs.extend_from_slice(extra);
    ok(qmgr(state, ROOT, ManageOp::Create, ObjectKind::Queue, name, &attrs));
}

#[test]
fn fresh_server_has_an_enabled_started_workq() {
    let state = ServerState::new("head", "workq", 10, 0);
    let workq = &state.queues()["workq"];
    assert!(workq.enabled && workq.started);
    assert_eq!(
        state.server_attr_pairs(),
        [("scheduling", "True"), ("default_queue", "workq"), ("query_other_jobs", "True")]
            .map(|(name, value)| (name.to_string(), value.to_string()))
    );
}

#[test]
fn only_managers_change_things_and_a_bad_command_changes_nothing() {
    let mut state = cluster(1);
    assert_eq!(
        code(qmgr(&mut state, ALICE, ManageOp::Create, ObjectKind::Queue, "q2", &[])),
        ErrorCode::PermissionDenied
    );
    assert!(!state.queues().contains_key("q2"));
    // One bad attribute refuses the whole command.
    let reply = qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Queue, "workq", &["Priority = 5", "no_such = 1"]);
    assert_eq!(code(reply), ErrorCode::NoAttribute);
    assert_eq!(state.queues()["workq"].priority, None);
    let reply = qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["scheduling = false", "flavor = nope"]);
    assert_eq!(code(reply), ErrorCode::BadAttributeValue);
    assert!(state.attrs.scheduling);
    // managers makes alice a manager; operators lets bob set node state only.
    ok(qmgr(
        &mut state,
        ROOT,
        ManageOp::Set,
        ObjectKind::Server,
        "",
        &["managers = user1000@*", "operators += user1001"],
    ));
    ok(qmgr(&mut state, ALICE, ManageOp::Create, ObjectKind::Queue, "q2", &["queue_type = e"]));
    ok(qmgr(&mut state, BOB, ManageOp::Set, ObjectKind::Node, "node1", &["state = offline"]));
    assert!(state.nodes()["node1"].offline);
    assert_eq!(
        code(qmgr(&mut state, BOB, ManageOp::Set, ObjectKind::Node, "node1", &["np = 2"])),
        ErrorCode::PermissionDenied
    );
    assert_eq!(
        code(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Queue, "nope", &["Priority = 1"])),
        ErrorCode::UnknownQueue
    );
    assert_eq!(code(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Queue, "q2", &[])), ErrorCode::QueueExists);
    assert_eq!(
        code(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Queue, "2q", &[])),
        ErrorCode::BadAttributeValue
    );
    assert_eq!(
        code(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Queue, "q3", &["enabled = true"])),
        ErrorCode::QueueIncomplete
    );
    ok(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Queue, "q3", &["enabled = true", "queue_type = e"]));
    assert_eq!(
        code(qmgr(&mut state, ROOT, ManageOp::Unset, ObjectKind::Queue, "q3", &["queue_type"])),
        ErrorCode::QueueIncomplete
    );
    ok(qmgr(
        &mut state,
        ROOT,
        ManageOp::Set,
        ObjectKind::Server,
        "",
        &["flavor = torque", "job_history_duration = 1:00:00"],
    ));
    assert_eq!(state.flavor, crate::config::Flavor::Torque);
    assert_eq!(state.attrs.job_history_duration, 3600);
    ok(qmgr(&mut state, ROOT, ManageOp::Unset, ObjectKind::Server, "", &["flavor"]));
    assert_eq!(state.flavor, crate::config::Flavor::OpenPbs);
}

#[test]
fn submission_checks_the_queue() {
    let mut state = cluster(1);
    create_exec_queue(
        &mut state,
        "short",
        &["resources_default.walltime = 10:00", "resources_max.walltime = 1:00:00", "max_user_queued = 2"],
    );
    let id = submit_to(&mut state, ALICE, "short", &[]).unwrap();
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!((job.queue.as_str(), job.request.walltime), ("short", Some(600)), "default walltime filled in");
    assert_eq!(submit_to(&mut state, ALICE, "short", &[("walltime", "2:00:00")]), Err(ErrorCode::ExceedsLimits));
    submit_to(&mut state, ALICE, "short", &[("walltime", "30:00")]).unwrap();
    assert_eq!(submit_to(&mut state, ALICE, "short", &[]), Err(ErrorCode::UserLimit));
    submit_to(&mut state, BOB, "short", &[]).unwrap();
    assert_eq!(submit_to(&mut state, ALICE, "nosuch", &[]), Err(ErrorCode::UnknownQueue));
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Queue, "short", &["enabled = false"]));
    assert_eq!(submit_to(&mut state, BOB, "short", &[]), Err(ErrorCode::QueueNotEnabled));
    create_exec_queue(&mut state, "private", &["acl_user_enable = true", "acl_users = user1001"]);
    assert_eq!(submit_to(&mut state, ALICE, "private", &[]), Err(ErrorCode::PermissionDenied));
    submit_to(&mut state, BOB, "private", &[]).unwrap();
    // A queue with jobs cannot be deleted.
    assert_eq!(code(qmgr(&mut state, ROOT, ManageOp::Delete, ObjectKind::Queue, "private", &[])), ErrorCode::QueueBusy);
    state.sanity_check();
}

#[test]
fn qmove_applies_the_destination_checks() {
    let mut state = cluster(1);
    create_exec_queue(&mut state, "short", &["resources_max.walltime = 1:00:00"]);
    let long = submit_to(&mut state, ALICE, "workq", &[("walltime", "5:00:00")]).unwrap();
    let quick = submit_to(&mut state, ALICE, "workq", &[("walltime", "5:00")]).unwrap();
    let mv = |state: &mut ServerState, who: Requester, ids: &[String]| {
        move_job::move_job(state, &mut Outbox::default(), &who, 20, "short", ids)
    };
    match mv(&mut state, requester(ALICE), &[long.clone(), quick.clone()]) {
        ServerReply::Done { errors } => {
            assert_eq!(errors.iter().map(|error| error.code).collect::<Vec<_>>(), [ErrorCode::ExceedsLimits])
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(state.jobs()[&state.find_job(&quick).unwrap()].queue, "short");
    assert_eq!(state.jobs()[&state.find_job(&long).unwrap()].queue, "workq");
    match mv(&mut state, requester(BOB), std::slice::from_ref(&long)) {
        ServerReply::Done { errors } => assert_eq!(errors[0].code, ErrorCode::PermissionDenied),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_per_user_run_limit_does_not_let_a_sweep_starve_others() {
    // One node of 4 slots: alice's 20-job sweep first, then bob's job.
    let mut state = cluster(1);
    create_exec_queue(&mut state, "shared", &["max_run = [u:PBS_GENERIC=2]"]);
    let sweep: Vec<String> = (0..20).map(|_| submit_to(&mut state, ALICE, "shared", &[]).unwrap()).collect();
    let other = submit_to(&mut state, BOB, "shared", &[]).unwrap();
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 3);
    let running = |state: &ServerState, ids: &[String]| {
        ids.iter().filter(|id| state.jobs()[&state.find_job(id).unwrap()].state() == JobState::Running).count()
    };
    assert_eq!(running(&state, &sweep), 2);
    assert_eq!(running(&state, std::slice::from_ref(&other)), 1);
    // The next pass starts nothing more: alice is at her limit although a slot is free.
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 21), 0);
    // TORQUE's max_user_run is the same limit.
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Queue, "shared", &["max_user_run = 3"]));
    assert_eq!(state.queues()["shared"].run.entlim().unwrap(), "[u:PBS_GENERIC=3]");
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 22), 1);
    state.sanity_check();
}

#[test]
fn queue_priority_started_and_scheduling() {
    let setup = || {
        let mut state = cluster(1);
        create_exec_queue(&mut state, "high", &["Priority = 100"]);
        let low: Vec<String> =
            (0..4).map(|_| submit_to(&mut state, ALICE, "workq", &[("ncpus", "1")]).unwrap()).collect();
        let high = submit_to(&mut state, ALICE, "high", &[("ncpus", "4")]).unwrap();
        (state, low, high)
    };
    let state_of = |state: &ServerState, id: &str| state.jobs()[&state.find_job(id).unwrap()].state();
    // The later job of the higher-priority queue takes the whole node first.
    let (mut state, low, high) = setup();
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 1);
    assert_eq!(state_of(&state, &high), JobState::Running);
    assert_eq!(state_of(&state, &low[0]), JobState::Queued);
    // scheduling = False starts nothing; a stopped queue's jobs wait while others run.
    let (mut state, low, high) = setup();
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["scheduling = false"]));
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 0);
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["scheduling = true"]));
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Queue, "high", &["started = false"]));
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 4);
    assert_eq!(state_of(&state, &high), JobState::Queued);
    assert!(low.iter().all(|id| state_of(&state, id) == JobState::Running));
}

#[test]
fn nodes_and_torque_server_attributes() {
    let mut state = cluster(1);
    ok(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Node, "node9", &["np = 8", "properties = fast,big"]));
    assert_eq!((state.nodes()["node9"].np, state.nodes()["node9"].properties.len()), (8, 2));
    assert!(!state.nodes()["node9"].up, "down until its mom registers");
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Node, "node9", &["properties -= big", "comment = spare"]));
    assert_eq!(state.nodes()["node9"].properties, ["fast"]);
    assert_eq!(code(qmgr(&mut state, ROOT, ManageOp::Create, ObjectKind::Node, "node9", &[])), ErrorCode::NodeExists);
    assert_eq!(
        code(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Node, "node9", &["state = busy"])),
        ErrorCode::BadAttributeValue
    );
    ok(qmgr(&mut state, ROOT, ManageOp::Delete, ObjectKind::Node, "node9", &[]));
    assert!(!state.nodes().contains_key("node9"));
    assert_eq!(code(qmgr(&mut state, ROOT, ManageOp::Delete, ObjectKind::Node, "node9", &[])), ErrorCode::UnknownNode);
    // TORQUE's keep_completed (seconds, default 300).
    assert_eq!(state.attrs.keep_completed, 300);
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["keep_completed = 60"]));
    assert_eq!(state.attrs.keep_completed, 60);
    assert!(state.server_attr_pairs().contains(&("keep_completed".to_string(), "60".to_string())));
    // Deleting the default queue leaves none: qsub without -q is then refused.
    ok(qmgr(&mut state, ROOT, ManageOp::Delete, ObjectKind::Queue, "workq", &[]));
    assert_eq!(submit_to(&mut state, ALICE, "", &[]), Err(ErrorCode::NoDefaultQueue));
}

#[test]
fn query_other_jobs_false_hides_other_users_jobs() {
    let mut state = cluster(1);
    let bobs = submit_to(&mut state, BOB, "workq", &[]).unwrap();
    let alice = requester(ALICE);
    assert_eq!(state.query_filter(&alice, std::slice::from_ref(&bobs), &[]).unwrap(), Vec::<String>::new());
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["query_other_jobs = false"]));
    assert_eq!(state.query_filter(&alice, &[], &[]).unwrap(), ["user1000"]);
    assert_eq!(state.query_filter(&alice, &[bobs], &[]).unwrap_err().code, ErrorCode::PermissionDenied);
    assert_eq!(state.query_filter(&alice, &[], &["user1001".into()]).unwrap_err().code, ErrorCode::PermissionDenied);
    assert_eq!(state.query_filter(&requester(ROOT), &[], &[]).unwrap(), Vec::<String>::new(), "managers see all");
}

#[test]
fn operators_may_delete_other_users_jobs() {
    let mut state = cluster(1);
    let alices = submit_to(&mut state, ALICE, "workq", &[]).unwrap();
    let delete = |state: &mut ServerState, who: u32| {
        let ids = [alices.clone()];
        delete_job::delete_job(state, &mut Outbox::default(), &requester(who), 20, &ids, Default::default())
    };
    assert!(
        matches!(delete(&mut state, BOB), ServerReply::Done { ref errors } if errors[0].code == ErrorCode::PermissionDenied)
    );
    ok(qmgr(&mut state, ROOT, ManageOp::Set, ObjectKind::Server, "", &["operators = user1001@*"]));
    ok(delete(&mut state, BOB));
    assert_eq!(state.jobs()[&state.find_job(&alices).unwrap()].state(), JobState::Finished);
}

#[test]
fn qmove_of_an_array_moves_its_subjobs_and_refuses_one_subjob_or_a_begun_array() {
    let mut state = cluster(1);
    create_exec_queue(&mut state, "short", &[]);
    let mut array = spec(&[("ncpus", "1")]);
    array.array = Some(job::array::ArraySpec { indices: "1-3".to_string(), limit: Some(1) });
    let ServerReply::JobSubmitted { id } =
        submit_job::submit_job(&mut state, &mut Outbox::default(), &requester(ALICE), 10, array.clone())
    else {
        panic!()
    };
    let mv = |state: &mut ServerState, id: &str| {
        let ids = [id.to_string()];
        match move_job::move_job(state, &mut Outbox::default(), &requester(ALICE), 20, "short", &ids) {
            ServerReply::Done { errors } => errors.into_iter().map(|error| error.code).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        }
    };
    let queues = |state: &ServerState, seq: u64| -> Vec<String> {
        let parent = state.find_job(&format!("{seq}[]")).unwrap();
        std::iter::once(parent)
            .chain(state.subjob_keys(parent))
            .map(|key| state.jobs()[&key].queue.to_string())
            .collect()
    };
    assert_eq!(mv(&mut state, "1[2]"), [ErrorCode::InvalidRequest]);
    assert_eq!(queues(&state, 1), ["workq"; 4]);
    assert_eq!(mv(&mut state, &id), []);
    assert_eq!(queues(&state, 1), ["short"; 4]);
    state.sanity_check();

    // Once a subjob has started the array stays where it is.
    submit_job::submit_job(&mut state, &mut Outbox::default(), &requester(ALICE), 10, array);
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 30);
    state.settle_arrays(&mut out, 30);
    assert_eq!(state.jobs()[&state.find_job("2[]").unwrap()].state(), JobState::Begun);
    assert_eq!(mv(&mut state, "2[]"), [ErrorCode::BadState]);
    assert_eq!(queues(&state, 2), ["workq"; 4]);
}
