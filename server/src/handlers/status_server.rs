//! `StatusServer` (qstat -B, qmgr list/print server): the server's attributes and job counts,
//! as one object named after the server.

use crate::state::ServerState;
use proto::{ObjectStatus, ServerReply};

/// Handles a server status request.
pub fn status_server(state: &ServerState) -> ServerReply {
    let status = ObjectStatus { name: state.server_name.clone(), attrs: state.server_status() };
    ServerReply::Objects { objects: vec![status], errors: Vec::new() }
}
