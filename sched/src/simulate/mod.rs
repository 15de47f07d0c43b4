//! The trace simulator behind `minipbs simulate`: replays a Standard Workload Format trace
//! through [`crate::schedule`] on a virtual clock and measures waits and utilization.
//!
//! Owns: the semantics of a replay (which SWF fields mean what, which jobs are skipped, what
//! the machine is, the metrics). `swf` reads the text, `engine` runs the virtual clock.
//! Must not know: files, the real clock, output formats (the client prints the [`Report`]).
//!
//! Semantics (issue 16, item 6): processors are field 8, else field 5; run time field 4;
//! requested time field 9, else the run time; a job runs its recorded time cut at its
//! requested time. Jobs with no processors, more than the machine, no run time (-1 or 0) or
//! no submit time are skipped and counted. Recorded waits are ignored; time zero is the first
//! submission of a simulated job; at one instant ends are processed before starts; waits are
//! start minus submission; makespan is the last end minus time zero; utilization is the sum of
//! processors x run time over machine processors x makespan; bounded slowdown uses tau = 10 s.

mod engine;
mod swf;

use thiserror::Error;

use engine::{EngineError, SimJob};
pub use swf::{SwfError, MAX_LINE, MAX_PROCS, MAX_RECORDS, MAX_TIME};

/// Most simulated nodes.
pub const MAX_NODES: u64 = 1_000_000;
/// Most cpu slots per simulated node.
pub const MAX_PPN: u64 = 100_000;
/// Most cpu slots in the whole simulated machine (each is a free-slot entry in memory).
pub const MAX_SLOTS: u64 = 10_000_000;
/// The bounded-slowdown threshold, in seconds.
pub const TAU: i64 = 10;

/// The scheduling policy of a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Strict first come, first served: the oldest waiting job blocks every later one.
    Fifo,
    /// Backfill with one reservation (the oldest waiting job).
    Easy,
    /// Backfill with a reservation for every waiting job.
    Conservative,
}

/// What to replay on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Nodes of the machine; `None`: the header's `MaxProcs` (else `MaxNodes`) nodes of one
    /// slot each (then `ppn` is ignored).
    pub nodes: Option<u64>,
    /// Cpu slots per node (with `nodes`).
    pub ppn: u64,
    pub policy: Policy,
    /// Only the first N job records of the trace (skipped ones count among them).
    pub first: Option<usize>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions { nodes: None, ppn: 1, policy: Policy::Easy, first: None }
    }
}

/// When one simulated job ran (seconds since time zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobStart {
    /// The SWF job number (field 1).
    pub id: i64,
    pub submit: i64,
    pub start: i64,
    pub end: i64,
    pub procs: u32,
}

/// The outcome of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Jobs simulated.
    pub jobs: usize,
    /// Records skipped (no processors, more than the machine, no run time, no submit time).
    pub skipped: usize,
    pub utilization: f64,
    pub mean_wait_s: f64,
    pub mean_bounded_slowdown: f64,
    pub max_wait_s: i64,
    pub makespan_s: i64,
    /// The machine replayed on.
    pub nodes: u64,
    pub ppn: u64,
    /// Every simulated job in the order it started (ties: the order the scheduler placed them).
    pub starts: Vec<JobStart>,
}

/// Why a replay cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimError {
    #[error(transparent)]
    Swf(#[from] SwfError),
    #[error("the trace's header gives no MaxProcs or MaxNodes: give --nodes")]
    NoMachine,
    #[error("the machine must have 1 to {MAX_NODES} nodes of 1 to {MAX_PPN} slots, {MAX_SLOTS} slots in all")]
    MachineSize,
    #[error("the scheduler placed job {0} on slots that are not free (a bug)")]
    Conflict(i64),
    #[error("job {0} never started on an idle machine (a bug)")]
    Stalled(i64),
}

/// Replays `text` (an SWF trace) as `options` say.
pub fn simulate(text: &str, options: &SimOptions) -> Result<Report, SimError> {
    let trace = swf::parse(text, options.first)?;
    let (nodes, ppn) = match options.nodes {
        Some(nodes) => (nodes, options.ppn),
        None => (trace.max_procs.or(trace.max_nodes).ok_or(SimError::NoMachine)?, 1),
    };
    let slots = nodes.checked_mul(ppn).ok_or(SimError::MachineSize)?;
    if !(1..=MAX_NODES).contains(&nodes) || !(1..=MAX_PPN).contains(&ppn) || slots > MAX_SLOTS {
        return Err(SimError::MachineSize);
    }
    let (jobs, skipped) = select(&trace.records, slots);
    let started = engine::run(&jobs, nodes as u32, ppn as u32, options.policy).map_err(|error| match error {
        EngineError::Conflict(index) => SimError::Conflict(jobs[index].id),
        EngineError::Stalled(index) => SimError::Stalled(jobs[index].id),
    })?;
    let starts: Vec<JobStart> = started
        .iter()
        .map(|&(index, start)| {
            let job = &jobs[index];
            JobStart { id: job.id, submit: job.submit, start, end: start + job.run, procs: job.procs }
        })
        .collect();
    Ok(metrics(starts, skipped, nodes, ppn))
}

/// The simulatable jobs (sorted by submission, file order among equals; times shifted so the
/// first submission is zero, run times cut at the requested time) and how many were skipped.
fn select(records: &[swf::Record], slots: u64) -> (Vec<SimJob>, usize) {
    let usable = |record: &&swf::Record| {
        record.procs > 0 && record.procs as u64 <= slots && record.run > 0 && record.submit >= 0
    };
    let mut kept: Vec<&swf::Record> = records.iter().filter(usable).collect();
    let skipped = records.len() - kept.len();
    kept.sort_by_key(|record| record.submit);
    let zero = kept.first().map_or(0, |record| record.submit);
    let jobs = kept
        .iter()
        .map(|record| {
            let requested = if record.requested > 0 { record.requested } else { record.run };
            SimJob {
                id: record.id,
                submit: record.submit - zero,
                run: record.run.min(requested),
                requested,
                // `procs <= slots <= MAX_SLOTS`, which fits in u32.
                procs: record.procs as u32,
            }
        })
        .collect();
    (jobs, skipped)
}

/// The metrics over the simulated jobs.
fn metrics(starts: Vec<JobStart>, skipped: usize, nodes: u64, ppn: u64) -> Report {
    let jobs = starts.len();
    let makespan = starts.iter().map(|job| job.end).max().unwrap_or(0);
    let waits = starts.iter().map(|job| job.start - job.submit);
    let max_wait = waits.clone().max().unwrap_or(0);
    let total_wait: f64 = waits.map(|wait| wait as f64).sum();
    let slowdown: f64 = starts
        .iter()
        .map(|job| {
            let (wait, run) = ((job.start - job.submit) as f64, (job.end - job.start) as f64);
            ((wait + run) / run.max(TAU as f64)).max(1.0)
        })
        .sum();
    let area: f64 = starts.iter().map(|job| f64::from(job.procs) * (job.end - job.start) as f64).sum();
    let capacity = (nodes * ppn) as f64 * makespan as f64;
    let mean = |sum: f64| if jobs == 0 { 0.0 } else { sum / jobs as f64 };
    Report {
        jobs,
        skipped,
        utilization: if capacity > 0.0 { area / capacity } else { 0.0 },
        mean_wait_s: mean(total_wait),
        mean_bounded_slowdown: mean(slowdown),
        max_wait_s: max_wait,
        makespan_s: makespan,
        nodes,
        ppn,
        starts,
    }
}

#[cfg(test)]
mod tests;
