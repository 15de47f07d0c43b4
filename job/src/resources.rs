//! Resource lists (`-l name=value,...`) and the request they describe: TORQUE node specs
//! (`nodes=2:ppn=2:gpus=1+node3`), OpenPBS `select=`/`place=`, job-wide `ncpus`/`mem`/`ngpus`,
//! sizes and durations (pbs-reference section 3).

use serde::{Deserialize, Serialize};

/// A `-l` list error: names the bad token and where it is in the input (0-based column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
pub struct ResourceError {
    /// Human text naming what is wrong, e.g. `ppn value 'x' is not a number`.
    pub message: String,
    /// The whole input that was being parsed.
    pub input: String,
    /// 0-based column of the bad token in `input`.
    pub column: usize,
    /// The bad token itself.
    pub token: String,
    /// The resource name is not one we know (the server answers `Unknown resource`).
    pub unknown_resource: bool,
}

/// One chunk of a request: `count` places each with `ncpus` cpus, `ngpus` GPUs, `mem` bytes.
/// `nodes=2:ppn=2:gpus=1` is one `Chunk { count: 2, ncpus: 2, ngpus: 1, mpiprocs: 2, .. }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub count: u32,
    pub ncpus: u32,
    pub ngpus: u32,
    /// Memory per chunk in bytes, if requested.
    pub mem: Option<u64>,
    /// Lines in `PBS_NODEFILE` per chunk (TORQUE: ppn; OpenPBS: `mpiprocs`, default 1).
    pub mpiprocs: u32,
    /// A specific host (`host=n1` in select). `None` = any.
    pub host: Option<String>,
    /// Required node properties. A property equal to a node's name selects that node
    /// (TORQUE: a bare word that is a node name names the host).
    pub properties: Vec<String>,
}

/// `place=` arrangement of chunks on nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Chunks go wherever they fit (may share a node).
    Free,
    /// All chunks on one node.
    Pack,
    /// Each chunk on a distinct node (TORQUE `nodes=` semantics).
    Scatter,
}

/// A parsed, normalised resource request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceRequest {
    pub chunks: Vec<Chunk>,
    pub place: Placement,
    /// `place=...:excl`: nodes are not shared with other jobs.
    pub exclusive: bool,
    /// Seconds.
    pub walltime: Option<u64>,
    /// Seconds.
    pub cput: Option<u64>,
    /// `ppn` of the first `nodes=` part (`PBS_NUM_PPN`), or ncpus of the first chunk.
    pub first_ppn: u32,
    /// The `Resource_List` as qstat shows it, in display order: the user's resources in
    /// normalised form plus the derived `ncpus`, `nodect`, `place`, `select`, e.g.
    /// `[("ncpus","4"),("nodect","2"),("nodes","2:ppn=2"),("place","scatter"),
    ///   ("select","2:ncpus=2:mpiprocs=2"),("walltime","01:00:00")]` (sorted by name).
    pub display: Vec<(String, String)>,
}

/// Splits `name=value[,name=value...]` into pairs (values may be quoted to protect commas;
/// `nodes=2:ppn=2+1:ppn=4` keeps its `+`). Errors point at the bad token.
pub fn parse_list(text: &str) -> Result<Vec<(String, String)>, ResourceError> {
    let _ = text;
    unimplemented!("filled in by the parser work")
}

/// Merges `-l` lists per resource name. `later` entries replace earlier ones of the same name
/// (command line over directives); see [`merge_directive_lists`] for the directive rule.
pub fn merge_override(base: &mut Vec<(String, String)>, later: &[(String, String)]) {
    for (name, value) in later {
        match base.iter_mut().find(|(existing, _)| existing == name) {
            Some(slot) => slot.1 = value.clone(),
            None => base.push((name.clone(), value.clone())),
        }
    }
}

impl ResourceRequest {
    /// Builds the request from merged pairs. Rejects unknown resource names, bad values,
    /// `nodes` together with `select`, job-wide `ncpus`/`mem` with `select`.
    pub fn from_list(pairs: &[(String, String)]) -> Result<ResourceRequest, ResourceError> {
        let _ = pairs;
        unimplemented!("filled in by the parser work")
    }

    /// Total cpus over all chunks.
    pub fn total_ncpus(&self) -> u32 {
        self.chunks.iter().map(|chunk| chunk.count * chunk.ncpus).sum()
    }

    /// Total GPUs over all chunks.
    pub fn total_ngpus(&self) -> u32 {
        self.chunks.iter().map(|chunk| chunk.count * chunk.ngpus).sum()
    }

    /// Number of chunks (= nodes for scatter placement).
    pub fn nodect(&self) -> u32 {
        self.chunks.iter().map(|chunk| chunk.count).sum()
    }
}
