//! Carrying out the scheduler's preemption decisions: suspending or requeueing a running job
//! for a higher one, resuming a job suspended that way, and which way a job may be preempted
//! (`preempt_order`, the job's rerunnable flag). The accounting records and comments are
//! OpenPBS's.
//!
//! A preempted job gives its node shares back at once and keeps them on the job (`exec`,
//! `Job::shares_released`): suspended, it stays `S` (OpenPBS substate 45, "suspended by the
//! scheduler") until the scheduler resumes it on the same shares; requeued, it goes to `E` as
//! a qrerun does, and its mom's end report queues it again (`requeue.rs`: the `R` record). A
//! job suspended with `qsig -s suspend` keeps its shares and is never resumed by the
//! scheduler. Jobs holding an MPS share are not preempted (their GPU could be shared by
//! someone else's job meanwhile).
//!
//! Texts: the comment of a preempted job is the OpenPBS scheduler's log text for it (`Job
//! preempted by suspension`, `Job preempted by requeuing`); a resumed job's is the server's
//! `Job run at <day> at <HH:MM> on <exec_vnode>`; accounting `z` and `r` (suspend, resume),
//! `R` when a requeued run ends.
//!
//! Must not know: how victims are chosen (`sched`), sockets, the store's tables.

use super::outbox::{NoticeKind, Outbox};
use super::records::StoreOp;
use super::{Job, ServerState};
use job::{JobEvent, JobKey, JobState};
use proto::ServerToMom;
use sched::PreemptHow;

/// One group of `preempt_order`: its methods, for jobs with between `low` and `high` percent
/// of their walltime left (both included).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    letters: String,
    high: u32,
    low: u32,
}

/// The groups of a `preempt_order` value (`SCR 80 SC 50 S`: `SCR` from 100 % of walltime left
/// down to 81, `SC` from 80 to 51, `S` from 50 to 0), as OpenPBS reads it.
fn groups(order: &str) -> Vec<Group> {
    let mut groups = vec![Group { letters: String::new(), high: 100, low: 0 }];
    for word in order.split_whitespace() {
        match word.parse::<u32>() {
            Ok(percent) => {
                if let Some(last) = groups.last_mut() {
                    last.low = percent + 1;
                }
                groups.push(Group { letters: String::new(), high: percent, low: 0 });
            }
            Err(_) => {
                if let Some(last) = groups.last_mut() {
                    last.letters.push_str(word);
                }
            }
        }
    }
    groups
}

/// OpenPBS's percentage of walltime left: `100 - used / requested * 100`, truncated, 1 when
/// the job is past its walltime; `None` (the first group applies) without a walltime.
fn percent_left(requested: Option<u64>, used: u64) -> Option<u32> {
    let requested = requested.filter(|&seconds| seconds > 0)?;
    let left = 100.0 - (used as f64 / requested as f64) * 100.0;
    Some(if left < 0.0 { 1 } else { left as u32 })
}

/// Seconds of walltime `job` has used: its mom's last report, else the time since it started.
fn used_walltime(job: &Job, now: i64) -> u64 {
    match job.used.walltime_secs {
        0 => job.times.stime.map_or(0, |start| now.saturating_sub(start).max(0) as u64),
        reported => reported,
    }
}

/// How `job` may be preempted now, by `preempt_order` and its rerunnable flag; `None`: never.
///
/// Only a running job (not exiting, deleted or being rerun) without an MPS share may be. The
/// group is chosen by the percentage of its walltime left; in it, the first letter that
/// applies: `S` always, `R` when the job is rerunnable (`-r y`, the default) and not
/// interactive, `C` never (checkpointing is not supported).
pub fn preempt_how(state: &ServerState, job: &Job, now: i64) -> Option<PreemptHow> {
    let preemptable = job.state() == JobState::Running
        && !job.delete_requested
        && !job.rerun_requested
        && !job.shares_released
        && !job.exec.is_empty()
        && job.exec.iter().all(|share| share.mps.is_none());
    if !preemptable {
        return None;
    }
    let groups = groups(&state.attrs.sched.preempt_order);
    let group = match percent_left(job.request.walltime, used_walltime(job, now)) {
        None => groups.first(),
        Some(left) => groups.iter().find(|group| group.low <= left && left <= group.high),
    }?;
    group.letters.chars().find_map(|letter| match letter {
        'S' => Some(PreemptHow::Suspend),
        'R' if job.spec.rerunnable && job.spec.interactive.is_none() => Some(PreemptHow::Requeue),
        _ => None,
    })
}

/// Preempts the running job `key` for job `by`. Returns whether it was (a job that is no
/// longer running, or may no longer be preempted that way, is left alone).
pub fn preempt_job(
    state: &mut ServerState,
    out: &mut Outbox,
    key: JobKey,
    how: PreemptHow,
    by: JobKey,
    now: i64,
) -> bool {
    let Some(job) = state.job(key) else { return false };
    let allowed = match how {
        PreemptHow::Suspend => true,
        PreemptHow::Requeue => job.spec.rerunnable && job.spec.interactive.is_none(),
    };
    if !allowed || preempt_how(state, job, now).is_none() {
        return false;
    }
    let Some(mother) = job.exec.first().map(|share| share.node.clone()) else { return false };
    let (event, text) = match how {
        PreemptHow::Suspend => (JobEvent::Suspend, "Job preempted by suspension"),
        PreemptHow::Requeue => (JobEvent::Exit, "Job preempted by requeuing"),
    };
    if state.transition(key, event, now).is_err() {
        return false;
    }
    let Some(job) = state.release_nodes(key) else { return false };
    job.shares_released = true;
    job.sched_preempted = Some(now);
    job.comment = Some(text.to_string());
    let id = job.id.to_string();
    match how {
        PreemptHow::Suspend => {
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
            out.notice(NoticeKind::Suspended, job, now);
            // As `qsig -s suspend`: the mom stops the session and the walltime clock.
            out.send(&mother, ServerToMom::SignalJob { job_id: id.clone(), signal: libc::SIGSTOP, suspend: true });
        }
        PreemptHow::Requeue => {
            // As qrerun: the end report of the killed run queues it again (the `R` record).
            job.rerun_requested = true;
            out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
            out.send(&mother, ServerToMom::RerunJob { job_id: id.clone() });
        }
    }
    tracing::info!(job_id = %id, preemptor = %by, "{text}");
    true
}

/// Resumes the job `key` that preemption suspended, on the resources it holds. Returns whether
/// it was (not when another job holds any of them now: nothing is taken then).
pub fn resume_job(state: &mut ServerState, out: &mut Outbox, key: JobKey, now: i64) -> bool {
    let Some(job) = state.job(key).filter(|job| job.state() == JobState::Suspended && job.shares_released) else {
        return false;
    };
    let (shares, owner, exclusive) = (job.exec.clone(), job.owner.clone(), job.request.exclusive);
    for (index, share) in shares.iter().enumerate() {
        let taken = state.node_mut(&share.node).is_some_and(|node| node.assign(key, share, &owner, exclusive));
        if !taken {
            for earlier in &shares[..index] {
                if let Some(node) = state.node_mut(&earlier.node) {
                    node.release(key, earlier);
                }
            }
            return false;
        }
    }
    let Ok(job) = state.transition(key, JobEvent::Resume, now) else {
        // Not reached: the state was checked above. Give the shares back as they were.
        for share in &shares {
            if let Some(node) = state.node_mut(&share.node) {
                node.release(key, share);
            }
        }
        return false;
    };
    job.shares_released = false;
    job.comment = Some(run_comment(job, now));
    let id = job.id.to_string();
    out.persist(StoreOp::UpdateJob(Box::new(job.clone())));
    out.notice(NoticeKind::Resumed, job, now);
    out.send(&shares[0].node, ServerToMom::SignalJob { job_id: id.clone(), signal: libc::SIGCONT, suspend: true });
    tracing::info!(job_id = %id, "Job resumed by the scheduler");
    true
}

/// The jobs the scheduler suspended, earliest preempted first (the order it resumes them in):
/// for the scheduler's `ClusterView::suspended`. Reads the state's index of suspended jobs:
/// each pass calls this, and a walk of every job (history included) cost a pass O(jobs).
pub fn suspended_by_scheduler(state: &ServerState) -> Vec<&Job> {
    let mut jobs: Vec<&Job> = state.suspended_jobs().filter(|job| job.shares_released).collect();
    jobs.sort_by_key(|job| (job.sched_preempted, job.id.key()));
    jobs
}

/// OpenPBS's `Job run at Thu Nov 26 at 01:02 on (node1:ncpus=2)` (server local time).
fn run_comment(job: &Job, now: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let tm = pbslog::time::Tm::local(now);
    let month = MONTHS.get((tm.month as usize).wrapping_sub(1)).unwrap_or(&"???");
    let day = DAYS.get(tm.weekday() as usize).unwrap_or(&"???");
    let mut text = format!("Job run at {day} {month} {:02} at {:02}:{:02}", tm.day, tm.hour, tm.minute);
    if let Some(vnode) = job.exec_vnode() {
        text.push_str(" on ");
        text.push_str(&vnode);
    }
    text
}
