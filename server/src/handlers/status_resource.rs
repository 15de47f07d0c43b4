//! `StatusResource` (qmgr list/print resource): the site-defined resources, all or the named
//! ones, each with its `type` and `flag`; one error per unknown name.

use crate::state::ServerState;
use proto::ServerReply;

/// Handles a resource status request.
pub fn status_resource(state: &ServerState, names: &[String]) -> ServerReply {
    let (objects, errors) = state.resource_statuses(names);
    ServerReply::Objects { objects, errors }
}
