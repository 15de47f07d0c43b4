//! Status records the server sends to qstat and pbsnodes: an id and an attribute list in
//! PBS's order. Formatting is the client's job.

use compact_str::CompactString;
use job::Attr;
use serde::{Deserialize, Serialize};

/// One job as qstat sees it. `id` is the full id (`12.head`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatus {
    pub id: String,
    pub attrs: Vec<Attr>,
}

impl JobStatus {
    /// The value of an attribute by full name (`job_state`, `Resource_List.walltime`).
    pub fn get(&self, full_name: &str) -> Option<&str> {
        job::attrs::find(&self.attrs, full_name)
    }
}

/// Most attributes a `StatusJob` may name and still be answered in rows (`rows`): a row holds
/// a value, or `null`, for each, so this bounds a row frame's size with the 500 jobs a frame
/// carries. A request naming more is answered with `Jobs` (only the attributes each job has).
pub const MAX_COLUMNS: usize = 64;

/// One job of a listing answered in rows: its full id and, for each attribute the request
/// named, in its order, the value (`None`: the job has none, or the reader may not see it).
/// The strings are `CompactString`s: on the wire they are JSON strings as before; in memory a
/// value of up to 24 bytes (a job's name, owner, state, queue, times) is held inline, so a
/// qstat reads a row of 10,000 with one allocation (its list) rather than one per value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRow {
    pub id: CompactString,
    pub values: Vec<Option<CompactString>>,
}

/// One node as pbsnodes sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeStatus {
    pub name: String,
    pub attrs: Vec<Attr>,
}

impl NodeStatus {
    pub fn get(&self, full_name: &str) -> Option<&str> {
        job::attrs::find(&self.attrs, full_name)
    }
}

/// A queue (`qstat -Q -f`, `qmgr list queue`) or the server (`qstat -B -f`): its name and
/// attributes in OpenPBS's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectStatus {
    pub name: String,
    pub attrs: Vec<Attr>,
}

impl ObjectStatus {
    pub fn get(&self, full_name: &str) -> Option<&str> {
        job::attrs::find(&self.attrs, full_name)
    }
}
