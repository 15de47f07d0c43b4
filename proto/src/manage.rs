//! What `qmgr` asks of the server: an operation (`create`, `delete`, `set`, `unset`) on an
//! object (the server, a queue, a node) with attribute operations (`attr = v`, `+=`, `-=`).
//! `list` and `print` are status requests (`StatusQueue`, `StatusServer`, `StatusNode`).
//!
//! Must not know: attribute meanings (the server checks names and values) or terminal output.

use serde::{Deserialize, Serialize};

/// A changing qmgr command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ManageOp {
    Create,
    Delete,
    Set,
    Unset,
}

/// The kind of object a qmgr command names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ObjectKind {
    Server,
    Queue,
    Node,
    /// A site-defined resource (`create resource NAME type=T, flag=F`).
    Resource,
}

/// How an attribute operation changes the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SetOp {
    /// `attr = value`.
    Set,
    /// `attr += value` (add to a list).
    Incr,
    /// `attr -= value` (remove from a list).
    Decr,
}

/// One `name[.resource] op value` of a qmgr command (`unset` carries an empty value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttrOp {
    pub name: String,
    pub resource: Option<String>,
    pub op: SetOp,
    pub value: String,
}

impl AttrOp {
    /// The name as qmgr prints it: `resources_max.walltime`.
    pub fn full_name(&self) -> String {
        match &self.resource {
            Some(resource) => format!("{}.{}", self.name, resource),
            None => self.name.clone(),
        }
    }
}
