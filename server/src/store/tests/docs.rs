//! docs/sql.md says what works: every query block of it (a ```sql block whose first line is
//! `-- SQLite`, `-- PostgreSQL` or `-- SQLite and PostgreSQL`) runs on its stores against the
//! views' sample, from another connection, and returns rows; on PostgreSQL the read-only role
//! it sets up reads the views and nothing else.

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use super::views::commit_sample;
use super::{fresh_store, full_job, load, StoreLocation};
use crate::state::NodeShare;
use crate::store::migrate::Dialect;
use crate::store::StoreOp;

const DOC: &str = include_str!("../../../../docs/sql.md");

/// The ```sql blocks of the document, each as its lines.
fn sql_blocks() -> Vec<Vec<&'static str>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in DOC.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sql") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.push(current.take().expect("in a block")),
            (Some(block), _) => block.push(line),
            (None, _) => {}
        }
    }
    blocks
}

/// The query blocks for `dialect`, without their first (comment) line.
fn queries(dialect: Dialect) -> Vec<String> {
    let wanted = match dialect {
        Dialect::Sqlite => "SQLite",
        Dialect::Postgresql => "PostgreSQL",
    };
    sql_blocks()
        .into_iter()
        .filter(|block| {
            let first = block[0].trim_start_matches("--").trim();
            first == "SQLite and PostgreSQL" || first == wanted
        })
        .map(|block| block[1..].join("\n"))
        .collect()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// How many rows `query` returns on a connection of its own to `location`.
fn count_rows(location: &StoreLocation, query: &str) -> Result<i64, String> {
    let query = format!("SELECT COUNT(*) AS n FROM ({}) q", query.trim().trim_end_matches(';'));
    let rows: QueryResult<Vec<Count>> = match location {
        StoreLocation::Sqlite(path) => {
            let mut connection = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
            diesel::sql_query(query).load(&mut connection)
        }
        StoreLocation::Postgresql(url) => {
            let mut connection = PgConnection::establish(url).unwrap();
            diesel::sql_query(query).load(&mut connection)
        }
    };
    rows.map(|rows| rows[0].n).map_err(|err| err.to_string())
}

#[test]
fn the_documented_queries_run_and_answer() {
    let (_dir, location, mut store) = fresh_store();
    commit_sample(&mut store);
    // A job that ran for an hour on two GPUs, started this month.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let mut gpu_job = full_job(7);
    gpu_job.set_state_for_test(job::JobState::Finished);
    gpu_job.times.stime = Some(now - 3600);
    gpu_job.used.walltime_secs = 3600;
    gpu_job.exec = vec![NodeShare {
        node: "n1".into(),
        slots: vec![0],
        gpus: vec![0, 1],
        mem_bytes: 0,
        mpiprocs: 1,
        mps: None,
        amounts: Vec::new(),
    }];
    store.commit(&[StoreOp::InsertJob(Box::new(gpu_job))]).unwrap();
    load(&mut store);
    let dialect = store.connection().dialect();
    let queries = queries(dialect);
    assert_eq!(queries.len(), 3, "three queries for {dialect:?}");
    for query in &queries {
        let rows = count_rows(&location, query).unwrap_or_else(|err| panic!("{query}\n{err}"));
        assert!(rows > 0, "{query}\nreturned no rows");
    }
}

/// The block that creates the read-only role.
fn role_block() -> String {
    let block = sql_blocks()
        .into_iter()
        .find(|block| block.iter().any(|line| line.starts_with("CREATE ROLE")))
        .expect("docs/sql.md sets up a read-only role");
    block.join("\n")
}

/// PostgreSQL only (SQLite has no roles): run by `postgresql::the_documented_role_reads_the_views_only`.
fn the_documented_role_reads_the_views_only() {
    let (_dir, location, mut store) = fresh_store();
    commit_sample(&mut store);
    load(&mut store);
    let StoreLocation::Postgresql(url) = &location else { panic!("a PostgreSQL test") };
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let role = format!("reader_{}_{}", std::process::id(), COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (scheme_auth, database) = base.rsplit_once('/').expect("a database in the URL");
    let setup = role_block().replace("lab_reader", &role).replace("DATABASE minipbs", &format!("DATABASE {database}"));
    let mut owner = PgConnection::establish(url).unwrap();
    owner.batch_execute(&setup).unwrap_or_else(|err| panic!("{setup}\n{err}"));
    let (scheme, rest) = scheme_auth.split_once("://").unwrap();
    let host = rest.split_once('@').map_or(rest, |(_, host)| host);
    let reader_url = format!("{scheme}://{role}:choose-one@{host}/{database}?{query}");
    for view in ["jobs", "job_history", "job_hosts", "nodes", "queues"] {
        let rows = count_rows(&StoreLocation::Postgresql(reader_url.clone()), &format!("SELECT * FROM {view}"));
        assert!(rows.is_ok_and(|rows| rows > 0), "{role} reads {view}");
    }
    for table in ["job_records", "meta", "minipbs_job_rows", "minipbs_job_shares"] {
        let err = count_rows(&StoreLocation::Postgresql(reader_url.clone()), &format!("SELECT * FROM {table}"))
            .expect_err(table);
        assert!(err.contains("permission denied"), "{table}: {err}");
    }
}

#[test]
fn every_sql_block_is_run_by_a_test() {
    for block in sql_blocks() {
        let first = block[0].trim_start_matches("--").trim();
        let known = ["SQLite", "PostgreSQL", "SQLite and PostgreSQL"].contains(&first)
            || block.iter().any(|line| line.starts_with("CREATE ROLE"));
        assert!(known, "a ```sql block no test runs:\n{}", block.join("\n"));
    }
}

super::on_postgresql!(the_documented_queries_run_and_answer, the_documented_role_reads_the_views_only);
