//! `StatusResource` (qmgr list/print resource): the site-defined resources, all or the named
//! ones, each with its `type` and `flag`; one error per unknown name. Resources with flag `i`
//! are listed to operators and managers only (OpenPBS).

use crate::state::{Requester, ServerState};
use proto::ServerReply;

/// Handles a resource status request.
pub fn status_resource(state: &ServerState, requester: &Requester, names: &[String]) -> ServerReply {
    let (objects, errors) = state.resource_statuses(names, state.is_operator(requester));
    ServerReply::Objects { objects, errors }
}
