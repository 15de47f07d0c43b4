//! The embedded migrations: applied once by `open`, and reversible (so `down.sql` is valid).

use diesel::prelude::*;
use diesel_migrations::MigrationHarness;

use super::{fresh_store, load, queued_job};
use crate::store::sqlite::MIGRATIONS;
use crate::store::{Store, StoreOp};

/// Names of the tables in the database, sorted.
fn tables(store: &mut Store) -> Vec<String> {
    #[derive(QueryableByName)]
    struct Name {
        #[diesel(sql_type = diesel::sql_types::Text)]
        name: String,
    }
    let names: Vec<Name> = diesel::sql_query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    .load(store.connection())
    .unwrap();
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
    assert!(!store.connection().has_pending_migration(MIGRATIONS).unwrap());
    drop(store);
    let mut store = Store::open(&path).expect("reopening applies nothing twice");
    assert!(!store.connection().has_pending_migration(MIGRATIONS).unwrap());
}

#[test]
fn migrations_revert_and_reapply() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    store.connection().revert_all_migrations(MIGRATIONS).expect("down.sql runs");
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
    let keys_version = "20261122000000";
    while store
        .connection()
        .applied_migrations()
        .unwrap()
        .iter()
        .any(|version| version.to_string().as_str() >= keys_version)
    {
        store.connection().revert_last_migration(MIGRATIONS).expect("down.sql runs");
    }
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
    let (_dir, path, mut store) = fresh_store();
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
    let _store = Store::open(&path).unwrap();
    assert_eq!(mode(""), Some(0o600), "an older, readable store is made private");
}
