//! The view model on states built by the handlers (no sockets).

use super::*;
use crate::handlers::submit_job::submit_job;
use crate::handlers::tests::{cluster, requester, spec};
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;

/// Submits a job named `name` for `uid` with `priority`; returns its id.
fn submit(state: &mut ServerState, uid: u32, name: &str, priority: i32, resources: &[(&str, &str)]) -> String {
    let spec = job::JobSpec { name: name.to_string(), priority, ..spec(resources) };
    match submit_job(state, &mut Outbox::default(), &requester(uid), 10, spec) {
        proto::ServerReply::JobSubmitted { id } => id,
        other => panic!("{other:?}"),
    }
}

#[test]
fn running_waiting_in_priority_order_with_reasons_and_finished() {
    let mut state = cluster(1);
    let running = submit(&mut state, 1000, "big", 0, &[("nodes", "1:ppn=4"), ("walltime", "00:10:00")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let low = submit(&mut state, 1000, "low", 0, &[("nodes", "1:ppn=2")]);
    let high = submit(&mut state, 1001, "high", 100, &[("nodes", "1:ppn=2")]);
    let held = submit(&mut state, 1001, "held", 0, &[]);
    let key = state.find_job(&held).unwrap();
    let ids = [held.clone()];
    crate::handlers::hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(1001), 21, &ids, "u", true);
    schedule_pass(&mut state, &mut Outbox::default(), 22);
    let view = view(&state, 30);
    assert_eq!(view.running.len(), 1);
    let row = &view.running[0];
    assert_eq!((row.id.as_str(), row.state, row.start, row.walltime), (running.as_str(), 'R', Some(20), Some(600)));
    assert_eq!(row.hosts, "node1/0*4");
    let order: Vec<(&str, char)> = view.waiting.iter().map(|row| (row.id.as_str(), row.state)).collect();
    assert_eq!(order, [(high.as_str(), 'Q'), (low.as_str(), 'Q'), (held.as_str(), 'H')]);
    assert_eq!(view.waiting[0].reason.as_deref(), Some("Not Running: Insufficient amount of resource: ncpus"));
    assert!(view.waiting[0].estimated_start.is_some(), "the top job has a planned start: {:?}", view.waiting[0]);
    assert_eq!(view.waiting[2].reason.as_deref(), Some("Held (u)"), "{:?}", state.job(key).map(|j| &j.hold_types));
    assert_eq!(view.waiting_more, 0);
    assert_eq!(view.nodes[0].slots_used, 4);
    assert_eq!(view.nodes[0].state, "job-busy");
    assert!(view.finished.is_empty());
    insta::assert_json_snapshot!(view);
}

#[test]
fn gpus_show_their_holders() {
    let mut state = cluster(1);
    let id = submit(&mut state, 1000, "gpu", 0, &[("nodes", "1:ppn=1:gpus=1")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let view = view(&state, 30);
    let gpus = &view.nodes[0].gpus;
    assert_eq!(gpus.len(), 2);
    assert_eq!((gpus[0].use_word, gpus[0].jobs.clone(), gpus[0].user.as_deref()), ("free", vec![id], Some("user1000")));
    assert!(gpus[1].jobs.is_empty() && gpus[1].user.is_none());
}

#[test]
fn a_long_queue_is_cut_and_counted() {
    let mut state = cluster(1);
    for _ in 0..MAX_WAITING + 7 {
        submit(&mut state, 1000, "many", 0, &[]);
    }
    let view = view(&state, 30);
    assert_eq!(view.waiting.len(), MAX_WAITING);
    assert_eq!(view.waiting_more, 7);
    assert_eq!(view.waiting[0].id, "1.head", "submission order among equals");
}

#[test]
fn the_snapshot_carries_no_environment_script_or_paths() {
    let mut state = cluster(1);
    let mut spec = spec(&[]);
    spec.variables.push("SECRET_TOKEN", "hunter2");
    submit_job(&mut state, &mut Outbox::default(), &requester(1000), 10, spec);
    // Submission refuses such a name; one that got in another way is still only data.
    for job in state.jobs_mut() {
        std::sync::Arc::make_mut(&mut job.spec).name = "<script>alert(1)</script>".to_string();
    }
    let json = serde_json::to_string(&view(&state, 30)).unwrap();
    for secret in ["SECRET_TOKEN", "hunter2", "PBS_O_", "job.sh.o", "/home/alice", "true\\n"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    // The name is there as data; the page sets it with textContent (app.js).
    assert!(json.contains("<script>alert(1)</script>"));
}
