//! Who may do what (OpenPBS's rules): every request on alice's job by alice, another user, an
//! operator and a manager, as one snapshot table; and what `qstat -f` shows of another
//! user's job.

use super::status_job::{self, Query, Reader};
use super::tests::{cluster, requester, submit, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::{JobAlteration, ServerReply};

const BOB: u32 = 1001;
const OPER: u32 = 1002;
const MGR: u32 = 1003;

/// A root server with 2 nodes, queue `other`, `user1002` an operator (qmgr) and `user1003` a
/// manager (`pbs_server --managers`).
fn server() -> ServerState {
    let mut state = cluster(2);
    state.configure_admins(&["user1003@*".to_string()], &[]).unwrap();
    let root = requester(0);
    let reply = qmgr(
        &mut state,
        &root,
        0,
        (ManageOp::Create, ObjectKind::Queue, "other"),
        &[set("queue_type", "execution"), set("enabled", "true"), set("started", "true")],
    );
    assert_eq!(outcome(reply), "ok");
    let reply = qmgr(&mut state, &root, 0, (ManageOp::Set, ObjectKind::Server, ""), &[set("operators", "user1002@*")]);
    assert_eq!(outcome(reply), "ok");
    state
}

/// A qmgr request (`op`, object kind, object name) by `who` at time `now`.
fn qmgr(
    state: &mut ServerState,
    who: &Requester,
    now: i64,
    (op, kind, name): (ManageOp, ObjectKind, &str),
    attrs: &[AttrOp],
) -> ServerReply {
    manage::manage(state, &mut Outbox::default(), who, now, op, kind, name, attrs)
}

fn set(name: &str, value: &str) -> AttrOp {
    AttrOp { name: name.to_string(), resource: None, op: SetOp::Set, value: value.to_string() }
}

/// `ok`, or the errors' messages.
fn outcome(reply: ServerReply) -> String {
    match reply {
        ServerReply::Done { errors } if errors.is_empty() => "ok".to_string(),
        ServerReply::Done { errors } => errors.iter().map(|error| error.message.clone()).collect::<Vec<_>>().join("; "),
        ServerReply::Error(error) => error.message,
        other => format!("{other:?}"),
    }
}

/// One request by a requester on alice's job.
type Request = fn(&mut ServerState, &Requester, &str) -> ServerReply;

/// Each request's name, whether alice's job must be running, and the request.
fn requests() -> Vec<(&'static str, bool, Request)> {
    vec![
        ("qdel", false, |s, r, id| {
            delete_job::delete_job(s, &mut Outbox::default(), r, 20, &[id.into()], Default::default())
        }),
        ("qdel -W force", true, |s, r, id| {
            let how = delete_job::How { force: true, history: false };
            delete_job::delete_job(s, &mut Outbox::default(), r, 20, &[id.into()], how)
        }),
        ("qhold -h u", false, |s, r, id| hold_job::hold_job(s, &mut Outbox::default(), r, 20, &[id.into()], "u", true)),
        ("qhold -h o", false, |s, r, id| hold_job::hold_job(s, &mut Outbox::default(), r, 20, &[id.into()], "o", true)),
        ("qhold -h s", false, |s, r, id| hold_job::hold_job(s, &mut Outbox::default(), r, 20, &[id.into()], "s", true)),
        ("qrls -h u", false, |s, r, id| held(s, id, r, "u")),
        ("qrls -h o", false, |s, r, id| held(s, id, r, "o")),
        ("qrls -h s", false, |s, r, id| held(s, id, r, "s")),
        ("qalter -N", false, |s, r, id| {
            alter(s, r, id, JobAlteration { name: Some("x".into()), ..Default::default() })
        }),
        ("qalter -h o", false, |s, r, id| {
            alter(s, r, id, JobAlteration { hold_types: Some("o".into()), ..Default::default() })
        }),
        ("qalter -l walltime (R)", true, |s, r, id| {
            let resources = vec![("walltime".to_string(), "1:00:00".to_string())];
            alter(s, r, id, JobAlteration { resources, ..Default::default() })
        }),
        ("qmove", false, |s, r, id| move_job::move_job(s, &mut Outbox::default(), r, 20, "other", &[id.into()])),
        ("qsig -s USR1", true, |s, r, id| {
            signal_job::signal_job(s, &mut Outbox::default(), r, 20, &[id.into()], "USR1")
        }),
        ("qsig -s suspend", true, |s, r, id| {
            signal_job::signal_job(s, &mut Outbox::default(), r, 20, &[id.into()], "suspend")
        }),
        ("qrerun", true, |s, r, id| rerun_job::rerun_job(s, &mut Outbox::default(), r, 20, &[id.into()])),
        ("pbsnodes -o", false, |s, r, _| {
            let change = manage_node::Change { offline: Some(true), comment: None };
            manage_node::manage_node(s, &mut Outbox::default(), r, 20, &["node1".into()], &change)
        }),
        ("qmgr set node comment", false, |s, r, _| {
            qmgr(s, r, 20, (ManageOp::Set, ObjectKind::Node, "node1"), &[set("comment", "x")])
        }),
        ("qmgr set server", false, |s, r, _| {
            qmgr(s, r, 20, (ManageOp::Set, ObjectKind::Server, ""), &[set("scheduling", "f")])
        }),
        ("qmgr create queue", false, |s, r, _| qmgr(s, r, 20, (ManageOp::Create, ObjectKind::Queue, "q2"), &[])),
        ("qmgr set operators", false, |s, r, _| {
            let attr = AttrOp { op: SetOp::Incr, ..set("operators", "user1001@*") };
            qmgr(s, r, 20, (ManageOp::Set, ObjectKind::Server, ""), &[attr])
        }),
    ]
}

/// qrls of `kind` on the job held by root with every hold a manager may set.
fn held(state: &mut ServerState, id: &str, who: &Requester, kind: &str) -> ServerReply {
    let root = requester(0);
    assert_eq!(outcome(hold_job::hold_job(state, &mut Outbox::default(), &root, 15, &[id.into()], "sou", true)), "ok");
    hold_job::hold_job(state, &mut Outbox::default(), who, 20, &[id.into()], kind, false)
}

fn alter(state: &mut ServerState, who: &Requester, id: &str, changes: JobAlteration) -> ServerReply {
    alter_job::alter_job(state, &mut Outbox::default(), who, 20, &[id.into()], &changes)
}

#[test]
fn who_may_do_what_to_alices_job() {
    let mut table = String::new();
    for (name, running, request) in requests() {
        for (who, uid) in [("owner", ALICE), ("other user", BOB), ("operator", OPER), ("manager", MGR)] {
            let mut state = server();
            let id = submit(&mut state, ALICE, &[("ncpus", "1")]);
            if running {
                schedule_pass(&mut state, &mut Outbox::default(), 12);
            }
            table.push_str(&format!("{name:<24} {who:<11} {}\n", outcome(request(&mut state, &requester(uid), &id))));
        }
    }
    insta::assert_snapshot!(table);
}

/// The names of the attributes `qstat -f` shows `reader` of job `id`.
fn shown(state: &ServerState, reader: Reader, id: &str) -> Vec<String> {
    let selectors = [id.to_string()];
    let query = Query { selectors: &selectors, reader, ..Default::default() };
    match status_job::status_job(state, state.flavor, 20, query) {
        ServerReply::Jobs { jobs, .. } => jobs[0].attrs.iter().map(|attr| attr.name.clone()).collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn only_the_owner_and_operators_see_a_jobs_environment_and_arguments() {
    for flavor in [crate::config::Flavor::OpenPbs, crate::config::Flavor::Torque] {
        let mut state = server();
        state.flavor = flavor;
        let id = submit(&mut state, ALICE, &[("ncpus", "1")]);
        for (uid, sees) in [(ALICE, true), (BOB, false), (OPER, true), (MGR, true), (0, true)] {
            let attrs = shown(&state, Reader::of(&state, &requester(uid)), &id);
            assert!(attrs.iter().any(|name| name == "Job_Name"), "{attrs:?}");
            let private: Vec<&String> =
                attrs.iter().filter(|name| crate::status::PRIVATE.contains(&name.as_str())).collect();
            assert_eq!(!private.is_empty(), sees, "uid {uid} ({flavor}): {private:?}");
            assert_eq!(attrs.iter().any(|name| name == "Variable_List"), sees, "uid {uid} ({flavor})");
        }
        assert!(shown(&state, Reader::default(), &id)
            .iter()
            .all(|name| !crate::status::PRIVATE.contains(&name.as_str())));
    }
}

#[test]
fn managers_and_operators_are_named_users_never_a_wildcard() {
    let mut state = server();
    let root = requester(0);
    for value in ["*@*", "*", "a*@host", "@host", "alice@"] {
        for name in ["managers", "operators"] {
            let reply = qmgr(&mut state, &root, 0, (ManageOp::Set, ObjectKind::Server, ""), &[set(name, value)]);
            assert!(outcome(reply).starts_with("Illegal attribute or resource value"), "{name} = {value}");
        }
    }
    assert!(state.configure_admins(&["*@host".to_string()], &[]).is_err());
    // The configured manager stays a manager when qmgr empties the list, and is shown.
    let reply = qmgr(&mut state, &root, 0, (ManageOp::Unset, ObjectKind::Server, ""), &[set("managers", "")]);
    assert_eq!(outcome(reply), "ok");
    assert!(state.is_manager(&requester(MGR)));
    assert!(!state.is_manager(&requester(OPER)) && state.is_operator(&requester(OPER)));
    let managers = state.server_status().into_iter().find(|attr| attr.name == "managers").map(|attr| attr.value);
    assert_eq!(managers.as_deref(), Some("user1003@*"));
    assert!(!state.server_attr_pairs().iter().any(|(name, _)| name == "managers"), "configured ones are not stored");
}

/// Issue 12, item 9: a job that runs as root may be altered by managers only (its shell,
/// variables or output path would be an operator's way to root).
#[test]
fn only_managers_alter_a_root_job() {
    let mut state = server();
    state.configure_acl_roots(&["user0".to_string()]);
    let root_job = submit(&mut state, 0, &[("ncpus", "1")]);
    let alices = submit(&mut state, ALICE, &[("ncpus", "1")]);
    let attacks = [
        JobAlteration { shell: Some("/tmp/evil".into()), ..Default::default() },
        JobAlteration { variables: vec![("BASH_ENV".into(), "/tmp/evil".into())], ..Default::default() },
        JobAlteration { output_path: Some("head:/etc/cron.d/evil".into()), ..Default::default() },
        JobAlteration { name: Some("renamed".into()), ..Default::default() },
    ];
    for changes in &attacks {
        let before = state.jobs()[&state.find_job(&root_job).unwrap()].clone();
        let reply = alter(&mut state, &requester(OPER), &root_job, changes.clone());
        assert!(outcome(reply).starts_with("Unauthorized Request"), "{changes:?}");
        assert_eq!(state.jobs()[&state.find_job(&root_job).unwrap()], before, "nothing changed");
        assert_eq!(outcome(alter(&mut state, &requester(OPER), &alices, changes.clone())), "ok", "a user's job");
    }
    assert_eq!(outcome(alter(&mut state, &requester(MGR), &root_job, attacks[3].clone())), "ok", "managers may");
}
