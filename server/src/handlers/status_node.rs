//! `StatusNode` (pbsnodes): the status of all or the named nodes; site resources with flag `i`
//! shown to operators and managers only (OpenPBS).

use crate::state::site::is_invisible;
use crate::state::{Requester, ServerState};
use crate::status::node_status;
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// Handles pbsnodes.
pub fn status_node(state: &ServerState, requester: &Requester, names: &[String]) -> ServerReply {
    let mut nodes = Vec::new();
    let mut errors = Vec::new();
    if names.is_empty() {
        nodes.extend(state.nodes().values().map(|node| node_status(node, &state.server_name, &state.resources)));
    }
    for name in names {
        match state.node(name) {
            Some(node) => nodes.push(node_status(node, &state.server_name, &state.resources)),
            None => errors
                .push(RequestError::new(ErrorCode::UnknownNode, format!("{} {name}", ErrorCode::UnknownNode.text()))),
        }
    }
    if !state.is_operator(requester) {
        for node in &mut nodes {
            node.attrs.retain(|attr| !is_invisible(&state.resources, attr));
        }
    }
    ServerReply::Nodes { nodes, errors }
}
