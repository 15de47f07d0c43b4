//! `Manage` (qmgr create/delete/set/unset on the server, a queue or a node). Managers only,
//! except that operators may set a node's `state` and `comment`. All attribute operations of
//! one command apply together or not at all; every change persists every queue and the server
//! attributes (which also marks the configuration as stored).

use crate::state::outbox::Outbox;
use crate::state::{Node, Queue, Requester, ServerState};
use crate::store::{StoreOp, StoredQueue};
use proto::error::{ErrorCode, RequestError};
use proto::manage::{AttrOp, ManageOp, ObjectKind, SetOp};
use proto::ServerReply;

/// Handles one qmgr command on one object (`now` stamps a node's state change).
#[allow(clippy::too_many_arguments)]
pub fn manage(
    state: &mut ServerState,
    out: &mut Outbox,
    requester: &Requester,
    now: i64,
    op: ManageOp,
    kind: ObjectKind,
    name: &str,
    attrs: &[AttrOp],
) -> ServerReply {
    let operator_enough = kind == ObjectKind::Node
        && op == ManageOp::Set
        && attrs.iter().all(|attr| matches!(attr.name.to_ascii_lowercase().as_str(), "state" | "comment"));
    let allowed = state.is_manager(requester) || (operator_enough && state.is_operator(requester));
    if !allowed {
        // OpenPBS's text, trailing space included: `qmgr obj=x svr=default: Unauthorized Request `.
        let message = format!("{} ", ErrorCode::PermissionDenied.text());
        return ServerReply::Error(RequestError::new(ErrorCode::PermissionDenied, message));
    }
    let result = match kind {
        ObjectKind::Server => manage_server(state, op, attrs),
        ObjectKind::Queue => manage_queue(state, out, op, name, attrs),
        ObjectKind::Node => manage_node(state, out, now, op, name, attrs),
        ObjectKind::Resource => state.manage_resource(op, name, attrs).map(|ops| {
            for op in ops {
                out.persist(op);
            }
        }),
    };
    match result {
        Ok(()) => {
            // The configuration is stored whole: the first qmgr command (say `set node`) also
            // stores the queues the server started with, or the stored server attributes
            // (`default_queue`) would name a queue a restarted server does not have.
            for (name, queue) in state.queues() {
                out.persist(StoreOp::PutQueue(StoredQueue { name: name.clone(), attrs: queue.pairs() }));
            }
            out.persist(StoreOp::SetServerAttrs(state.server_attr_pairs()));
            out.schedule = true;
            tracing::info!(user = %requester.user, ?op, ?kind, object = name, "configuration changed");
            ServerReply::Done { errors: Vec::new() }
        }
        Err(error) => ServerReply::Error(error),
    }
}

fn manage_server(state: &mut ServerState, op: ManageOp, attrs: &[AttrOp]) -> Result<(), RequestError> {
    let unset = match op {
        ManageOp::Set => false,
        ManageOp::Unset => true,
        ManageOp::Create | ManageOp::Delete => {
            return Err(RequestError::new(
                ErrorCode::InvalidRequest,
                format!("{}: the server can only be set or unset", ErrorCode::InvalidRequest.text()),
            ))
        }
    };
    state.apply_server_attrs(attrs, unset)
}

/// Queue names as OpenPBS allows them: a letter first, then letters, digits, `_` and `-`,
/// at most 15 characters.
fn check_queue_name(name: &str) -> Result<(), RequestError> {
    let valid = name.len() <= 15
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if valid {
        Ok(())
    } else {
        Err(RequestError::new(
            ErrorCode::BadAttributeValue,
            format!(
                "{} queue name {name:?} (a letter, then letters, digits, _ or -, at most 15)",
                ErrorCode::BadAttributeValue.text()
            ),
        ))
    }
}

fn manage_queue(
    state: &mut ServerState,
    out: &mut Outbox,
    op: ManageOp,
    name: &str,
    attrs: &[AttrOp],
) -> Result<(), RequestError> {
    let unknown = || RequestError::with_detail(ErrorCode::UnknownQueue, name);
    let mut queue = match op {
        ManageOp::Create => {
            check_queue_name(name)?;
            if state.queues().contains_key(name) {
                return Err(RequestError::with_detail(ErrorCode::QueueExists, name));
            }
            Queue::new(name)
        }
        ManageOp::Delete => {
            state.queue(name).ok_or_else(unknown)?;
            if state.jobs().values().any(|job| job.queue == name && !job.state().is_finished()) {
                return Err(RequestError::with_detail(ErrorCode::QueueBusy, name));
            }
            state.remove_queue(name);
            out.persist(StoreOp::DeleteQueue(name.to_string()));
            return Ok(());
        }
        ManageOp::Set | ManageOp::Unset => state.queue(name).ok_or_else(unknown)?.clone(),
    };
    for attr in attrs {
        queue.apply_with(attr, op == ManageOp::Unset, &state.resources)?;
    }
    queue.check_complete()?;
    state.insert_queue(name, queue);
    Ok(())
}

fn manage_node(
    state: &mut ServerState,
    out: &mut Outbox,
    now: i64,
    op: ManageOp,
    name: &str,
    attrs: &[AttrOp],
) -> Result<(), RequestError> {
    let unknown = || RequestError::with_detail(ErrorCode::UnknownNode, name);
    let mut node = match op {
        ManageOp::Create => {
            if state.nodes().contains_key(name) || name.is_empty() {
                return Err(RequestError::with_detail(ErrorCode::NodeExists, name));
            }
            let mut node = Node::new(name, 1, 0, 0, Vec::new(), now);
            node.comment = Some("node down: its mom has not registered yet".to_string());
            node
        }
        ManageOp::Delete => {
            let node = state.node(name).ok_or_else(unknown)?;
            if !node.jobs.is_empty() {
                return Err(RequestError::new(ErrorCode::QueueBusy, format!("node {name} has running jobs")));
            }
            state.remove_node(name);
            out.persist(StoreOp::SetNodes(state.stored_nodes()));
            out.persist(StoreOp::SetNodeResources { node: name.to_string(), values: Vec::new() });
            return Ok(());
        }
        ManageOp::Set | ManageOp::Unset => state.node(name).ok_or_else(unknown)?.clone(),
    };
    let mut site_op = None;
    for attr in attrs {
        // Site resources (and unknown names, refused as OpenPBS does: `Unknown resource`).
        let site_value = attr.name.eq_ignore_ascii_case("resources_available")
            && attr.resource.as_deref().is_some_and(|resource| resource != "ncpus");
        if site_value {
            site_op = Some(ServerState::set_node_resource(&mut node, &state.resources, attr, op == ManageOp::Unset)?);
        } else {
            apply_node_attr(&mut node, attr, op == ManageOp::Unset, now)?;
        }
    }
    state.insert_node(node);
    if let Some(op) = site_op {
        out.persist(op);
    }
    out.persist(StoreOp::SetNodes(state.stored_nodes()));
    Ok(())
}

/// `state` (offline / free), `np`, `properties`, `comment`.
fn apply_node_attr(node: &mut Node, attr: &AttrOp, unset: bool, now: i64) -> Result<(), RequestError> {
    use crate::state::values::{bad_value, list_op, unknown_attribute};
    let value = attr.value.trim();
    // The full name: `resources_available.ncpus` arrives as name and resource.
    match attr.full_name().to_ascii_lowercase().as_str() {
        "state" => {
            let offline = match (unset, attr.op, value.to_ascii_lowercase().as_str()) {
                (true, _, _) => false,
                (false, SetOp::Set | SetOp::Incr, "offline") => true,
                (false, SetOp::Decr, "offline") | (false, SetOp::Set, "free") => false,
                _ => return Err(bad_value(attr, "state is offline or free")),
            };
            if node.offline != offline {
                node.offline = offline;
                node.last_state_change = now;
            }
        }
        "np" | "resources_available.ncpus" => {
            let np: u32 = if unset { 1 } else { value.parse().map_err(|_| bad_value(attr, "not a number"))? };
            if !node.jobs.is_empty() {
                return Err(RequestError::new(
                    ErrorCode::ModifyWhileRunning,
                    format!("{}: node {} has jobs", ErrorCode::ModifyWhileRunning.text(), node.name),
                ));
            }
            let properties = node.properties.clone();
            node.resize(np, node.mem_bytes, node.ngpus, properties);
        }
        "properties" => list_op(&mut node.properties, attr, unset)?,
        // The operator's comment, as `pbsnodes -C` sets it (stored with the node list);
        // `Node.comment` is the server's own down reason.
        "comment" => node.operator_comment = if unset || value.is_empty() { None } else { Some(value.to_string()) },
        _ => return Err(unknown_attribute(attr)),
    }
    Ok(())
}
