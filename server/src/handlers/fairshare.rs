//! `FairShare` (`pbsfs`): the fair-share tree with each entity's shares, usage and standing,
//! or a change to the usage (managers only: decay once, trim to the file's entities, set one
//! entity's usage). Anyone may read the tree (OpenPBS's `pbsfs` needs root on the scheduler's
//! host; here the server answers, as for `qstat -B`).
//!
//! The reply is `Objects`, one per entity in tree order (`Get`: the path from the root to the
//! entity), each with `depth`, `resgroup`, `cresgroup`, `shares` (-1 for the root, as
//! OpenPBS), `usage` (weighted resource-hours, the stored unit), `percentage` (of the whole
//! tree, 0..1), `fairshare_tree_usage`, `fairshare_factor` and `path`; the root also carries
//! `fairshare_weights` (what the usage counts). At most [`MAX_ROWS`] entities are listed.

use crate::state::fairshare::standings;
use crate::state::outbox::Outbox;
use crate::state::{Requester, ServerState};
use job::Attr;
use proto::client::FairShareOp;
use proto::error::{ErrorCode, RequestError};
use proto::{ObjectStatus, ServerReply};
use sched::fairshare::Standing;

/// The most entities one reply lists (each is a few hundred bytes of a 16 MiB frame).
pub const MAX_ROWS: usize = 20_000;
/// The longest entity name accepted.
pub const MAX_ENTITY_BYTES: usize = 256;
/// The largest usage `-s` accepts, in the seconds `pbsfs` shows.
pub const MAX_SET_USAGE: f64 = 1e15;

/// Handles a `pbsfs` request at `now`.
pub fn fairshare(
    state: &mut ServerState,
    _out: &mut Outbox,
    requester: &Requester,
    now: i64,
    op: &FairShareOp,
) -> ServerReply {
    match op {
        FairShareOp::Show => show(state, now),
        FairShareOp::Get { entity } => get(state, now, entity),
        change => {
            if !state.is_manager(requester) {
                return ServerReply::Error(RequestError::new(
                    ErrorCode::PermissionDenied,
                    "Unauthorized Request: only managers change fair-share usage",
                ));
            }
            match apply_change(state, now, change) {
                Ok(()) => ServerReply::Done { errors: Vec::new() },
                Err(error) => ServerReply::Error(error),
            }
        }
    }
}

fn show(state: &ServerState, now: i64) -> ServerReply {
    let all = standings(state, now, None);
    let mut errors = Vec::new();
    if all.rows.len() > MAX_ROWS {
        let message = format!("{} more fair-share entities not shown", all.rows.len() - MAX_ROWS);
        errors.push(RequestError::new(ErrorCode::ExceedsLimits, message));
    }
    let objects = all.rows.iter().take(MAX_ROWS).map(|row| object(state, row)).collect();
    ServerReply::Objects { objects, errors }
}

fn get(state: &ServerState, now: i64, entity: &str) -> ServerReply {
    let all = standings(state, now, None);
    let Some(found) = all.get(entity).filter(|_| entity.len() <= MAX_ENTITY_BYTES) else {
        return ServerReply::Error(not_found(entity));
    };
    let objects = found.path.iter().filter_map(|name| all.get(name)).map(|row| object(state, row)).collect();
    ServerReply::Objects { objects, errors: Vec::new() }
}

fn not_found(entity: &str) -> RequestError {
    let shown: String = entity.chars().take(MAX_ENTITY_BYTES).collect();
    RequestError::new(ErrorCode::InvalidRequest, format!("Fairshare Entity {shown} does not exist."))
}

fn apply_change(state: &mut ServerState, now: i64, change: &FairShareOp) -> Result<(), RequestError> {
    match change {
        FairShareOp::Decay => {
            let attrs = state.attrs.sched.clone();
            state.fairshare.decay_once(now, &attrs);
        }
        FairShareOp::Trim => state.fairshare.trim(),
        FairShareOp::Set { entity, usage } => {
            let valid_name = !entity.is_empty()
                && entity.len() <= MAX_ENTITY_BYTES
                && !entity.chars().any(|c| c.is_whitespace() || c.is_control());
            if !valid_name {
                return Err(RequestError::new(ErrorCode::BadAttributeValue, "pbsfs: bad entity name"));
            }
            let seconds = match usage.trim().parse::<f64>() {
                Ok(value) if value.is_finite() && (0.0..=MAX_SET_USAGE).contains(&value) => value,
                _ => {
                    let message = format!("pbsfs: usage must be a number from 0 to {MAX_SET_USAGE}");
                    return Err(RequestError::new(ErrorCode::BadAttributeValue, message));
                }
            };
            if standings(state, now, None).rows.iter().any(|row| row.name == *entity && is_inner(state, row)) {
                let message =
                    format!("pbsfs: {entity} is not a leaf of the fair-share tree: its usage is its members'");
                return Err(RequestError::new(ErrorCode::BadAttributeValue, message));
            }
            state.fairshare.set_usage(entity, seconds / 3600.0, now);
        }
        FairShareOp::Show | FairShareOp::Get { .. } => {}
    }
    Ok(())
}

/// The root, `unknown`, or an entity of the file with children.
fn is_inner(state: &ServerState, row: &Standing) -> bool {
    row.depth == 0
        || row.name == sched::fairshare::UNKNOWN_NAME
        || (state.fairshare.tree().contains(&row.name) && state.fairshare.tree().has_children(&row.name))
}

fn object(state: &ServerState, row: &Standing) -> ObjectStatus {
    let shares = if row.depth == 0 { -1 } else { i64::from(row.shares) };
    let mut attrs = vec![
        Attr::new("depth", row.depth.to_string()),
        Attr::new("resgroup", row.group.to_string()),
        Attr::new("cresgroup", row.id.to_string()),
        Attr::new("shares", shares.to_string()),
        Attr::new("usage", row.usage.to_string()),
        Attr::new("percentage", row.share.perc.to_string()),
        Attr::new("fairshare_tree_usage", row.share.usage.to_string()),
        Attr::new("fairshare_factor", row.share.factor.to_string()),
        Attr::new("path", row.path.join(",")),
    ];
    if row.depth == 0 {
        attrs.push(Attr::new("fairshare_weights", state.attrs.sched.value("fairshare_weights")));
    }
    ObjectStatus { name: row.name.clone(), attrs }
}
