//! Handler tests of where features built apart meet: requeues (qrerun, a lost mom) of jobs
//! others depend on, suspended jobs with holds, limits, deletes and lost moms, operators
//! against managers, node offline/comment through qmgr and pbsnodes, history purge and qmove
//! of dependency-held jobs, run limits with arrays. Each step settles the arrays as
//! `Shared::apply` does and checks the state's invariants.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::ServerState;
use crate::store::StoreOp;
use job::array::ArraySpec;
use job::JobState;
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::mom::{JobObit, Registration};
use proto::{ErrorCode, ServerReply};

const ROOT: u32 = 0;
const OPERATOR: u32 = 1001;
const CAROL: u32 = 1002;

use crate::shared::run_checked as apply;

fn submit_with(state: &mut ServerState, depend: &str, edit: impl FnOnce(&mut job::JobSpec)) -> String {
    let mut job = spec(&[("ncpus", "1")]);
    if !depend.is_empty() {
        job.depend = job::depend::parse(depend).unwrap();
    }
    edit(&mut job);
    let (reply, _) = apply(state, 10, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, job));
    match reply {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("refused: {other:?}"),
    }
}

fn submit(state: &mut ServerState, depend: &str) -> String {
    submit_with(state, depend, |_| {})
}

fn letter(state: &ServerState, id: &str) -> char {
    state.jobs()[&state.find_job(id).unwrap()].state().letter()
}

fn job<'a>(state: &'a ServerState, id: &str) -> &'a crate::state::Job {
    &state.jobs()[&state.find_job(id).unwrap()]
}

fn run(state: &mut ServerState, now: i64) -> usize {
    apply(state, now, |state, out| schedule_pass(state, out, now)).0
}

fn end(state: &mut ServerState, id: &str, exit_status: i32, now: i64) -> Outbox {
    let node = job(state, id).exec[0].node.clone();
    let obit = JobObit { job_id: id.to_string(), exit_status, session_id: 5, ..Default::default() };
    apply(state, now, |state, out| job_ended::job_ended(state, out, &node, obit, now)).1
}

fn errors(reply: ServerReply) -> Vec<ErrorCode> {
    match reply {
        ServerReply::Done { errors } => errors.into_iter().map(|error| error.code).collect(),
        ServerReply::Error(error) => vec![error.code],
        other => panic!("unexpected reply {other:?}"),
    }
}

fn rerun(state: &mut ServerState, uid: u32, id: &str, now: i64) -> Vec<ErrorCode> {
    let ids = [id.to_string()];
    errors(apply(state, now, |state, out| rerun_job::rerun_job(state, out, &requester(uid), now, &ids)).0)
}

fn signal(state: &mut ServerState, uid: u32, id: &str, what: &str, now: i64) -> Vec<ErrorCode> {
    let ids = [id.to_string()];
    errors(apply(state, now, |state, out| signal_job::signal_job(state, out, &requester(uid), now, &ids, what)).0)
}

fn hold(state: &mut ServerState, uid: u32, id: &str, types: &str, set: bool, now: i64) -> Vec<ErrorCode> {
    let ids = [id.to_string()];
    errors(apply(state, now, |state, out| hold_job::hold_job(state, out, &requester(uid), now, &ids, types, set)).0)
}

fn attr(name: &str, op: SetOp, value: &str) -> AttrOp {
    let (name, resource) = match name.split_once('.') {
        Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
        None => (name.to_string(), None),
    };
    AttrOp { name, resource, op, value: value.to_string() }
}

fn qmgr(state: &mut ServerState, uid: u32, kind: ObjectKind, name: &str, attrs: &[AttrOp]) -> Vec<ErrorCode> {
    let op = ManageOp::Set;
    errors(apply(state, 30, |state, out| manage::manage(state, out, &requester(uid), 30, op, kind, name, attrs)).0)
}

/// A mom that restarted without its jobs registers again.
fn mom_restarts(state: &mut ServerState, node: &str, now: i64) -> Outbox {
    let registration = Registration {
        node: node.to_string(),
        np: 4,
        mem_bytes: 8 << 30,
        ngpus: 2,
        properties: vec![],
        start_id: format!("restart{now}"),
        jobs: vec![],
        port: 0,
        gpus: Vec::new(),
        gpu_states: Vec::new(),
        task_socket: None,
        heartbeat_ms: 0,
    };
    apply(state, now, |state, out| register_mom::register_mom(state, out, registration, now)).1
}

fn with_operator(state: &mut ServerState) {
    let operators = attr("operators", SetOp::Set, "user1001@*");
    assert!(qmgr(state, ROOT, ObjectKind::Server, "", &[operators]).is_empty());
}

#[test]
fn a_rerun_of_a_job_others_depend_on_releases_and_deletes_none_of_them() {
    let mut state = cluster(1);
    let parent = submit(&mut state, "");
    let ok = submit(&mut state, &format!("afterok:{parent}"));
    let not_ok = submit(&mut state, &format!("afternotok:{parent}"));
    let any = submit(&mut state, &format!("afterany:{parent}"));
    let after = submit(&mut state, &format!("after:{parent}"));
    run(&mut state, 20);
    assert_eq!(letter(&state, &parent), 'R');
    assert_ne!(letter(&state, &after), 'H', "after is met by the start");
    let held = |state: &ServerState| [&ok, &not_ok, &any].map(|id| letter(state, id));

    // qrerun: the killed run ends (271) and the job is queued again; nobody is released.
    assert!(rerun(&mut state, ROOT, &parent, 30).is_empty());
    let out = end(&mut state, &parent, 271, 31);
    assert_eq!(letter(&state, &parent), 'Q');
    assert_eq!(held(&state), ['H'; 3], "the aborted run is not an end");
    assert!(out.notices.iter().all(|notice| notice.kind == NoticeKind::Rerun), "no abort of a dependent");
    let rerun_notice = &out.notices[0];
    assert_eq!(rerun_notice.job.exec_host().as_deref(), Some("node1/0"), "the R record names the killed run's node");
    assert_eq!(rerun_notice.job.times.stime, Some(20), "and its start");
    assert_eq!(job(&state, &parent).times.stime, None);
    assert!(job(&state, &parent).exec.is_empty());

    // The mom restarts without it: requeued again, still nobody released.
    run(&mut state, 40);
    assert_eq!(letter(&state, &parent), 'R');
    mom_restarts(&mut state, "node1", 50);
    assert_eq!(letter(&state, &parent), 'Q');
    assert_eq!(held(&state), ['H'; 3]);
    assert_ne!(letter(&state, &after), 'H', "after stays met");

    // The real end decides.
    run(&mut state, 60);
    let out = end(&mut state, &parent, 0, 70);
    assert_eq!(job(&state, &parent).run_count, 3);
    assert_eq!(letter(&state, &ok), 'Q');
    assert_eq!(letter(&state, &not_ok), 'F');
    assert_eq!(letter(&state, &any), 'Q');
    assert_eq!(out.notices.iter().filter(|notice| notice.kind == NoticeKind::Aborted).count(), 1);
}

#[test]
fn a_held_job_requeued_by_a_lost_mom_comes_back_held_as_after_qrerun() {
    let mut state = cluster(1);
    let id = submit(&mut state, "");
    run(&mut state, 20);
    assert!(hold(&mut state, ALICE, &id, "u", true, 25).is_empty());
    assert_eq!(letter(&state, &id), 'R', "a running job keeps running with the hold recorded");
    mom_restarts(&mut state, "node1", 30);
    assert_eq!(letter(&state, &id), 'H');
    assert_eq!(job(&state, &id).hold_types, "u");
    assert_eq!(job(&state, &id).times.stime, None);
    assert_eq!(run(&mut state, 40), 0, "held: not started again");
}

#[test]
fn a_suspended_job_counts_as_running_keeps_its_nodes_and_can_be_held_deleted_or_lost() {
    let mut state = cluster(1);
    let limit = attr("max_running", SetOp::Set, "1");
    assert!(qmgr(&mut state, ROOT, ObjectKind::Queue, "workq", &[limit]).is_empty());
    let first = submit(&mut state, "");
    let second = submit(&mut state, "");
    run(&mut state, 20);
    assert!(signal(&mut state, ROOT, &first, "suspend", 25).is_empty());
    assert_eq!(letter(&state, &first), 'S');
    // minipbs keeps a suspended job's nodes, so it keeps counting against max_running.
    assert_eq!(run(&mut state, 26), 0);
    assert_eq!(letter(&state, &second), 'Q');
    let (counts, ncpus) = state.queue_counts()["workq"];
    assert_eq!((counts.running, counts.queued, ncpus), (1, 1, 1), "qstat -Q counts S under Run");

    assert!(hold(&mut state, ALICE, &first, "u", true, 27).is_empty());
    assert_eq!(letter(&state, &first), 'S', "the hold is recorded, the job stays suspended");

    // Its mom restarts without it: requeued, held (the hold was set), nodes free.
    mom_restarts(&mut state, "node1", 30);
    assert_eq!(letter(&state, &first), 'H');
    assert_eq!(state.nodes()["node1"].free_slots().len(), 4);
    assert_eq!(run(&mut state, 31), 1);
    assert_eq!(letter(&state, &second), 'R');

    // qdel of a suspended job kills it through its mom; the end is a deletion.
    assert!(signal(&mut state, ROOT, &second, "suspend", 40).is_empty());
    let ids = [second.clone()];
    let (reply, out) = apply(&mut state, 41, |state, out| {
        delete_job::delete_job(state, out, &requester(ALICE), 41, &ids, Default::default())
    });
    assert!(errors(reply).is_empty());
    assert_eq!(letter(&state, &second), 'E');
    assert!(matches!(out.notices[0].kind, NoticeKind::Deleted { .. }));
    end(&mut state, &second, 271, 42);
    assert_eq!(letter(&state, &second), 'F');
    assert_eq!(job(&state, &second).exit_status, Some(271));
}

#[test]
fn operators_may_do_what_openpbs_lets_them_and_no_more() {
    let mut state = cluster(1);
    with_operator(&mut state);
    let id = submit(&mut state, "");
    let queued = submit(&mut state, "");
    run(&mut state, 20);
    for uid in [CAROL, OPERATOR] {
        let allowed = uid == OPERATOR;
        let expect = |codes: Vec<ErrorCode>| assert_eq!(codes.is_empty(), allowed, "uid {uid}: {codes:?}");
        expect(hold(&mut state, uid, &queued, "o", true, 21));
        expect(hold(&mut state, uid, &queued, "o", false, 22));
        expect(signal(&mut state, uid, &id, "suspend", 23));
        expect(signal(&mut state, uid, &id, "resume", 24));
        let offline = manage_node::Change { offline: Some(true), comment: Some("fan".into()) };
        let names = ["node1".to_string()];
        expect(errors(
            apply(&mut state, 25, |state, out| {
                manage_node::manage_node(state, out, &requester(uid), 25, &names, &offline)
            })
            .0,
        ));
        expect(qmgr(&mut state, uid, ObjectKind::Node, "node1", &[attr("state", SetOp::Set, "free")]));
        // Manager-only, for both.
        assert_eq!(hold(&mut state, uid, &queued, "s", true, 26), [ErrorCode::PermissionDenied]);
        assert_eq!(hold(&mut state, uid, &queued, "p", true, 26), [ErrorCode::PermissionDenied]);
        assert_eq!(
            qmgr(&mut state, uid, ObjectKind::Node, "node1", &[attr("np", SetOp::Set, "2")]),
            [ErrorCode::PermissionDenied]
        );
    }
    assert_eq!(rerun(&mut state, CAROL, &id, 27), [ErrorCode::PermissionDenied]);
    assert_eq!(letter(&state, &id), 'R');
    assert!(rerun(&mut state, OPERATOR, &id, 28).is_empty());
    assert_eq!(letter(&state, &id), 'E');
}

#[test]
fn qmgr_and_pbsnodes_set_the_same_stored_offline_flag_and_comment() {
    let mut state = cluster(2);
    let comment = attr("comment", SetOp::Set, "bad disk");
    let offline = attr("state", SetOp::Set, "offline");
    assert!(qmgr(&mut state, ROOT, ObjectKind::Node, "node1", &[offline, comment]).is_empty());
    let change = manage_node::Change { offline: Some(true), comment: Some("bad disk".into()) };
    let names = ["node2".to_string()];
    let (reply, out) =
        apply(&mut state, 30, |state, out| manage_node::manage_node(state, out, &requester(ROOT), 30, &names, &change));
    assert!(errors(reply).is_empty());
    let stored = state.stored_nodes();
    assert_eq!(stored[0].offline, stored[1].offline);
    assert_eq!(stored[0].comment, stored[1].comment);
    assert_eq!(stored[0].comment.as_deref(), Some("bad disk"), "the qmgr comment is stored");
    assert!(matches!(out.persist.last(), Some(StoreOp::SetNodes(_))));
    assert_eq!(state.nodes()["node1"].last_state_change, state.nodes()["node2"].last_state_change);
    // Both kinds survive the mom registering again (which clears the server's own reason).
    mom_restarts(&mut state, "node1", 40);
    assert_eq!(state.nodes()["node1"].operator_comment.as_deref(), Some("bad disk"));
    assert_eq!(state.nodes()["node1"].state_text(), "offline");
    let shown = crate::status::node_status(&state.nodes()["node1"], "head", &state.resources);
    assert!(shown.attrs.iter().any(|attr| attr.name == "comment" && attr.value == "bad disk"), "{shown:?}");
    // And either path clears it for the other.
    assert!(qmgr(&mut state, ROOT, ObjectKind::Node, "node2", &[attr("comment", SetOp::Set, "")]).is_empty());
    assert_eq!(state.nodes()["node2"].operator_comment, None);
}

#[test]
fn the_first_qmgr_command_stores_the_queues_the_server_started_with() {
    let mut state = cluster(1);
    let attrs = [attr("comment", SetOp::Set, "x")];
    let (reply, out) = apply(&mut state, 30, |state, out| {
        manage::manage(state, out, &requester(ROOT), 30, ManageOp::Set, ObjectKind::Node, "node1", &attrs)
    });
    assert!(errors(reply).is_empty());
    let queues: Vec<&str> = out
        .persist
        .iter()
        .filter_map(|op| match op {
            StoreOp::PutQueue(queue) => Some(queue.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(queues, ["workq"], "default_queue = workq is stored: so must workq be");
    assert!(matches!(out.persist.last(), Some(StoreOp::SetServerAttrs(_))));
}

#[test]
fn purging_history_keeps_what_dependents_decided_also_after_a_restart() {
    let mut state = cluster(1);
    let first = submit(&mut state, "");
    let second = submit(&mut state, &format!("afterok:{first}"));
    let third = submit(&mut state, &format!("afterok:{second}"));
    run(&mut state, 20);
    end(&mut state, &first, 0, 30);
    assert_eq!(letter(&state, &second), 'Q');
    let (purged, _) = apply(&mut state, 10_000, |state, out| purge_history::purge_history(state, out, 10_000, 60));
    assert_eq!(purged, 1);
    assert!(state.find_job(&first).is_err());
    crate::state::depend::rebuild(&mut state);
    state.sanity_check();
    assert_eq!(letter(&state, &second), 'Q');
    assert_eq!(letter(&state, &third), 'H');
    assert!(crate::state::depend::depend_value(&state, job(&state, &second)).unwrap().starts_with("beforeok:"));
    run(&mut state, 10_010);
    end(&mut state, &second, 0, 10_020);
    assert_eq!(letter(&state, &third), 'Q');
}

#[test]
fn a_dependency_held_job_moved_to_another_queue_stays_held_and_is_released_there() {
    let mut state = cluster(1);
    let create = |state: &mut ServerState| {
        let attrs = [
            attr("queue_type", SetOp::Set, "execution"),
            attr("enabled", SetOp::Set, "true"),
            attr("started", SetOp::Set, "true"),
        ];
        let op = ManageOp::Create;
        apply(state, 30, |state, out| {
            manage::manage(state, out, &requester(ROOT), 30, op, ObjectKind::Queue, "q2", &attrs)
        })
    };
    assert!(errors(create(&mut state).0).is_empty());
    let parent = submit(&mut state, "");
    let child = submit(&mut state, &format!("afterok:{parent}"));
    let ids = [child.clone()];
    let (reply, _) =
        apply(&mut state, 35, |state, out| move_job::move_job(state, out, &requester(ALICE), 35, "q2", &ids));
    assert!(errors(reply).is_empty());
    assert_eq!((letter(&state, &child), job(&state, &child).queue.as_str()), ('H', "q2"));
    run(&mut state, 40);
    assert_eq!(letter(&state, &child), 'H', "still waiting on its dependency");
    end(&mut state, &parent, 0, 50);
    assert_eq!(letter(&state, &child), 'Q');
    run(&mut state, 60);
    assert_eq!(letter(&state, &child), 'R');
}

#[test]
fn per_user_run_limits_and_array_slot_limits_both_hold() {
    let mut state = cluster(2);
    let limit = attr("max_user_run", SetOp::Set, "1");
    assert!(qmgr(&mut state, ROOT, ObjectKind::Queue, "workq", &[limit]).is_empty());
    let array =
        submit_with(&mut state, "", |spec| spec.array = Some(ArraySpec { indices: "1-4".to_string(), limit: Some(2) }));
    run(&mut state, 20);
    let running = |state: &ServerState| state.jobs().values().filter(|job| job.state() == JobState::Running).count();
    assert_eq!(running(&state), 1, "max_user_run 1 is below %2");
    assert_eq!(letter(&state, &array), 'B');
    let limit = attr("max_user_run", SetOp::Set, "3");
    assert!(qmgr(&mut state, ROOT, ObjectKind::Queue, "workq", &[limit]).is_empty());
    run(&mut state, 30);
    assert_eq!(running(&state), 2, "%2 is below max_user_run 3");
}

#[test]
fn subjobs_of_a_stopped_queue_wait_until_it_is_started() {
    let mut state = cluster(1);
    assert!(qmgr(&mut state, ROOT, ObjectKind::Queue, "workq", &[attr("started", SetOp::Set, "false")]).is_empty());
    let array =
        submit_with(&mut state, "", |spec| spec.array = Some(ArraySpec { indices: "1-2".to_string(), limit: None }));
    assert_eq!(run(&mut state, 20), 0);
    assert_eq!(letter(&state, &array), 'Q');
    assert!(qmgr(&mut state, ROOT, ObjectKind::Queue, "workq", &[attr("started", SetOp::Set, "true")]).is_empty());
    assert_eq!(run(&mut state, 30), 2);
    assert_eq!(letter(&state, &array), 'B');
}

#[test]
fn qalter_h_qhold_and_dependencies_keep_holds_alike() {
    let mut state = cluster(1);
    with_operator(&mut state);
    let parent = submit(&mut state, "");
    let child = submit(&mut state, &format!("afterok:{parent}"));
    let alter = |state: &mut ServerState, uid: u32, holds: &str| {
        let changes = proto::JobAlteration { hold_types: Some(holds.to_string()), ..Default::default() };
        let ids = [child.clone()];
        errors(apply(state, 40, |state, out| alter_job::alter_job(state, out, &requester(uid), 40, &ids, &changes)).0)
    };
    assert_eq!(alter(&mut state, CAROL, "o"), [ErrorCode::PermissionDenied]);
    assert_eq!(alter(&mut state, OPERATOR, "s"), [ErrorCode::PermissionDenied]);
    assert!(alter(&mut state, OPERATOR, "o").is_empty(), "an operator sets o with qalter as with qhold");
    assert_eq!(job(&state, &child).hold_types, "so", "qhold's order (s o u p), as merge_holds keeps it");
    // The owner's `n` clears only `u`; an operator's clears `o` but never the dependency's `s`.
    assert!(alter(&mut state, ALICE, "u").is_empty());
    assert_eq!(job(&state, &child).hold_types, "sou");
    assert!(alter(&mut state, ALICE, "n").is_empty());
    assert_eq!(job(&state, &child).hold_types, "so");
    assert!(alter(&mut state, OPERATOR, "n").is_empty());
    assert_eq!(job(&state, &child).hold_types, "s");
    assert_eq!(letter(&state, &child), 'H');
    run(&mut state, 50);
    end(&mut state, &parent, 0, 60);
    assert_eq!((letter(&state, &child), job(&state, &child).hold_types.as_str()), ('Q', "n"));
}

#[test]
fn qdel_x_of_a_finished_array_others_waited_on_removes_it_whole_and_changes_no_dependent() {
    let mut state = cluster(1);
    let array =
        submit_with(&mut state, "", |spec| spec.array = Some(ArraySpec { indices: "1-2".to_string(), limit: None }));
    let after = submit(&mut state, &format!("afterok:{array}"));
    run(&mut state, 20);
    let subjobs: Vec<String> = (1..=2).map(|index| array.replace("[]", &format!("[{index}]"))).collect();
    for sub in &subjobs {
        end(&mut state, sub, 0, 30);
    }
    assert_eq!(letter(&state, &array), 'F');
    assert_eq!(letter(&state, &after), 'Q', "released when the whole array ended well");
    let ids = [array.clone()];
    let how = delete_job::How { force: false, history: true };
    let (reply, out) =
        apply(&mut state, 40, |state, out| delete_job::delete_job(state, out, &requester(ALICE), 40, &ids, how));
    assert!(errors(reply).is_empty());
    let deleted = out.persist.iter().filter(|op| matches!(op, StoreOp::DeleteJob(_))).count();
    assert_eq!(deleted, 3, "the parent and both subjobs");
    assert!(state.find_job(&array).is_err() && state.find_job(&subjobs[0]).is_err());
    crate::state::depend::rebuild(&mut state);
    state.sanity_check();
    assert_eq!(letter(&state, &after), 'Q');
    assert_eq!(crate::state::depend::depend_value(&state, job(&state, &after)), None, "a purged dependency is met");
}
