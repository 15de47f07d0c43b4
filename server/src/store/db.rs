//! Where the store lives ([`StoreLocation`]: `sqlite:PATH` or a `postgresql://` URL) and the
//! one connection type the store's code runs on ([`Db`], diesel's `MultiConnection` over
//! SQLite and PostgreSQL), opened with each backend's durability settings and migrated.
//!
//! SQLite: WAL, `synchronous=FULL`, a busy timeout, the file and its `-wal`/`-shm` the server
//! uid's only. PostgreSQL: `synchronous_commit=on` (a commit returns once its WAL is flushed),
//! `READ COMMITTED`; the database's privileges are the site's (docs/sql.md).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use diesel_migrations::MigrationHarness;

use super::error::StoreError;
use super::migrate::{Dialect, Migrations};

/// How long a SQLite statement waits for a lock held by another connection (e.g. an operator's
/// `sqlite3` shell) before failing, in milliseconds.
const BUSY_TIMEOUT_MS: u32 = 5_000;

/// SQLite's page cache, KiB (`PRAGMA cache_size` negative: a size, not pages). SQLite's
/// default is 2,000 KiB, and the server's connection fills it: the server reads the tables
/// once, at start, and then mostly appends and updates rows by key, which touches a few
/// pages per statement (the B-trees' paths). 512 KiB holds those paths (issue 19: measured in
/// the commit that set it).
const CACHE_KIB: u32 = 512;

/// The store's connection: the same queries run on either backend.
#[derive(diesel::MultiConnection)]
pub enum Db {
    Sqlite(SqliteConnection),
    Postgresql(PgConnection),
}

/// Runs `$body` with `$inner` bound to `$db`'s own connection (`&mut SqliteConnection` or
/// `&mut PgConnection`): the body is expanded once per backend, so the same diesel DSL compiles
/// for each. Why not through [`Db`]: diesel's `MultiConnection` wraps every statement in a
/// `SerializedQuery` that writes its SQL text and collects its binds through the multi-backend
/// anew on each execute, even when the statement is cached (issue 19: 22 % of the store
/// thread's CPU over a job's life, `server/examples/store_life.rs`). On the inner connection a
/// cached statement only binds. For the statements of every job's life; cold paths stay on `Db`.
macro_rules! on_inner {
    ($db:expr, $inner:ident => $body:expr) => {
        match $db {
            $crate::store::db::Db::Sqlite($inner) => $body,
            $crate::store::db::Db::Postgresql($inner) => $body,
        }
    };
}
pub(super) use on_inner;

impl Db {
    /// Which SQL dialect this connection speaks.
    #[cfg(test)]
    pub fn dialect(&self) -> Dialect {
        match self {
            Db::Sqlite(_) => Dialect::Sqlite,
            Db::Postgresql(_) => Dialect::Postgresql,
        }
    }
}

/// Where the job store is: `--store sqlite:PATH` (the default, `<state_dir>/server.db`) or
/// `--store postgresql://user@host/db` (also `postgres://`).
#[derive(Clone, PartialEq, Eq)]
pub enum StoreLocation {
    Sqlite(PathBuf),
    Postgresql(String),
}

impl StoreLocation {
    /// Parses `--store`'s value: `sqlite:PATH`, `postgresql://...` or `postgres://...`.
    pub fn parse(text: &str) -> Result<StoreLocation, String> {
        if let Some(path) = text.strip_prefix("sqlite:") {
            let path = path.strip_prefix("//").unwrap_or(path);
            if path.is_empty() {
                return Err("sqlite: needs a path (sqlite:/var/spool/pbs/server.db)".to_string());
            }
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        if text.starts_with("postgresql://") || text.starts_with("postgres://") {
            return Ok(StoreLocation::Postgresql(text.to_string()));
        }
        Err(format!("unknown store {:?}: use sqlite:PATH or postgresql://USER@HOST/DATABASE", redact(text)))
    }

    /// The SQLite file, if the store is one.
    pub fn sqlite_path(&self) -> Option<&Path> {
        match self {
            StoreLocation::Sqlite(path) => Some(path),
            StoreLocation::Postgresql(_) => None,
        }
    }
}

/// A URL with any password replaced, for messages and logs.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let Some((auth, host)) = rest.split_once('@') else { return url.to_string() };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => format!("{scheme}://{auth}@{host}"),
    }
}

impl fmt::Display for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreLocation::Sqlite(path) => write!(f, "sqlite:{}", path.display()),
            StoreLocation::Postgresql(url) => f.write_str(&redact(url)),
        }
    }
}

impl fmt::Debug for StoreLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Connects to the store at `location` with its durability settings, as its writer (the write
/// guard), without migrating it: on PostgreSQL only the lease holder may change the schema.
pub(super) fn connect(location: &StoreLocation) -> Result<Db, StoreError> {
    match location {
        StoreLocation::Sqlite(path) => open_sqlite(path).map(Db::Sqlite),
        StoreLocation::Postgresql(url) => open_postgresql(url, &location.to_string()).map(Db::Postgresql),
    }
}

/// Applies the pending migrations.
pub(super) fn migrate(db: &mut Db) -> Result<(), StoreError> {
    let applied = match db {
        Db::Sqlite(connection) => connection.run_pending_migrations(Migrations(Dialect::Sqlite)).map(drop),
        Db::Postgresql(connection) => connection.run_pending_migrations(Migrations(Dialect::Postgresql)).map(drop),
    };
    applied.map_err(|err| StoreError::Migrate { source: Arc::from(err) })
}

/// The answer of `PRAGMA journal_mode`.
#[derive(QueryableByName)]
struct JournalMode {
    #[diesel(sql_type = Text)]
    journal_mode: String,
}

fn open_sqlite(path: &Path) -> Result<SqliteConnection, StoreError> {
    let url = path.to_str().ok_or_else(|| StoreError::BadPath(path.to_path_buf()))?;
    let mut connection = SqliteConnection::establish(url)
        .map_err(|err| StoreError::Open { path: path.display().to_string(), source: Arc::new(err) })?;
    restrict_to_owner(path);
    connection
        .batch_execute(&format!("PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}; PRAGMA cache_size = -{CACHE_KIB};"))
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
    super::guard::claim_sqlite(&mut connection).map_err(|err| StoreError::database("claiming the store", err))?;
    Ok(connection)
}

fn open_postgresql(url: &str, shown: &str) -> Result<PgConnection, StoreError> {
    let mut connection = PgConnection::establish(url)
        .map_err(|err| StoreError::Open { path: shown.to_string(), source: Arc::new(err) })?;
    connection
        .batch_execute(
            "SET synchronous_commit = on; \
             SET default_transaction_isolation = 'read committed'; \
             SET client_min_messages = warning;",
        )
        .map_err(|err| StoreError::database("setting the session's durability", err))?;
    super::guard::claim_postgresql(&mut connection).map_err(|err| StoreError::database("claiming the store", err))?;
    Ok(connection)
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
