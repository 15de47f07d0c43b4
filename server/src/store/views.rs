//! What the read-only SQL views (docs/sql.md; migrations `2026-11-26-1000*`) need written
//! beside the rows the server loads: the node list as a table (`node_records`; the server
//! loads nodes from `meta`) and the server's name (`meta` key `server_name`, the part after
//! the dot of each `Job_Id`). Written by every `SetNodes` and once more at each start, which
//! fills them for a store written before the views existed.

use diesel::prelude::*;

use super::db::Db;
use super::schema::node_records;
use super::StoredNode;

/// The `meta` key holding the server name the views show in job ids.
pub(super) const SERVER_NAME_KEY: &str = "server_name";

/// Replaces the rows of `node_records` with `nodes`.
pub(super) fn put_nodes(connection: &mut Db, nodes: &[StoredNode]) -> QueryResult<()> {
    diesel::delete(node_records::table).execute(connection)?;
    // One row per statement: diesel's connection over both backends has no multi-row insert.
    for node in nodes {
        diesel::insert_into(node_records::table)
            .values((
                node_records::name.eq(&node.name),
                node_records::np.eq(i64::from(node.np)),
                node_records::mem_bytes.eq(i64::try_from(node.mem_bytes).unwrap_or(i64::MAX)),
                node_records::ngpus.eq(i64::from(node.ngpus)),
                node_records::properties.eq(node.properties.join(",")),
                node_records::offline.eq(node.offline),
                node_records::comment.eq(node.comment.as_deref()),
            ))
            .execute(connection)?;
    }
    Ok(())
}

/// At start: the server's name, and the node list loaded from `meta`, for the views.
pub(super) fn refresh(connection: &mut Db, server_name: &str, nodes: &[StoredNode]) -> QueryResult<()> {
    connection.transaction(|connection| {
        super::put_meta(connection, SERVER_NAME_KEY, server_name)?;
        put_nodes(connection, nodes)
    })
}
