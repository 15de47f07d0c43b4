//! What a handler wants done after it has changed the state: rows to persist, messages to
//! moms, replies after commit, a scheduling pass. The connection code carries these out in
//! order: persist first, and only after the commit send messages and replies.

use crate::store::StoreOp;
use proto::ServerToMom;

/// Effects recorded by a handler. Tests inspect it directly (no sockets, no database).
#[derive(Debug, Default)]
pub struct Outbox {
    pub persist: Vec<StoreOp>,
    /// Messages to moms by node name, sent after `persist` is committed.
    pub to_moms: Vec<(String, ServerToMom)>,
    /// Run the scheduler after this.
    pub schedule: bool,
}

impl Outbox {
    pub fn persist(&mut self, op: StoreOp) {
        self.persist.push(op);
    }

    pub fn send(&mut self, node: &str, message: ServerToMom) {
        self.to_moms.push((node.to_string(), message));
    }
}
