//! Handler tests on a `ServerState` with a recording `Outbox`: no sockets, no database. Each
//! step checks what would be persisted and sent, as tako's `TestComm` does.

use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use job::{JobSpec, JobState};
use proto::mom::{JobObit, Registration};
use proto::{ServerReply, ServerToMom};

pub(crate) const ALICE: u32 = 1000;

pub(crate) fn requester(uid: u32) -> Requester {
    Requester { uid, gid: uid, user: format!("user{uid}") }
}

pub(crate) fn spec(resources: &[(&str, &str)]) -> JobSpec {
    JobSpec {
        submit_host: "login".to_string(),
        submit_args: "job.sh".to_string(),
        ..JobSpec::new("job.sh", "true\n").with_workdir("/home/alice").with_resources(resources)
    }
}

/// A node of 4 slots and 2 GPUs registering with `jobs`.
pub(crate) fn registration(node: &str, start_id: &str, jobs: Vec<String>) -> Registration {
    Registration {
        node: node.to_string(),
        np: 4,
        mem_bytes: 8 << 30,
        ngpus: 2,
        properties: vec![],
        start_id: start_id.to_string(),
        jobs,
        port: 0,
        gpus: Vec::new(),
        gpu_states: Vec::new(),
        task_socket: None,
        heartbeat_ms: 0,
    }
}

/// A root server with `n` registered nodes of 4 slots and 2 GPUs.
pub(crate) fn cluster(n: usize) -> ServerState {
    let mut state = ServerState::new("head", "workq", 10, 0);
    for index in 1..=n {
        let registration = registration(&format!("node{index}"), "a", vec![]);
        register_mom::register_mom(&mut state, &mut Outbox::default(), registration, 0);
    }
    state
}

pub(crate) fn submit(state: &mut ServerState, uid: u32, resources: &[(&str, &str)]) -> String {
    let mut out = Outbox::default();
    match submit_job::submit_job(state, &mut out, &requester(uid), 10, spec(resources)) {
        ServerReply::JobSubmitted { id } => {
            assert!(matches!(out.persist[0], StoreOp::InsertJob(_)), "the job is persisted before the reply");
            assert!(out.schedule);
            id
        }
        other => panic!("submit refused: {other:?}"),
    }
}

pub(crate) fn sent_kinds(out: &Outbox) -> Vec<String> {
    out.to_moms
        .iter()
        .map(|(node, message)| {
            let kind = match message {
                ServerToMom::RunJob(_) => "RunJob",
                ServerToMom::JoinJob(_) => "JoinJob",
                ServerToMom::KillJob { .. } => "KillJob",
                ServerToMom::EndJob { .. } => "EndJob",
                ServerToMom::Registered { .. } => "Registered",
                ServerToMom::Refused { .. } => "Refused",
                ServerToMom::ObitAck { .. } => "ObitAck",
                ServerToMom::RerunJob { .. } => "RerunJob",
                ServerToMom::SignalJob { .. } => "SignalJob",
                ServerToMom::SetWalltime { .. } => "SetWalltime",
                ServerToMom::Heartbeat => "Heartbeat",
            };
            format!("{kind}->{node}")
        })
        .collect()
}

fn state_of(state: &ServerState, id: &str) -> JobState {
    state.jobs()[&state.find_job(id).unwrap()].state()
}

#[test]
fn submit_schedule_run_end() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "2:ppn=2:gpus=1")]);
    assert_eq!(id, "1.head");
    let mut out = Outbox::default();
    assert_eq!(schedule_pass(&mut state, &mut out, 20), 1);
    assert_eq!(sent_kinds(&out), ["JoinJob->node2", "RunJob->node1"]);
    assert_eq!(state_of(&state, &id), JobState::Running);
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].exec_host().unwrap(), "node1/0*2+node2/0*2");
    assert_eq!(state.nodes()["node1"].free_gpus(), vec![1]);
    state.sanity_check();

    let mut out = Outbox::default();
    let obit = JobObit { job_id: id.clone(), exit_status: 3, session_id: 77, ..Default::default() };
    job_ended::job_ended(&mut state, &mut out, "node1", obit.clone(), 30);
    assert_eq!(sent_kinds(&out), ["EndJob->node2", "ObitAck->node1"]);
    assert_eq!(state_of(&state, &id), JobState::Finished);
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].exit_status, Some(3));
    assert_eq!(state.nodes()["node1"].free_slots(), vec![0, 1, 2, 3], "resources freed");
    state.sanity_check();

    // A resent obituary is acknowledged again and changes nothing.
    let mut out = Outbox::default();
    job_ended::job_ended(&mut state, &mut out, "node1", obit, 40);
    assert_eq!(sent_kinds(&out), ["ObitAck->node1"]);
    assert!(out.persist.is_empty());
}

#[test]
fn impossible_and_malformed_requests_are_refused_and_leave_nothing() {
    let mut state = cluster(1);
    let cases = [
        (vec![("nodes", "1:ppn=64")], proto::ErrorCode::ExceedsLimits),
        // More chunks than the node holds (issue 12: placed one by one, this took seconds).
        (vec![("select", "1000000000:ncpus=0")], proto::ErrorCode::ExceedsLimits),
        (vec![("select", "1:ncpus=1:mpiprocs=4000000000")], proto::ErrorCode::BadAttributeValue),
        (vec![("nodes", "2:ppn=x")], proto::ErrorCode::BadAttributeValue),
        (vec![("frobs", "1")], proto::ErrorCode::UnknownResource),
    ];
    for (resources, code) in cases {
        let mut out = Outbox::default();
        match submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, spec(&resources)) {
            ServerReply::Error(error) => assert_eq!(error.code, code, "{resources:?}: {}", error.message),
            other => panic!("{resources:?} accepted: {other:?}"),
        }
        assert!(out.persist.is_empty());
    }
    assert!(state.jobs().is_empty());
    assert_eq!(state.next_seq(), 1, "no id consumed by refused jobs");
}

#[test]
fn delete_queued_and_running_and_someone_elses() {
    let mut state = cluster(1);
    let running = submit(&mut state, ALICE, &[("ncpus", "4")]);
    let queued = submit(&mut state, ALICE, &[("ncpus", "4")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    assert_eq!(state_of(&state, &queued), JobState::Queued);

    let mut out = Outbox::default();
    match delete_job::delete_job(
        &mut state,
        &mut out,
        &requester(2000),
        30,
        std::slice::from_ref(&running),
        Default::default(),
    ) {
        ServerReply::Done { errors } => {
            assert_eq!(errors.len(), 1);
            assert_eq!(errors[0].message, format!("Unauthorized Request  {running}"));
        }
        other => panic!("{other:?}"),
    }
    assert!(out.persist.is_empty() && out.to_moms.is_empty());

    let mut out = Outbox::default();
    delete_job::delete_job(
        &mut state,
        &mut out,
        &requester(ALICE),
        30,
        &[running.clone(), queued.clone()],
        Default::default(),
    );
    assert_eq!(sent_kinds(&out), ["KillJob->node1"]);
    assert_eq!(state_of(&state, &running), JobState::Exiting);
    assert_eq!(state_of(&state, &queued), JobState::Finished);
    state.sanity_check();
}

#[test]
fn hold_and_release() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    let ids = std::slice::from_ref(&id);
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 11, ids, "u", true);
    assert_eq!(state_of(&state, &id), JobState::Held);
    // A user may not set an operator hold.
    match hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 12, ids, "o", true) {
        ServerReply::Done { errors } => assert_eq!(errors[0].code, proto::ErrorCode::PermissionDenied),
        other => panic!("{other:?}"),
    }
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(0), 13, ids, "o", true);
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 14, ids, "u", false);
    assert_eq!(state_of(&state, &id), JobState::Held, "the operator hold remains");
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].hold_types, "o");
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(0), 15, ids, "o", false);
    assert_eq!(state_of(&state, &id), JobState::Queued);
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].hold_types, "n");
    // `n` changes nothing; system and password holds need a manager too.
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 16, ids, "n", true);
    assert_eq!(state_of(&state, &id), JobState::Queued);
    for kinds in ["s", "p", "us"] {
        match hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 17, ids, kinds, true) {
            ServerReply::Done { errors } => assert_eq!(errors[0].code, proto::ErrorCode::PermissionDenied),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].hold_types, "n", "a refused hold sets nothing");
    hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(0), 18, ids, "upso", true);
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].hold_types, "soup");
    match hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 19, ids, "x", true) {
        ServerReply::Error(error) => assert_eq!(error.code, proto::ErrorCode::BadAttributeValue),
        other => panic!("{other:?}"),
    }
    state.sanity_check();
}

#[test]
fn reregistration_reconciles_jobs() {
    let mut state = cluster(1);
    let kept = submit(&mut state, ALICE, &[("ncpus", "1")]);
    let lost = submit(&mut state, ALICE, &[("ncpus", "1")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let registration = registration("node1", "b", vec![kept.clone(), "99.head".to_string()]);
    let mut out = Outbox::default();
    let reply = register_mom::register_mom(&mut state, &mut out, registration, 50);
    assert_eq!(
        reply,
        ServerToMom::Registered { server_name: "head".to_string(), stale_jobs: vec!["99.head".to_string()] }
    );
    assert_eq!(state_of(&state, &kept), JobState::Running);
    assert_eq!(state_of(&state, &lost), JobState::Queued, "rerunnable job lost with its mom is requeued");
    assert_eq!(state.nodes()["node1"].free_slots().len(), 3, "only the kept job holds a slot");
    state.sanity_check();
}

#[test]
fn a_delete_missed_while_the_mom_was_away_is_sent_again() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("ncpus", "1")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    // The KillJob of this qdel is lost: the mom is disconnected.
    delete_job::delete_job(
        &mut state,
        &mut Outbox::default(),
        &requester(ALICE),
        30,
        std::slice::from_ref(&id),
        Default::default(),
    );
    let registration = registration("node1", "a", vec![id.clone()]);
    let mut out = Outbox::default();
    register_mom::register_mom(&mut state, &mut out, registration, 40);
    assert_eq!(sent_kinds(&out), ["KillJob->node1"]);
    assert_eq!(state_of(&state, &id), JobState::Exiting);
    state.sanity_check();
}

#[test]
fn destinations_name_queue_server_or_both() {
    let state = cluster(1);
    for good in ["", "workq", "@head", "workq@head", "@head.example.com"] {
        assert_eq!(state.resolve_destination(good).unwrap(), "workq", "{good:?}");
    }
    for bad in ["other", "@elsewhere", "workq@elsewhere", "other@head"] {
        assert_eq!(state.resolve_destination(bad).unwrap_err().code, proto::ErrorCode::UnknownQueue, "{bad:?}");
    }
    let selectors = ["@head".to_string()];
    let query = status_job::Query { selectors: &selectors, ..Default::default() };
    let reply = status_job::status_job(&state, crate::config::Flavor::OpenPbs, 0, query);
    assert!(matches!(reply, ServerReply::Jobs { errors, .. } if errors.is_empty()));
}

#[test]
fn forced_delete_ends_a_running_job_at_once_and_history_delete_forgets_it() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("ncpus", "2")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let ids = std::slice::from_ref(&id);
    let force = delete_job::How { force: true, history: false };
    match delete_job::delete_job(&mut state, &mut Outbox::default(), &requester(ALICE), 30, ids, force) {
        ServerReply::Error(error) => assert_eq!(error.code, proto::ErrorCode::PermissionDenied),
        other => panic!("a user forced a delete: {other:?}"),
    }
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(0), 30, ids, force);
    assert_eq!(sent_kinds(&out), ["KillJob->node1"]);
    assert_eq!(state_of(&state, &id), JobState::Finished);
    assert_eq!(state.jobs()[&state.find_job("1").unwrap()].exit_status, Some(delete_job::FORCED_EXIT_STATUS));
    assert_eq!(state.nodes()["node1"].free_slots().len(), 4, "its slots are free again");
    state.sanity_check();
    let history = delete_job::How { force: false, history: true };
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 40, ids, history);
    assert!(state.find_job(&id).is_err(), "qdel -x removed it from history");
    // Its row was the newest: the counter goes with the deletion, so id 1 is not handed out
    // again after a restart (submissions store no counter).
    assert!(matches!(out.persist[..], [StoreOp::DeleteJob(_), StoreOp::SetNextSeq(2)]), "{:?}", out.persist);
}

#[test]
fn a_submission_writes_its_row_and_nothing_else() {
    let mut state = cluster(0);
    let mut out = Outbox::default();
    submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, spec(&[]));
    assert!(matches!(out.persist[..], [StoreOp::InsertJob(_)]), "{:?}", out.persist);
}

#[test]
fn interactive_jobs_are_not_rerunnable_and_carry_their_target_to_the_mom() {
    let mut state = cluster(1);
    let target = job::spec::Interactive { host: "login".into(), port: 4000, secret: "ab".repeat(16) };
    let mut bad = spec(&[]);
    bad.interactive = Some(job::spec::Interactive { secret: "short".into(), ..target.clone() });
    let mut out = Outbox::default();
    match submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, bad) {
        ServerReply::Error(error) => assert!(error.message.contains("interactive secret"), "{}", error.message),
        other => panic!("accepted: {other:?}"),
    }
    assert!(out.persist.is_empty());
    let mut good = spec(&[]);
    good.interactive = Some(target.clone());
    let mut out = Outbox::default();
    let ServerReply::JobSubmitted { id } = submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, good)
    else {
        panic!("refused")
    };
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert!(!job.spec.rerunnable, "never rerun (pbs-reference 10.4)");
    let status = crate::status::job_status(job, "head", crate::config::Flavor::OpenPbs, 0);
    let listed = format!("{:?}", status.attrs);
    assert!(listed.contains("interactive") && !listed.contains(&target.secret), "{listed}");
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 20);
    let launch = out.to_moms.iter().find_map(|(_, message)| match message {
        ServerToMom::RunJob(launch) => Some(launch.clone()),
        _ => None,
    });
    assert_eq!(launch.expect("RunJob sent").interactive, Some(target));
}

#[test]
fn root_jobs_need_acl_roots_and_the_launch_says_so() {
    let mut state = cluster(1);
    let root = Requester { uid: 0, gid: 0, user: "root".to_string() };
    let mut out = Outbox::default();
    let reply = submit_job::submit_job(&mut state, &mut out, &root, 10, spec(&[]));
    match reply {
        ServerReply::Error(error) => {
            assert_eq!(error.code, proto::ErrorCode::BadUser);
            assert_eq!(error.message, "Bad UID for job execution");
        }
        other => panic!("a root job was accepted without acl_roots: {other:?}"),
    }
    assert!(out.persist.is_empty() && state.jobs().is_empty(), "nothing recorded");

    let set = |value: &str| proto::manage::AttrOp {
        name: "acl_roots".to_string(),
        resource: None,
        op: proto::manage::SetOp::Set,
        value: value.to_string(),
    };
    state.apply_server_attr(&set("root@*"), false).unwrap();
    let mut out = Outbox::default();
    assert!(matches!(
        submit_job::submit_job(&mut state, &mut out, &root, 10, spec(&[])),
        ServerReply::JobSubmitted { .. }
    ));
    submit(&mut state, ALICE, &[]);
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 20);
    let launches: Vec<(String, bool)> = out
        .to_moms
        .iter()
        .filter_map(|(_, message)| match message {
            ServerToMom::RunJob(launch) => Some((launch.user.clone(), launch.root_allowed)),
            _ => None,
        })
        .collect();
    assert_eq!(launches, [("root".to_string(), true), ("user1000".to_string(), false)]);

    // Emptied explicitly, it stays empty (stored) rather than falling back to --acl-roots.
    state.configure_acl_roots(&["root".to_string()]);
    state.apply_server_attr(&set(""), false).unwrap();
    assert!(!state.root_allowed("root"));
    assert!(state.server_attr_pairs().contains(&("acl_roots".to_string(), String::new())));
    state.apply_server_attr(&set(""), true).unwrap();
    assert!(state.root_allowed("root"), "unset returns to the configured default");
}

#[test]
fn undelivered_output_goes_in_the_comment_and_a_notice() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let undelivered = vec![proto::mom::Undelivered {
        spool: "/spool/1.head.OU".to_string(),
        dest: "/etc/evil".to_string(),
        error: "Permission denied".to_string(),
        kept: "/spool/undelivered/1.head.OU".to_string(),
    }];
    let obit = JobObit { job_id: id.clone(), exit_status: 0, session_id: 7, undelivered, ..Default::default() };
    let mut out = Outbox::default();
    job_ended::job_ended(&mut state, &mut out, "node1", obit, 30);
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!(
        job.comment.as_deref(),
        Some("Post job file processing error; output retained on node1 in: /spool/undelivered/1.head.OU")
    );
    let kinds: Vec<&crate::state::outbox::NoticeKind> = out.notices.iter().map(|notice| &notice.kind).collect();
    assert!(matches!(
        kinds[..],
        [crate::state::outbox::NoticeKind::Ended, crate::state::outbox::NoticeKind::CopyFailed { .. }]
    ));
    assert!(
        out.persist.iter().any(|op| matches!(op, StoreOp::UpdateProgress(job) if job.comment.is_some())),
        "the comment is stored"
    );
}

#[test]
fn a_job_killed_for_its_memory_says_so_in_its_comment() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let obit =
        JobObit { job_id: id.clone(), exit_status: 137, session_id: 7, mem_exceeded: true, ..Default::default() };
    let mut out = Outbox::default();
    job_ended::job_ended(&mut state, &mut out, "node1", obit, 30);
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!(job.comment.as_deref(), Some("Job exceeded its memory limit: Cgroup mem limit exceeded on node1"));
    assert_eq!(job.exit_status, Some(137));
    assert!(out.persist.iter().any(|op| matches!(op, StoreOp::UpdateProgress(job) if job.comment.is_some())));
}
