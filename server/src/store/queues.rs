//! Rows of the qmgr configuration: `queue_attrs` (queue, name, value) and `server_attrs`
//! (name, value), plus the `meta` key `config_stored` that tells a configured server from a
//! fresh one. Mapped by hand from [`StoredQueue`] and attribute pairs.

use super::db::Db;
use diesel::prelude::*;

use super::error::StoreError;
use super::schema::{meta, queue_attrs, server_attrs};
use super::{StoredConfig, StoredQueue};

/// The `meta` key present once a configuration was stored.
const CONFIG_KEY: &str = "config_stored";

/// Replaces the rows of `queue`.
pub(super) fn put_queue(connection: &mut Db, queue: &StoredQueue) -> Result<(), StoreError> {
    delete_queue(connection, &queue.name)?;
    // One row per statement: diesel's connection over both backends has no multi-row insert.
    for (name, value) in &queue.attrs {
        diesel::insert_into(queue_attrs::table)
            .values((queue_attrs::queue.eq(&queue.name), queue_attrs::name.eq(name), queue_attrs::value.eq(value)))
            .execute(connection)
            .map_err(|err| StoreError::database(format!("storing queue {}", queue.name), err))?;
    }
    Ok(())
}

/// Removes the rows of `queue`.
pub(super) fn delete_queue(connection: &mut Db, queue: &str) -> Result<(), StoreError> {
    diesel::delete(queue_attrs::table.filter(queue_attrs::queue.eq(queue)))
        .execute(connection)
        .map_err(|err| StoreError::database(format!("deleting queue {queue}"), err))?;
    Ok(())
}

/// Replaces the server attributes and marks the configuration stored.
pub(super) fn set_server_attrs(connection: &mut Db, attrs: &[(String, String)]) -> Result<(), StoreError> {
    let fail = |err| StoreError::database("storing server attributes", err);
    diesel::delete(server_attrs::table).execute(connection).map_err(fail)?;
    for (name, value) in attrs {
        diesel::insert_into(server_attrs::table)
            .values((server_attrs::name.eq(name), server_attrs::value.eq(value)))
            .execute(connection)
            .map_err(fail)?;
    }
    super::put_meta(connection, CONFIG_KEY, "1").map_err(fail)?;
    Ok(())
}

/// Reads the configuration, `None` if none was stored.
pub(super) fn load(connection: &mut Db) -> Result<Option<StoredConfig>, diesel::result::Error> {
    let stored = meta::table.find(CONFIG_KEY).select(meta::value).first::<String>(connection).optional()?;
    if stored.is_none() {
        return Ok(None);
    }
    let rows: Vec<(String, String, String)> = queue_attrs::table
        .order((queue_attrs::queue.asc(), queue_attrs::name.asc()))
        .select((queue_attrs::queue, queue_attrs::name, queue_attrs::value))
        .load(connection)?;
    let mut queues: Vec<StoredQueue> = Vec::new();
    for (queue, name, value) in rows {
        match queues.last_mut() {
            Some(last) if last.name == queue => last.attrs.push((name, value)),
            _ => queues.push(StoredQueue { name: queue, attrs: vec![(name, value)] }),
        }
    }
    let server_attrs = server_attrs::table
        .order(server_attrs::name.asc())
        .select((server_attrs::name, server_attrs::value))
        .load(connection)?;
    Ok(Some(StoredConfig { queues, server_attrs }))
}
