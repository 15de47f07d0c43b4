//! The web view's data: a pure function from the state (and `now`) to [`View`], the JSON
//! snapshot the page renders. It holds what any user may see in `qstat` and `pbsnodes`: ids,
//! names, owners, queues, states, the scheduler's wait reasons and planned starts, node slots
//! and GPU holders; never an environment, a script, a command line or an output path.
//!
//! Bounded whatever the queue holds: at most [`MAX_WAITING`] waiting jobs are listed (the
//! rest only counted) and [`MAX_FINISHED`] finished ones, so a snapshot of a 10,000-job queue
//! costs one ordering pass and a few hundred rows (bench/web). Running jobs are bounded by the
//! nodes' slots, nodes by the cluster.
//!
//! Times are absolute (`start`, `walltime`, `now` in the frame, not here): the page ticks the
//! elapsed and remaining time itself, so a snapshot changes only when the state does and the
//! page is pushed nothing while nothing happens (`events.rs` compares snapshots).
//!
//! Order of the waiting jobs: queued jobs in the scheduler's priority order
//! (`sched::priority_order`, from the same `PendingJob`s a pass builds: `sched_loop.rs`), then
//! held and waiting (`-a`) jobs, which the scheduler never considers, in submission order.

use crate::config::Flavor;
use crate::flavor::state_letter;
use crate::state::{Job, Node, ServerState};
use job::id::ArrayPart;
use job::JobState;
use serde::Serialize;

/// Waiting jobs listed at most; the others are counted in [`View::waiting_more`].
pub const MAX_WAITING: usize = 500;
/// Finished jobs listed at most (the most recent).
pub const MAX_FINISHED: usize = 20;

/// One snapshot of the cluster, as the page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct View {
    pub server: String,
    pub nodes: Vec<NodeRow>,
    pub running: Vec<RunningRow>,
    /// Queued jobs in priority order, then held and waiting ones; at most [`MAX_WAITING`].
    pub waiting: Vec<WaitingRow>,
    /// Waiting jobs not listed.
    pub waiting_more: usize,
    /// The most recently finished jobs, newest first.
    pub finished: Vec<FinishedRow>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeRow {
    pub name: String,
    /// pbsnodes' state (`free`, `job-busy`, `down,offline`, ...).
    pub state: String,
    pub slots_used: u32,
    pub slots: u32,
    pub gpus: Vec<GpuCell>,
}

/// One GPU: its use as the mom reported it, and who holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuCell {
    pub index: u32,
    /// pbsnodes' `gpu_use` word (`free`, `job`, `shared`, `busy-foreign`, `draining`, `down`)
    /// or `unknown` before its mom reported.
    #[serde(rename = "use")]
    pub use_word: &'static str,
    /// The jobs holding it (one exclusive holder, or the MPS shares) and their user.
    pub jobs: Vec<String>,
    pub user: Option<String>,
    /// MPS: the percent given out.
    pub mps_percent: Option<u32>,
    /// The mom's reason (a foreign process, a drain, a fault), when it gave one.
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunningRow {
    pub id: String,
    pub name: String,
    pub owner: String,
    pub queue: String,
    pub state: char,
    /// `exec_host`.
    pub hosts: String,
    /// Started (epoch seconds).
    pub start: Option<i64>,
    /// `Resource_List.walltime`, seconds.
    pub walltime: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitingRow {
    pub id: String,
    pub name: String,
    pub owner: String,
    pub queue: String,
    pub state: char,
    pub ncpus: u32,
    pub priority: i32,
    /// The scheduler's reason (the `comment` qstat shows), or why it is not considered.
    pub reason: Option<String>,
    /// `estimated.start_time`, when the scheduler planned one.
    pub estimated_start: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FinishedRow {
    pub id: String,
    pub name: String,
    pub owner: String,
    pub state: char,
    pub exit_status: Option<i32>,
    pub ended: Option<i64>,
}

/// The snapshot of `state` at `now`.
pub fn view(state: &ServerState, now: i64) -> View {
    let flavor = state.flavor;
    let mut running = Vec::new();
    let mut not_considered = Vec::new();
    let mut finished: Vec<&Job> = Vec::new();
    for job in state.jobs().values().map(|job| &**job) {
        match job.state() {
            // An array's parent stands for its subjobs, which are listed themselves.
            _ if job.id.array == Some(ArrayPart::Parent) => {}
            state if state.is_active() => running.push(running_row(job, flavor)),
            JobState::Held | JobState::Waiting => not_considered.push(job),
            state if state.is_finished() => finished.push(job),
            _ => {}
        }
    }
    let (waiting, waiting_more) = waiting_rows(state, &not_considered, now);
    finished.sort_unstable_by_key(|job| std::cmp::Reverse((job.times.obittime, job.id.key())));
    View {
        server: state.server_name.clone(),
        nodes: state.nodes().values().map(|node| node_row(state, node)).collect(),
        running,
        waiting,
        waiting_more,
        finished: finished.into_iter().take(MAX_FINISHED).map(|job| finished_row(job, flavor)).collect(),
    }
}

/// The first [`MAX_WAITING`] waiting jobs (queued in priority order, then `others`) and how
/// many more there are.
fn waiting_rows(state: &ServerState, others: &[&Job], now: i64) -> (Vec<WaitingRow>, usize) {
    let queued: Vec<&Job> = state.queued_jobs().filter(|job| job.id.array != Some(ArrayPart::Parent)).collect();
    let facts = crate::sched_view::PassFacts::new(state);
    let view = sched::ClusterView {
        jobs: queued.iter().map(|job| crate::sched_loop::pending_job(state, &facts, job, &[], &[], now)).collect(),
        formula: state.attrs.sched.job_sort_formula.as_ref(),
        now,
        ..sched::ClusterView::default()
    };
    let ordered = sched::priority_order(&view).into_iter().map(|index| queued[index]);
    let total = queued.len() + others.len();
    let rows = ordered.chain(others.iter().copied()).take(MAX_WAITING).map(|job| waiting_row(state, job)).collect();
    (rows, total.saturating_sub(MAX_WAITING))
}

fn waiting_row(state: &ServerState, job: &Job) -> WaitingRow {
    let note = state.sched_note(job.id.key());
    let reason = match (note, job.state()) {
        (Some(note), _) => Some(crate::sched_text::wait_comment(&note.why)),
        (None, JobState::Held) => Some(format!("Held ({})", job.hold_types)),
        (None, JobState::Waiting) => Some("Waiting for its execution time or dependencies".to_string()),
        (None, _) => job.comment.clone(),
    };
    WaitingRow {
        id: job.id.to_string(),
        name: job.spec.name.clone(),
        owner: job.owner.to_string(),
        queue: job.queue.to_string(),
        state: state_letter(state.flavor, job.state()),
        ncpus: job.request.total_ncpus(),
        priority: job.spec.priority,
        reason,
        estimated_start: note.and_then(|note| note.estimate.as_ref()).map(|estimate| estimate.start),
    }
}

fn running_row(job: &Job, flavor: Flavor) -> RunningRow {
    RunningRow {
        id: job.id.to_string(),
        name: job.spec.name.clone(),
        owner: job.owner.to_string(),
        queue: job.queue.to_string(),
        state: state_letter(flavor, job.state()),
        hosts: job.exec_host().unwrap_or_default(),
        start: job.times.stime,
        walltime: job.request.walltime,
    }
}

fn finished_row(job: &Job, flavor: Flavor) -> FinishedRow {
    FinishedRow {
        id: job.id.to_string(),
        name: job.spec.name.clone(),
        owner: job.owner.to_string(),
        state: state_letter(flavor, job.state()),
        exit_status: job.exit_status,
        ended: job.times.obittime,
    }
}

fn node_row(state: &ServerState, node: &Node) -> NodeRow {
    let id_of = |key: job::JobKey| key.to_id(&state.server_name).to_string();
    let gpus = node
        .gpus
        .iter()
        .map(|gpu| {
            let owner = node.gpu_owner.get(gpu.info.index as usize).copied().flatten();
            let mut jobs: Vec<String> = owner.into_iter().map(id_of).collect();
            let mut user = owner.and_then(|key| state.job(key)).map(|job| job.owner.to_string());
            if let Some(hold) = &gpu.mps {
                jobs.extend(hold.shares.keys().map(|&key| id_of(key)));
                user = Some(hold.user.clone());
            }
            GpuCell {
                index: gpu.info.index,
                use_word: gpu.reported().map_or("unknown", |state| state.word()),
                jobs,
                user,
                mps_percent: gpu.mps.as_ref().map(|hold| hold.used()),
                reason: gpu.report.as_ref().map(|report| report.reason.clone()).filter(|reason| !reason.is_empty()),
            }
        })
        .collect();
    NodeRow {
        name: node.name.clone(),
        state: node.state_text(),
        slots_used: node.slot_owner.iter().filter(|owner| owner.is_some()).count() as u32,
        slots: node.np,
        gpus,
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
