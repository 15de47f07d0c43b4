//! `ManageNode` (pbsnodes `-o`, `-r`/`-c`, `-C`/`-N`): operators and managers take nodes out of service
//! (offline: the scheduler gives them no new jobs, running jobs keep running), put them back,
//! and set the operator's comment. The change is persisted with the node list.
//!
//! Must not: touch jobs, or the `comment` the server keeps on why a node is down.

use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use crate::store::StoreOp;
use proto::error::{ErrorCode, RequestError};
use proto::ServerReply;

/// What to change on each named node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// `Some(true)`: mark offline; `Some(false)`: clear offline; `None`: leave as is.
    pub offline: Option<bool>,
    /// `Some(text)`: set the operator's comment (an empty text clears it).
    pub comment: Option<String>,
}

/// Handles pbsnodes' node changes. Unknown names are reported one error each (the others are
/// changed); a requester who is not an operator (or manager) is refused for every node, as
/// qmgr's `set node state|comment` is (`manage.rs`).
pub fn manage_node(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    names: &[String],
    change: &Change,
) -> ServerReply {
    if !state.is_operator(requester) {
        let errors = names
            .iter()
            .map(|name| {
                RequestError::new(ErrorCode::PermissionDenied, marking_error(name, ErrorCode::PermissionDenied))
            })
            .collect();
        return ServerReply::Done { errors };
    }
    let mut errors = Vec::new();
    let mut changed = false;
    for name in names {
        let Some(node) = state.node_mut(name) else {
            errors.push(RequestError::new(ErrorCode::UnknownNode, marking_error(name, ErrorCode::UnknownNode)));
            continue;
        };
        if let Some(offline) = change.offline {
            if node.offline != offline {
                node.offline = offline;
                node.last_state_change = now;
            }
        }
        if let Some(comment) = &change.comment {
            node.operator_comment = Some(comment.clone()).filter(|text| !text.is_empty());
        }
        tracing::info!(node = %name, offline = node.offline, by = %requester.user, "node changed");
        changed = true;
    }
    if changed {
        out.persist(StoreOp::SetNodes(state.stored_nodes()));
        out.schedule = true;
    }
    ServerReply::Done { errors }
}

/// pbsnodes' line for a node it could not change, as OpenPBS prints it: `Error marking node
/// <name> - <text>` (both texts end in a blank in OpenPBS).
fn marking_error(name: &str, code: ErrorCode) -> String {
    format!("Error marking node {name} - {} ", code.text())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::Node;

    fn state() -> ServerState {
        let mut state = ServerState::new("head", "workq", 2, 500);
        for name in ["node1", "node2"] {
            let mut node = Node::new(name, 2, 0, 0, Vec::new(), 0);
            node.up = true;
            state.insert_node(node);
        }
        state
    }

    fn user(uid: u32) -> Requester {
        Requester { uid, gid: uid, user: format!("u{uid}") }
    }

    #[test]
    fn managers_take_nodes_offline_and_back_with_a_comment() {
        let mut state = state();
        let mut out = Outbox::default();
        let offline = Change { offline: Some(true), comment: Some("disk swap".into()) };
        let names = vec!["node1".to_string(), "nosuch".to_string()];
        let ServerReply::Done { errors } = manage_node(&mut state, &mut out, &user(0), 5, &names, &offline) else {
            panic!()
        };
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].code, ErrorCode::UnknownNode);
        assert_eq!(errors[0].message, "Error marking node nosuch - Unknown node ");
        assert_eq!(state.nodes()["node1"].state_text(), "offline");
        assert_eq!(state.stored_nodes()[0].comment.as_deref(), Some("disk swap"));
        assert!(!state.nodes()["node2"].offline);
        assert!(out.schedule);

        let back = Change { offline: Some(false), comment: None };
        manage_node(&mut state, &mut Outbox::default(), &user(500), 6, &names[..1], &back);
        assert_eq!(state.nodes()["node1"].state_text(), "free");
        assert_eq!(state.nodes()["node1"].operator_comment.as_deref(), Some("disk swap"), "-r keeps the comment");
        let clear = Change { offline: None, comment: Some(String::new()) };
        manage_node(&mut state, &mut Outbox::default(), &user(0), 7, &names[..1], &clear);
        assert_eq!(state.nodes()["node1"].operator_comment, None);
    }

    #[test]
    fn users_are_refused_and_nothing_changes() {
        let mut state = state();
        let mut out = Outbox::default();
        let change = Change { offline: Some(true), comment: Some("mine".into()) };
        let ServerReply::Done { errors } =
            manage_node(&mut state, &mut out, &user(1000), 5, &["node1".to_string()], &change)
        else {
            panic!()
        };
        assert_eq!(errors[0].code, ErrorCode::PermissionDenied);
        assert_eq!(errors[0].message, "Error marking node node1 - Unauthorized Request ");
        assert!(!state.nodes()["node1"].offline);
        assert_eq!(state.nodes()["node1"].operator_comment, None);
        assert!(!out.schedule);
    }
}
