//! Handler tests of qalter, qrerun and qsig: permissions, states, validation (nothing changes
//! on a refusal), what is persisted and what is sent to the moms.

use super::tests::{cluster, requester, sent_kinds, submit};
use super::*;
use crate::sched_loop::{job_launch, schedule_pass};
use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::ServerState;
use crate::store::StoreOp;
use job::JobState;
use proto::mom::JobObit;
use proto::{ErrorCode, JobAlteration, ServerReply};

const ALICE: u32 = 1000;
const BOB: u32 = 1001;
const ROOT: u32 = 0;

fn alter(state: &mut ServerState, uid: u32, id: &str, changes: JobAlteration) -> (Vec<ErrorCode>, Outbox) {
    let mut out = Outbox::default();
    let reply = alter_job::alter_job(state, &mut out, &requester(uid), 50, &[id.to_string()], &changes);
    (codes(reply), out)
}

fn codes(reply: ServerReply) -> Vec<ErrorCode> {
    match reply {
        ServerReply::Done { errors } => errors.into_iter().map(|error| error.code).collect(),
        ServerReply::Error(error) => vec![error.code],
        other => panic!("unexpected reply {other:?}"),
    }
}

fn job<'a>(state: &'a ServerState, id: &str) -> &'a crate::state::Job {
    &state.jobs()[&state.find_job(id).unwrap()]
}

fn walltime(value: &str) -> JobAlteration {
    JobAlteration { resources: vec![("walltime".to_string(), value.to_string())], ..Default::default() }
}

fn run_all(state: &mut ServerState) -> Outbox {
    let mut out = Outbox::default();
    schedule_pass(state, &mut out, 20);
    out
}

#[test]
fn walltime_of_a_queued_job_changes_spec_request_and_launch() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("walltime", "01:00:00"), ("ncpus", "1")]);
    let (errors, out) = alter(&mut state, ALICE, &id, walltime("00:00:03"));
    assert!(errors.is_empty(), "{errors:?}");
    let altered = job(&state, &id);
    assert_eq!(altered.request.walltime, Some(3));
    assert!(altered.spec.resources.contains(&("walltime".to_string(), "00:00:03".to_string())));
    assert!(altered.spec.resources.contains(&("ncpus".to_string(), "1".to_string())), "other resources kept");
    match &out.persist[..] {
        [StoreOp::UpdateJobSpec(stored)] => assert_eq!(**stored, *altered, "the changed spec is persisted"),
        other => panic!("{other:?}"),
    }
    assert_eq!(job_launch(altered, 10).walltime, Some(3), "the mom enforces the new walltime");
    state.sanity_check();
}

#[test]
fn a_new_chunk_shape_replaces_the_old_one_in_either_syntax() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "1:ppn=1"), ("walltime", "10:00")]);
    let select = JobAlteration { resources: vec![("select".into(), "2:ncpus=3".into())], ..Default::default() };
    assert!(alter(&mut state, ALICE, &id, select).0.is_empty());
    let altered = job(&state, &id);
    assert_eq!(altered.request.total_ncpus(), 6);
    let names: Vec<&str> = altered.spec.resources.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["walltime", "select"], "nodes= replaced, walltime kept");
}

#[test]
fn refusals_change_nothing() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("walltime", "01:00:00")]);
    let before = job(&state, &id).clone();
    let cases = [
        (ALICE, "99", JobAlteration { name: Some("x".into()), ..Default::default() }, ErrorCode::UnknownJobId),
        (BOB, id.as_str(), JobAlteration { name: Some("x".into()), ..Default::default() }, ErrorCode::PermissionDenied),
        (ALICE, &id, JobAlteration { priority: Some(2000), ..Default::default() }, ErrorCode::BadAttributeValue),
        (
            ALICE,
            &id,
            JobAlteration { name: Some("bad name".into()), ..Default::default() },
            ErrorCode::BadAttributeValue,
        ),
        (ALICE, &id, walltime("soon"), ErrorCode::BadAttributeValue),
        (
            ALICE,
            &id,
            JobAlteration { resources: vec![("ncpus".into(), "64".into())], ..Default::default() },
            ErrorCode::ExceedsLimits,
        ),
        (
            ALICE,
            &id,
            JobAlteration { resources: vec![("select".into(), "1000000000:ncpus=0".into())], ..Default::default() },
            ErrorCode::ExceedsLimits,
        ),
        (
            ALICE,
            &id,
            JobAlteration { resources: vec![("frobs".into(), "1".into())], ..Default::default() },
            ErrorCode::UnknownResource,
        ),
        (ALICE, &id, JobAlteration { hold_types: Some("o".into()), ..Default::default() }, ErrorCode::PermissionDenied),
        (
            ALICE,
            &id,
            JobAlteration { name: Some("ok".into()), output_path: Some("relative".into()), ..Default::default() },
            ErrorCode::BadAttributeValue,
        ),
    ];
    for (uid, target, changes, code) in cases {
        let (errors, out) = alter(&mut state, uid, target, changes.clone());
        assert_eq!(errors, vec![code], "{changes:?}");
        assert!(out.persist.is_empty(), "{changes:?} persisted something");
        assert_eq!(*job(&state, &id), before, "{changes:?} changed the job");
    }
}

#[test]
fn an_empty_alteration_changes_and_persists_nothing() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    let before = job(&state, &id).clone();
    let (errors, out) = alter(&mut state, ALICE, &id, JobAlteration::default());
    assert!(errors.is_empty());
    assert!(out.persist.is_empty());
    assert_eq!(*job(&state, &id), before);
}

#[test]
fn holds_move_the_job_between_queued_and_held() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    let (errors, _) =
        alter(&mut state, ALICE, &id, JobAlteration { hold_types: Some("u".into()), ..Default::default() });
    assert!(errors.is_empty());
    assert_eq!((job(&state, &id).state(), job(&state, &id).hold_types.as_str()), (JobState::Held, "u"));
    let (errors, _) =
        alter(&mut state, ALICE, &id, JobAlteration { hold_types: Some("n".into()), ..Default::default() });
    assert!(errors.is_empty());
    assert_eq!((job(&state, &id).state(), job(&state, &id).hold_types.as_str()), (JobState::Queued, "n"));
    state.sanity_check();
}

#[test]
fn running_jobs_only_by_managers_and_of_their_resources_only_walltime() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[("walltime", "01:00:00")]);
    run_all(&mut state);
    assert_eq!(job(&state, &id).state(), JobState::Running);
    let rename = JobAlteration { name: Some("renamed".into()), ..Default::default() };
    assert_eq!(alter(&mut state, ALICE, &id, rename.clone()).0, vec![ErrorCode::ModifyWhileRunning]);
    assert_eq!(alter(&mut state, ALICE, &id, walltime("00:00:05")).0, vec![ErrorCode::ModifyWhileRunning]);
    let ncpus = JobAlteration { resources: vec![("ncpus".into(), "1".into())], ..Default::default() };
    assert_eq!(alter(&mut state, ROOT, &id, ncpus).0, vec![ErrorCode::ModifyWhileRunning]);
    assert_eq!(job(&state, &id).request.walltime, Some(3600));
    let (errors, out) = alter(&mut state, ROOT, &id, walltime("00:00:05"));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sent_kinds(&out), ["SetWalltime->node1"], "the mom enforces the new limit");
    assert_eq!(job(&state, &id).request.walltime, Some(5));
    assert!(alter(&mut state, ROOT, &id, rename).0.is_empty());
    assert_eq!(job(&state, &id).spec.name, "renamed");
    assert_eq!(job(&state, &id).state(), JobState::Running);
}

#[test]
fn finished_jobs_are_finished() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 30, std::slice::from_ref(&id), Default::default());
    let rename = JobAlteration { name: Some("x".into()), ..Default::default() };
    assert_eq!(alter(&mut state, ALICE, &id, rename).0, vec![ErrorCode::JobFinished]);
}

fn rerun(state: &mut ServerState, uid: u32, id: &str) -> (Vec<ErrorCode>, Outbox) {
    let mut out = Outbox::default();
    let reply = rerun_job::rerun_job(state, &mut out, &requester(uid), 40, &[id.to_string()]);
    (codes(reply), out)
}

fn obit(id: &str, exit_status: i32) -> JobObit {
    JobObit { job_id: id.to_string(), exit_status, session_id: 77, ..Default::default() }
}

#[test]
fn rerun_kills_then_requeues_and_runs_again() {
    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "2:ppn=1")]);
    assert_eq!(rerun(&mut state, ROOT, &id).0, vec![ErrorCode::BadState], "not running yet");
    run_all(&mut state);
    assert_eq!(rerun(&mut state, ALICE, &id).0, vec![ErrorCode::PermissionDenied], "operators and managers only");
    let (errors, out) = rerun(&mut state, ROOT, &id);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sent_kinds(&out), ["RerunJob->node1"]);
    assert!(matches!(&out.persist[..], [StoreOp::UpdateJob(job)] if job.rerun_requested));
    assert_eq!(job(&state, &id).state(), JobState::Exiting);

    let mut out = Outbox::default();
    job_ended::job_ended(&mut state, &mut out, "node1", obit(&id, -11), 45);
    assert_eq!(sent_kinds(&out), ["EndJob->node2", "ObitAck->node1"]);
    let requeued = job(&state, &id);
    assert_eq!((requeued.state(), requeued.exit_status, requeued.rerun_requested), (JobState::Queued, None, false));
    assert!(requeued.exec.is_empty());
    assert_eq!(out.notices.iter().map(|notice| notice.kind.clone()).collect::<Vec<_>>(), vec![NoticeKind::Rerun]);
    assert!(out.schedule);
    state.sanity_check();

    run_all(&mut state);
    assert_eq!((job(&state, &id).state(), job(&state, &id).run_count), (JobState::Running, 2));
}

#[test]
fn a_rerun_missed_while_the_mom_was_away_is_sent_again() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    run_all(&mut state);
    assert!(rerun(&mut state, ROOT, &id).0.is_empty());
    let registration = proto::mom::Registration {
        node: "node1".to_string(),
        np: 4,
        mem_bytes: 8 << 30,
        ngpus: 2,
        properties: vec![],
        start_id: "a".to_string(),
        jobs: vec![id.clone()],
        port: 0,
        gpus: Vec::new(),
        gpu_states: Vec::new(),
        task_socket: None,
        heartbeat_ms: 0,
    };
    let mut out = Outbox::default();
    register_mom::register_mom(&mut state, &mut out, registration, 42);
    assert_eq!(sent_kinds(&out), ["RerunJob->node1"]);
    assert_eq!(job(&state, &id).state(), JobState::Exiting);
}

#[test]
fn rerun_refusals_and_a_delete_that_wins() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    run_all(&mut state);
    std::sync::Arc::make_mut(&mut state.job_mut(state.find_job(&id).unwrap()).unwrap().spec).rerunnable = false;
    assert_eq!(rerun(&mut state, ROOT, &id).0, vec![ErrorCode::NotRerunnable]);
    assert_eq!(rerun(&mut state, ROOT, "99").0, vec![ErrorCode::UnknownJobId]);
    std::sync::Arc::make_mut(&mut state.job_mut(state.find_job(&id).unwrap()).unwrap().spec).rerunnable = true;
    assert!(rerun(&mut state, ROOT, &id).0.is_empty());
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 41, std::slice::from_ref(&id), Default::default());
    job_ended::job_ended(&mut state, &mut Outbox::default(), "node1", obit(&id, 271), 45);
    assert_eq!(job(&state, &id).state(), JobState::Finished, "the qdel wins over the rerun");
    assert_eq!(rerun(&mut state, ROOT, &id).0, vec![ErrorCode::JobFinished]);
}

#[test]
fn signals_by_name_or_number_reach_the_mother_superior() {
    for (text, number) in [("SIGUSR1", libc::SIGUSR1), ("usr1", libc::SIGUSR1), ("9", 9), ("TERM", libc::SIGTERM)] {
        assert_eq!(signal_job::parse_signal(text).unwrap(), number, "{text}");
    }
    for (text, code) in
        [("SIGFOO", ErrorCode::UnknownSignal), ("0", ErrorCode::UnknownSignal), ("", ErrorCode::UnknownSignal)]
    {
        assert_eq!(signal_job::parse_signal(text).unwrap_err().code, code, "{text}");
    }
    assert_eq!(signal_job::parse_request("suspend").unwrap(), signal_job::SignalRequest::Suspend);
    assert_eq!(signal_job::parse_request("resume").unwrap(), signal_job::SignalRequest::Resume);

    let mut state = cluster(2);
    let id = submit(&mut state, ALICE, &[("nodes", "2:ppn=4")]);
    let signal = |state: &mut ServerState, uid: u32, signal: &str| {
        let mut out = Outbox::default();
        let reply = signal_job::signal_job(state, &mut out, &requester(uid), 60, std::slice::from_ref(&id), signal);
        (codes(reply), out)
    };
    assert_eq!(signal(&mut state, ALICE, "USR1").0, vec![ErrorCode::BadState], "not running");
    run_all(&mut state);
    assert_eq!(signal(&mut state, BOB, "USR1").0, vec![ErrorCode::PermissionDenied]);
    assert_eq!(signal(&mut state, ALICE, "NOPE").0, vec![ErrorCode::UnknownSignal]);
    let (errors, out) = signal(&mut state, ALICE, "USR1");
    assert!(errors.is_empty());
    assert_eq!(sent_kinds(&out), ["SignalJob->node1"]);
    assert!(out.persist.is_empty());
    assert_eq!(job(&state, &id).state(), JobState::Running);
}

#[test]
fn suspend_and_resume_stop_and_continue_the_job_for_operators() {
    let mut state = cluster(1);
    let id = submit(&mut state, ALICE, &[]);
    let signal = |state: &mut ServerState, uid: u32, signal: &str| {
        let mut out = Outbox::default();
        let reply = signal_job::signal_job(state, &mut out, &requester(uid), 60, std::slice::from_ref(&id), signal);
        (codes(reply), out)
    };
    assert_eq!(signal(&mut state, ROOT, "suspend").0, vec![ErrorCode::BadState], "not running");
    run_all(&mut state);
    assert_eq!(signal(&mut state, ALICE, "suspend").0, vec![ErrorCode::PermissionDenied], "operators only");
    assert_eq!(signal(&mut state, ROOT, "resume").0, vec![ErrorCode::BadState], "not suspended");
    let (errors, out) = signal(&mut state, ROOT, "suspend");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(job(&state, &id).state(), JobState::Suspended);
    assert!(matches!(&out.persist[..], [StoreOp::UpdateJob(job)] if job.state() == JobState::Suspended));
    assert!(matches!(
        &out.to_moms[..],
        [(_, proto::ServerToMom::SignalJob { signal, suspend: true, .. })] if *signal == libc::SIGSTOP
    ));
    let kinds = |out: &Outbox| out.notices.iter().map(|notice| notice.kind.clone()).collect::<Vec<_>>();
    assert_eq!(kinds(&out), [crate::state::outbox::NoticeKind::Suspended], "the z record");
    assert!(signal(&mut state, ALICE, "USR1").1.notices.is_empty(), "plain signals reach a suspended job");
    assert_eq!(signal(&mut state, ROOT, "suspend").0, vec![ErrorCode::BadState], "already suspended");
    state.sanity_check();
    let (errors, out) = signal(&mut state, ROOT, "resume");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(job(&state, &id).state(), JobState::Running);
    assert!(matches!(
        &out.to_moms[..],
        [(_, proto::ServerToMom::SignalJob { signal, suspend: true, .. })] if *signal == libc::SIGCONT
    ));
    // The owner's plain STOP and CONT are signals only: the mom's walltime clock keeps running.
    for name in ["STOP", "CONT"] {
        let (errors, out) = signal(&mut state, ALICE, name);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(matches!(&out.to_moms[..], [(_, proto::ServerToMom::SignalJob { suspend: false, .. })]), "{name}");
        assert_eq!(job(&state, &id).state(), JobState::Running);
    }
    assert_eq!(kinds(&out), [crate::state::outbox::NoticeKind::Resumed], "the r record");

    // A suspended job can be deleted, and its end report finishes it.
    signal(&mut state, ROOT, "suspend");
    let mut out = Outbox::default();
    delete_job::delete_job(&mut state, &mut out, &requester(ALICE), 70, std::slice::from_ref(&id), Default::default());
    assert_eq!(sent_kinds(&out), ["KillJob->node1"]);
    job_ended::job_ended(&mut state, &mut Outbox::default(), "node1", obit(&id, 271), 75);
    assert_eq!(job(&state, &id).state(), JobState::Finished);
    state.sanity_check();
}
