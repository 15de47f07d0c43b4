//! The embedded migrations: applied once by `open`, and reversible (so `down.sql` is valid).

use diesel::prelude::*;

use super::{fresh_store, load, pending, queued_job, revert_down_to};
use crate::store::migrate::Dialect;
use crate::store::{Store, StoreOp};

/// Names of the tables in the database, sorted.
fn tables(store: &mut Store) -> Vec<String> {
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let query = match store.connection().dialect() {
        Dialect::Sqlite => {
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        }
        Dialect::Postgresql => "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
    };
    let names: Vec<Name> = diesel::sql_query(query).load(store.connection()).unwrap();
    names.into_iter().map(|name| name.name).collect()
}

#[test]
fn open_applies_every_migration_once() {
    let (_dir, path, mut store) = fresh_store();
    assert_eq!(
        tables(&mut store),
        [
            "__diesel_schema_migrations",
            "accounting",
            "fairshare_usage",
            "jobs",
            "meta",
            "node_resources",
            "queue_attrs",
            "resource_defs",
            "server_attrs"
        ]
    );
    assert!(!pending(&mut store));
    drop(store);
    let mut store = Store::open(&path).expect("reopening applies nothing twice");
    assert!(!pending(&mut store));
}

#[test]
fn migrations_revert_and_reapply() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    revert_down_to(&mut store, "0");
    assert_eq!(tables(&mut store), ["__diesel_schema_migrations"]);
    drop(store);
    let mut store = Store::open(&path).expect("up.sql runs again");
    assert!(load(&mut store).jobs.is_empty());
}

#[test]
fn rows_from_before_job_keys_load_with_their_ids() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(7)))]).unwrap();
    // Back to the schema of the first release (plain sequence numbers in `seq`) ...
    revert_down_to(&mut store, "20261122000000");
    let seqs: Vec<i64> = diesel::sql_query("SELECT seq FROM jobs")
        .load::<Seq>(store.connection())
        .unwrap()
        .into_iter()
        .map(|row| row.seq)
        .collect();
    assert_eq!(seqs, [7], "the old schema holds plain sequence numbers");
    drop(store);
    // ... and opening it again migrates the rows to keys: the job keeps its id.
    let mut store = Store::open(&path).expect("up.sql runs again");
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs.iter().map(|job| job.id.to_string()).collect::<Vec<_>>(), ["7.head"]);
    assert_eq!(loaded.next_seq, 8);
}

#[derive(QueryableByName)]
struct Seq {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    seq: i64,
}

#[test]
fn the_store_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, location, mut store) = fresh_store();
    let path = location.sqlite_path().expect("an SQLite store").to_path_buf();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    let mode = |suffix: &str| {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        std::fs::metadata(file).map(|meta| meta.permissions().mode() & 0o777).ok()
    };
    assert_eq!(mode(""), Some(0o600), "scripts, environments and secrets are private");
    assert_eq!(mode("-wal"), Some(0o600));
    drop(store);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let _store = Store::open(&location).unwrap();
    assert_eq!(mode(""), Some(0o600), "an older, readable store is made private");
}

/// Every directory under `server/migrations/` is a step of `migrate::STEPS`, in order, and
/// has the files its kind needs.
#[test]
fn every_migration_directory_is_a_step() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let steps: Vec<&str> = crate::store::migrate::STEPS.iter().map(|step| step.name).collect();
    assert_eq!(names, steps, "a new migration directory needs a line in server/src/store/migrate.rs");
}

super::on_postgresql!(
    open_applies_every_migration_once,
    migrations_revert_and_reapply,
    rows_from_before_job_keys_load_with_their_ids
);
