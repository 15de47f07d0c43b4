//! `StatusServer` (qstat -B, qmgr list/print server): the server's attributes and job counts,
//! as one object named after the server.

use crate::state::site::is_invisible;
use crate::state::{Requester, ServerState};
use proto::{ObjectStatus, ServerReply};

/// Handles a server status request.
/// Site resources with flag `i` are shown to operators and managers only (OpenPBS).
pub fn status_server(state: &ServerState, requester: &Requester) -> ServerReply {
    let mut attrs = state.server_status();
    if !state.is_operator(requester) {
        attrs.retain(|attr| !is_invisible(&state.resources, attr));
    }
    let status = ObjectStatus { name: state.server_name.clone(), attrs };
    ServerReply::Objects { objects: vec![status], errors: Vec::new() }
}
