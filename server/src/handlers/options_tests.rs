//! Submitting with the options of `job::options`: what the server stores and shows, what it
//! refuses even when qsub would not have sent it (`-u` another user, values out of bounds),
//! and `-a`: the job waits (`W`) and is not started before its time.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::config::Flavor;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use job::options::JobOptions;
use job::{JobSpec, JobState};
use proto::ServerReply;

fn submit_with(state: &mut ServerState, options: JobOptions, now: i64) -> Result<String, String> {
    let spec = JobSpec { options, ..spec(&[]) };
    match submit_job::submit_job(state, &mut Outbox::default(), &requester(ALICE), now, spec) {
        ServerReply::JobSubmitted { id } => Ok(id),
        ServerReply::Error(error) => Err(error.message),
        other => panic!("{other:?}"),
    }
}

fn shown(state: &ServerState, id: &str, flavor: Flavor) -> Vec<(String, String)> {
    let job = &state.jobs()[&state.find_job(id).unwrap()];
    let status = crate::status::job_status(job, "head", flavor, 0);
    status.attrs.iter().map(|attr| (attr.name.clone(), attr.value.clone())).collect()
}

fn value(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs.iter().find(|(given, _)| given == name).map(|(_, value)| value.clone())
}

fn position(attrs: &[(String, String)], name: &str) -> usize {
    attrs.iter().position(|(given, _)| given == name).unwrap_or_else(|| panic!("{name} not shown: {attrs:?}"))
}

#[test]
fn options_are_shown_where_openpbs_shows_them() {
    let mut state = cluster(1);
    let mut options = JobOptions {
        project: Some("a00".into()),
        user_list: vec![format!("user{ALICE}@login")],
        checkpoint: Some("c=10".into()),
        script_args: vec!["one".into(), "two".into()],
        ..JobOptions::default()
    };
    options.set_w_attr("run_count", "3".into());
    options.set_w_attr("tolerate_node_failures", "all".into());
    let id = submit_with(&mut state, options, 10).unwrap();
    let attrs = shown(&state, &id, Flavor::OpenPbs);
    assert_eq!(value(&attrs, "project").as_deref(), Some("a00"));
    assert_eq!(value(&attrs, "Checkpoint").as_deref(), Some("c=10"));
    assert_eq!(value(&attrs, "User_List").as_deref(), Some("user1000@login"));
    assert_eq!(value(&attrs, "run_count").as_deref(), Some("3"), "the initial run count");
    assert_eq!(value(&attrs, "tolerate_node_failures").as_deref(), Some("all"));
    assert_eq!(value(&attrs, "job_arguments").as_deref(), Some("one two"));
    assert!(position(&attrs, "server") < position(&attrs, "Checkpoint"));
    assert!(position(&attrs, "User_List") < position(&attrs, "Variable_List"));
    assert!(position(&attrs, "Submit_arguments") < position(&attrs, "project"));
    let torque = shown(&state, &id, Flavor::Torque);
    assert_eq!(value(&torque, "User_List").as_deref(), Some("user1000@login"));
    assert_eq!(value(&torque, "start_count").as_deref(), Some("3"));
}

#[test]
fn defaults_are_openpbs_defaults() {
    let mut state = cluster(1);
    let id = submit_with(&mut state, JobOptions::default(), 10).unwrap();
    let attrs = shown(&state, &id, Flavor::OpenPbs);
    assert_eq!(value(&attrs, "project").as_deref(), Some("_pbs_project_default"));
    assert_eq!(value(&attrs, "Checkpoint").as_deref(), Some("u"));
    for absent in ["User_List", "sandbox", "Execution_Time", "job_arguments", "block"] {
        assert_eq!(value(&attrs, absent), None, "{absent}");
    }
}

#[test]
fn another_user_in_user_list_is_refused() {
    let mut state = cluster(1);
    for list in [vec!["root".to_string()], vec![format!("user{ALICE}"), "bob@login".to_string()]] {
        let options = JobOptions { user_list: list.clone(), ..JobOptions::default() };
        let error = submit_with(&mut state, options, 10).unwrap_err();
        assert_eq!(error, "Bad UID for job execution", "{list:?}");
    }
    assert!(state.jobs().is_empty(), "nothing kept");
}

#[test]
fn values_qsub_would_not_send_are_refused() {
    let mut state = cluster(1);
    let bad = [
        JobOptions { project: Some("p".repeat(job::options::MAX_PROJECT + 1)), ..JobOptions::default() },
        JobOptions { project: Some("a b".into()), ..JobOptions::default() },
        JobOptions { checkpoint: Some("x".into()), ..JobOptions::default() },
        JobOptions { user_list: vec!["-oProxyCommand=x".into()], ..JobOptions::default() },
        JobOptions { w_attrs: vec![("run_count".into(), "10001".into())], ..JobOptions::default() },
        JobOptions { w_attrs: vec![("umask".into(), "000".into())], ..JobOptions::default() },
        JobOptions { script_args: vec!["a\nb".into()], ..JobOptions::default() },
        JobOptions { execution_time: Some(-5), ..JobOptions::default() },
    ];
    for options in bad {
        let error = submit_with(&mut state, options.clone(), 10).unwrap_err();
        assert!(error.starts_with("Illegal attribute or resource value"), "{options:?}: {error}");
    }
    assert!(state.jobs().is_empty(), "nothing kept");
}

#[test]
fn a_job_waits_for_its_execution_time() {
    let mut state = cluster(1);
    let options = JobOptions { execution_time: Some(100), ..JobOptions::default() };
    let id = submit_with(&mut state, options, 10).unwrap();
    let key = state.find_job(&id).unwrap();
    assert_eq!(state.jobs()[&key].state(), JobState::Waiting);
    assert_eq!(value(&shown(&state, &id, Flavor::OpenPbs), "Execution_Time").as_deref(), Some("100"));
    let mut out = Outbox::default();
    assert_eq!(execution_time::settle_waiting(&mut state, &mut out, 99), 0);
    assert_eq!(schedule_pass(&mut state, &mut out, 99), 0, "not before its time");
    assert_eq!(execution_time::settle_waiting(&mut state, &mut out, 100), 1);
    assert_eq!(state.jobs()[&key].state(), JobState::Queued);
    assert!(out.schedule && !out.persist.is_empty(), "the change is stored and schedules a pass");
    assert_eq!(schedule_pass(&mut state, &mut out, 100), 1);
    state.sanity_check();
}

#[test]
fn a_queued_job_before_its_time_is_never_started_and_goes_back_to_waiting() {
    let mut state = cluster(1);
    // A job released from a hold before its time is queued until the timer defers it.
    let spec = JobSpec {
        user_hold: true,
        options: JobOptions { execution_time: Some(100), ..JobOptions::default() },
        ..spec(&[])
    };
    let reply = submit_job::submit_job(&mut state, &mut Outbox::default(), &requester(ALICE), 10, spec);
    let ServerReply::JobSubmitted { id } = reply else { panic!("{reply:?}") };
    let key = state.find_job(&id).unwrap();
    assert_eq!(state.jobs()[&key].state(), JobState::Held, "a hold comes first");
    state.transition(key, job::JobEvent::Release, 20).unwrap();
    let mut out = Outbox::default();
    assert_eq!(schedule_pass(&mut state, &mut out, 20), 0, "the scheduler checks the time itself");
    assert_eq!(execution_time::settle_waiting(&mut state, &mut out, 20), 1);
    assert_eq!(state.jobs()[&key].state(), JobState::Waiting);
    state.sanity_check();
}

#[test]
fn a_past_execution_time_queues_at_once() {
    let mut state = cluster(1);
    let options = JobOptions { execution_time: Some(5), ..JobOptions::default() };
    let id = submit_with(&mut state, options, 10).unwrap();
    assert_eq!(state.jobs()[&state.find_job(&id).unwrap()].state(), JobState::Queued);
}

#[test]
fn qalter_sets_execution_time_checkpoint_and_project() {
    let mut state = cluster(1);
    let id = submit_with(&mut state, JobOptions::default(), 10).unwrap();
    let key = state.find_job(&id).unwrap();
    let alter = |state: &mut ServerState, changes: proto::JobAlteration| {
        let reply = alter_job::alter_job(
            state,
            &mut Outbox::default(),
            &requester(ALICE),
            20,
            std::slice::from_ref(&id),
            &changes,
        );
        format!("{reply:?}")
    };
    let later = proto::JobAlteration {
        execution_time: Some(100),
        checkpoint: Some("w".into()),
        project: Some("p1".into()),
        ..Default::default()
    };
    alter(&mut state, later);
    assert_eq!(state.jobs()[&key].state(), JobState::Waiting, "at once, not on the next tick");
    let attrs = shown(&state, &id, Flavor::OpenPbs);
    assert_eq!(value(&attrs, "Checkpoint").as_deref(), Some("w"));
    assert_eq!(value(&attrs, "project").as_deref(), Some("p1"));
    alter(&mut state, proto::JobAlteration { execution_time: Some(15), ..Default::default() });
    assert_eq!(state.jobs()[&key].state(), JobState::Queued);
    let refused = alter(&mut state, proto::JobAlteration { project: Some("a b".into()), ..Default::default() });
    assert!(refused.contains("Illegal attribute or resource value"), "{refused}");
    assert_eq!(value(&shown(&state, &id, Flavor::OpenPbs), "project").as_deref(), Some("p1"), "all or nothing");
    state.sanity_check();
}
