//! The write guard's key: what makes a connection pbs_server's, which alone may write the
//! store's tables (migration `2026-11-26-100200_write_guard`; docs/sql.md). Any other
//! connection's INSERT, UPDATE, DELETE (or TRUNCATE) is refused by triggers.
//!
//! SQLite: the server's connection registers the SQL function [`SQLITE_FUNCTION`], which the
//! triggers call: on a connection without it a write fails to prepare ("no such function").
//! PostgreSQL: the session sets `minipbs.writer = 'pbs_server'`; the trigger function refuses
//! a write from a session without it. Both are claimed before the migrations run, so later
//! migrations may write.

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;

/// The SQL function only the server's SQLite connection has (named in the SQLite triggers).
#[cfg(test)]
pub(super) const SQLITE_FUNCTION: &str = "minipbs_store_written_by_pbs_server_only";

/// What PostgreSQL's guard answers any other writer (and SQLite's, should a connection have a
/// function of that name that does not say yes).
#[cfg(test)]
pub(super) const REFUSAL: &str =
    "minipbs: the job store is written only by pbs_server; use qsub, qalter, qdel, qrerun or qmgr";

diesel::define_sql_function! {
    /// True on pbs_server's connection; absent on any other.
    fn minipbs_store_written_by_pbs_server_only() -> diesel::sql_types::Bool;
}

/// Marks an SQLite connection as the server's.
pub(super) fn claim_sqlite(connection: &mut SqliteConnection) -> diesel::QueryResult<()> {
    minipbs_store_written_by_pbs_server_only_utils::register_impl(connection, || true)
}

/// Marks a PostgreSQL session as the server's.
pub(super) fn claim_postgresql(connection: &mut PgConnection) -> diesel::QueryResult<()> {
    connection.batch_execute("SET minipbs.writer = 'pbs_server';")
}
