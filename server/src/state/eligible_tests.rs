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
    let mut out = Outbox::default();
    settle(&mut state, &mut out, 100);
    assert_eq!(out.persist.len(), 1, "the started clock is stored");
    assert_eq!(state.job(key).unwrap().eligible_seconds(160), 60);
    // Settling again changes nothing.
    let mut out = Outbox::default();
    settle(&mut state, &mut out, 130);
    assert!(out.persist.is_empty());
    // Held at 160: the clock stops with 60 s.
    state.transition(key, JobEvent::Hold, 160).unwrap();
    assert_eq!(state.job(key).unwrap().eligible_seconds(1000), 60);
    settle(&mut state, &mut Outbox::default(), 500);
    assert_eq!(state.job(key).unwrap().eligible_seconds(1000), 60);
    // Released at 1000: it accrues again from the next pass.
    state.transition(key, JobEvent::Release, 1000).unwrap();
    settle(&mut state, &mut Outbox::default(), 1000);
    assert_eq!(state.job(key).unwrap().eligible_seconds(1010), 70);
}

#[test]
fn a_stopped_queue_stops_the_clock() {
    let mut state = cluster(0);
    let id = submit(&mut state, ALICE, &[]);
    let key = key_of(&state, &id);
    settle(&mut state, &mut Outbox::default(), 0);
    alter_queue(&mut state, |queue| queue.started = false);
    settle(&mut state, &mut Outbox::default(), 10);
    assert_eq!(state.job(key).unwrap().eligible_seconds(100), 10);
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
    settle(&mut state, &mut Outbox::default(), 0);
    assert_eq!(state.job(key_of(&state, &second)).unwrap().eligible_seconds(50), 0);
    assert_eq!(state.job(key_of(&state, &other)).unwrap().eligible_seconds(50), 50);
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
        let ServerReply::Jobs { jobs, .. } = status_job(state, proto::Flavor::OpenPbs, 3725, query) else {
            panic!("no jobs")
        };
        let names: Vec<String> = jobs[0].attrs.iter().map(|attr| attr.name.clone()).collect();
        let at = names.iter().position(|name| name == "run_count").unwrap();
        (jobs[0].get("eligible_time").map(str::to_string), names.get(at + 1).cloned())
    };
    assert_eq!(shown(&state).0, None, "OpenPBS's default eligible_time_enable is False");
    state.attrs.sched.eligible_time_enable = true;
    assert_eq!(shown(&state), (Some("01:02:05".to_string()), Some("eligible_time".to_string())));
}
