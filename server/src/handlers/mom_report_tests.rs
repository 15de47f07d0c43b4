//! Reports from moms about a job (start, end, a refused share) count only from the node and
//! run they are about: the current run's mother superior (a sister for `ShareRefused`). A
//! node back after `node_fail_requeue`, or any other registered mom, changes nothing; its end
//! report is acknowledged so it stops resending it.

use super::tests::{cluster, sent_kinds, submit, ALICE};
use super::{gpu_status, job_ended, job_started, node_fail, register_mom};
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::{Job, ServerState};
use job::JobState;
use proto::mom::JobObit;

fn job<'a>(state: &'a ServerState, id: &str) -> &'a Job {
    &state.jobs()[&state.find_job(id).unwrap()]
}

fn obit(id: &str, run_count: u32) -> JobObit {
    JobObit { job_id: id.to_string(), exit_status: 0, session_id: 5, run_count, ..Default::default() }
}

/// Sends `obit` from `node`: what went out, and whether anything was persisted.
fn report_end(state: &mut ServerState, node: &str, obit: JobObit, now: i64) -> (Vec<String>, bool) {
    let mut out = Outbox::default();
    job_ended::job_ended(state, &mut out, node, obit, now);
    (sent_kinds(&out), !out.persist.is_empty())
}

/// Cuts `node` off long enough for node_fail_requeue to requeue its jobs.
fn lose_node(state: &mut ServerState, node: &str, now: i64) {
    let entry = state.node_mut(node).unwrap();
    entry.up = false;
    entry.last_state_change = now;
    node_fail::requeue_on_failed_nodes(state, &mut Outbox::default(), now + state.attrs.node_fail_requeue);
}

#[test]
fn an_end_report_from_a_node_that_is_not_the_mother_superior_changes_nothing() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("ncpus", "4")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    assert_eq!(job(&state, &id).exec[0].node, "node1");
    let before = job(&state, &id).clone();
    for run_count in [1, 0] {
        let (sent, persisted) = report_end(&mut state, "node2", obit(&id, run_count), 30);
        assert_eq!(sent, ["ObitAck->node2"], "acknowledged, so the impostor stops resending");
        assert!(!persisted);
        assert_eq!(job(&state, &id), &before, "run {run_count}");
    }
    assert!(state.nodes()["node1"].free_slots().is_empty(), "the job keeps its node");
    state.sanity_check();
}

#[test]
fn a_stale_end_report_after_a_requeue_and_a_rerun_elsewhere_changes_nothing() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("ncpus", "4")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    assert_eq!((job(&state, &id).exec[0].node.as_str(), job(&state, &id).run_count), ("node1", 1));
    lose_node(&mut state, "node1", 100);
    assert_eq!(job(&state, &id).state(), JobState::Queued);
    schedule_pass(&mut state, &mut Outbox::default(), 500);
    assert_eq!((job(&state, &id).exec[0].node.as_str(), job(&state, &id).run_count), ("node2", 2));
    let before = job(&state, &id).clone();
    // node1 comes back and resends the end of run 1 (also as a mom that predates run numbers).
    for run_count in [1, 0] {
        let (sent, persisted) = report_end(&mut state, "node1", obit(&id, run_count), 510);
        assert_eq!(sent, ["ObitAck->node1"]);
        assert!(!persisted);
        assert_eq!(job(&state, &id), &before, "run {run_count}");
    }
    // The current run's end from its mother superior still ends the job.
    let (sent, _) = report_end(&mut state, "node2", obit(&id, 2), 520);
    assert_eq!(sent, ["ObitAck->node2"]);
    assert_eq!(job(&state, &id).state(), JobState::Finished);
    state.sanity_check();
}

#[test]
fn the_end_of_an_earlier_run_on_the_same_node_changes_nothing() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("ncpus", "4")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    lose_node(&mut state, "node1", 100);
    let back = super::tests::registration("node1", "b", vec![]);
    register_mom::register_mom(&mut state, &mut Outbox::default(), back, 500);
    let mut out = Outbox::default();
    schedule_pass(&mut state, &mut out, 500);
    let runs: Vec<u32> = out
        .to_moms
        .iter()
        .filter_map(|(_, message)| match message {
            proto::ServerToMom::RunJob(launch) => Some(launch.run_count),
            _ => None,
        })
        .collect();
    assert_eq!(runs, [2], "the mom is told which run it starts");
    assert_eq!((job(&state, &id).exec[0].node.as_str(), job(&state, &id).run_count), ("node1", 2));
    let before = job(&state, &id).clone();
    let (sent, persisted) = report_end(&mut state, "node1", obit(&id, 1), 510);
    assert_eq!((sent, persisted), (vec!["ObitAck->node1".to_string()], false));
    assert_eq!(job(&state, &id), &before);
    report_end(&mut state, "node1", obit(&id, 2), 520);
    assert_eq!(job(&state, &id).state(), JobState::Finished);
}

#[test]
fn start_reports_and_refused_shares_count_only_for_the_current_run_and_node() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "2:ppn=4")]);
    schedule_pass(&mut state, &mut Outbox::default(), 20);
    let mut out = Outbox::default();
    job_started::job_started(&mut state, &mut out, "node2", &id, 66, 1);
    job_started::job_started(&mut state, &mut out, "node1", &id, 67, 2);
    assert_eq!(job(&state, &id).session_id, None, "a sister's or another run's start");
    assert!(out.persist.is_empty());
    job_started::job_started(&mut state, &mut out, "node1", &id, 68, 1);
    assert_eq!(job(&state, &id).session_id, Some(68));
    assert_eq!(out.persist.len(), 1);
    assert!(out.is_lazy(), "a session id rides the next transaction: the mom reports it again");
    // Repeated after a reconnect (to this head or another): nothing new to write.
    let mut out = Outbox::default();
    job_started::job_started(&mut state, &mut out, "node1", &id, 68, 1);
    assert!(out.persist.is_empty());

    let mut out = Outbox::default();
    gpu_status::share_refused(&mut state, &mut out, "node2", &id, 2, "a later run", 30);
    gpu_status::share_refused(&mut state, &mut out, "node1", &id, 1, "the mother superior", 30);
    assert!(out.to_moms.is_empty() && out.persist.is_empty());
    assert!(!job(&state, &id).rerun_requested);
    gpu_status::share_refused(&mut state, &mut out, "node2", &id, 1, "busy", 30);
    assert_eq!(sent_kinds(&out), ["RerunJob->node1"]);
}
