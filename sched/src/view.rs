//! The scheduler's input and output: a snapshot of nodes and queued jobs (`ClusterView`) and
//! the decisions taken from it (`Decision`, `Assignment`).
//!
//! Owns: the plain data types the server fills in and reads back.
//! Must not know: how the server stores nodes or jobs, protocol messages, the clock (`now` is
//! an argument: the server's clock or the simulator's), or how a decision is carried out.
//! Nothing here is `Serialize`: the server maps these by hand.

use job::ResourceRequest;

use crate::formula::Formula;

/// One node as the scheduler sees it at the start of a pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeView {
    /// The node's name (what `host=` and a property equal to a node name match).
    pub name: String,
    /// Node properties (TORQUE `properties`, OpenPBS boolean resources set to true).
    pub properties: Vec<String>,
    /// The node can take new work (up, not offline).
    pub available: bool,
    /// Number of cpu slots.
    pub np: u32,
    /// Indices (0..np) of free cpu slots, ascending.
    pub free_slots: Vec<u32>,
    /// Memory of the node in bytes.
    pub mem_total: u64,
    /// Memory not yet given to running jobs, in bytes.
    pub mem_free: u64,
    /// Number of GPUs.
    pub ngpus: u32,
    /// Indices of free GPUs, ascending: held by nobody and reported free by the mom.
    pub free_gpus: Vec<u32>,
    /// GPUs shared through MPS (in none of `free_gpus`), by index.
    pub mps_gpus: Vec<MpsGpu>,
    /// Some job already runs here (an exclusive request cannot use the node).
    pub busy: bool,
    /// An exclusive job holds this node (nothing else may use it).
    pub exclusive: bool,
    /// Host-level consumable site resources (flag `n`/`f`) the node has, by name.
    pub amounts: Vec<SiteAmount>,
}

/// One host-level consumable site resource of a node, in the unit the scheduler counts
/// (bytes for sizes, thousandths for floats; see `job::resources::site::ResourceDef::amount`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteAmount {
    pub name: String,
    /// `resources_available.NAME`.
    pub available: u64,
    /// What running jobs hold here (`resources_assigned.NAME`); may exceed `available` when
    /// an operator lowered it, and then nothing more fits.
    pub assigned: u64,
}

/// A GPU shared through MPS by the jobs of one user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MpsGpu {
    pub index: u32,
    /// The user whose jobs share it; only their MPS jobs may join.
    pub user: String,
    /// Percent already given out (at most 100).
    pub used: u32,
    /// The mom still reports it usable (not busy with a foreign process, not down).
    pub usable: bool,
}

/// A queued job waiting for resources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PendingJob<'a> {
    /// Caller's key (the job sequence number), echoed in [`Decision::key`].
    pub key: u64,
    /// Priority of the job's queue; higher goes first.
    pub queue_priority: i32,
    /// Job priority (`qsub -p`); higher goes first within a queue priority.
    pub priority: i32,
    /// Submission order (lower = earlier); the final tie-break.
    pub order: u64,
    /// What the job asks for.
    pub request: &'a ResourceRequest,
    /// Indices into [`ClusterView::limits`] of the counters this job uses up when it starts
    /// (e.g. its queue's `max_run` and its owner's share of it). Empty = no limits.
    pub limits: &'a [usize],
    /// The job's owner: an MPS share joins only a GPU shared by the same user.
    pub user: &'a str,
    /// Server-level consumable amounts the job holds while it runs, as `(index into
    /// [`ClusterView::pools`], amount)`. Empty = none.
    pub takes: &'a [(usize, u64)],
    /// Seconds the job is expected to run: its walltime, or the default the server applies
    /// (queue `resources_default.walltime`, else the server's). Plans and backfill use it.
    pub walltime: u64,
    /// Seconds the job has been eligible to run (OpenPBS `eligible_time`).
    pub eligible_time: i64,
    /// The fair-share standing of the job's owner (see `fairshare`).
    pub fairshare: FairShare,
    /// Index into [`ClusterView::queue_depths`] of the job's queue (`usize::MAX`: none).
    pub queue: usize,
    /// The job may preempt lower jobs (its queue's priority is at least
    /// `preempt_queue_prio`). False for every job when preemption is off.
    pub preemptor: bool,
}

/// A job's owner in the fair-share tree, as the `job_sort_formula` keywords see it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FairShare {
    /// `fairshare_perc`: the entity's fraction (0..=1) of the whole tree's shares.
    pub perc: f64,
    /// `fairshare_tree_usage`: the entity's decayed usage as a fraction (0..=1) of the tree's.
    pub usage: f64,
    /// `fairshare_factor`: 2^(-usage/perc) in 0..=1; higher goes first (the default order).
    pub factor: f64,
}

/// How a running job may be preempted (the server reads `preempt_order` and the job's
/// rerunnable flag; checkpointing is not supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreemptHow {
    /// Suspend it (its cpus and GPUs go to the preemptor; it resumes on the same ones).
    Suspend,
    /// Requeue it (it starts again from the beginning later).
    Requeue,
}

/// A running (or preempted and suspended) job: what it holds and until when.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunningJob {
    /// The caller's key of the job.
    pub key: u64,
    /// When it started (seconds, same clock as [`ClusterView::now`]).
    pub start: i64,
    /// When it is expected to end: start plus walltime (or the default). A job past it is
    /// ended by its mom, so plans treat an `end` not after `now` as ending at `now + 1`.
    pub end: i64,
    /// What it holds, per node (indices into [`ClusterView::nodes`]); the `slots` and
    /// `gpus` are the real indices. A suspended job's are what it will need to resume.
    pub assignments: Vec<Assignment>,
    /// It holds its nodes exclusively.
    pub exclusive: bool,
    /// Its queue's priority (only jobs of lower queues are preempted).
    pub queue_priority: i32,
    /// How it may be preempted; `None`: never.
    pub preempt: Option<PreemptHow>,
}

impl RunningJob {
    /// The time plans assume this job's resources come back.
    pub fn expected_end(&self, now: i64) -> i64 {
        self.end.max(now.saturating_add(1))
    }
}

/// Everything one scheduling pass looks at. The scheduler never mutates it.
#[derive(Debug, Clone, Default)]
pub struct ClusterView<'a> {
    /// All nodes, in the order first fit tries them. [`Assignment::node`] indexes this.
    pub nodes: Vec<NodeView>,
    /// Queued jobs, in any order (the scheduler sorts them).
    pub jobs: Vec<PendingJob<'a>>,
    /// Remaining capacities of run limits (how many more jobs each may start in this pass).
    /// A job starts only if every counter it names is above 0, and takes 1 from each; a job
    /// held back by a counter is skipped without affecting other jobs of its request class.
    /// An index past the end holds the job back.
    pub limits: Vec<u32>,
    /// What is left of server-level consumable resources (flag `q`, e.g. licences:
    /// `resources_available` minus what running jobs hold). A job starts only if every pool it
    /// takes from holds its amount, and then takes it; an index past the end holds the job back.
    pub pools: Vec<u64>,
    /// The current time, in seconds (the server's clock, or the simulator's).
    pub now: i64,
    /// Jobs running now (their resources are already out of the node views).
    pub running: Vec<RunningJob>,
    /// Jobs suspended by preemption: resumed (before anything starts) when every resource
    /// they hold in `assignments` is free again. Their resources are not held in the views.
    pub suspended: Vec<RunningJob>,
    /// How many of the highest-priority jobs that cannot start now get a reservation (the
    /// server's `backfill_depth`; 0: none, the greedy policy of old). Lower jobs start now
    /// only if they delay no reservation.
    pub backfill_depth: u32,
    /// Per queue (by [`PendingJob::queue`]), the queue's own `backfill_depth` when set:
    /// its jobs get that many reservations of their own instead of sharing the server's.
    pub queue_depths: Vec<Option<u32>>,
    /// `job_sort_formula`: when set, jobs are ordered by its value (highest first) instead of
    /// the default order.
    pub formula: Option<&'a Formula>,
    /// Strict order (the simulator's `fifo`): the first job in priority order that cannot
    /// start stops the pass; nothing later starts.
    pub strict: bool,
    /// At most this many starts in one pass (`None`: no bound). Once it has decided this many,
    /// the pass considers no further job: the rest get no wait reason and are left to the next
    /// pass. (The server bounds one pass's commit, mom messages and lock hold this way.)
    pub max_starts: Option<usize>,
}

/// One node's share of a decision: the units of the job that landed on this node, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Assignment {
    /// Index into [`ClusterView::nodes`].
    pub node: usize,
    /// Cpu slot indices given to the job, in allocation order (lowest free first).
    pub slots: Vec<u32>,
    /// GPU indices given to the job, in allocation order (lowest free first).
    pub gpus: Vec<u32>,
    /// Bytes of memory given to the job on this node (0 when no unit asked for memory).
    pub mem: u64,
    /// `PBS_NODEFILE` lines for this node: the sum of the units' `mpiprocs`.
    pub mpiprocs: u32,
    /// An MPS share (percent) of the single GPU in `gpus`; `None` for exclusive GPUs.
    pub mps: Option<u8>,
    /// Consumable site resources given to the job on this node, by name (units' sums).
    pub amounts: Vec<(String, u64)>,
}

/// What one pass decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Jobs to start now, in the order they were placed.
    pub starts: Vec<Decision>,
    /// Suspended jobs (keys of [`ClusterView::suspended`]) to resume now, on what they hold.
    pub resumes: Vec<u64>,
    /// Running jobs to preempt now so that the start named in each can happen.
    pub preempted: Vec<Preemption>,
    /// Every queued job that does not start: why, and when it is expected to (for the jobs
    /// that hold a reservation).
    pub waits: Vec<Wait>,
}

/// Preempt the running job `key` (how: its [`RunningJob::preempt`]) for job `by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preemption {
    pub key: u64,
    pub how: PreemptHow,
    pub by: u64,
}

/// A queued job that does not start in this pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Wait {
    pub key: u64,
    pub reason: WaitReason,
    /// Its reservation: when and where it is planned to start (`estimated.start_time`,
    /// `estimated.exec_vnode`). `None` for jobs without one.
    pub estimate: Option<Estimate>,
}

/// Why a job does not start now (the server words each as OpenPBS's scheduler does:
/// `Not Running: Insufficient amount of resource: ngpus`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitReason {
    /// Not enough of this resource is free now: `ncpus`, `ngpus`, `mem`, or a site
    /// resource's name (also `nodes` when no node that matches is available).
    /// (A `Cow`: the usual names are static, so 100,000 waiting jobs cost no allocation each.)
    Resource(std::borrow::Cow<'static, str>),
    /// It fits now but would delay a reservation: `Job would conflict with reservation or
    /// top job`.
    Backfill,
    /// An earlier job in strict order cannot start: `Job would break strict sorted order`.
    StrictOrder,
    /// The run-limit counter at this index of [`ClusterView::limits`] is exhausted.
    Limit(usize),
    /// The server-level pool at this index of [`ClusterView::pools`] holds too little.
    Pool(usize),
    /// It asks for nothing that can be placed (no chunks) or more than the nodes have.
    Never,
}

/// A planned start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Estimate {
    /// When (same clock as [`ClusterView::now`]).
    pub start: i64,
    /// Where: per node, what the job would get (only the counts of `slots` and `gpus` mean
    /// anything: which cpus are free then is not known now).
    pub hosts: Vec<EstimatedHost>,
}

/// One node of an [`Estimate`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EstimatedHost {
    /// Index into [`ClusterView::nodes`].
    pub node: usize,
    pub ncpus: u32,
    pub ngpus: u32,
    pub mem: u64,
}

/// Start the job `key` now, on these nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// The [`PendingJob::key`] of the job to start.
    pub key: u64,
    /// One entry per node, in the order the nodes were first used; the first is the mother
    /// superior. Invariant: no node appears twice.
    pub assignments: Vec<Assignment>,
}
