//! Tests of `handlers/fairshare.rs` (pbsfs): the tree listing, one entity, manager-only
//! changes, and the bounds on what `-s` accepts.

use super::fairshare::{fairshare, MAX_ENTITY_BYTES};
use super::tests::{cluster, requester, ALICE};
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use proto::client::FairShareOp;
use proto::{ErrorCode, ObjectStatus, ServerReply};

const ROOT: u32 = 0;

fn ask(state: &mut ServerState, uid: u32, op: FairShareOp) -> ServerReply {
    let mut out = Outbox::default();
    let reply = fairshare(state, &mut out, &requester(uid), 3600, &op);
    out.persist.extend(state.fairshare.take_pending());
    reply
}

fn objects(reply: ServerReply) -> Vec<ObjectStatus> {
    match reply {
        ServerReply::Objects { objects, errors } if errors.is_empty() => objects,
        other => panic!("{other:?}"),
    }
}

fn error_of(reply: ServerReply) -> (ErrorCode, String) {
    match reply {
        ServerReply::Error(error) => (error.code, error.message),
        other => panic!("{other:?}"),
    }
}

#[test]
fn show_lists_the_tree_with_figures() {
    let mut state = cluster(0);
    state.fairshare.set_usage("alice", 2.0, 3600);
    let tree = objects(ask(&mut state, ALICE, FairShareOp::Show));
    let names: Vec<&str> = tree.iter().map(|object| object.name.as_str()).collect();
    assert_eq!(names, ["TREEROOT", "unknown", "alice"]);
    assert_eq!(tree[0].get("shares"), Some("-1"));
    assert_eq!(tree[0].get("fairshare_weights"), Some("ncpus=1,ngpus=1"));
    assert_eq!(tree[2].get("usage"), Some("2"));
    assert_eq!(tree[2].get("percentage"), Some("1"));
    assert_eq!(tree[2].get("fairshare_factor"), Some("0.5"));
    assert_eq!(tree[2].get("path"), Some("TREEROOT,unknown,alice"));
}

#[test]
fn get_gives_the_path_or_names_the_missing_entity() {
    let mut state = cluster(0);
    state.fairshare.set_usage("alice", 2.0, 3600);
    let path = objects(ask(&mut state, ALICE, FairShareOp::Get { entity: "alice".into() }));
    assert_eq!(path.iter().map(|object| object.name.as_str()).collect::<Vec<_>>(), ["TREEROOT", "unknown", "alice"]);
    let (code, message) = error_of(ask(&mut state, ALICE, FairShareOp::Get { entity: "zed".into() }));
    assert_eq!((code, message.as_str()), (ErrorCode::InvalidRequest, "Fairshare Entity zed does not exist."));
}

#[test]
fn changes_are_for_managers_and_stored() {
    let mut state = cluster(0);
    let set = FairShareOp::Set { entity: "alice".into(), usage: "7200".into() };
    assert_eq!(error_of(ask(&mut state, ALICE, set.clone())).0, ErrorCode::PermissionDenied);
    assert_eq!(ask(&mut state, ROOT, set), ServerReply::Done { errors: vec![] });
    assert_eq!(state.fairshare.user_usage("alice", 3600, &state.attrs.sched), 2.0);
    assert_eq!(ask(&mut state, ROOT, FairShareOp::Decay), ServerReply::Done { errors: vec![] });
    assert_eq!(state.fairshare.user_usage("alice", 3600, &state.attrs.sched), 1.0);
    assert_eq!(ask(&mut state, ROOT, FairShareOp::Trim), ServerReply::Done { errors: vec![] });
    assert_eq!(state.fairshare.user_usage("alice", 3600, &state.attrs.sched), 0.0);
}

#[test]
fn set_refuses_bad_values_names_and_inner_entities() {
    let mut state = cluster(0);
    let long = "a".repeat(MAX_ENTITY_BYTES + 1);
    for (entity, usage) in [
        ("alice", "-1"),
        ("alice", "NaN"),
        ("alice", "inf"),
        ("alice", "1e16"),
        ("alice", "lots"),
        ("", "1"),
        ("a b", "1"),
        (long.as_str(), "1"),
        ("unknown", "1"),
        ("TREEROOT", "1"),
    ] {
        let op = FairShareOp::Set { entity: entity.into(), usage: usage.into() };
        assert_eq!(error_of(ask(&mut state, ROOT, op)).0, ErrorCode::BadAttributeValue, "{entity} {usage}");
    }
}
