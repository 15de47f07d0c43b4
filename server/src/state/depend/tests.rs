//! Dependency handling on a `ServerState` with a recording `Outbox`, through the real
//! handlers: hold at submit, release, cascade delete, `before*`, refusals, restart rebuild.

use super::*;
use crate::handlers::tests::{cluster, requester, spec};
use crate::handlers::{delete_job, job_ended, submit_job};
use crate::sched_loop::schedule_pass;
use job::depend::parse;
use job::JobKey;
use proto::mom::JobObit;
use proto::ServerReply;

const ALICE: u32 = 1000;

fn try_submit(state: &mut ServerState, uid: u32, depend: &str) -> Result<String, RequestError> {
    let mut job = spec(&[("ncpus", "1")]);
    job.depend = if depend.is_empty() { Vec::new() } else { parse(depend).unwrap() };
    let mut out = Outbox::default();
    match submit_job::submit_job(state, &mut out, &requester(uid), 10, job) {
        ServerReply::JobSubmitted { id } => Ok(id),
        ServerReply::Error(error) => {
            assert!(out.persist.is_empty(), "a refused job persists nothing");
            Err(error)
        }
        other => panic!("{other:?}"),
    }
}

fn submit(state: &mut ServerState, depend: &str) -> String {
    try_submit(state, ALICE, depend).unwrap_or_else(|error| panic!("{depend}: {}", error.message))
}

fn job<'a>(state: &'a ServerState, id: &str) -> &'a Job {
    &state.jobs()[&state.find_job(id).unwrap()]
}

fn letter(state: &ServerState, id: &str) -> char {
    job(state, id).state().letter()
}

/// Runs what the scheduler places now.
fn run(state: &mut ServerState, now: i64) -> Outbox {
    let mut out = Outbox::default();
    schedule_pass(state, &mut out, now);
    out
}

/// The mom reports the end of running job `id`.
fn end(state: &mut ServerState, id: &str, exit_status: i32, now: i64) -> Outbox {
    let node = job(state, id).exec[0].node.clone();
    let mut out = Outbox::default();
    let obit = JobObit { job_id: id.to_string(), exit_status, session_id: 5, ..Default::default() };
    job_ended::job_ended(state, &mut out, &node, obit, now);
    state.sanity_check();
    out
}

fn aborted(out: &Outbox) -> Vec<String> {
    out.notices
        .iter()
        .filter(|notice| notice.kind == NoticeKind::Aborted)
        .map(|notice| notice.job.id.to_string())
        .collect()
}

#[test]
fn afterok_chain_holds_then_releases_one_by_one() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterok:{}", a.trim_end_matches(".head")));
    let c = submit(&mut state, &format!("afterok:{b}"));
    assert_eq!((letter(&state, &b), job(&state, &b).hold_types.as_str()), ('H', "s"));
    assert_eq!(letter(&state, &c), 'H');
    assert_eq!(job(&state, &b).spec.depend, parse("afterok:1.head").unwrap(), "ids normalised");
    // B shows what it waits on and, mirrored, who waits on it.
    assert_eq!(depend_value(&state, job(&state, &b)).as_deref(), Some("afterok:1.head@head,beforeok:3.head@head"));
    assert_eq!(depend_value(&state, job(&state, &a)).as_deref(), Some("beforeok:2.head@head"));
    state.sanity_check();

    run(&mut state, 20);
    assert_eq!((letter(&state, &a), letter(&state, &b)), ('R', 'H'), "only A runs");
    let out = end(&mut state, &a, 0, 30);
    assert_eq!((letter(&state, &b), job(&state, &b).hold_types.as_str()), ('Q', "n"));
    assert!(out.persist.iter().any(|op| matches!(op, StoreOp::UpdateJob(job) if job.id.to_string() == b)));
    assert!(out.schedule);
    assert_eq!(depend_value(&state, job(&state, &b)).as_deref(), Some("beforeok:3.head@head"), "met: not shown");
    assert_eq!(letter(&state, &c), 'H');

    run(&mut state, 40);
    end(&mut state, &b, 0, 50);
    assert_eq!(letter(&state, &c), 'Q');
}

#[test]
fn failure_deletes_the_chain_below() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterok:{a}"));
    let c = submit(&mut state, &format!("afterok:{b}"));
    let d = submit(&mut state, &format!("afterany:{b}"));
    let e = submit(&mut state, &format!("afternotok:{a}"));
    run(&mut state, 20);
    let out = end(&mut state, &a, 1, 30);
    assert_eq!(aborted(&out), [b.clone(), c.clone(), d.clone()]);
    for id in [&b, &c, &d] {
        assert_eq!(letter(&state, id), 'F', "{id}");
        assert_eq!(job(&state, id).times.obittime, Some(30));
    }
    assert_eq!(job(&state, &b).comment.as_deref(), Some("Job deleted as result of dependency on job 1.head"));
    assert_eq!(job(&state, &c).comment.as_deref(), Some("Job deleted as result of dependency on job 2.head"));
    assert_eq!(depend_value(&state, job(&state, &c)).as_deref(), Some("afterok:2.head@head"));
    assert_eq!(letter(&state, &e), 'Q', "afternotok is met by a failure");
}

#[test]
fn afternotok_dependent_is_deleted_when_the_parent_succeeds() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afternotok:{a}"));
    run(&mut state, 20);
    let out = end(&mut state, &a, 0, 30);
    assert_eq!(aborted(&out), vec![b.clone()]);
}

#[test]
fn afterany_is_met_by_any_end_including_deletion() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, "");
    let after_a = submit(&mut state, &format!("afterany:{a}"));
    let after_b = submit(&mut state, &format!("afterany:{b},afternotok:{b}"));
    // B is deleted before it ever runs.
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 11, std::slice::from_ref(&b), Default::default());
    assert_eq!(letter(&state, &after_b), 'Q');
    state.sanity_check();
    run(&mut state, 20);
    end(&mut state, &a, 7, 30);
    assert_eq!(letter(&state, &after_a), 'Q');
}

#[test]
fn after_is_met_when_the_parent_starts() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("after:{a}"));
    assert_eq!(letter(&state, &b), 'H');
    run(&mut state, 20);
    assert_eq!(letter(&state, &a), 'R');
    assert_ne!(letter(&state, &b), 'H', "released when A started");
}

#[test]
fn deleting_a_dependency_held_job_deletes_its_dependents() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterok:{a}"));
    let c = submit(&mut state, &format!("afterany:{b}"));
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 30, std::slice::from_ref(&b), Default::default());
    assert_eq!(aborted(&out), vec![c.clone()], "OpenPBS: a job deleted while held by a dependency fails them all");
    assert_eq!(letter(&state, &a), 'Q');
    state.sanity_check();
}

#[test]
fn satisfied_at_submit_is_not_held_and_impossible_at_submit_is_deleted() {
    let mut state = cluster(1);
    let ok = submit(&mut state, "");
    let bad = submit(&mut state, "");
    run(&mut state, 20);
    end(&mut state, &ok, 0, 30);
    run(&mut state, 31);
    end(&mut state, &bad, 2, 40);
    let fine = submit(&mut state, &format!("afterok:{ok},afternotok:{bad},afterany:{ok}"));
    assert_eq!((letter(&state, &fine), job(&state, &fine).hold_types.as_str()), ('Q', "n"));
    let mut job_spec = spec(&[]);
    job_spec.depend = parse(&format!("afterok:{bad}")).unwrap();
    let mut out = Outbox::default();
    let reply = submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 50, job_spec);
    let ServerReply::JobSubmitted { id } = reply else { panic!("{reply:?}") };
    assert_eq!(letter(&state, &id), 'F', "created, then deleted at once (as OpenPBS)");
    assert_eq!(aborted(&out), vec![id.clone()]);
    assert_eq!(
        job(&state, &id).comment.as_deref(),
        Some("Dependency request for job rejected by 2.head Finished job did not satisfy dependency")
    );
    state.sanity_check();
}

#[test]
fn unknown_and_malformed_parents_are_refused() {
    let mut state = cluster(1);
    let error = try_submit(&mut state, ALICE, "afterok:99").unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (ErrorCode::UnknownJobId, "Unknown Job Id 99.head"));
    let error = try_submit(&mut state, ALICE, "afterok:5.otherserver").unwrap_err();
    assert_eq!(error.code, ErrorCode::UnknownJobId);
    assert!(state.jobs().is_empty());
    assert_eq!(state.next_seq(), 1);
}

#[test]
fn before_gives_the_target_an_after_dependency() {
    let mut state = cluster(1);
    let b = submit(&mut state, "on:1");
    assert_eq!(letter(&state, &b), 'H');
    assert_eq!(depend_value(&state, job(&state, &b)).as_deref(), Some("on:1"));
    let a = submit(&mut state, &format!("beforeok:{b}"));
    assert_eq!((letter(&state, &a), letter(&state, &b)), ('Q', 'H'));
    assert_eq!(depend_value(&state, job(&state, &b)).as_deref(), Some("afterok:2.head@head"), "on:1 used up");
    assert_eq!(depend_value(&state, job(&state, &a)).as_deref(), Some("beforeok:1.head@head"));
    state.sanity_check();
    run(&mut state, 20);
    assert_eq!(letter(&state, &b), 'H', "B waits for A");
    end(&mut state, &a, 0, 30);
    assert_eq!(letter(&state, &b), 'Q');

    // A target without `on` is held by the registration too.
    let d = submit(&mut state, "");
    let e = submit(&mut state, &format!("beforenotok:{d}"));
    assert_eq!((letter(&state, &d), job(&state, &d).hold_types.as_str()), ('H', "s"));
    assert_eq!(letter(&state, &e), 'Q');
}

#[test]
fn before_needs_a_waiting_job_of_the_same_owner() {
    let mut state = cluster(1);
    let other = try_submit(&mut state, 2000, "").unwrap();
    let error = try_submit(&mut state, ALICE, &format!("before:{other}")).unwrap_err();
    assert_eq!((error.code, error.message.as_str()), (ErrorCode::PermissionDenied, "Unauthorized Request  1.head"));
    let running = submit(&mut state, "");
    run(&mut state, 20);
    let error = try_submit(&mut state, ALICE, &format!("beforeany:{running}")).unwrap_err();
    assert_eq!(error.code, ErrorCode::BadDepend);
    insta::assert_snapshot!(error.message, @"Invalid Job Dependency beforeany:2.head has already started");
}

#[test]
fn rebuild_recovers_the_index_and_registrations() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterok:{a}"));
    let c = submit(&mut state, "on:1");
    let _d = submit(&mut state, &format!("beforeany:{c},afterok:{b}"));
    let before = state.depend().clone();
    rebuild(&mut state);
    assert_eq!(state.depend(), &before);
    state.sanity_check();
    run(&mut state, 20);
    end(&mut state, &a, 0, 30);
    assert_eq!(letter(&state, &b), 'Q');
}

#[test]
fn a_job_deleted_at_submit_fails_its_beforeok_targets() {
    let mut state = cluster(1);
    let failed = submit(&mut state, "");
    run(&mut state, 20);
    end(&mut state, &failed, 1, 30);
    let target = submit(&mut state, "");
    let mut job_spec = spec(&[]);
    job_spec.depend = parse(&format!("afterok:{failed},beforeok:{target}")).unwrap();
    let mut out = Outbox::default();
    submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 40, job_spec);
    assert_eq!(aborted(&out), vec!["3.head".to_string(), target.clone()]);
    assert_eq!(
        job(&state, &target).comment.as_deref(),
        Some("Job deleted as result of dependency on job 3.head"),
        "its beforeok job ended without success"
    );
    state.sanity_check();
}

#[test]
fn at_submit_a_finished_job_is_judged_by_its_exit_status_alone() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let held = submit(&mut state, &format!("afterok:{a}"));
    let mut out = Outbox::default();
    delete_job::delete_job(
        &mut state,
        &mut out,
        &requester(ALICE),
        11,
        std::slice::from_ref(&held),
        Default::default(),
    );
    // `held` ended without running while held by a dependency: later `after`/`afterany`
    // dependents are still accepted as met, as OpenPBS does for finished jobs.
    let later = submit(&mut state, &format!("after:{held},afterany:{held},afternotok:{held},afterok:{a}"));
    assert_eq!(letter(&state, &later), 'H', "waits for A");
    assert_eq!(job(&state, &later).spec.depend, parse("afterok:1.head").unwrap(), "met for good: dropped");
    run(&mut state, 20);
    end(&mut state, &a, 0, 30);
    assert_eq!(letter(&state, &later), 'Q');
    state.sanity_check();
}

#[test]
fn torque_flavor_shows_ids_without_server_suffix() {
    let mut state = cluster(1);
    state.flavor = proto::Flavor::Torque;
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterany:{a},on:2"));
    assert_eq!(depend_value(&state, job(&state, &b)).as_deref(), Some("afterany:1.head,on:2"));
}

#[test]
fn status_table() {
    let outcomes = [
        Outcome::Gone,
        Outcome::Pending { started: false },
        Outcome::Pending { started: true },
        Outcome::Ended { started: true, ok: true, dependency_held: false },
        Outcome::Ended { started: true, ok: false, dependency_held: false },
        Outcome::Ended { started: false, ok: false, dependency_held: false },
        Outcome::Ended { started: false, ok: false, dependency_held: true },
    ];
    let mut table = String::new();
    for kind in DependKind::ALL.into_iter().filter(|kind| kind.is_after()) {
        for outcome in outcomes {
            table.push_str(&format!(
                "{:<10} {outcome:?} -> {:?} (at submit {:?})\n",
                kind.name(),
                status(kind, outcome),
                status_at_submit(kind, outcome)
            ));
        }
    }
    insta::assert_snapshot!(table);
}

/// Submits an array of `indices` for Alice with `depend`.
fn submit_array(state: &mut ServerState, indices: &str, depend: &str) -> String {
    let mut job = spec(&[("ncpus", "1")]);
    job.array = Some(job::array::ArraySpec { indices: indices.to_string(), limit: None });
    job.depend = if depend.is_empty() { Vec::new() } else { parse(depend).unwrap() };
    match submit_job::submit_job(state, &mut Outbox::default(), &requester(ALICE), 10, job) {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("{other:?}"),
    }
}

/// Ends running job `id` as its mom reports it, then lets array parents follow (as
/// `Shared::apply` does after every handler).
fn end_and_settle(state: &mut ServerState, id: &str, exit_status: i32, now: i64) -> Outbox {
    let node = job(state, id).exec[0].node.clone();
    let obit = JobObit { job_id: id.to_string(), exit_status, session_id: 5, ..Default::default() };
    let ((), out) =
        crate::shared::run_handler(state, now, |state, out| job_ended::job_ended(state, out, &node, obit, now));
    state.sanity_check();
    out
}

fn run_and_settle(state: &mut ServerState, now: i64) {
    crate::shared::run_handler(state, now, |state, out| schedule_pass(state, out, now));
}

#[test]
fn an_array_waits_as_a_whole_and_is_waited_on_as_a_whole() {
    let mut state = cluster(1);
    let a = submit(&mut state, "");
    let array = submit_array(&mut state, "1-2", &format!("afterok:{a}"));
    let after = submit(&mut state, &format!("afterok:{array}"));
    let subjobs = ["2[1].head", "2[2].head"];
    for sub in subjobs {
        assert_eq!((letter(&state, sub), job(&state, sub).hold_types.as_str()), ('H', "s"), "{sub}");
    }
    run_and_settle(&mut state, 20);
    assert_eq!(letter(&state, &a), 'R');
    end_and_settle(&mut state, &a, 0, 30);
    assert_eq!(subjobs.map(|sub| letter(&state, sub)), ['Q', 'Q'], "A's success releases every subjob");
    run_and_settle(&mut state, 40);
    assert_eq!(subjobs.map(|sub| letter(&state, sub)), ['R', 'R']);
    end_and_settle(&mut state, subjobs[0], 0, 50);
    assert_eq!(letter(&state, &after), 'H', "one subjob is not the whole array");
    end_and_settle(&mut state, subjobs[1], 0, 60);
    assert_eq!((letter(&state, &array), letter(&state, &after)), ('F', 'Q'), "the whole array ended ok");
}

#[test]
fn a_failed_subjob_deletes_what_waits_on_its_array_and_a_failed_parent_expires_the_array() {
    let mut state = cluster(1);
    let array = submit_array(&mut state, "1-2", "");
    let after = submit(&mut state, &format!("afterok:{array}"));
    let a = submit(&mut state, "");
    let waiting_array = submit_array(&mut state, "1-3", &format!("afterok:{a}"));
    run_and_settle(&mut state, 20);
    end_and_settle(&mut state, "1[1].head", 1, 30);
    let out = end_and_settle(&mut state, "1[2].head", 0, 40);
    assert_eq!(letter(&state, &after), 'F');
    assert_eq!(aborted(&out), std::slice::from_ref(&after));
    end_and_settle(&mut state, &a, 2, 50);
    assert_eq!(letter(&state, &waiting_array), 'F', "A failed: the waiting array is deleted");
    for index in 1..=3 {
        assert_eq!(letter(&state, &format!("4[{index}].head")), 'X', "its subjobs are over");
    }
}

impl Index {
    /// Whether any entry names job `key`.
    fn mentions(&self, key: JobKey) -> bool {
        self.children.iter().any(|(parent, children)| *parent == key || children.contains(&key))
            || self.registered.iter().any(|(target, list)| *target == key || list.iter().any(|(_, from)| *from == key))
    }
}

#[test]
fn purging_a_job_leaves_no_index_entry_naming_it() {
    let mut state = cluster(1);
    let key = |state: &ServerState, id: &str| state.find_job(id).unwrap();
    let delete = |state: &mut ServerState, id: &str, history: bool| {
        let how = delete_job::How { force: false, history };
        let reply =
            delete_job::delete_job(state, &mut Outbox::default(), &requester(ALICE), 25, &[id.to_string()], how);
        assert_eq!(reply, ServerReply::Done { errors: vec![] });
        state.sanity_check();
    };
    // B waits on A and is deleted while A runs: A's list still names B, until qdel -x B.
    let a = submit(&mut state, "");
    let b = submit(&mut state, &format!("afterok:{a}"));
    run(&mut state, 20);
    delete(&mut state, &b, false);
    let b_key = key(&state, &b);
    assert!(state.depend().mentions(b_key));
    delete(&mut state, &b, true);
    assert!(!state.depend().mentions(b_key));

    // K's beforeok gave T a registration, which outlives both: the history purge drops it.
    let t = submit(&mut state, "");
    let k = submit(&mut state, &format!("beforeok:{t}"));
    run(&mut state, 30);
    end(&mut state, &k, 0, 40);
    run(&mut state, 50);
    end(&mut state, &t, 0, 60);
    end(&mut state, &a, 0, 60);
    let keys = [key(&state, &a), key(&state, &t), key(&state, &k)];
    assert!(state.depend().mentions(keys[1]) && state.depend().mentions(keys[2]), "{:?}", state.depend());
    assert_eq!(crate::handlers::purge_history::purge_history(&mut state, &mut Outbox::default(), 1000, 0), 3);
    assert!(keys.iter().all(|key| !state.depend().mentions(*key)), "{:?}", state.depend());
    assert_eq!(state.depend(), &Index::default());
    state.sanity_check();

    // A target still waiting for `on:2` keeps counting a purged `before*` job.
    let n = submit(&mut state, "on:2");
    let k1 = submit(&mut state, &format!("beforeok:{n}"));
    run(&mut state, 1100);
    end(&mut state, &k1, 0, 1200);
    crate::handlers::purge_history::purge_history(&mut state, &mut Outbox::default(), 2000, 0);
    assert!(state.find_job(&k1).is_err());
    state.sanity_check();
    let k2 = submit(&mut state, &format!("beforeok:{n}"));
    assert_eq!(letter(&state, &n), 'H');
    run(&mut state, 2100);
    end(&mut state, &k2, 0, 2200);
    assert_eq!(letter(&state, &n), 'Q', "k1 and k2 made on:2");
}
