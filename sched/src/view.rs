//! The scheduler's input and output: a snapshot of nodes and queued jobs (`ClusterView`) and
//! the decisions taken from it (`Decision`, `Assignment`).
//!
//! Owns: the plain data types the server fills in and reads back.
//! Must not know: how the server stores nodes or jobs, protocol messages, the clock, or how a
//! decision is carried out. Nothing here is `Serialize`: the server maps these by hand.

use job::ResourceRequest;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Start the job `key` now, on these nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// The [`PendingJob::key`] of the job to start.
    pub key: u64,
    /// One entry per node, in the order the nodes were first used; the first is the mother
    /// superior. Invariant: no node appears twice.
    pub assignments: Vec<Assignment>,
}
