//! The write guard (`store/guard.rs`): the store's own connection writes; any other connection
//! to the same database may read the views but its INSERT, UPDATE or DELETE on any table is
//! refused with the guard's message (SQLite: the guard's function is missing), and the rows
//! stay as they were. Writing a view fails too.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::{fresh_store, load, queued_job, StoreLocation};
use crate::store::guard::{REFUSAL, SQLITE_FUNCTION};
use crate::store::{Store, StoreOp};

/// A second connection to the store's database, as an SQL client would open it.
enum Other {
    Sqlite(SqliteConnection),
    Postgresql(PgConnection),
}

impl Other {
    fn open(location: &StoreLocation) -> Other {
        match location {
            StoreLocation::Sqlite(path) => Other::Sqlite(SqliteConnection::establish(path.to_str().unwrap()).unwrap()),
            StoreLocation::Postgresql(url) => Other::Postgresql(PgConnection::establish(url).unwrap()),
        }
    }

    /// Runs `sql`, which the guard must refuse.
    fn refused(&mut self, sql: &str) {
        let err = self.run(sql).expect_err(sql);
        let expected = match self {
            Other::Sqlite(_) => format!("no such function: {SQLITE_FUNCTION}"),
            Other::Postgresql(_) => REFUSAL.to_string(),
        };
        assert!(err.contains(&expected), "{sql}: {err}");
    }

    fn run(&mut self, sql: &str) -> Result<(), String> {
        match self {
            Other::Sqlite(connection) => connection.batch_execute(sql),
            Other::Postgresql(connection) => connection.batch_execute(sql),
        }
        .map_err(|err| err.to_string())
    }

    fn count(&mut self, sql: &str) -> i64 {
        #[derive(QueryableByName)]
        struct Count {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            n: i64,
        }
        let query = diesel::sql_query(sql);
        let rows: Vec<Count> = match self {
            Other::Sqlite(connection) => query.load(connection),
            Other::Postgresql(connection) => query.load(connection),
        }
        .unwrap();
        rows[0].n
    }

    /// The store's tables (not diesel's migration table).
    fn tables(&mut self) -> Vec<String> {
        #[derive(QueryableByName)]
        struct Name {
            #[diesel(sql_type = diesel::sql_types::Text)]
            name: String,
        }
        let rows: Vec<Name> = match self {
            Other::Sqlite(connection) => diesel::sql_query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
                 AND name NOT LIKE '__diesel%'",
            )
            .load(connection),
            Other::Postgresql(connection) => diesel::sql_query(
                "SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'public' \
                 AND tablename NOT LIKE '__diesel%'",
            )
            .load(connection),
        }
        .unwrap();
        rows.into_iter().map(|row| row.name).collect()
    }
}

#[test]
fn only_the_server_writes_and_others_read_the_views() {
    let (_dir, location, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    load(&mut store);
    let mut other = Other::open(&location);
    assert_eq!(other.count("SELECT COUNT(*) AS n FROM jobs"), 1, "another connection reads the views");
    for sql in [
        "UPDATE job_records SET state = 'R'",
        "DELETE FROM job_records",
        "DELETE FROM meta",
        "INSERT INTO queue_attrs (queue, name, value) VALUES ('q', 'enabled', 'True')",
        "DELETE FROM node_records WHERE name = 'none'",
    ] {
        other.refused(sql);
    }
    if let Other::Postgresql(_) = other {
        other.refused("TRUNCATE job_records");
    }
    for sql in ["UPDATE jobs SET job_state = 'R'", "DELETE FROM jobs", "DELETE FROM nodes"] {
        other.run(sql).expect_err("a view is not written");
    }
    assert_eq!(other.count("SELECT COUNT(*) AS n FROM jobs WHERE job_state = 'Q'"), 1, "the row is unchanged");
    assert_eq!(other.count("SELECT COUNT(*) AS n FROM queue_attrs"), 0);
    // The server's connection still writes, and reads back what it wrote.
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(2)))]).unwrap();
    assert_eq!(load(&mut store).jobs.len(), 2);
}

#[test]
fn every_table_is_guarded() {
    let (_dir, location, store) = fresh_store();
    let mut other = Other::open(&location);
    let tables = other.tables();
    assert!(tables.len() >= 9, "{tables:?}");
    for table in tables {
        // Refused by the guard before any constraint looks at the (missing) values.
        other.refused(&format!("INSERT INTO {table} DEFAULT VALUES"));
    }
    drop(store);
}

/// SQLite: a connection with a function of the guard's name that does not say yes is refused
/// with the guard's message.
#[test]
fn a_sqlite_connection_with_a_false_guard_function_is_refused() {
    let (_dir, location, _store) = fresh_store();
    let path = location.sqlite_path().expect("an SQLite store");
    let mut other = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    crate::store::guard::minipbs_store_written_by_pbs_server_only_utils::register_impl(&other, || false).unwrap();
    let err = other.batch_execute("INSERT INTO meta (key, value) VALUES ('a', 'b')").expect_err("refused");
    assert!(err.to_string().contains(REFUSAL), "{err}");
}

#[test]
fn a_reopened_store_is_the_writer_again() {
    let (_dir, location, store) = fresh_store();
    drop(store);
    let mut store = Store::open(&location).unwrap();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    assert_eq!(load(&mut store).jobs.len(), 1);
}

super::on_postgresql!(
    only_the_server_writes_and_others_read_the_views,
    every_table_is_guarded,
    a_reopened_store_is_the_writer_again
);
