//! Rows of site-defined resources: `resource_defs` (name, kind, flags in qmgr's words) and
//! `node_resources` (node, name, value: a node's `resources_available.NAME`). Mapped by hand.

use super::db::Db;
use diesel::prelude::*;

use super::error::StoreError;
use super::schema::{node_resources, resource_defs};
use super::StoredResourceDef;

/// Stores a definition, replacing one of the same name (`set resource NAME type=..`).
pub(super) fn put_def(connection: &mut Db, def: &StoredResourceDef) -> Result<(), StoreError> {
    let row =
        (resource_defs::name.eq(&def.name), resource_defs::kind.eq(&def.kind), resource_defs::flags.eq(&def.flags));
    let fail = |err| StoreError::database(format!("storing resource {}", def.name), err);
    diesel::delete(resource_defs::table.find(&def.name)).execute(connection).map_err(fail)?;
    diesel::insert_into(resource_defs::table).values(row).execute(connection).map_err(fail)?;
    Ok(())
}

/// Forgets a definition and every node's value for it.
pub(super) fn delete_def(connection: &mut Db, name: &str) -> Result<(), StoreError> {
    let fail = |err| StoreError::database(format!("deleting resource {name}"), err);
    diesel::delete(node_resources::table.filter(node_resources::name.eq(name))).execute(connection).map_err(fail)?;
    diesel::delete(resource_defs::table.filter(resource_defs::name.eq(name))).execute(connection).map_err(fail)?;
    Ok(())
}

/// Replaces the site resource values of `node` (none: the node has none, or is deleted).
pub(super) fn set_node_values(connection: &mut Db, node: &str, values: &[(String, String)]) -> Result<(), StoreError> {
    let fail = |err| StoreError::database(format!("storing the resources of node {node}"), err);
    diesel::delete(node_resources::table.filter(node_resources::node.eq(node))).execute(connection).map_err(fail)?;
    for (name, value) in values {
        diesel::insert_into(node_resources::table)
            .values((node_resources::node.eq(node), node_resources::name.eq(name), node_resources::value.eq(value)))
            .execute(connection)
            .map_err(fail)?;
    }
    Ok(())
}

/// Every definition in name order, and every node value as (node, name, value).
#[allow(clippy::type_complexity)]
pub(super) fn load(
    connection: &mut Db,
) -> Result<(Vec<StoredResourceDef>, Vec<(String, String, String)>), diesel::result::Error> {
    let defs: Vec<(String, String, String)> = resource_defs::table
        .order(resource_defs::name.asc())
        .select((resource_defs::name, resource_defs::kind, resource_defs::flags))
        .load(connection)?;
    let values = node_resources::table
        .order((node_resources::node.asc(), node_resources::name.asc()))
        .select((node_resources::node, node_resources::name, node_resources::value))
        .load(connection)?;
    let defs = defs.into_iter().map(|(name, kind, flags)| StoredResourceDef { name, kind, flags }).collect();
    Ok((defs, values))
}
