//! The durable job store: the server's write-ahead record of every job, through diesel in
//! SQLite (WAL, `synchronous=FULL`; the default) or PostgreSQL (`synchronous_commit=on`), with
//! the migrations from `server/migrations/` compiled in (`migrate.rs`) and applied at open.
//!
//! Layout: [`Store`] (`database.rs`) loads and commits; `db.rs` is where the store is
//! ([`StoreLocation`]) and the connection over both backends (a job's statements run on the
//! backend's own connection inside it: `on_inner!`); [`StoreHandle`] (`handle.rs`) is
//! the group-commit thread the server talks to; `models.rs` maps `state::Job` to rows by hand;
//! `exec_hosts.rs` is the text form of an allocation; `schema.rs` is diesel's table view;
//! `update.rs` is a job row's UPDATE, written so that diesel keeps it prepared (every statement
//! of a job's life is parsed once per connection: `tests/statements.rs`);
//! `views.rs` and `guard.rs` serve the read-only SQL views for other clients (docs/sql.md).
//!
//! Invariants: this is the only module that imports diesel, and no diesel type appears in its
//! public API (errors carry causes as `dyn Error`). A job's request is not stored: it is
//! recomputed from the spec on load. A job's script is stored in a column of its own and never
//! loaded: [`Store::script`] reads it when the job starts. `accounting.rs`: committed
//! accounting records until the writer has them in the files. The job id's server part is not stored per row: `load`
//! takes it. Whatever a commit returns `Ok` for is on disk.

mod accounting;
mod database;
mod db;
mod error;
pub(crate) mod exec_hosts;
mod fairshare;
mod guard;
mod handle;
pub mod lease;
pub mod migrate;
mod models;
mod nodes;
mod queues;
mod schema;
mod site;
mod update;
mod views;

#[cfg(test)]
mod tests;

pub use database::Store;
pub use db::StoreLocation;
pub use error::{Cause, StoreError};
pub use handle::{AfterCommit, StoreHandle};

pub use crate::state::records::{
    AccountingRecord, JobProgress, StoreOp, StoredConfig, StoredNode, StoredQueue, StoredResourceDef, StoredUsage,
    UsageKind,
};
use crate::state::Job;

/// What the server recovers at start-up.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Every stored job, ordered by seq, with its request recomputed from its spec.
    pub jobs: Vec<Job>,
    /// The next sequence number to hand out: never below any stored job's seq + 1, never
    /// below the stored counter, at least 1.
    pub next_seq: u64,
    /// The nodes registered before, in name order.
    pub nodes: Vec<StoredNode>,
    /// The qmgr configuration, `None` if none was ever stored (a fresh server).
    pub config: Option<StoredConfig>,
    /// Accounting records committed but not yet known to be in the files, by id.
    pub accounting: Vec<AccountingRecord>,
    /// Site resource definitions in name order (jobs were parsed knowing them).
    pub resource_defs: Vec<StoredResourceDef>,
    /// Nodes' site resource values as (node, name, value).
    pub node_resources: Vec<(String, String, String)>,
    /// Fair-share usage records, by kind and name.
    pub usage: Vec<StoredUsage>,
}

/// Sets `key` in the `meta` table. Delete then insert, not an upsert: diesel's connection over
/// both backends has no `ON CONFLICT` (and this runs inside the commit's transaction).
fn put_meta(connection: &mut db::Db, key: &str, value: &str) -> Result<(), diesel::result::Error> {
    use diesel::prelude::*;
    use schema::meta;
    // `SetNextSeq` after a purge of history: on the inner connection (`db::on_inner!`).
    db::on_inner!(connection, inner => {
        diesel::delete(meta::table.find(key)).execute(inner)?;
        diesel::insert_into(meta::table).values((meta::key.eq(key), meta::value.eq(value))).execute(inner)
    })?;
    Ok(())
}
