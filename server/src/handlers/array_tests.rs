//! Handler tests of job arrays: submission creates the parent and its subjobs, `%max` bounds
//! the scheduling passes, the parent follows its subjobs (Q -> B -> F), qdel and qhold of a
//! parent and of one subjob. Each step settles the arrays as `Shared::apply` does.

use super::tests::{cluster, requester, sent_kinds, spec, ALICE};
use super::*;
use crate::config::Flavor;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::ServerState;
use crate::store::StoreOp;
use job::array::ArraySpec;
use job::JobState;
use proto::mom::JobObit;
use proto::{ServerReply, ServerToMom};
use std::sync::Arc;

/// Runs a handler as `Shared::apply` does.
fn apply<R>(
    state: &mut ServerState,
    now: i64,
    handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R,
) -> (R, Outbox) {
    crate::shared::run_handler(state, now, handler)
}

fn submit_array(state: &mut ServerState, indices: &str, limit: Option<u32>, held: bool) -> (String, Outbox) {
    let mut spec = spec(&[("ncpus", "1")]);
    spec.array = Some(ArraySpec { indices: indices.to_string(), limit });
    spec.user_hold = held;
    let (reply, out) = apply(state, 10, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, spec));
    match reply {
        ServerReply::JobSubmitted { id } => (id, out),
        other => panic!("array refused: {other:?}"),
    }
}

fn state_of(state: &ServerState, id: &str) -> JobState {
    state.jobs()[&state.find_job(id).unwrap()].state()
}

fn running(state: &ServerState) -> Vec<String> {
    state.jobs().values().filter(|job| job.state() == JobState::Running).map(|job| job.id.to_string()).collect()
}

fn end(state: &mut ServerState, id: &str, node: &str, now: i64) -> Outbox {
    let obit = JobObit { job_id: id.to_string(), exit_status: 0, session_id: 5, ..Default::default() };
    apply(state, now, |state, out| job_ended::job_ended(state, out, node, obit, now)).1
}

fn delete(state: &mut ServerState, id: &str, now: i64) -> (ServerReply, Outbox) {
    let ids = [id.to_string()];
    apply(state, now, |state, out| delete_job::delete_job(state, out, &requester(ALICE), now, &ids, Default::default()))
}

#[test]
fn submit_creates_the_parent_and_one_queued_job_per_subjob_sharing_its_spec() {
    let mut state = cluster(1);
    let (id, out) = submit_array(&mut state, "1-9:2", Some(2), false);
    assert_eq!(id, "1[].head");
    let inserted: Vec<String> = out
        .persist
        .iter()
        .filter_map(|op| match op {
            StoreOp::InsertJob(job) => Some(job.id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(inserted, ["1[].head", "1[1].head", "1[3].head", "1[5].head", "1[7].head", "1[9].head"]);
    let kinds: Vec<_> = out.notices.iter().map(|notice| (notice.kind.clone(), notice.job.id.to_string())).collect();
    assert_eq!(kinds, [(NoticeKind::Queued, "1[].head".to_string())]);
    let parent = &state.jobs()[&state.find_job("1[]").unwrap()];
    let sub = &state.jobs()[&state.find_job("1[7]").unwrap()];
    assert!(Arc::ptr_eq(&parent.spec, &sub.spec), "one spec for the whole array");
    assert!(Arc::ptr_eq(&parent.request, &sub.request), "and one resource request");
    assert_eq!(parent.state(), JobState::Queued);
    assert_eq!(parent.output_path, "login:/home/alice/job.sh.o1.^array_index^");
    assert_eq!(sub.output_path, "login:/home/alice/job.sh.o1.7");
    assert_eq!(sub.error_path, "login:/home/alice/job.sh.e1.7");
    assert_eq!(state.find_job("1").unwrap(), state.find_job("1[]").unwrap(), "the bare number names the array");
    assert!(state.find_job("1[2]").is_err(), "2 is not an index of 1-9:2");
    assert!(state.queued_jobs().all(|job| job.id.to_string() != "1[].head"), "the parent is never offered");
    state.sanity_check();

    let (held, _) = submit_array(&mut state, "0-2", None, true);
    assert_eq!(state_of(&state, &held), JobState::Held);
    assert_eq!(state_of(&state, "2[1]"), JobState::Held);
    state.sanity_check();
}

#[test]
fn torque_flavor_names_output_files_and_pbs_jobname_with_a_dash() {
    let mut state = cluster(1);
    state.flavor = Flavor::Torque;
    submit_array(&mut state, "3-4", None, false);
    assert_eq!(state.jobs()[&state.find_job("1[4]").unwrap()].output_path, "login:/home/alice/job.sh.o1-4");
    let names = |state: &mut ServerState| -> Vec<String> {
        let (_, out) = apply(state, 20, |state, out| schedule_pass(state, out, 20));
        out.to_moms
            .iter()
            .filter_map(|(_, message)| match message {
                ServerToMom::RunJob(launch) => Some(launch.name.clone()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(names(&mut state), ["job.sh-3", "job.sh-4"], "TORQUE's PBS_JOBNAME of a subjob");
    let mut state = cluster(1);
    submit_array(&mut state, "3-4", None, false);
    assert_eq!(names(&mut state), ["job.sh", "job.sh"], "OpenPBS keeps the array's name");
}

#[test]
fn bad_arrays_are_refused_and_leave_nothing() {
    let mut state = cluster(1);
    for (indices, limit) in [("5-1", None), ("1-20000", None), ("x", None), ("1-3", Some(0)), ("", None)] {
        let mut spec = spec(&[]);
        spec.array = Some(ArraySpec { indices: indices.to_string(), limit });
        let mut out = Outbox::default();
        let reply = submit_job::submit_job(&mut state, &mut out, &requester(ALICE), 10, spec);
        let ServerReply::Error(error) = reply else { panic!("{indices:?} accepted") };
        assert_eq!(error.code, proto::error::ErrorCode::BadAttributeValue, "{indices:?}");
        assert!(error.message.contains("array_indices_submitted"), "{}", error.message);
        assert!(out.persist.is_empty() && state.jobs().is_empty());
    }
    let mut not_rerunnable = spec(&[]);
    not_rerunnable.array = Some(ArraySpec { indices: "1-2".to_string(), limit: None });
    not_rerunnable.rerunnable = false;
    let reply = submit_job::submit_job(&mut state, &mut Outbox::default(), &requester(ALICE), 10, not_rerunnable);
    assert!(matches!(reply, ServerReply::Error(_)));
    assert_eq!(state.next_seq(), 1);
}

#[test]
fn slot_limit_bounds_every_pass_and_the_parent_begins_and_finishes() {
    // One node of 4 slots: without the limit 4 subjobs would run at once.
    let mut state = cluster(1);
    submit_array(&mut state, "1-10", Some(2), false);
    let mut ended = 0;
    let mut now = 20;
    let mut order = Vec::new();
    while ended < 10 {
        let (_, out) = apply(&mut state, now, |state, out| schedule_pass(state, out, now));
        let launched: Vec<(Option<u32>, Option<String>)> = out
            .to_moms
            .iter()
            .filter_map(|(_, message)| match message {
                ServerToMom::RunJob(launch) => Some((launch.array_index, launch.array_id.clone())),
                _ => None,
            })
            .collect();
        for (index, array_id) in launched {
            assert_eq!(array_id.as_deref(), Some("1[].head"));
            order.push(index.unwrap());
        }
        let now_running = running(&state);
        assert!(now_running.len() <= 2, "more than %2 running: {now_running:?}");
        assert_eq!(state_of(&state, "1[]"), JobState::Begun);
        state.sanity_check();
        let first = now_running.first().expect("something runs").clone();
        now += 1;
        end(&mut state, &first, "node1", now);
        ended += 1;
        assert_eq!(state_of(&state, &first), JobState::Expired);
        state.sanity_check();
    }
    assert_eq!(order, (1..=10).collect::<Vec<u32>>(), "lowest indices first, each once");
    assert_eq!(state_of(&state, "1[]"), JobState::Finished);
    assert!(state.jobs()[&state.find_job("1[]").unwrap()].times.obittime.is_some());
    let counts = state.array_counts(state.find_job("1[]").unwrap());
    assert_eq!(counts.state_count_text(), "Queued:0 Running:0 Exiting:0 Expired:10 ");
}

#[test]
fn qdel_of_the_parent_ends_queued_subjobs_at_once_and_kills_running_ones() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-6", Some(2), false);
    apply(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    assert_eq!(running(&state), ["1[1].head", "1[2].head"]);

    let (reply, out) = delete(&mut state, "1[]", 30);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    assert_eq!(sent_kinds(&out), ["KillJob->node1", "KillJob->node1"]);
    for index in 3..=6 {
        assert_eq!(state_of(&state, &format!("1[{index}]")), JobState::Expired);
    }
    assert_eq!(state_of(&state, "1[1]"), JobState::Exiting);
    assert_eq!(state_of(&state, "1[]"), JobState::Begun, "waits for its running subjobs");
    let deleted = out.notices.iter().filter(|notice| matches!(notice.kind, NoticeKind::Deleted { .. })).count();
    assert_eq!(deleted, 6);
    state.sanity_check();
    // Nothing more is scheduled for a deleted array.
    let (started, _) = apply(&mut state, 31, |state, out| schedule_pass(state, out, 31));
    assert_eq!(started, 0);

    end(&mut state, "1[1].head", "node1", 40);
    assert_eq!(state_of(&state, "1[]"), JobState::Begun);
    let out = end(&mut state, "1[2].head", "node1", 41);
    assert_eq!(state_of(&state, "1[]"), JobState::Finished);
    assert!(
        out.persist.iter().any(|op| matches!(op, StoreOp::UpdateJob(job) if job.id.to_string() == "1[].head")),
        "the parent's end is persisted with the last subjob's"
    );
    state.sanity_check();

    // The bare number deletes a whole queued array; the parent ends at once.
    submit_array(&mut state, "1-3", None, false);
    let (reply, _) = delete(&mut state, "2", 50);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    assert_eq!(state_of(&state, "2[]"), JobState::Finished);
    assert_eq!(state_of(&state, "2[3]"), JobState::Expired);
    state.sanity_check();
}

#[test]
fn qdel_of_one_subjob_leaves_the_others() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-3", None, false);
    let (reply, _) = delete(&mut state, "1[2]", 20);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    assert_eq!(state_of(&state, "1[2]"), JobState::Expired);
    assert_eq!(state_of(&state, "1[1]"), JobState::Queued);
    assert_eq!(state_of(&state, "1[]"), JobState::Queued);
    let (reply, _) = delete(&mut state, "1[2]", 21);
    let ServerReply::Done { errors } = reply else { panic!() };
    assert_eq!(errors[0].code, proto::error::ErrorCode::JobFinished);
    state.sanity_check();
    apply(&mut state, 22, |state, out| schedule_pass(state, out, 22));
    assert_eq!(running(&state), ["1[1].head", "1[3].head"], "the deleted index never runs");
}

#[test]
fn qhold_and_qrls_of_the_parent_apply_to_its_queued_subjobs() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-4", Some(1), false);
    apply(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    let ids = ["1[]".to_string()];
    let hold = |state: &mut ServerState, on: bool| {
        hold_job::hold_job(state, &mut Outbox::default(), &requester(ALICE), 30, &ids, "u", on)
    };
    assert_eq!(hold(&mut state, true), ServerReply::Done { errors: vec![] });
    assert_eq!(state_of(&state, "1[1]"), JobState::Running, "a running subjob keeps running");
    assert_eq!(state_of(&state, "1[2]"), JobState::Held);
    assert_eq!(state_of(&state, "1[4]"), JobState::Held);
    assert_eq!(state_of(&state, "1[]"), JobState::Begun);
    state.sanity_check();
    assert_eq!(hold(&mut state, false), ServerReply::Done { errors: vec![] });
    assert_eq!(state_of(&state, "1[3]"), JobState::Queued);
    state.sanity_check();

    // Submitted held (qsub -h -J): the parent and every subjob are H until qrls of the parent.
    let (held, _) = submit_array(&mut state, "1-3", None, true);
    let ids = [held.clone()];
    let reply = hold_job::hold_job(&mut state, &mut Outbox::default(), &requester(ALICE), 40, &ids, "u", false);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    assert_eq!(state_of(&state, &held), JobState::Queued);
    assert_eq!(state_of(&state, "2[3]"), JobState::Queued);
    state.sanity_check();
}

#[test]
fn status_shows_parents_by_default_subjobs_with_t_and_array_attributes() {
    let mut state = cluster(1);
    submit(&mut state);
    submit_array(&mut state, "1-5", Some(2), false);
    apply(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    let ids = |arrays: status_job::ArrayListing, selectors: &[&str]| -> Vec<(String, String)> {
        let selectors: Vec<String> = selectors.iter().map(|s| s.to_string()).collect();
        let ServerReply::Jobs { jobs, .. } = status_job::status_job(
            &state,
            Flavor::OpenPbs,
            0,
            status_job::Query { selectors: &selectors, arrays, ..Default::default() },
        ) else {
            panic!()
        };
        jobs.into_iter()
            .map(|job| {
                let job_state = job.attrs.iter().find(|attr| attr.name == "job_state").unwrap().value.clone();
                (job.id, job_state)
            })
            .collect()
    };
    let listing = |subjobs, arrays_only| status_job::ArrayListing { subjobs, arrays_only };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter().map(|(id, state)| (id.to_string(), state.to_string())).collect()
    };
    assert_eq!(ids(listing(false, false), &[]), pairs(&[("1.head", "R"), ("2[].head", "B")]));
    assert_eq!(ids(listing(false, true), &[]), pairs(&[("2[].head", "B")]));
    let with_subjobs = pairs(&[
        ("2[].head", "B"),
        ("2[1].head", "R"),
        ("2[2].head", "R"),
        ("2[3].head", "Q"),
        ("2[4].head", "Q"),
        ("2[5].head", "Q"),
    ]);
    assert_eq!(ids(listing(true, true), &[]), with_subjobs);
    assert_eq!(ids(listing(true, false), &["2[]"]), with_subjobs);
    assert_eq!(ids(listing(false, false), &["2[3]"]), pairs(&[("2[3].head", "Q")]));

    let full = |id: &str| {
        let job = &state.jobs()[&state.find_job(id).unwrap()];
        let selectors = [job.id.to_string()];
        let query = status_job::Query { selectors: &selectors, ..Default::default() };
        let ServerReply::Jobs { jobs, .. } = status_job::status_job(&state, Flavor::OpenPbs, 0, query) else {
            panic!()
        };
        jobs[0]
            .attrs
            .iter()
            .filter(|attr| attr.name.starts_with("array") || attr.name == "max_run_subjobs")
            .map(|attr| format!("{} = {}", attr.name, attr.value))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        full("2[]"),
        [
            "array = True",
            "array_state_count = Queued:3 Running:2 Exiting:0 Expired:0 ",
            "array_indices_submitted = 1-5",
            "array_indices_remaining = 3-5",
            "max_run_subjobs = 2",
        ]
    );
    assert_eq!(full("2[4]"), ["array_id = 2[].head", "array_index = 4"]);
}

#[test]
fn status_with_t_lists_the_subjobs_of_each_listed_parent_only() {
    // Arrays of alice, bob, alice: `qstat -t -u user1000` must switch between parents as it
    // walks their subjobs (it keeps the last parent's answer).
    let mut state = cluster(1);
    for uid in [ALICE, 1001, ALICE] {
        let mut spec = spec(&[("ncpus", "1")]);
        spec.array = Some(ArraySpec { indices: "1-2".to_string(), limit: None });
        spec.user_hold = true;
        apply(&mut state, 10, |state, out| submit_job::submit_job(state, out, &requester(uid), 10, spec));
    }
    let users = [requester(ALICE).user];
    let arrays = status_job::ArrayListing { subjobs: true, arrays_only: false };
    let query = status_job::Query { users: &users, arrays, ..Default::default() };
    let ServerReply::Jobs { jobs, .. } = status_job::status_job(&state, Flavor::OpenPbs, 0, query) else { panic!() };
    let ids: Vec<&str> = jobs.iter().map(|job| job.id.as_str()).collect();
    assert_eq!(ids, ["1[].head", "1[1].head", "1[2].head", "3[].head", "3[1].head", "3[2].head"]);
    state.sanity_check();
}

fn submit(state: &mut ServerState) {
    super::tests::submit(state, ALICE, &[("ncpus", "1")]);
}

fn alter(state: &mut ServerState, id: &str, changes: proto::JobAlteration) -> (ServerReply, Outbox) {
    let ids = [id.to_string()];
    apply(state, 60, |state, out| alter_job::alter_job(state, out, &requester(ALICE), 60, &ids, &changes))
}

#[test]
fn qalter_of_a_begun_parent_reaches_the_subjobs_that_have_not_started() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-4", Some(1), false);
    apply(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    assert_eq!(running(&state), ["1[1].head"]);
    let changes = proto::JobAlteration {
        name: Some("renamed".to_string()),
        resources: vec![("walltime".to_string(), "00:10:00".to_string())],
        hold_types: Some("u".to_string()),
        ..Default::default()
    };
    let (reply, out) = alter(&mut state, "1[]", changes);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    let job = |id: &str| &state.jobs()[&state.find_job(id).unwrap()];
    let parent = job("1[]");
    assert_eq!((parent.spec.name.as_str(), parent.state()), ("renamed", JobState::Begun));
    for index in 2..=4 {
        let sub = job(&format!("1[{index}]"));
        assert!(Arc::ptr_eq(&sub.spec, &parent.spec), "1[{index}] takes the new spec");
        assert_eq!(sub.request, parent.request);
        assert_eq!((sub.state(), sub.hold_types.as_str()), (JobState::Held, "u"));
        assert_eq!(sub.output_path, format!("login:/home/alice/job.sh.o1.{index}"));
    }
    assert_eq!(parent.request.walltime, Some(600));
    let started = job("1[1]");
    assert_eq!((started.spec.name.as_str(), started.state()), ("job.sh", JobState::Running), "keeps what it ran with");
    assert_ne!(started.request.walltime, Some(600));
    let spec_updates: Vec<String> = out
        .persist
        .iter()
        .filter_map(|op| match op {
            StoreOp::UpdateJobSpec(job) => Some(job.id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(spec_updates, ["1[].head", "1[1].head"], "the started subjob's row keeps its spec");
    state.sanity_check();

    // Released, the waiting subjobs run with the new walltime.
    let release = proto::JobAlteration { hold_types: Some("n".to_string()), ..Default::default() };
    alter(&mut state, "1[]", release);
    assert_eq!(state_of(&state, "1[3]"), JobState::Queued);
    end(&mut state, "1[1].head", "node1", 70);
    let (_, out) = apply(&mut state, 71, |state, out| schedule_pass(state, out, 71));
    let launched: Vec<_> = out
        .to_moms
        .iter()
        .filter_map(|(_, message)| match message {
            ServerToMom::RunJob(launch) => Some((launch.array_index, launch.walltime)),
            _ => None,
        })
        .collect();
    assert_eq!(launched, [(Some(2), Some(600))]);
    state.sanity_check();
}

#[test]
fn qalter_of_a_subjob_is_an_invalid_request_and_of_a_finished_array_finished() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-2", None, false);
    let changes = || proto::JobAlteration { name: Some("x".to_string()), ..Default::default() };
    let (reply, out) = alter(&mut state, "1[2]", changes());
    let ServerReply::Done { errors } = reply else { panic!() };
    assert_eq!(errors[0].code, proto::error::ErrorCode::InvalidRequest);
    assert_eq!(errors[0].message, "Invalid request 1[2].head");
    assert!(out.persist.is_empty());
    let (reply, out) = alter(&mut state, "1[1-2]", changes());
    let ServerReply::Done { errors } = reply else { panic!() };
    assert_eq!(errors[0].message, "Invalid request 1[1-2]");
    assert!(out.persist.is_empty());
    delete(&mut state, "1[]", 61);
    let (reply, _) = alter(&mut state, "1[]", changes());
    let ServerReply::Done { errors } = reply else { panic!() };
    assert_eq!(errors[0].code, proto::error::ErrorCode::JobFinished);
    assert_eq!(state.jobs()[&state.find_job("1[]").unwrap()].spec.name, "job.sh");
}

#[test]
fn range_ids_select_subjobs_for_qdel_qhold_qrls_and_qstat() {
    let mut state = cluster(1);
    submit_array(&mut state, "1-6", Some(1), false);
    let hold = |state: &mut ServerState, id: &str, on: bool| {
        let ids = [id.to_string()];
        hold_job::hold_job(state, &mut Outbox::default(), &requester(ALICE), 30, &ids, "u", on)
    };
    assert_eq!(hold(&mut state, "1[2-5:3].head", true), ServerReply::Done { errors: vec![] });
    let states = |state: &ServerState| -> String {
        (1..=6).map(|index| state_of(state, &format!("1[{index}]")).letter()).collect()
    };
    assert_eq!(states(&state), "QHQQHQ");
    assert_eq!(hold(&mut state, "1[2,5]", false), ServerReply::Done { errors: vec![] });
    assert_eq!(states(&state), "QQQQQQ");

    // An index the array does not have, or a range of no array: Unknown Job Id, nothing done.
    for bad in ["1[5-7]", "1[0-2]", "9[1-2]", "1[3-1]"] {
        let ServerReply::Done { errors } = hold(&mut state, bad, true) else { panic!() };
        assert_eq!(errors.len(), 1, "{bad}");
        assert_eq!(errors[0].code, proto::error::ErrorCode::UnknownJobId, "{bad}");
        assert_eq!(errors[0].message, format!("Unknown Job Id {bad}"));
    }
    assert_eq!(states(&state), "QQQQQQ");

    let (reply, out) = delete(&mut state, "1[1-3]", 40);
    assert_eq!(reply, ServerReply::Done { errors: vec![] });
    assert_eq!(states(&state), "XXXQQQ");
    assert_eq!(out.notices.len(), 3);
    assert_eq!(state_of(&state, "1[]"), JobState::Queued);
    state.sanity_check();

    let selectors = ["1[2-4]".to_string(), "1[4-9]".to_string()];
    let query = status_job::Query { selectors: &selectors, ..Default::default() };
    let ServerReply::Jobs { jobs, errors, .. } = status_job::status_job(&state, Flavor::OpenPbs, 0, query) else {
        panic!()
    };
    let ids: Vec<&str> = jobs.iter().map(|job| job.id.as_str()).collect();
    assert_eq!(ids, ["1[2].head", "1[3].head", "1[4].head"]);
    assert_eq!(errors[0].message, "Unknown Job Id 1[4-9]");
}

#[test]
fn accounting_of_an_array_q_for_the_parent_s_and_e_per_subjob_and_e_when_the_parent_ends() {
    let mut state = cluster(1);
    let (_, submitted) = submit_array(&mut state, "1-2", None, false);
    let (_, started) = apply(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    let obit = JobObit { job_id: "1[2].head".to_string(), exit_status: 3, session_id: 7, ..Default::default() };
    let (_, ended_2) = apply(&mut state, 25, |state, out| job_ended::job_ended(state, out, "node1", obit, 25));
    assert_eq!(state_of(&state, "1[]"), JobState::Begun, "not over yet");
    let ended_1 = end(&mut state, "1[1].head", "node1", 30);
    assert_eq!(state_of(&state, "1[]"), JobState::Finished);
    let records: Vec<String> = [submitted, started, ended_2, ended_1]
        .iter()
        .flat_map(|out| out.notices.iter())
        .map(|notice| crate::accounting::record(notice, Flavor::OpenPbs, pbslog::Tm::utc))
        .collect();
    let types: Vec<String> =
        records.iter().map(|record| record.split(';').take(3).collect::<Vec<_>>()[1..].join(";")).collect();
    assert_eq!(types, ["Q;1[].head", "S;1[1].head", "S;1[2].head", "E;1[2].head", "E;1[1].head", "E;1[].head"]);
    let parent_end = records.last().unwrap();
    // A subjob ended with a positive status: the array's is 1 (OpenPBS chk_array_doneness).
    assert!(parent_end.contains(" Exit_status=1 "), "{parent_end}");
    assert!(parent_end.contains(" start=20 ") && parent_end.contains(" end=30 "), "{parent_end}");

    // An array deleted before anything started has its subjobs' D records and no E record
    // (it never began).
    submit_array(&mut state, "1-2", None, false);
    let (_, out) = delete(&mut state, "2[]", 40);
    let kinds: Vec<String> = out
        .notices
        .iter()
        .map(|notice| format!("{};{}", crate::accounting::record_type(&notice.kind), notice.job.id))
        .collect();
    assert_eq!(kinds, ["D;2[1].head", "D;2[2].head"]);
    assert_eq!(state_of(&state, "2[]"), JobState::Finished);
}
