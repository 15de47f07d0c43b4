//! What the state hands the store to persist: the durable changes ([`StoreOp`]) and the
//! records they carry (nodes, queues, site resource definitions, accounting lines). They are
//! the state's words, defined here so that `state/` never imports the store; `store/` turns
//! them into rows (and re-exports them under `crate::store`).
//!
//! Must not know: diesel, SQL, rows.

use super::Job;

/// One durable change. A batch of these is applied in order, in one transaction.
#[derive(Debug, Clone)]
pub enum StoreOp {
    /// Stores a new job (its seq must not be stored yet).
    InsertJob(Box<Job>),
    /// Rewrites every column of a stored job except its spec, which only qalter changes
    /// (`UpdateJobSpec`). Refused (`StoreError::NoSuchJob`) if the job is not stored.
    UpdateJob(Box<Job>),
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
