//! Preemption as the server carries it out (`state/preempt.rs`), through a recording
//! `Outbox`: which way `preempt_order` picks, suspending and requeueing a running job for a
//! preemptor (shares given back, messages, records, comments), resuming it, and how the other
//! requests treat a job the scheduler suspended. Each step checks the state's invariants.

use super::tests::{cluster, requester, spec, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::preempt::{preempt_how, preempt_job, resume_job, suspended_by_scheduler};
use crate::state::ServerState;
use crate::store::StoreOp;
use job::{JobKey, JobState};
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::mom::JobObit;
use proto::{ServerReply, ServerToMom};
use sched::PreemptHow;

const ROOT: u32 = 0;

use crate::shared::run_checked as apply;

/// Submits a job of `ncpus` cpus with `walltime` seconds (none when 0) and runs a pass at
/// time 100; returns its key.
fn running(state: &mut ServerState, ncpus: &str, walltime: &str, edit: impl FnOnce(&mut job::JobSpec)) -> JobKey {
    let mut resources = vec![("ncpus", ncpus)];
    if !walltime.is_empty() {
        resources.push(("walltime", walltime));
    }
    let mut job = spec(&resources);
    edit(&mut job);
    let (reply, _) = apply(state, 10, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, job));
    let ServerReply::JobSubmitted { id } = reply else { panic!("refused: {reply:?}") };
    apply(state, 100, |state, out| schedule_pass(state, out, 100));
    let key = state.find_job(&id).unwrap();
    assert_eq!(state.jobs()[&key].state(), JobState::Running);
    key
}

/// Queue `high` of priority 200 (a preemptor queue at the default `preempt_queue_prio` 150).
/// Its jobs start before a suspended job of `workq` resumes, so they can hold its resources.
fn high_queue(state: &mut ServerState) {
    let attrs: Vec<AttrOp> =
        [("queue_type", "execution"), ("enabled", "true"), ("started", "true"), ("Priority", "200")]
            .iter()
            .map(|(name, value)| AttrOp {
                name: name.to_string(),
                resource: None,
                op: SetOp::Set,
                value: value.to_string(),
            })
            .collect();
    let reply = manage::manage(
        state,
        &mut Outbox::default(),
        &requester(ROOT),
        10,
        ManageOp::Create,
        ObjectKind::Queue,
        "high",
        &attrs,
    );
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
}

/// A job of queue `high`, running.
fn high(state: &mut ServerState, ncpus: &str) -> JobKey {
    running(state, ncpus, "1000", |spec| spec.queue = Some("high".to_string()))
}

fn how(state: &ServerState, key: JobKey, now: i64) -> Option<PreemptHow> {
    preempt_how(state, &state.jobs()[&key], now)
}

fn set_order(state: &mut ServerState, order: &str) {
    state.attrs.sched.preempt_order = order.to_string();
}

#[test]
fn preempt_order_groups_follow_the_walltime_left() {
    let mut state = cluster(1);
    let key = running(&mut state, "1", "100", |_| {});
    // Started at 100 with 100 s of walltime: at 110, 90 % is left.
    assert_eq!(how(&state, key, 110), Some(PreemptHow::Suspend), "default SCR: S first");
    set_order(&mut state, "RS");
    assert_eq!(how(&state, key, 110), Some(PreemptHow::Requeue));
    set_order(&mut state, "R 80 S");
    assert_eq!(how(&state, key, 110), Some(PreemptHow::Requeue), "90 % left: the first group");
    assert_eq!(how(&state, key, 120), Some(PreemptHow::Suspend), "80 % left: the second");
    assert_eq!(how(&state, key, 500), Some(PreemptHow::Suspend), "past its walltime: 1 % left");
    set_order(&mut state, "C");
    assert_eq!(how(&state, key, 110), None, "checkpointing is not supported");
    set_order(&mut state, "CR");
    assert_eq!(how(&state, key, 110), Some(PreemptHow::Requeue), "C skipped");
}

#[test]
fn only_rerunnable_running_jobs_are_requeued_and_no_walltime_takes_the_first_group() {
    let mut state = cluster(1);
    let not_rerunnable = running(&mut state, "1", "100", |spec| spec.rerunnable = false);
    let endless = running(&mut state, "1", "", |_| {});
    set_order(&mut state, "R 50 S");
    assert_eq!(how(&state, not_rerunnable, 110), None, "-r n: R does not apply");
    assert_eq!(how(&state, not_rerunnable, 160), Some(PreemptHow::Suspend));
    assert_eq!(how(&state, endless, 100_000), Some(PreemptHow::Requeue), "no walltime: the first group");
    state.job_mut(endless).unwrap().delete_requested = true;
    assert_eq!(how(&state, endless, 110), None, "being deleted");
}

#[test]
fn a_suspended_job_gives_its_shares_back_and_resumes_on_them() {
    let mut state = cluster(1);
    let victim = running(&mut state, "4", "1000", |_| {});
    let by = JobKey::from_raw(99 << 32);
    let (done, out) =
        apply(&mut state, 200, |state, out| preempt_job(state, out, victim, PreemptHow::Suspend, by, 200));
    assert!(done);
    let job = &state.jobs()[&victim];
    assert_eq!(job.state(), JobState::Suspended);
    assert!(job.shares_released && job.sched_preempted == Some(200));
    assert_eq!(job.comment.as_deref(), Some("Job preempted by suspension"));
    assert_eq!(job.exec[0].slots.len(), 4, "kept for resuming");
    assert_eq!(state.node("node1").unwrap().free_slots(), [0, 1, 2, 3], "given back");
    assert!(matches!(&out.persist[..], [StoreOp::UpdateJob(job)] if job.shares_released));
    assert!(matches!(
        &out.to_moms[..],
        [(node, ServerToMom::SignalJob { signal, suspend: true, .. })] if node == "node1" && *signal == libc::SIGSTOP
    ));
    assert_eq!(out.notices.iter().map(|notice| notice.kind.clone()).collect::<Vec<_>>(), [NoticeKind::Suspended]);
    assert_eq!(suspended_by_scheduler(&state).iter().map(|job| job.id.key()).collect::<Vec<_>>(), [victim]);
    assert!(how(&state, victim, 200).is_none(), "not preempted twice");
    state.sanity_check(); // the index of suspended jobs has it

    // Loaded from the store so (a restart), it is still found for resuming.
    let loaded = (*state.jobs()[&victim]).clone();
    let mut restarted = cluster(1);
    restarted.insert_job(loaded);
    assert_eq!(suspended_by_scheduler(&restarted).iter().map(|job| job.id.key()).collect::<Vec<_>>(), [victim]);
    restarted.sanity_check();

    // A job on one of its slots keeps it suspended; nothing is taken meanwhile.
    high_queue(&mut state);
    let other = high(&mut state, "1");
    let (resumed, out) = apply(&mut state, 300, |state, out| resume_job(state, out, victim, 300));
    assert!(!resumed && out.to_moms.is_empty() && out.persist.is_empty());
    assert_eq!(state.node("node1").unwrap().free_slots(), [1, 2, 3]);
    let node = state.jobs()[&other].exec[0].node.clone();
    let obit =
        JobObit { job_id: state.jobs()[&other].id.to_string(), exit_status: 0, session_id: 5, ..Default::default() };
    apply(&mut state, 310, |state, out| job_ended::job_ended(state, out, &node, obit, 310));

    let (resumed, out) = apply(&mut state, 320, |state, out| resume_job(state, out, victim, 320));
    assert!(resumed);
    let job = &state.jobs()[&victim];
    assert_eq!(job.state(), JobState::Running);
    assert!(!job.shares_released);
    assert!(job
        .comment
        .as_deref()
        .is_some_and(|text| text.starts_with("Job run at ") && text.ends_with(" on (node1:ncpus=4)")));
    assert!(state.node("node1").unwrap().free_slots().is_empty());
    assert!(
        matches!(&out.to_moms[..], [(_, ServerToMom::SignalJob { signal, suspend: true, .. })] if *signal == libc::SIGCONT)
    );
    assert_eq!(out.notices.iter().map(|notice| notice.kind.clone()).collect::<Vec<_>>(), [NoticeKind::Resumed]);
    assert!(suspended_by_scheduler(&state).is_empty());
    state.sanity_check(); // resumed: out of the index of suspended jobs
}

#[test]
fn a_requeued_job_is_killed_at_once_and_queued_again_by_its_end_report() {
    let mut state = cluster(1);
    let victim = running(&mut state, "4", "1000", |_| {});
    let by = JobKey::from_raw(99 << 32);
    let (done, out) =
        apply(&mut state, 200, |state, out| preempt_job(state, out, victim, PreemptHow::Requeue, by, 200));
    assert!(done);
    let job = &state.jobs()[&victim];
    assert_eq!(job.state(), JobState::Exiting);
    assert!(job.rerun_requested && job.shares_released);
    assert_eq!(job.comment.as_deref(), Some("Job preempted by requeuing"));
    assert!(matches!(&out.to_moms[..], [(_, ServerToMom::RerunJob { .. })]));
    assert_eq!(state.node("node1").unwrap().free_slots(), [0, 1, 2, 3]);
    assert!(suspended_by_scheduler(&state).is_empty(), "not suspended: nothing to resume");

    // The preemptor takes the node meanwhile; the killed run's end queues the victim again
    // without touching the preemptor's shares.
    high_queue(&mut state);
    let preemptor = high(&mut state, "4");
    let id = state.jobs()[&victim].id.to_string();
    let obit = JobObit { job_id: id, exit_status: -11, session_id: 5, ..Default::default() };
    let (_, out) = apply(&mut state, 210, |state, out| job_ended::job_ended(state, out, "node1", obit, 210));
    let job = &state.jobs()[&victim];
    assert_eq!(job.state(), JobState::Queued);
    assert!(!job.shares_released && job.exec.is_empty());
    assert!(out.notices.iter().any(|notice| notice.kind == NoticeKind::Rerun), "the R record");
    assert_eq!(state.jobs()[&preemptor].state(), JobState::Running);
    assert!(state.node("node1").unwrap().free_slots().is_empty());
    assert_eq!(state.node("node1").unwrap().mem_used, 0, "nothing released twice");
}

#[test]
fn a_job_the_scheduler_suspended_is_resumed_by_it_not_by_qsig_and_can_be_deleted() {
    let mut state = cluster(1);
    let victim = running(&mut state, "2", "1000", |_| {});
    let by = JobKey::from_raw(99 << 32);
    apply(&mut state, 200, |state, out| preempt_job(state, out, victim, PreemptHow::Suspend, by, 200));
    let id = state.jobs()[&victim].id.to_string();
    let ids = [id.clone()];
    let (reply, out) =
        apply(&mut state, 210, |state, out| signal_job::signal_job(state, out, &requester(ROOT), 210, &ids, "resume"));
    assert!(matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
    assert!(out.to_moms.is_empty() && out.schedule, "left to the scheduler");
    assert_eq!(state.jobs()[&victim].state(), JobState::Suspended);

    // Its end (qdel of a suspended job) frees nothing it no longer holds.
    high_queue(&mut state);
    let other = high(&mut state, "4");
    let obit = JobObit { job_id: id, exit_status: 271, session_id: 5, ..Default::default() };
    apply(&mut state, 220, |state, out| job_ended::job_ended(state, out, "node1", obit, 220));
    assert!(state.jobs()[&victim].state().is_finished());
    assert_eq!(state.jobs()[&other].exec[0].slots.len(), 4);
    assert!(state.node("node1").unwrap().free_slots().is_empty(), "the other job keeps its slots");
}

#[test]
fn a_job_suspended_with_qsig_is_not_the_schedulers() {
    let mut state = cluster(1);
    let key = running(&mut state, "1", "1000", |_| {});
    let ids = [state.jobs()[&key].id.to_string()];
    apply(&mut state, 200, |state, out| signal_job::signal_job(state, out, &requester(ROOT), 200, &ids, "suspend"));
    assert_eq!(state.jobs()[&key].state(), JobState::Suspended);
    assert!(suspended_by_scheduler(&state).is_empty());
    assert!(!apply(&mut state, 210, |state, out| resume_job(state, out, key, 210)).0);
    assert!(how(&state, key, 210).is_none(), "a suspended job is not preempted");
}

#[test]
fn a_mom_registering_again_does_not_give_a_scheduler_suspended_job_its_shares_back() {
    // As after a server restart: the shares of active jobs are claimed again, but not those a
    // preempted job gave back (it stays resumable by the scheduler).
    let mut state = cluster(1);
    let victim = running(&mut state, "4", "1000", |_| {});
    let by = JobKey::from_raw(99 << 32);
    apply(&mut state, 200, |state, out| preempt_job(state, out, victim, PreemptHow::Suspend, by, 200));
    let id = state.jobs()[&victim].id.to_string();
    let registration = super::tests::registration("node1", "a", vec![id]);
    apply(&mut state, 210, |state, out| register_mom::register_mom(state, out, registration, 210));
    assert_eq!(state.jobs()[&victim].state(), JobState::Suspended);
    assert_eq!(state.node("node1").unwrap().free_slots(), [0, 1, 2, 3]);
    assert_eq!(suspended_by_scheduler(&state).len(), 1);
    assert!(apply(&mut state, 220, |state, out| resume_job(state, out, victim, 220)).0);
}
