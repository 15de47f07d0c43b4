//! Tests of `state/eligible.rs`: the clock runs only while a job could run.

use super::*;
use crate::handlers::tests::{cluster, submit, ALICE};
use crate::state::outbox::Outbox;
use job::JobEvent;

/// Changes the default queue.
fn alter_queue(state: &mut ServerState, change: impl FnOnce(&mut crate::state::Queue)) {
    let mut queue = state.queue("workq").unwrap().clone();
    change(&mut queue);
    state.insert_queue("workq", queue);
}

fn key_of(state: &ServerState, id: &str) -> JobKey {
    state.find_job_entry(id).unwrap().0
}

#[test]
fn a_queued_job_accrues_and_a_held_one_does_not() {
    // No nodes: nothing starts, jobs stay queued.
    let mut state = cluster(0);
    let id = submit(&mut state, ALICE, &[]);
    let key = key_of(&state, &id);
    // Submitted at 10 (the helper's clock): it accrues from then, with no write of its own.
    let mut out = Outbox::default();
    settle(&mut state, &mut out, 100);
    assert!(out.persist.is_empty());
    assert_eq!(state.job(key).unwrap().eligible_seconds(160), 150);
    // Held at 160: the clock stops with 150 s.
    state.transition(key, JobEvent::Hold, 160).unwrap();
    assert_eq!(state.job(key).unwrap().eligible_seconds(1000), 150);
    settle(&mut state, &mut Outbox::default(), 500);
    assert_eq!(state.job(key).unwrap().eligible_seconds(1000), 150);
    // Released at 1000: it accrues again.
    state.transition(key, JobEvent::Release, 1000).unwrap();
    assert_eq!(state.job(key).unwrap().eligible_seconds(1010), 160);
}

#[test]
fn a_stopped_queue_stops_the_clock() {
    let mut state = cluster(0);
    let id = submit(&mut state, ALICE, &[]);
    let key = key_of(&state, &id);
    alter_queue(&mut state, |queue| queue.started = false);
    let mut out = Outbox::default();
    settle(&mut state, &mut out, 30);
    assert_eq!(out.persist.len(), 1, "the stopped clock is stored");
    assert_eq!(state.job(key).unwrap().eligible_seconds(100), 20);
    alter_queue(&mut state, |queue| queue.started = true);
    settle(&mut state, &mut Outbox::default(), 100);
    assert_eq!(state.job(key).unwrap().eligible_seconds(110), 30);
}

#[test]
fn a_job_over_its_owners_run_limit_does_not_accrue_but_over_the_queues_does() {
    let mut state = cluster(1);
    alter_queue(&mut state, |queue| queue.run.per_user = Some(1));
    let first = submit(&mut state, ALICE, &[]);
    crate::sched_loop::schedule_pass(&mut state, &mut Outbox::default(), 0);
    assert!(state.job(key_of(&state, &first)).unwrap().state().is_active());
    let second = submit(&mut state, ALICE, &[]);
    let other = submit(&mut state, 1001, &[]);
    // Both submitted at 10; the pass at 10 finds alice over her limit.
    settle(&mut state, &mut Outbox::default(), 10);
    assert_eq!(state.job(key_of(&state, &second)).unwrap().eligible_seconds(50), 0);
    assert_eq!(state.job(key_of(&state, &other)).unwrap().eligible_seconds(50), 40);
    // A queue-wide limit leaves jobs eligible (OpenPBS: only user, group, project limits).
    alter_queue(&mut state, |queue| {
        queue.run.per_user = None;
        queue.run.total = Some(1);
    });
    settle(&mut state, &mut Outbox::default(), 50);
    assert_eq!(state.job(key_of(&state, &second)).unwrap().eligible_seconds(60), 10);
}

#[test]
fn qstat_shows_eligible_time_after_run_count_when_enabled() {
    use crate::handlers::status_job::{status_job, Query};
    use proto::ServerReply;
    let mut state = cluster(0);
    let id = submit(&mut state, ALICE, &[]);
    settle(&mut state, &mut Outbox::default(), 0);
    let shown = |state: &ServerState| {
        let selectors = [id.clone()];
        let query = Query { selectors: &selectors, ..Default::default() };
        // Submitted at 10: 3715 s by 3725.
        let ServerReply::Jobs { jobs, .. } = status_job(state, proto::Flavor::OpenPbs, 3725, query) else {
            panic!("no jobs")
        };
        let names: Vec<String> = jobs[0].attrs.iter().map(|attr| attr.name.clone()).collect();
        let at = names.iter().position(|name| name == "run_count").unwrap();
        (jobs[0].get("eligible_time").map(str::to_string), names.get(at + 1).cloned())
    };
    assert_eq!(shown(&state).0, None, "OpenPBS's default eligible_time_enable is False");
    state.attrs.sched.eligible_time_enable = true;
    assert_eq!(shown(&state), (Some("01:01:55".to_string()), Some("eligible_time".to_string())));
}

#[test]
fn a_job_loaded_with_its_clock_stopped_starts_again_though_nothing_restricts() {
    let mut state = cluster(0);
    let id = submit(&mut state, ALICE, &[]);
    let key = key_of(&state, &id);
    let mut stored = state.job(key).unwrap().clone();
    stored.eligible = crate::state::EligibleClock { accrued: 5, since: None };
    // As a restart loads it (a fresh state: the usual pass skips the scan).
    let mut restarted = cluster(0);
    assert!(!restarted.eligible_paused);
    restarted.insert_job(stored);
    assert!(restarted.eligible_paused);
    settle(&mut restarted, &mut Outbox::default(), 100);
    assert!(!restarted.eligible_paused);
    assert_eq!(restarted.job(key).unwrap().eligible_seconds(110), 15);
}
