//! Store tests: each test opens a fresh database (a file in its own temporary directory, or a
//! new PostgreSQL database), with the migrations applied by `Store::open`. Helpers here build
//! jobs with every field set.
//!
//! The matrix: every test runs on SQLite; each file's [`on_postgresql!`] list runs again on
//! PostgreSQL, as `...::postgresql::<test>`, in a fresh database of the throw-away cluster
//! named by `MINIPBS_TEST_POSTGRES` (an admin URL; `tests/postgres/run` starts one and sets
//! it). Without it those tests fail under `CI` and are skipped, with a line saying so, outside.
//!
//! Loading goes through `Store::load_with` and [`fake_parser`] unless a test is about the real
//! resource parser, so these tests do not depend on `ResourceRequest::from_list`.

mod accounting;
mod arrays;
mod crash;
mod docs;
mod fairshare;
mod group_commit;
mod guard;
mod jobs;
mod lease;
mod migrations;
mod next_seq;
mod previous_release;
mod queues;
mod scripts;
mod site;
mod statements;
mod view_columns;
mod views;

use std::cell::Cell;

use job::spec::Join;
use job::{Chunk, JobId, JobSpec, JobState, Placement, ResourceError, ResourceRequest};
use proto::mom::ResourcesUsed;
use tempfile::TempDir;

use super::{Loaded, Store, StoreLocation};
use crate::state::{Job, JobTimes, NodeShare};

/// The server name tests load with.
const SERVER: &str = "head";

/// Which database this thread's test opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgresql,
}

thread_local! {
    static BACKEND: Cell<Backend> = const { Cell::new(Backend::Sqlite) };
}

/// The admin URL of the throw-away PostgreSQL cluster for tests.
const POSTGRES_ENV: &str = "MINIPBS_TEST_POSTGRES";

/// Runs `test` with this thread's fresh stores on `backend`. PostgreSQL without
/// [`POSTGRES_ENV`]: a failure under `CI`, else a skip that says so.
fn run_on(backend: Backend, test: fn()) {
    if backend == Backend::Postgresql && std::env::var_os(POSTGRES_ENV).is_none() {
        assert!(std::env::var_os("CI").is_none(), "{POSTGRES_ENV} is not set: run the tests under tests/postgres/run");
        eprintln!("skipped: {POSTGRES_ENV} is not set (tests/postgres/run starts a PostgreSQL for the tests)");
        return;
    }
    BACKEND.with(|cell| cell.set(backend));
    test();
}

/// Generates `mod postgresql` with one test per name, running that test of this file on a fresh
/// PostgreSQL database.
macro_rules! on_postgresql {
    ($($name:ident),* $(,)?) => {
        mod postgresql {
            $(
                #[test]
                fn $name() {
                    crate::store::tests::run_on(crate::store::tests::Backend::Postgresql, super::$name);
                }
            )*
        }
    };
}
use on_postgresql;

/// A new, empty PostgreSQL database on the test cluster; its URL.
fn fresh_postgresql() -> String {
    use diesel::{Connection, RunQueryDsl};
    static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let admin = std::env::var(POSTGRES_ENV).expect("MINIPBS_TEST_POSTGRES");
    let name =
        format!("minipbs_test_{}_{}", std::process::id(), COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let mut connection = diesel::pg::PgConnection::establish(&admin).expect("connect to the test PostgreSQL");
    diesel::sql_query(format!("DROP DATABASE IF EXISTS {name}")).execute(&mut connection).unwrap();
    diesel::sql_query(format!("CREATE DATABASE {name}")).execute(&mut connection).expect("create a test database");
    with_database(&admin, &name)
}

/// `url` with its database replaced by `name` (`postgresql://u@h/db?host=/dir` keeps its query).
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(base, query)| (base, Some(query)));
    let (scheme, rest) = base.split_once("://").expect("a postgresql:// URL");
    let authority = rest.split('/').next().unwrap_or("");
    let query = query.map(|query| format!("?{query}")).unwrap_or_default();
    format!("{scheme}://{authority}/{name}{query}")
}

/// A fresh store location on this thread's backend: a path in a new temporary directory (kept
/// alive by the returned guard), or a new PostgreSQL database.
fn fresh_db() -> (TempDir, StoreLocation) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let location = match BACKEND.with(Cell::get) {
        Backend::Sqlite => StoreLocation::Sqlite(dir.path().join("jobs.db")),
        Backend::Postgresql => StoreLocation::Postgresql(fresh_postgresql()),
    };
    (dir, location)
}

/// Opens (creating and migrating) a fresh store.
fn fresh_store() -> (TempDir, StoreLocation, Store) {
    let (dir, location) = fresh_db();
    let store = Store::open(&location).expect("open fresh store");
    (dir, location, store)
}

#[test]
fn a_test_database_url_keeps_its_host_and_query() {
    assert_eq!(with_database("postgresql://pg@/postgres?host=/tmp/x", "t1"), "postgresql://pg@/t1?host=/tmp/x");
    assert_eq!(with_database("postgres://u:p@db:5433/admin", "t2"), "postgres://u:p@db:5433/t2");
}

/// The request every test job carries, built by hand (the real parser may not exist yet).
fn sample_request() -> ResourceRequest {
    ResourceRequest {
        chunks: vec![Chunk {
            count: 2,
            ncpus: 2,
            ngpus: 1,
            mem: Some(1 << 30),
            mpiprocs: 2,
            host: None,
            properties: vec!["fast".to_string()],
            mps: None,
            amounts: Vec::new(),
        }],
        place: Placement::Scatter,
        exclusive: true,
        walltime: Some(3600),
        cput: None,
        first_ppn: 2,
        display: vec![
            ("ncpus".to_string(), "4".to_string()),
            ("nodes".to_string(), "2:ppn=2:gpus=1:fast".to_string()),
            ("walltime".to_string(), "01:00:00".to_string()),
        ]
        .into(),
    }
}

/// Stands in for `ResourceRequest::from_list`: always the sample request.
fn fake_parser(_pairs: &[(String, String)]) -> Result<ResourceRequest, ResourceError> {
    Ok(sample_request())
}

/// Loads with [`fake_parser`] and server name [`SERVER`]. Checks each job's `spec_bytes` (its
/// spec's size, 0 for a subjob sharing its parent's) and then zeroes it, as the test jobs have it.
fn load(store: &mut Store) -> Loaded {
    let mut loaded = store.load_with(SERVER, &fake_parser).expect("load");
    let mut earlier: Vec<std::sync::Arc<JobSpec>> = Vec::new();
    for job in &mut loaded.jobs {
        let shared = earlier.iter().any(|spec| std::sync::Arc::ptr_eq(spec, &job.spec));
        let expected = if shared { 0 } else { Job::spec_size(&job.spec) };
        if BACKEND.with(Cell::get) == Backend::Postgresql && job.spec_bytes > expected {
            // A row from before the scripts migration had its spec rewritten by PostgreSQL's
            // jsonb, which spaces the text out: a few bytes more are counted against the quota.
            assert!(job.spec_bytes < 2 * expected, "spec_bytes of {}: {}", job.id, job.spec_bytes);
        } else {
            assert_eq!(job.spec_bytes, expected, "spec_bytes of {}", job.id);
        }
        job.spec_bytes = 0;
        earlier.push(std::sync::Arc::clone(&job.spec));
    }
    loaded
}

/// A spec with most fields set (the rest as `JobSpec::default`), distinct per seq.
fn sample_spec(seq: u64) -> JobSpec {
    JobSpec {
        name: format!("job{seq}"),
        // As the state holds it: the script lives in its own column (`scripts.rs`).
        script: String::new(),
        queue: Some("batch".to_string()),
        resources: vec![
            ("nodes".to_string(), "2:ppn=2:gpus=1:fast".to_string()),
            ("walltime".to_string(), "1:00:00".to_string()),
        ],
        output_path: Some("login:/home/alice/out/".to_string()),
        join: Join::OutErr,
        keep: "oe".to_string(),
        user_hold: true,
        rerunnable: false,
        priority: -17,
        variables: vec![("PBS_O_WORKDIR".to_string(), "/home/alice".to_string()), ("EMPTY".to_string(), String::new())]
            .into(),
        shell: Some("/bin/bash".to_string()),
        mail_points: "abe".to_string(),
        mail_users: vec!["alice@example.com".to_string(), "bob".to_string()],
        account: Some("proj-1".to_string()),
        submit_host: "login".to_string(),
        submit_args: "-l nodes=2:ppn=2 job.sh".to_string(),
        ..JobSpec::default()
    }
}

/// A queued job: every optional field `None`, no allocation.
fn queued_job(seq: u64) -> Job {
    let mut job = Job::new(JobId::new(seq, SERVER), sample_spec(seq).into(), sample_request(), JobState::Queued);
    job.owner = "alice".into();
    job.owner_uid = 1000;
    job.group = "users".into();
    job.queue = "batch".into();
    job.times = JobTimes {
        ctime: 1_700_000_000,
        qtime: 1_700_000_001,
        mtime: 1_700_000_002,
        etime: 1_700_000_003,
        stime: None,
        obittime: None,
    };
    job.output_path = crate::state::StdPath::literal(&format!("login:/home/alice/out/job{seq}.o{seq}"));
    job.error_path = crate::state::StdPath::literal(&format!("login:/home/alice/job{seq}.e{seq}"));
    job
}

/// A job that ran on two nodes and ended: every optional field `Some`, extreme values where
/// the types allow them.
fn full_job(seq: u64) -> Job {
    let mut job = queued_job(seq);
    job.set_state_for_test(JobState::Exiting);
    job.owner_uid = u32::MAX;
    job.hold_types = "uos".into();
    job.times.ctime = -5;
    job.times.stime = Some(1_700_000_010);
    job.times.obittime = Some(i64::MAX);
    job.exec = vec![
        NodeShare {
            node: "n1".into(),
            slots: vec![0, 1],
            gpus: vec![0],
            mem_bytes: 1 << 30,
            mpiprocs: 2,
            mps: None,
            amounts: vec![("scratch".to_string(), 60 << 30)],
        },
        NodeShare {
            node: "n2.cluster".into(),
            slots: vec![4, 5],
            gpus: Vec::new(),
            mem_bytes: 0,
            mpiprocs: 2,
            mps: None,
            amounts: Vec::new(),
        },
    ];
    job.session_id = Some(i32::MAX);
    job.exit_status = Some(-9);
    job.used =
        ResourcesUsed { cput_secs: 7, mem_kb: 2048, vmem_kb: i64::MAX as u64, walltime_secs: 65, ncpus: u32::MAX };
    job.run_count = 3;
    job.comment = Some("Job run at Mon Jan 1 on (n1:ncpus=2)+(n2:ncpus=2) — ünïcode 'quoted'".to_string());
    job.delete_requested = true;
    job.rerun_requested = true;
    job.sched_preempted = Some(1_700_000_050);
    job.shares_released = true;
    job
}

/// The versions of the applied migrations.
fn applied(store: &mut Store) -> Vec<String> {
    use diesel_migrations::MigrationHarness;
    let versions = match store.connection() {
        super::db::Db::Sqlite(connection) => connection.applied_migrations(),
        super::db::Db::Postgresql(connection) => connection.applied_migrations(),
    };
    versions.unwrap().iter().map(ToString::to_string).collect()
}

/// Reverts migrations, newest first, until none at or after `version` is applied.
fn revert_down_to(store: &mut Store, version: &str) {
    use super::migrate::{Dialect, Migrations};
    use diesel_migrations::MigrationHarness;
    while applied(store).iter().any(|applied| applied.as_str() >= version) {
        match store.connection() {
            super::db::Db::Sqlite(connection) => {
                connection.revert_last_migration(Migrations(Dialect::Sqlite)).map(drop).expect("down runs")
            }
            super::db::Db::Postgresql(connection) => {
                connection.revert_last_migration(Migrations(Dialect::Postgresql)).map(drop).expect("down runs")
            }
        }
    }
}

/// Whether any migration is pending on the store.
fn pending(store: &mut Store) -> bool {
    use super::migrate::{Dialect, Migrations};
    use diesel_migrations::MigrationHarness;
    match store.connection() {
        super::db::Db::Sqlite(connection) => connection.has_pending_migration(Migrations(Dialect::Sqlite)),
        super::db::Db::Postgresql(connection) => connection.has_pending_migration(Migrations(Dialect::Postgresql)),
    }
    .unwrap()
}

/// Text as an SQL string literal (tests plant values behind the store's back).
fn sql_text(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}
