//! [`Store`]: one SQLite connection that opens (and migrates) the job database, loads it at
//! start-up and applies batches of [`StoreOp`]s in single transactions.
//!
//! Blocking: every call here waits for SQLite (and for fsync on commit). The server calls
//! `load` before it serves anything and `commit` only through [`super::StoreHandle`]'s thread,
//! never on an async worker.

use job::JobKey;
use std::path::Path;
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use job::ResourceRequest;

use super::error::StoreError;
use super::models::{key_column, JobColumns, JobRow, RequestParser};
use super::schema::{jobs, meta};
use super::{Loaded, StoreOp};
use crate::state::Job;

/// The migrations under `server/migrations/`, compiled into the binary.
pub(super) const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// The `meta` key holding the next job sequence number to hand out.
pub(super) const NEXT_SEQ_KEY: &str = "next_seq";
use super::nodes::NODES_KEY;

/// How long a statement waits for a lock held by another connection (e.g. an operator's
/// `sqlite3` shell) before failing, in milliseconds.
const BUSY_TIMEOUT_MS: u32 = 5_000;

/// The durable job store: one SQLite database in WAL mode with `synchronous=FULL`, so a
/// committed transaction survives a crash or power loss.
pub struct Store {
    connection: SqliteConnection,
}

/// The answer of `PRAGMA journal_mode`.
#[derive(QueryableByName)]
struct JournalMode {
    #[diesel(sql_type = Text)]
    journal_mode: String,
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

/// The store holds job scripts, environments and interactive jobs' secrets: only the server's
/// user may read it. SQLite gives the `-wal` and `-shm` files the database file's mode; ones
/// left by an earlier run are restricted too.
fn restrict_to_owner(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for suffix in ["", "-wal", "-shm"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                tracing::warn!(path = ?file, "cannot make the job store private: {err}");
            }
            _ => {}
        }
    }
}

impl Store {
    /// Opens the database at `path`, creating the file if needed, sets WAL mode,
    /// `synchronous=FULL` and a busy timeout, and applies pending embedded migrations.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let url = path.to_str().ok_or_else(|| StoreError::BadPath(path.to_path_buf()))?;
        let mut connection = SqliteConnection::establish(url)
            .map_err(|err| StoreError::Open { path: path.to_path_buf(), source: Arc::new(err) })?;
        restrict_to_owner(path);
        connection
            .batch_execute(&format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS};"))
            .map_err(|err| StoreError::database("setting busy_timeout", err))?;
        let mode = diesel::sql_query("PRAGMA journal_mode = WAL")
            .get_result::<JournalMode>(&mut connection)
            .map_err(|err| StoreError::database("setting journal_mode", err))?;
        if !mode.journal_mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(path = %path.display(), journal_mode = %mode.journal_mode, "job store is not in WAL mode (file system without shared memory?)");
        }
        connection
            .batch_execute("PRAGMA synchronous = FULL;")
            .map_err(|err| StoreError::database("setting synchronous", err))?;
        connection.run_pending_migrations(MIGRATIONS).map_err(|err| StoreError::Migrate { source: Arc::from(err) })?;
        Ok(Store { connection })
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
        self.connection
            .immediate_transaction(|connection| {
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
        jobs::table
            .filter(jobs::seq.eq_any([own, parent]))
            .filter(jobs::script.is_not_null())
            .order(jobs::seq.desc())
            .select(jobs::script)
            .first::<Option<String>>(&mut self.connection)
            .optional()
            .map(Option::flatten)
            .map_err(|err| StoreError::database(format!("reading the script of job key {key}"), err))
    }

    /// The raw connection, for tests that plant rows the store would never write.
    #[cfg(test)]
    pub(super) fn connection(&mut self) -> &mut SqliteConnection {
        &mut self.connection
    }
}

/// Applies one operation inside the commit's transaction.
fn apply(connection: &mut SqliteConnection, op: &StoreOp) -> Result<(), TransactionError> {
    match op {
        StoreOp::InsertJob(job) => {
            let row = JobRow::from_job(job)?;
            // A subjob runs its parent's script: its row has none.
            let script = (!row.spec_json.is_empty()).then_some(job.spec.script.as_str());
            diesel::insert_into(jobs::table)
                .values((&row, jobs::script.eq(script)))
                .execute(connection)
                .map_err(|err| StoreError::database(format!("insert of job {}", job.id.seq), err))?;
        }
        StoreOp::UpdateJob(job) => {
            let seq = job.id.seq;
            let changes = JobColumns::from_job(job)?;
            let updated = diesel::update(jobs::table.find(key_column(&job.id)?))
                .set(&changes)
                .execute(connection)
                .map_err(|err| StoreError::database(format!("update of job {seq}"), err))?;
            if updated == 0 {
                return Err(StoreError::NoSuchJob { seq }.into());
            }
        }
        StoreOp::UpdateJobSpec(job) => {
            let seq = job.id.seq;
            let row = JobRow::with_spec(job)?;
            let updated = diesel::update(jobs::table.find(row.seq))
                .set((&row.columns, jobs::spec_json.eq(&row.spec_json)))
                .execute(connection)
                .map_err(|err| StoreError::database(format!("update of job {seq} and its spec"), err))?;
            if updated == 0 {
                return Err(StoreError::NoSuchJob { seq }.into());
            }
        }
        StoreOp::DeleteJob(key) => {
            // A key beyond i64 cannot have been stored: there is nothing to delete.
            if let Ok(column) = i64::try_from(key.raw()) {
                diesel::delete(jobs::table.find(column))
                    .execute(connection)
                    .map_err(|err| StoreError::database(format!("delete of job key {key}"), err))?;
            }
        }
        StoreOp::SetNodes(nodes) => {
            let value = super::nodes::encode(nodes).map_err(|message| StoreError::Unstorable { seq: 0, message })?;
            diesel::insert_into(meta::table)
                .values((meta::key.eq(NODES_KEY), meta::value.eq(&value)))
                .on_conflict(meta::key)
                .do_update()
                .set(meta::value.eq(&value))
                .execute(connection)
                .map_err(|err| StoreError::database("storing the node list", err))?;
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
            diesel::insert_into(meta::table)
                .values((meta::key.eq(NEXT_SEQ_KEY), meta::value.eq(&value)))
                .on_conflict(meta::key)
                .do_update()
                .set(meta::value.eq(&value))
                .execute(connection)
                .map_err(|err| StoreError::database("storing next_seq", err))?;
        }
    }
    Ok(())
}
