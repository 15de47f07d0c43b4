//! Tests of what the server gives the scheduler (running jobs, planned walltimes, queues,
//! preemptors, server `resources_default`) and what it does with the outcome (notes shown as
//! `comment` and `estimated.*`, the start comment). The policy is not tested here (`sched`).

use super::tests::{cluster, submit, ALICE};
use crate::sched_loop::schedule_pass;
use crate::sched_view::{running_jobs, PassFacts, UNKNOWN_WALLTIME};
use crate::state::outbox::Outbox;
use crate::state::sched_notes::{PlannedStart, SchedNote, WaitWhy};
use crate::state::{Queue, ServerState};
use crate::status::job_status_with_array;
use job::{JobEvent, JobKey};
use proto::manage::{AttrOp, SetOp};
use proto::{Flavor, JobStatus, ServerToMom};
use std::collections::HashMap;

fn set_attr(text: &str) -> AttrOp {
    let (name, value) = text.split_once('=').expect("name = value");
    let (name, resource) = match name.trim().split_once('.') {
        Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
        None => (name.trim().to_string(), None),
    };
    AttrOp { name, resource, op: SetOp::Set, value: value.trim().to_string() }
}

fn set_server(state: &mut ServerState, text: &str) {
    state.apply_server_attrs(&[set_attr(text)], false).expect(text);
}

fn set_queue(state: &mut ServerState, name: &str, texts: &[&str]) {
    let mut queue = state.queue(name).cloned().unwrap_or_else(|| Queue::default_queue(name));
    for text in texts {
        queue.apply(&set_attr(text), false).expect(text);
    }
    state.insert_queue(name, queue);
}

fn key(state: &ServerState, id: &str) -> JobKey {
    state.find_job(id).unwrap()
}

fn status(state: &ServerState, id: &str, flavor: Flavor) -> JobStatus {
    let key = key(state, id);
    job_status_with_array(&state.jobs()[&key], "head", flavor, 100, None, None, state.sched_note(key))
}

fn names(status: &JobStatus) -> Vec<String> {
    status.attrs.iter().map(|attr| attr.full_name()).collect()
}

#[test]
fn server_resources_default_walltime_is_written_into_new_jobs_and_the_mom_ends_them_at_it() {
    let mut state = cluster(1);
    set_server(&mut state, "resources_default.walltime = 1:00:00");
    assert!(state.server_attr_pairs().contains(&("resources_default.walltime".into(), "01:00:00".into())));
    assert!(state.apply_server_attrs(&[set_attr("resources_default.widgets = 1")], false).is_err());
    assert!(state.apply_server_attrs(&[set_attr("resources_default.walltime = soon")], false).is_err());
    let id = submit(&mut state, ALICE, &[("ncpus", "1")]);
    assert_eq!(state.jobs()[&key(&state, &id)].request.walltime, Some(3600));
    let mut out = Outbox::default();
    assert_eq!(schedule_pass(&mut state, &mut out, 20), 1);
    let launch = out.to_moms.iter().find_map(|(_, message)| match message {
        ServerToMom::RunJob(launch) => Some(launch.walltime),
        _ => None,
    });
    assert_eq!(launch, Some(Some(3600)), "the mom enforces the default walltime");
    // The queue's default comes first.
    set_queue(&mut state, "workq", &["resources_default.walltime = 10:00"]);
    let id = submit(&mut state, ALICE, &[("ncpus", "1")]);
    assert_eq!(state.jobs()[&key(&state, &id)].request.walltime, Some(600));
    // Shown by qstat -B and kept across a restart.
    let shown = state.server_status();
    assert!(shown.iter().any(|attr| attr.full_name() == "resources_default.walltime" && attr.value == "01:00:00"));
    let pairs: Vec<(String, String)> =
        state.server_attr_pairs().into_iter().filter(|(name, _)| name.starts_with("resources_")).collect();
    let mut restarted = cluster(1);
    restarted.load_config(&[], &pairs).unwrap();
    assert_eq!(restarted.attrs.resources_default.get("walltime").map(String::as_str), Some("01:00:00"));
}

#[test]
fn planned_walltime_is_the_jobs_else_the_queues_else_the_servers_else_five_years() {
    let mut state = cluster(1);
    let bare = submit(&mut state, ALICE, &[("ncpus", "1")]);
    let timed = submit(&mut state, ALICE, &[("ncpus", "1"), ("walltime", "00:02:00")]);
    let planned = |state: &ServerState, id: &str| PassFacts::new(state).job(&state.jobs()[&key(state, id)]).walltime;
    assert_eq!(planned(&state, &bare), UNKNOWN_WALLTIME);
    assert_eq!(UNKNOWN_WALLTIME, 5 * 365 * 86_400);
    set_server(&mut state, "resources_default.walltime = 1:00:00");
    assert_eq!(planned(&state, &bare), 3600, "set after the submission: planned with it");
    set_queue(&mut state, "workq", &["resources_default.walltime = 30:00"]);
    assert_eq!(planned(&state, &bare), 1800);
    assert_eq!(planned(&state, &timed), 120);
}

#[test]
fn queues_give_their_index_depth_priority_and_preemption() {
    let mut state = cluster(1);
    set_queue(&mut state, "express", &["queue_type = e", "Priority = 200", "backfill_depth = 3", "started = t"]);
    set_queue(&mut state, "express", &["enabled = t"]);
    let plain = submit(&mut state, ALICE, &[("ncpus", "1")]);
    let mut spec = super::tests::spec(&[("ncpus", "1")]);
    spec.queue = Some("express".into());
    let reply =
        super::submit_job::submit_job(&mut state, &mut Outbox::default(), &super::tests::requester(ALICE), 10, spec);
    let proto::ServerReply::JobSubmitted { id: express } = reply else { panic!("{reply:?}") };
    let facts = PassFacts::new(&state);
    let job = |id: &str| state.jobs()[&key(&state, id)].clone();
    let (plain, express) = (facts.job(&job(&plain)), job(&express));
    let fast = facts.job(&express);
    assert_eq!(facts.queue_depths[fast.queue], Some(3));
    assert_eq!(facts.queue_depths[plain.queue], None);
    assert_eq!((fast.queue_priority, plain.queue_priority), (200, 0));
    assert!(fast.preemptor && !plain.preemptor, "150 is the default preempt_queue_prio");
    set_server(&mut state, "preempt_queue_prio = 201");
    assert!(!PassFacts::new(&state).job(&express).preemptor, "no queue reaches it: preemption is off");
}

#[test]
fn running_jobs_hold_their_shares_until_start_plus_walltime() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "1:ppn=2"), ("walltime", "00:01:40")]);
    let exiting = submit(&mut state, ALICE, &[("nodes", "1:ppn=4")]);
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 20), 2);
    let facts = PassFacts::new(&state);
    let names: Vec<String> = state.nodes().keys().cloned().collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(at, name)| (name.as_str(), at)).collect();
    let running = running_jobs(&state, &facts, &index, 30);
    assert_eq!(running.len(), 2);
    let first = running.iter().find(|job| job.key == key(&state, &id).raw()).unwrap();
    assert_eq!((first.start, first.end), (20, 120));
    assert_eq!(first.assignments.len(), 1);
    assert_eq!(first.assignments[0].slots.len(), 2);
    let node = &state.jobs()[&key(&state, &id)].exec[0].node;
    assert_eq!(names[first.assignments[0].node], *node);
    let other = running.iter().find(|job| job.key == key(&state, &exiting).raw()).unwrap();
    assert_eq!(other.end, 20 + UNKNOWN_WALLTIME as i64, "no walltime: planned as 5 years");
    assert_eq!(other.preempt, Some(sched::PreemptHow::Suspend), "preempt_order SCR: suspended first");
    // A walltime past any clock: the planned end saturates.
    std::sync::Arc::make_mut(&mut state.job_mut(key(&state, &id)).unwrap().request).walltime = Some(u64::MAX);
    let running = running_jobs(&state, &PassFacts::new(&state), &index, 30);
    assert!(running.iter().any(|job| job.end == i64::MAX), "{running:?}");
}

#[test]
fn a_start_writes_openpbs_run_comment_but_not_in_the_torque_flavor() {
    for flavor in [Flavor::OpenPbs, Flavor::Torque] {
        let mut state = cluster(1);
        state.flavor = flavor;
        let id = submit(&mut state, ALICE, &[("nodes", "1:ppn=2")]);
        schedule_pass(&mut state, &mut Outbox::default(), 20);
        let comment = state.jobs()[&key(&state, &id)].comment.clone();
        match flavor {
            Flavor::OpenPbs => {
                let comment = comment.unwrap_or_default();
                assert!(comment.starts_with("Job run at ") && comment.ends_with(" on (node1:ncpus=2)"), "{comment}");
            }
            Flavor::Torque => assert_eq!(comment, None),
        }
    }
}

fn waiting_pair(state: &mut ServerState) -> (String, String) {
    let running = submit(state, ALICE, &[("nodes", "1:ppn=4")]);
    let waiting = submit(state, ALICE, &[("nodes", "1:ppn=4")]);
    schedule_pass(state, &mut Outbox::default(), 20);
    (running, waiting)
}

fn planned(start: i64) -> SchedNote {
    SchedNote {
        why: WaitWhy::Resource("ncpus".into()),
        estimate: Some(PlannedStart { start, exec_vnode: "(node1:ncpus=4)".into() }),
    }
}

#[test]
fn a_note_shows_as_comment_and_estimate_while_the_job_is_queued() {
    let mut state = cluster(1);
    let (running, waiting) = waiting_pair(&mut state);
    let wait_key = key(&state, &waiting);
    state.job_mut(wait_key).unwrap().comment = Some("requeued: node1 could not start the job".into());
    let notes = [(wait_key, planned(500)), (key(&state, &running), planned(600))];
    assert_eq!(state.replace_sched_notes(notes), 1, "a running job gets no note");
    let shown = status(&state, &waiting, Flavor::OpenPbs);
    assert_eq!(shown.get("comment"), Some("Not Running: Insufficient amount of resource: ncpus"));
    assert_eq!(shown.get("estimated.exec_vnode"), Some("(node1:ncpus=4)"));
    assert_eq!(shown.get("estimated.start_time"), Some("500"));
    let order = names(&shown);
    let at = |name: &str| order.iter().position(|shown| shown == name).unwrap();
    assert_eq!(at("estimated.exec_vnode") + 1, at("estimated.start_time"));
    assert!(at("Submit_arguments") < at("estimated.exec_vnode") && at("estimated.start_time") < at("project"));
    let torque = status(&state, &waiting, Flavor::Torque);
    assert_eq!(torque.get("comment"), Some("Not Running: Insufficient amount of resource: ncpus"));
    assert!(!names(&torque).iter().any(|name| name.starts_with("estimated")), "TORQUE has no estimates");
    assert!(status(&state, &running, Flavor::OpenPbs).get("estimated.start_time").is_none());
    // Held: out of the queue, the note goes and the job's own comment is back.
    state.transition(wait_key, JobEvent::Hold, 30).unwrap();
    assert_eq!(state.sched_note(wait_key), None);
    let held = status(&state, &waiting, Flavor::OpenPbs);
    assert_eq!(held.get("comment"), Some("requeued: node1 could not start the job"));
    assert!(held.get("estimated.start_time").is_none());
    state.sanity_check();
}

#[test]
fn a_pass_replaces_the_notes() {
    let mut state = cluster(1);
    let (_, waiting) = waiting_pair(&mut state);
    let wait_key = key(&state, &waiting);
    let hand_made = SchedNote { why: WaitWhy::StrictOrder, estimate: None };
    state.replace_sched_notes([(wait_key, hand_made.clone())]);
    assert_eq!(state.sched_note(wait_key), Some(&hand_made));
    schedule_pass(&mut state, &mut Outbox::default(), 30);
    // Whatever the policy says of the job now (the greedy one: nothing), not the old note.
    assert_ne!(state.sched_note(wait_key), Some(&hand_made));
    assert!(state.sched_note_count() <= 1);
    state.sanity_check();
}
