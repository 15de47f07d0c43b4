//! Fair share in the store: usage records and jobs' eligible-time clocks survive a reopen;
//! records are replaced by kind and name and deleted; a corrupt record refuses to load.

use super::{fresh_db, queued_job, SERVER};
use crate::state::EligibleClock;
use crate::store::{Store, StoreOp, StoredUsage, UsageKind};
use diesel::connection::SimpleConnection;

fn usage(kind: UsageKind, name: &str, value: f64, stamp: i64, group: &str) -> StoredUsage {
    StoredUsage { kind, name: name.into(), usage: value, stamp, group: group.into() }
}

#[test]
fn usage_records_round_trip() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    store
        .commit(&[
            StoreOp::PutUsage(usage(UsageKind::User, "alice", 1.5, 100, "lab")),
            StoreOp::PutUsage(usage(UsageKind::Group, "alice", 7.0, 100, "")),
            StoreOp::PutUsage(usage(UsageKind::User, "bob", 2.0, 50, "lab")),
            StoreOp::PutUsage(usage(UsageKind::Group, "lab", 3.5, 200, "")),
            // Replaced in place.
            StoreOp::PutUsage(usage(UsageKind::User, "alice", 4.25, 300, "other")),
            StoreOp::DeleteUsage { kind: UsageKind::User, name: "bob".into() },
            StoreOp::DeleteUsage { kind: UsageKind::User, name: "nobody".into() },
        ])
        .unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(SERVER).unwrap();
    assert_eq!(
        loaded.usage,
        vec![
            usage(UsageKind::Group, "alice", 7.0, 100, ""),
            usage(UsageKind::Group, "lab", 3.5, 200, ""),
            usage(UsageKind::User, "alice", 4.25, 300, "other"),
        ]
    );
}

#[test]
fn eligible_clock_round_trips_with_the_job() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    let mut running = queued_job(1);
    running.eligible = EligibleClock { accrued: 42, since: Some(1000) };
    let mut stopped = queued_job(2);
    stopped.eligible = EligibleClock { accrued: 7, since: None };
    store.commit(&[StoreOp::InsertJob(Box::new(running.clone())), StoreOp::InsertJob(Box::new(stopped))]).unwrap();
    running.eligible = EligibleClock { accrued: 50, since: None };
    store.commit(&[StoreOp::UpdateJob(Box::new(running))]).unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(SERVER).unwrap();
    let clocks: Vec<EligibleClock> = loaded.jobs.iter().map(|job| job.eligible).collect();
    assert_eq!(clocks, vec![EligibleClock { accrued: 50, since: None }, EligibleClock { accrued: 7, since: None }]);
}

#[test]
fn a_corrupt_usage_record_refuses_to_load() {
    for row in ["('user', 'alice', -1.0, 0, '')", "('robot', 'alice', 1.0, 0, '')"] {
        let (_dir, path) = fresh_db();
        let mut store = Store::open(&path).unwrap();
        store
            .connection()
            .batch_execute(&format!("INSERT INTO fairshare_usage (kind, name, usage, stamp, grp) VALUES {row};"))
            .unwrap();
        assert!(store.load(SERVER).is_err(), "{row}");
    }
}

super::on_postgresql!(
    usage_records_round_trip,
    eligible_clock_round_trips_with_the_job,
    a_corrupt_usage_record_refuses_to_load,
);
