//! Tests of `state/fairshare.rs`: charging runs, standings (running usage, unknown entities,
//! the file's groups), decay, the cache, and what is stored.

use super::*;
use crate::handlers::tests::{cluster, submit, ALICE};
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;

const BOB: u32 = 1001;
const HOUR: i64 = 3600;

fn key_of(state: &ServerState, id: &str) -> JobKey {
    state.find_job_entry(id).unwrap().0
}

/// Submits a job of `ncpus` cpus as `uid` and starts it at `now`.
fn run_job(state: &mut ServerState, uid: u32, ncpus: &str, now: i64) -> JobKey {
    let id = submit(state, uid, &[("select", &format!("1:ncpus={ncpus}"))]);
    let key = key_of(state, &id);
    schedule_pass(state, &mut Outbox::default(), now);
    assert!(state.job(key).unwrap().state().is_active(), "{id} started");
    key
}

fn owner(state: &ServerState, key: JobKey) -> (String, String) {
    let job = state.job(key).unwrap();
    (job.owner.to_string(), job.group.to_string())
}

#[test]
fn an_ended_run_charges_its_owner_and_group_cpu_hours() {
    let mut state = cluster(1);
    let key = run_job(&mut state, ALICE, "2", 1000);
    let (user, group) = owner(&state, key);
    state.fairshare.take_pending();
    state.finish_job(key, 0, 1000 + 2 * HOUR).unwrap();
    let attrs = state.attrs.sched.clone();
    assert_eq!(state.fairshare.user_usage(&user, 1000 + 2 * HOUR, &attrs), 4.0);
    assert_eq!(state.fairshare.group_usage(&group, 1000 + 2 * HOUR, &attrs), 4.0);
    let stored = state.fairshare.take_pending();
    assert_eq!(stored.len(), 2);
    assert!(
        matches!(&stored[0], StoreOp::PutUsage(row) if row.kind == UsageKind::User && row.usage == 4.0 && row.group == group)
    );
    // One decay time later, half of it is left (default factor 0.5).
    let later = 1000 + 2 * HOUR + attrs.fairshare_decay_time;
    assert!((state.fairshare.user_usage(&user, later, &attrs) - 2.0).abs() < 1e-9);
}

#[test]
fn weights_count_gpu_hours() {
    let mut state = cluster(1);
    state.attrs.sched.fairshare_weights = super::super::sched_attrs::UsageWeights { ncpus: 0.5, ngpus: 10.0 };
    let id = submit(&mut state, ALICE, &[("select", "1:ncpus=2:ngpus=1")]);
    let key = key_of(&state, &id);
    schedule_pass(&mut state, &mut Outbox::default(), 0);
    let job = state.job(key).unwrap();
    assert_eq!(run_usage(job, &state.attrs.sched, HOUR), 0.5 * 2.0 + 10.0);
}

#[test]
fn a_requeued_run_is_charged_too() {
    let mut state = cluster(1);
    let key = run_job(&mut state, ALICE, "1", 0);
    let (user, _) = owner(&state, key);
    state.requeue_job(key, HOUR).unwrap();
    assert_eq!(state.fairshare.user_usage(&user, HOUR, &state.attrs.sched), 1.0);
}

#[test]
fn the_user_who_used_more_stands_lower_and_running_jobs_count() {
    let mut state = cluster(1);
    let alice_job = run_job(&mut state, ALICE, "1", 0);
    let (alice, alice_group) = owner(&state, alice_job);
    submit(&mut state, BOB, &[]);
    let bob = "user1001";
    let bob_group = state.queued_jobs().next().unwrap().group.clone();
    // At the start nobody has used anything.
    let at_start = standing(&state, &alice, &alice_group, 0);
    assert_eq!(at_start.factor, standing(&state, bob, &bob_group, 0).factor);
    // An hour later alice's running job has used an hour: she stands lower, unrecorded.
    let alice_now = standing(&state, &alice, &alice_group, HOUR);
    let bob_now = standing(&state, bob, &bob_group, HOUR);
    assert!(alice_now.factor < bob_now.factor, "{alice_now:?} {bob_now:?}");
    assert!(alice_now.usage > bob_now.usage);
    assert_eq!(alice_now.perc, 0.5);
    assert!(state.fairshare.take_pending().is_empty());
}

#[test]
fn the_file_places_users_and_groups() {
    let mut state = cluster(1);
    let alice_job = run_job(&mut state, ALICE, "1", 0);
    let (alice, group) = owner(&state, alice_job);
    let text = format!("lab 1 root 3\n{group} 2 lab 1\nother 3 root 1\n");
    state.fairshare.set_tree(sched::fairshare::ShareTree::parse(&text).unwrap(), None);
    // alice is not named, her group is: she stands as her group.
    assert_eq!(entity(state.fairshare.tree(), &alice, &group), group.as_str());
    assert_eq!(standing(&state, &alice, &group, 0).perc, 3.0 / 5.0);
    // Someone named by neither sits under unknown.
    assert_eq!(entity(state.fairshare.tree(), "carol", "nogroup"), "carol");
    let carol = standing(&state, "carol", "nogroup", 0);
    assert_eq!(carol.perc, 1.0 / 5.0);
    let rows = standings(&state, HOUR, None);
    let lab = rows.get("lab").unwrap();
    assert!((lab.usage - 1.0).abs() < 1e-9, "the group leaf counts alice's running hour");
}

#[test]
fn standings_are_cached_per_second_and_change() {
    let mut state = cluster(1);
    let key = run_job(&mut state, ALICE, "1", 0);
    let (alice, group) = owner(&state, key);
    let first = standing(&state, &alice, &group, HOUR);
    assert_eq!(standing(&state, &alice, &group, HOUR), first);
    state.finish_job(key, 0, HOUR).unwrap();
    // The recorded usage replaced the running usage: same figures, recomputed.
    let after = standing(&state, &alice, &group, HOUR);
    assert!((after.usage - first.usage).abs() < 1e-9);
    state.fairshare.set_usage(&alice, 0.0, HOUR);
    assert_eq!(standing(&state, &alice, &group, HOUR).usage, 0.0);
}

#[test]
fn pbsfs_operations_decay_set_and_trim() {
    let mut state = cluster(1);
    let attrs = state.attrs.sched.clone();
    state.fairshare.set_usage("alice", 8.0, 0);
    state.fairshare.set_usage("bob", 2.0, 0);
    state.fairshare.decay_once(0, &attrs);
    assert_eq!(state.fairshare.user_usage("alice", 0, &attrs), 4.0);
    state.fairshare.set_tree(sched::fairshare::ShareTree::parse("alice 1 root 1\n").unwrap(), None);
    state.fairshare.take_pending();
    state.fairshare.trim();
    assert_eq!(state.fairshare.user_usage("bob", 0, &attrs), 0.0);
    assert_eq!(state.fairshare.user_usage("alice", 0, &attrs), 4.0);
    let stored = state.fairshare.take_pending();
    assert!(matches!(&stored[..], [StoreOp::DeleteUsage { kind: UsageKind::User, name }] if name == "bob"));
}

#[test]
fn loaded_records_count() {
    let mut state = cluster(1);
    state.fairshare.load(vec![StoredUsage {
        kind: UsageKind::User,
        name: "alice".into(),
        usage: 3.0,
        stamp: 100,
        group: "lab".into(),
    }]);
    assert_eq!(state.fairshare.user_usage("alice", 100, &state.attrs.sched), 3.0);
    let rows = standings(&state, 100, None);
    assert_eq!(rows.get("alice").unwrap().path, vec!["TREEROOT", "unknown", "alice"]);
}
