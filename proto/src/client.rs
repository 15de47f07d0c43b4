//! Requests from the commands to the server and the server's replies. One request per command
//! family; the server handler file has the request's snake-case name (`DeleteJob` ->
//! `server/src/handlers/delete_job.rs`, sent by `client/src/qdel.rs`).

use crate::error::RequestError;
use crate::manage::{AttrOp, ManageOp, ObjectKind};
use crate::status::{JobStatus, NodeStatus, ObjectStatus};
use job::JobSpec;
use serde::{Deserialize, Serialize};

/// A command's request. The requester's identity comes from the transport, never from here.
/// Every list of names is read with [`crate::names::distinct`]: each name once, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientRequest {
    /// qsub. Replied to with `JobSubmitted` only after the job is committed to the store.
    SubmitJob(Box<JobSpec>),
    /// qstat. `selectors` are job ids (`12`, `12.head`) or queue names; empty = all jobs.
    StatusJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        selectors: Vec<String>,
        /// Include finished jobs (`-x`).
        history: bool,
        /// Only these owners' jobs (`-u`); empty = everyone's.
        #[serde(deserialize_with = "crate::names::distinct")]
        users: Vec<String>,
        /// Only these attributes (`job_state`, `Resource_List.walltime`, or a group such as
        /// `Resource_List`); `None` = all. The default display needs a handful, so a queue of
        /// 10,000 jobs stays cheap to list.
        #[serde(default, deserialize_with = "crate::names::distinct_option")]
        attrs: Option<Vec<String>>,
        /// `-t`: list arrays' subjobs after their parents.
        #[serde(default)]
        subjobs: bool,
        /// `-J`: only arrays.
        #[serde(default)]
        arrays_only: bool,
        /// Reply with [`ServerReply::Rows`] (each job's id and the values of `attrs`, in their
        /// order) rather than `Jobs`. A server of an older release ignores it and sends `Jobs`,
        /// as it does when `attrs` is `None` or names more than [`crate::status::MAX_COLUMNS`].
        #[serde(default)]
        rows: bool,
    },
    /// qdel.
    DeleteJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
        /// `-W force` (managers): a running job ends at once (Exit_status 265), without
        /// waiting for its mom, e.g. when the mom is gone for good.
        #[serde(default)]
        force: bool,
        /// `-x`: finished jobs are removed from history too.
        #[serde(default)]
        history: bool,
    },
    /// qhold: `hold_types` is `u`, `o`, `s` or a combination.
    HoldJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
        hold_types: String,
    },
    /// qrls.
    ReleaseJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
        hold_types: String,
    },
    /// pbsnodes; empty `names` = all nodes.
    StatusNode {
        #[serde(deserialize_with = "crate::names::distinct")]
        names: Vec<String>,
    },
    /// pbsnodes `-o`, `-r`/`-c`, `-C`/`-N` (managers): take nodes out of service or back,
    /// and set or clear (empty text) the operator's comment.
    ManageNode {
        #[serde(deserialize_with = "crate::names::distinct")]
        names: Vec<String>,
        /// `Some(true)` marks the nodes offline, `Some(false)` clears offline.
        #[serde(default)]
        offline: Option<bool>,
        #[serde(default)]
        comment: Option<String>,
    },
    /// qalter: change attributes of each job (all of them or none); handled by `alter_job.rs`.
    AlterJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
        changes: Box<crate::JobAlteration>,
    },
    /// qrerun: kill each running job and queue it again (operators and managers).
    RerunJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
    },
    /// qsig: send `signal` (`SIGUSR1`, `USR1`, `10`) to each running job's session.
    SignalJob {
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
        signal: String,
    },
    /// qmgr create/delete/set/unset (managers only; node state and comment also operators).
    Manage { op: ManageOp, kind: ObjectKind, name: String, attrs: Vec<AttrOp> },
    /// qstat -Q / -q, qmgr list/print queue; empty `names` = all queues.
    StatusQueue {
        #[serde(deserialize_with = "crate::names::distinct")]
        names: Vec<String>,
    },
    /// qstat -B, qmgr list/print server.
    StatusServer,
    /// qmgr list/print resource: the site-defined resources (`type`, `flag`); empty `names` =
    /// all. Replied to with `Objects`.
    StatusResource {
        #[serde(deserialize_with = "crate::names::distinct")]
        names: Vec<String>,
    },
    /// qmove: move queued jobs to the queue `destination`.
    MoveJob {
        destination: String,
        #[serde(deserialize_with = "crate::names::distinct")]
        ids: Vec<String>,
    },
    /// pbsfs: the fair-share tree (`Show`: every entity; `Get`: one) or a change to its usage
    /// (managers: `Decay`, `Trim`, `Set`). Replied to with `Objects`, one per entity in tree
    /// order (`server/src/handlers/fairshare.rs` names the attributes), or `Done`.
    FairShare {
        #[serde(default)]
        op: FairShareOp,
    },
}

/// What `pbsfs` asks (OpenPBS `pbsfs` options).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum FairShareOp {
    /// `-p`, `-t`, no option: the whole tree.
    #[default]
    Show,
    /// `-g ENTITY`: one entity (and the path to it).
    Get { entity: String },
    /// `-d`: decay all usage once by `fairshare_decay_factor`.
    Decay,
    /// `-e`: forget the usage of entities the `resource_group` file does not name.
    Trim,
    /// `-s ENTITY USAGE`: set an entity's usage (in the units `pbsfs` prints).
    Set { entity: String, usage: String },
}

/// The server's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerReply {
    /// The committed job's id (`12.head`).
    JobSubmitted { id: String },
    /// Status of the matched jobs, plus one error per selector that matched nothing. A long
    /// list comes in several frames: every frame but the last has `more = true`, and errors
    /// come after the jobs (in the last frames).
    Jobs {
        server: String,
        jobs: Vec<JobStatus>,
        errors: Vec<RequestError>,
        #[serde(default)]
        more: bool,
        /// The server's flavor, so the commands print its dialect (older servers: OpenPBS).
        #[serde(default)]
        flavor: crate::Flavor,
    },
    /// `Jobs` in the shape a `StatusJob` with `rows` asked for: a row per job, its values in
    /// the order of the request's `attrs` (no attribute names). Framed and ordered as `Jobs`.
    Rows {
        server: String,
        rows: Vec<crate::status::JobRow>,
        errors: Vec<RequestError>,
        #[serde(default)]
        more: bool,
        #[serde(default)]
        flavor: crate::Flavor,
    },
    /// Status of nodes, plus one error per unknown name.
    Nodes { nodes: Vec<NodeStatus>, errors: Vec<RequestError> },
    /// A request over several ids: done for all ids except those in `errors`.
    Done { errors: Vec<RequestError> },
    /// The whole request was refused.
    Error(RequestError),
    /// Status of queues (or of the server: one entry), plus one error per unknown name.
    Objects { objects: Vec<ObjectStatus>, errors: Vec<RequestError> },
}
