//! `StatusQueue` (qstat -Q / -q, qmgr list/print queue): the attributes and job counts of all
//! or the named queues; one error per unknown name.

use crate::state::ServerState;
use proto::ServerReply;

/// Handles a queue status request.
pub fn status_queue(state: &ServerState, names: &[String]) -> ServerReply {
    let (objects, errors) = state.queue_statuses(names);
    ServerReply::Objects { objects, errors }
}
