//! Submission rules shared by qsub (`handlers/submit_job.rs`) and qalter
//! (`handlers/alter_job.rs`), which validates every change again as at submission: how `-l`
//! pairs are parsed against the site's resources and nodes, which requests can never run, the
//! default output and error paths and an array's index placeholder in them, and the
//! `Bad attribute value` error both refuse with.

use crate::state::{Node, ServerState, StdPath};
use job::resources::site::SiteResources;
use job::{JobSpec, ResourceRequest};
use proto::error::{ErrorCode, RequestError};

/// Where a subjob's file names put its index (OpenPBS stores the same placeholder).
pub const ARRAY_INDEX_PLACEHOLDER: &str = "^array_index^";

/// How an array's default file names end: `name.o12.^array_index^` (OpenPBS),
/// `name.o12-^array_index^` (TORQUE); nothing for a job that is not an array.
pub(crate) fn array_suffix(spec: &JobSpec, flavor: proto::Flavor) -> String {
    match (&spec.array, flavor) {
        (None, _) => String::new(),
        (Some(_), proto::Flavor::Torque) => format!("-{ARRAY_INDEX_PLACEHOLDER}"),
        (Some(_), _) => format!(".{ARRAY_INDEX_PLACEHOLDER}"),
    }
}

/// Parses a job's `-l` pairs as the server accepts them, knowing the site's resources and
/// nodes: unknown resources and bad values are refused with OpenPBS's texts (shared with
/// qalter): `Unknown resource Resource_List.NAME` job-wide, `Unknown resource: NAME` in a
/// select chunk.
pub(crate) fn parse_request(
    state: &ServerState,
    resources: &[(String, String)],
) -> Result<ResourceRequest, RequestError> {
    let names = crate::state::NodeNames::new(state.nodes.keys());
    let is_node = |word: &str| names.contains(word);
    ResourceRequest::from_list_at(resources, &state.resources, &is_node).map_err(|error| {
        if error.is_unknown_resource() {
            RequestError::new(ErrorCode::UnknownResource, error.message)
        } else {
            bad_value(format!("Resource_List: {}", error.message))
        }
    })
}

/// Refuses a request no known node could ever satisfy (a job that would wait forever).
pub(crate) fn check_feasible(state: &ServerState, request: &ResourceRequest) -> Result<(), RequestError> {
    if state.nodes.is_empty() {
        return Ok(());
    }
    let empty_nodes: Vec<sched::NodeView> =
        state.nodes.values().map(|node| empty_view(node, &state.resources)).collect();
    sched::can_ever_run(request, &empty_nodes).map_err(|reason| {
        RequestError::new(ErrorCode::ExceedsLimits, format!("{} ({reason})", ErrorCode::ExceedsLimits.text()))
    })
}

/// A node as if it were empty and up (for "could this ever run" checks at submit).
fn empty_view(node: &Node, site: &SiteResources) -> sched::NodeView {
    sched::NodeView {
        name: node.name.clone(),
        properties: crate::state::site::node_words(node, site),
        available: true,
        np: node.np,
        free_slots: (0..node.np).collect(),
        mem_total: node.mem_bytes,
        mem_free: node.mem_bytes,
        ngpus: node.ngpus,
        free_gpus: (0..node.ngpus).collect(),
        mps_gpus: Vec::new(),
        busy: false,
        exclusive: false,
        amounts: crate::state::site::node_amounts(node, site),
    }
}

/// `Output_Path`/`Error_Path`: the given `host:/path` as given (a directory, `logs/`, stays a
/// directory: the mom names the file in it at delivery, as OpenPBS does), or
/// `<submit host>:<workdir>/<name>.o<seq>`; an array's default names end in `suffix` (the
/// index placeholder). A plain job's default keeps the seq apart, so that equal prefixes can
/// be shared (`std_path.rs`).
pub(crate) fn std_path(
    given: Option<&str>,
    spec: &JobSpec,
    workdir: &str,
    kind: char,
    seq: u64,
    suffix: &str,
) -> StdPath {
    let prefix = || format!("{}:{}/{}.{kind}", spec.submit_host, workdir.trim_end_matches('/'), spec.name);
    match given {
        Some(path) => StdPath::literal(path),
        None if suffix.is_empty() => StdPath::numbered(&prefix(), seq),
        None => StdPath::literal(&format!("{}{seq}{suffix}", prefix())),
    }
}

pub(crate) fn bad_value(detail: String) -> RequestError {
    RequestError::new(ErrorCode::BadAttributeValue, format!("{} {}", ErrorCode::BadAttributeValue.text(), detail))
}
