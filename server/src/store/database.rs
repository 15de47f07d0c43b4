//! [`Store`]: one connection (SQLite or PostgreSQL, `db.rs`) that opens (and migrates) the job
//! database, loads it at start-up and applies batches of [`StoreOp`]s in single transactions.
//!
//! Blocking: every call here waits for the database (and for fsync on commit). The server calls
//! `load` before it serves anything and `commit` only through [`super::StoreHandle`]'s thread,
//! never on an async worker.

use job::JobKey;
use job::ResourceRequest;

use diesel::prelude::*;

use super::db::{on_inner, Db, StoreLocation};
use super::error::StoreError;
use super::models::{key_column, key_value, JobColumns, JobRow, ProgressColumns, RequestParser};
use super::schema::{jobs, meta};
use super::{Loaded, StoreOp};
use crate::state::Job;

/// The `meta` key holding the next job sequence number to hand out.
pub(super) const NEXT_SEQ_KEY: &str = "next_seq";
use super::nodes::NODES_KEY;

/// The durable job store: SQLite (WAL, `synchronous=FULL`) or PostgreSQL
/// (`synchronous_commit=on`), so a committed transaction survives a crash or power loss.
pub struct Store {
    connection: Db,
    /// Where it is (the lease keeper opens its own connection there).
    location: StoreLocation,
    /// The lease every commit checks first (PostgreSQL; `None` on SQLite).
    fence: Option<super::lease::Held>,
}

/// Why a commit's transaction was rolled back: an error of ours, or of the transaction itself.
enum TransactionError {
    Store(StoreError),
    Database(diesel::result::Error),
}

impl From<diesel::result::Error> for TransactionError {
    fn from(err: diesel::result::Error) -> Self {
        TransactionError::Database(err)
    }
}

impl From<StoreError> for TransactionError {
    fn from(err: StoreError) -> Self {
        TransactionError::Store(err)
    }
}

impl Store {
    /// Opens the store at `location` (creating an SQLite file if needed), with its durability
    /// settings, and applies pending migrations (tests and tools; the server: [`Store::connect`]).
    pub fn open(location: &StoreLocation) -> Result<Store, StoreError> {
        let mut store = Store::connect(location)?;
        store.migrate()?;
        Ok(store)
    }

    /// Connects to the store at `location` without migrating it. A server on PostgreSQL takes
    /// the lease ([`Store::acquire_lease`]) before it [`Store::migrate`]s: a standby of a newer
    /// release must not change the schema under the active server.
    pub fn connect(location: &StoreLocation) -> Result<Store, StoreError> {
        Ok(Store { connection: super::db::connect(location)?, location: location.clone(), fence: None })
    }

    /// Applies the pending migrations.
    pub fn migrate(&mut self) -> Result<(), StoreError> {
        super::db::migrate(&mut self.connection)
    }

    /// Where the store is.
    pub fn location(&self) -> &StoreLocation {
        &self.location
    }

    /// On PostgreSQL: waits until this server holds the store's lease (`lease.rs`), as the
    /// standby while another holds it, and from then on refuses every commit once it is lost.
    /// Returns what is held, for [`super::lease::keep`]. On SQLite: `None` at once (one server
    /// per file).
    pub fn acquire_lease(
        &mut self,
        ttl: std::time::Duration,
        poll: std::time::Duration,
    ) -> Result<Option<super::lease::Held>, StoreError> {
        let Db::Postgresql(connection) = &mut self.connection else { return Ok(None) };
        let holder = super::lease::holder_name();
        let held = super::lease::acquire(connection, &holder, ttl, poll)?;
        // A holder stopped inside a transaction must not keep the lease row locked forever.
        diesel::connection::SimpleConnection::batch_execute(
            connection,
            &format!("SET idle_in_transaction_session_timeout = {}", ttl.as_millis().max(1)),
        )
        .map_err(|err| StoreError::database("setting idle_in_transaction_session_timeout", err))?;
        self.fence = Some(held.clone());
        Ok(Some(held))
    }

    /// Opens the SQLite store at `path` (tests and tools).
    pub fn open_sqlite(path: &std::path::Path) -> Result<Store, StoreError> {
        Store::open(&StoreLocation::Sqlite(path.to_path_buf()))
    }

    /// Reads every stored job (the ids take `server_name` as their server part) and the next
    /// sequence number: the larger of the stored counter and the highest job seq + 1, at
    /// least 1. Each job's request is recomputed from its spec.
    pub fn load(&mut self, server_name: &str) -> Result<Loaded, StoreError> {
        let (defs, values) =
            super::site::load(&mut self.connection).map_err(|err| StoreError::database("loading resources", err))?;
        let mut site = job::resources::site::SiteResources::default();
        for stored in &defs {
            let corrupt = || StoreError::CorruptMeta {
                key: format!("resource_defs.{}", stored.name),
                value: format!("type={} flag={}", stored.kind, stored.flags),
            };
            let def =
                job::resources::site::ResourceDef::from_words(&stored.name, Some(&stored.kind), Some(&stored.flags))
                    .map_err(|_| corrupt())?;
            site.define(def).map_err(|_| corrupt())?;
        }
        let node_names = self.node_names()?;
        let node_names = crate::state::NodeNames::new(&node_names);
        let is_node = |word: &str| node_names.contains(word);
        let mut loaded = self.load_with(server_name, &|pairs| ResourceRequest::from_list_at(pairs, &site, &is_node))?;
        loaded.resource_defs = defs;
        loaded.node_resources = values;
        Ok(loaded)
    }

    /// The names of the stored nodes (a `nodes=` word naming one is shown as `host=NAME`).
    fn node_names(&mut self) -> Result<Vec<String>, StoreError> {
        let stored = meta::table
            .find(NODES_KEY)
            .select(meta::value)
            .first::<String>(&mut self.connection)
            .optional()
            .map_err(|err| StoreError::database("loading nodes", err))?;
        let Some(text) = stored else { return Ok(Vec::new()) };
        let nodes = super::nodes::decode(&text)
            .map_err(|_| StoreError::CorruptMeta { key: NODES_KEY.to_string(), value: text })?;
        Ok(nodes.into_iter().map(|node| node.name).collect())
    }

    /// `load` with the resource-list parser given (tests substitute one).
    pub(super) fn load_with(&mut self, server_name: &str, parse: RequestParser<'_>) -> Result<Loaded, StoreError> {
        let (rows, stored_next, stored_nodes, config, accounting, usage) = self
            .connection
            .transaction(|connection| {
                let rows = jobs::table.order(jobs::seq.asc()).select(JobRow::as_select()).load(connection)?;
                let stored_next =
                    meta::table.find(NEXT_SEQ_KEY).select(meta::value).first::<String>(connection).optional()?;
                let stored_nodes =
                    meta::table.find(NODES_KEY).select(meta::value).first::<String>(connection).optional()?;
                let config = super::queues::load(connection)?;
                let accounting = super::accounting::load(connection)?;
                let usage = super::fairshare::load(connection)?;
                Ok::<_, diesel::result::Error>((rows, stored_next, stored_nodes, config, accounting, usage))
            })
            .map_err(|err| StoreError::database("load", err))?;
        let nodes = match stored_nodes {
            None => Vec::new(),
            Some(text) => super::nodes::decode(&text)
                .map_err(|_| StoreError::CorruptMeta { key: NODES_KEY.to_string(), value: text })?,
        };
        super::views::refresh(&mut self.connection, server_name, &nodes)
            .map_err(|err| StoreError::database("refreshing the views' tables", err))?;
        let stored_next = match stored_next {
            None => 0,
            Some(text) => text
                .parse::<u64>()
                .map_err(|_| StoreError::CorruptMeta { key: NEXT_SEQ_KEY.to_string(), value: text })?,
        };
        let mut jobs: Vec<Job> = Vec::with_capacity(rows.len());
        let mut parent: Option<usize> = None;
        for row in rows {
            let job = row.into_job(server_name, parse, parent.map(|index| &jobs[index]))?;
            if job.id.array.is_some_and(|part| part == job::id::ArrayPart::Parent) {
                parent = Some(jobs.len());
            }
            jobs.push(job);
        }
        let after_last = jobs.last().map_or(0, |job| job.id.seq.saturating_add(1));
        let next_seq = stored_next.max(after_last).max(1);
        tracing::info!(jobs = jobs.len(), next_seq, "job store loaded");
        let usage = super::fairshare::rows_to_usage(usage)?;
        Ok(Loaded {
            jobs,
            next_seq,
            nodes,
            config,
            accounting,
            resource_defs: Vec::new(),
            node_resources: Vec::new(),
            usage,
        })
    }

    /// Applies `ops` in order in one transaction: all of them are durable when this returns
    /// `Ok`, none of them when it returns `Err`. An empty slice does nothing.
    pub fn commit(&mut self, ops: &[StoreOp]) -> Result<(), StoreError> {
        if ops.is_empty() {
            return Ok(());
        }
        let fence = self.fence.as_ref();
        self.connection
            .transaction(|connection| {
                if let (Some(held), Db::Postgresql(connection)) = (fence, &mut *connection) {
                    super::lease::check(connection, held)?;
                }
                for op in ops {
                    apply(connection, op)?;
                }
                Ok(())
            })
            .map_err(|err| match err {
                TransactionError::Store(err) => err,
                TransactionError::Database(err) => {
                    StoreError::database(format!("commit of {} operations", ops.len()), err)
                }
            })
    }

    /// The script the job keyed `key` runs: its own row's, else (a subjob) its array
    /// parent's. `None` if neither row has one (the job is not stored).
    pub fn script(&mut self, key: JobKey) -> Result<Option<String>, StoreError> {
        let own = i64::try_from(key.raw()).map_err(|_| StoreError::NoSuchJob { seq: key.seq() })?;
        let parent = i64::try_from(key.parent().raw()).unwrap_or(own);
        // Two equalities, not `eq_any`: diesel prepares an `IN` list anew on every use.
        let query = jobs::table
            .filter(jobs::seq.eq(own).or(jobs::seq.eq(parent)))
            .filter(jobs::script.is_not_null())
            .order(jobs::seq.desc())
            .select(jobs::script);
        // Read as each job starts: on the inner connection (`db::on_inner!`).
        on_inner!(&mut self.connection, inner => query.first::<Option<String>>(inner))
            .optional()
            .map(Option::flatten)
            .map_err(|err| StoreError::database(format!("reading the script of job key {key}"), err))
    }

    /// The raw connection, for tests that plant rows the store would never write.
    #[cfg(test)]
    pub(super) fn connection(&mut self) -> &mut Db {
        &mut self.connection
    }
}

/// Applies one operation inside the commit's transaction.
fn apply(connection: &mut Db, op: &StoreOp) -> Result<(), TransactionError> {
    match op {
        StoreOp::InsertJob(job) => {
            let row = JobRow::from_job(job)?;
            // A subjob runs its parent's script: its row has none.
            let script = (!row.spec_json.is_empty()).then_some(job.spec.script.as_str());
            let values = (&row, jobs::script.eq(script));
            on_inner!(connection, inner => diesel::insert_into(jobs::table).values(values).execute(inner))
                .map_err(|err| StoreError::database(format!("insert of job {}", job.id.seq), err))?;
        }
        StoreOp::UpdateJob(job) => {
            let seq = job.id.seq;
            let changes = JobColumns::from_job(job)?;
            let update = super::update::update_job(key_column(&job.id)?, &changes);
            let updated = on_inner!(connection, inner => update.execute(inner))
                .map_err(|err| StoreError::database(format!("update of job {seq}"), err))?;
            if updated == 0 {
                return Err(StoreError::NoSuchJob { seq }.into());
            }
        }
        StoreOp::UpdateProgress(progress) => {
            let seq = progress.key.seq();
            let changes = ProgressColumns::from_progress(progress)?;
            let update = super::update::update_progress(key_value(progress.key)?, &changes);
            let updated = on_inner!(connection, inner => update.execute(inner))
                .map_err(|err| StoreError::database(format!("update of job {seq}"), err))?;
            if updated == 0 {
                return Err(StoreError::NoSuchJob { seq }.into());
            }
        }
        StoreOp::UpdateJobSpec(job) => {
            let seq = job.id.seq;
            let row = JobRow::with_spec(job)?;
            let changes = (&row.columns, jobs::spec_json.eq(&row.spec_json));
            let updated =
                on_inner!(connection, inner => diesel::update(jobs::table.find(row.seq)).set(changes).execute(inner))
                    .map_err(|err| StoreError::database(format!("update of job {seq} and its spec"), err))?;
            if updated == 0 {
                return Err(StoreError::NoSuchJob { seq }.into());
            }
        }
        StoreOp::DeleteJob(key) => {
            // A key beyond i64 cannot have been stored: there is nothing to delete.
            if let Ok(column) = i64::try_from(key.raw()) {
                on_inner!(connection, inner => diesel::delete(jobs::table.find(column)).execute(inner))
                    .map_err(|err| StoreError::database(format!("delete of job key {key}"), err))?;
            }
        }
        StoreOp::SetNodes(nodes) => {
            let value = super::nodes::encode(nodes).map_err(|message| StoreError::Unstorable { seq: 0, message })?;
            super::put_meta(connection, NODES_KEY, &value)
                .map_err(|err| StoreError::database("storing the node list", err))?;
            super::views::put_nodes(connection, nodes)
                .map_err(|err| StoreError::database("storing the node table", err))?;
        }
        StoreOp::PutQueue(queue) => super::queues::put_queue(connection, queue)?,
        StoreOp::DeleteQueue(name) => super::queues::delete_queue(connection, name)?,
        StoreOp::AddAccounting(records) => super::accounting::add(connection, records)?,
        StoreOp::ForgetAccounting(last) => super::accounting::forget(connection, *last)?,
        StoreOp::SetServerAttrs(attrs) => super::queues::set_server_attrs(connection, attrs)?,
        StoreOp::PutResourceDef(def) => super::site::put_def(connection, def)?,
        StoreOp::DeleteResourceDef(name) => super::site::delete_def(connection, name)?,
        StoreOp::SetNodeResources { node, values } => super::site::set_node_values(connection, node, values)?,
        StoreOp::PutUsage(usage) => super::fairshare::put(connection, usage)?,
        StoreOp::DeleteUsage { kind, name } => super::fairshare::delete(connection, *kind, name)?,
        StoreOp::SetNextSeq(next) => {
            let value = next.to_string();
            super::put_meta(connection, NEXT_SEQ_KEY, &value)
                .map_err(|err| StoreError::database("storing next_seq", err))?;
        }
    }
    Ok(())
}
