//! What the state hands the store to persist: the durable changes ([`StoreOp`]) and the
//! records they carry (nodes, queues, site resource definitions, accounting lines). They are
//! the state's words, defined here so that `state/` never imports the store; `store/` turns
//! them into rows (and re-exports them under `crate::store`).
//!
//! Must not know: diesel, SQL, rows.

use super::{EligibleClock, Job, JobTimes, NodeShare};
use compact_str::CompactString;
use job::{JobKey, JobState};
use proto::mom::ResourcesUsed;

/// One durable change. A batch of these is applied in order, in one transaction.
#[derive(Debug, Clone)]
pub enum StoreOp {
    /// Stores a new job (its seq must not be stored yet).
    InsertJob(Box<Job>),
    /// Rewrites every column of a stored job except its spec, which only qalter changes
    /// (`UpdateJobSpec`). Refused (`StoreError::NoSuchJob`) if the job is not stored.
    UpdateJob(Box<Job>),
    /// Rewrites the columns a job's holds, runs and ends change ([`JobProgress`]), leaving
    /// the rest of its row as it is. Refused (`StoreError::NoSuchJob`) if the job is not
    /// stored.
    UpdateProgress(Box<JobProgress>),
    /// Removes the job with this key (`JobId::key`; purged from history); a missing job is not
    /// an error.
    DeleteJob(job::JobKey),
    /// Records the next sequence number to hand out, so ids are not reused after restart
    /// even when the newest jobs were deleted.
    SetNextSeq(u64),
    /// Records the nodes registered so far (replacing the previous list), so a restarted
    /// server knows its nodes, down until their moms register again.
    SetNodes(Vec<StoredNode>),
    /// Rewrites every column of a stored job including its spec (qalter changed the spec).
    /// Refused (`StoreError::NoSuchJob`) if the job is not stored.
    UpdateJobSpec(Box<Job>),
    /// Replaces the stored attributes of a queue (creating it).
    PutQueue(StoredQueue),
    /// Forgets a queue; a missing queue is not an error.
    DeleteQueue(String),
    /// Stores accounting records (committed with the change they record, written to the
    /// accounting files later by `accounting_writer.rs`).
    AddAccounting(Vec<AccountingRecord>),
    /// Forgets the accounting records with ids up to this one (they are in the files).
    ForgetAccounting(u64),
    /// Replaces the stored server attributes, and marks the configuration as stored (a
    /// server with a stored configuration no longer creates its default queue at start).
    SetServerAttrs(Vec<(String, String)>),
    /// Stores a site resource definition, replacing one of the same name.
    PutResourceDef(StoredResourceDef),
    /// Forgets a site resource definition and every node's value for it.
    DeleteResourceDef(String),
    /// Replaces a node's site resource values (`resources_available.NAME`, shown form).
    SetNodeResources { node: String, values: Vec<(String, String)> },
    /// Stores a fair-share usage record, replacing the one of the same kind and name.
    PutUsage(StoredUsage),
    /// Forgets a fair-share usage record; a missing one is not an error.
    DeleteUsage { kind: UsageKind, name: String },
}

/// The part of a job's row that holds, releases, runs, start reports and ends change: its
/// state and everything but who owns it (owner, uid, group), where it is queued (queue, ctime)
/// and where its output goes (paths), the script's size and the spec, which only a submission,
/// qalter and qmove change (`UpdateJob`, `UpdateJobSpec`). A copy of these fields instead of a
/// whole `Job` for the common transitions: a qrls of 100,000 jobs queues 100,000 of them for
/// one commit (bench/scale: 44 MB as whole jobs, with their paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobProgress {
    pub key: JobKey,
    pub state: JobState,
    pub hold_types: CompactString,
    /// Every time but `ctime`, which is not written.
    pub times: JobTimes,
    pub exec: Vec<NodeShare>,
    pub session_id: Option<i32>,
    pub exit_status: Option<i32>,
    pub used: ResourcesUsed,
    pub run_count: u32,
    pub comment: Option<String>,
    pub delete_requested: bool,
    pub rerun_requested: bool,
    pub eligible: EligibleClock,
    pub sched_preempted: Option<i64>,
    pub shares_released: bool,
}

impl JobProgress {
    /// The progress columns of `job` as it is now.
    pub fn of(job: &Job) -> JobProgress {
        JobProgress {
            key: job.id.key(),
            state: job.state(),
            hold_types: job.hold_types.clone(),
            times: job.times.clone(),
            exec: job.exec.clone(),
            session_id: job.session_id,
            exit_status: job.exit_status,
            used: job.used,
            run_count: job.run_count,
            comment: job.comment.clone(),
            delete_requested: job.delete_requested,
            rerun_requested: job.rerun_requested,
            eligible: job.eligible,
            sched_preempted: job.sched_preempted,
            shares_released: job.shares_released,
        }
    }

    /// The op that stores `job`'s progress columns.
    pub fn op(job: &Job) -> StoreOp {
        StoreOp::UpdateProgress(Box::new(JobProgress::of(job)))
    }
}

/// Whose usage a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKind {
    User,
    Group,
}

/// A fair-share usage record (`state/fairshare.rs`): decayed usage as of `stamp`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredUsage {
    pub kind: UsageKind,
    pub name: String,
    /// Weighted resource-hours.
    pub usage: f64,
    pub stamp: i64,
    /// A user's group of its last charged job; empty for a group.
    pub group: String,
}

/// A site resource definition in qmgr's words (`gpu_type`, `string`, `h`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResourceDef {
    pub name: String,
    pub kind: String,
    pub flags: String,
}

/// A queue's set attributes in qmgr's text form (`Queue::pairs`), mapped by hand to rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredQueue {
    pub name: String,
    pub attrs: Vec<(String, String)>,
}

/// The configuration set with qmgr, as stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredConfig {
    /// Queues in name order.
    pub queues: Vec<StoredQueue>,
    /// Server attributes in name order.
    pub server_attrs: Vec<(String, String)>,
}

/// A node as last registered: what the server must know of it before its mom is back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredNode {
    pub name: String,
    pub np: u32,
    pub mem_bytes: u64,
    pub ngpus: u32,
    pub properties: Vec<String>,
    /// Taken out of service by an operator (`pbsnodes -o`, `qmgr set node state=offline`).
    pub offline: bool,
    /// The operator's comment (`pbsnodes -C`/`-N`), kept across restarts.
    pub comment: Option<String>,
}

/// One accounting record line, with the time that picks its day's file. Ids grow in commit
/// order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountingRecord {
    pub id: u64,
    pub time: i64,
    pub line: String,
}
