//! The active server's lease (`store/lease.rs`) on PostgreSQL: one holder at a time, a
//! standby takes it only once it expired, and the old holder's commits and renewals are refused
//! from the moment another server took it. On SQLite there is no lease.

use std::time::Duration;

use super::{fresh_store, load, queued_job};
use crate::store::db::Db;
use crate::store::lease::{keep, renew, try_take};
use crate::store::{Store, StoreError, StoreOp};

/// The PostgreSQL connection of a store.
fn pg(store: &mut Store) -> &mut diesel::pg::PgConnection {
    match store.connection() {
        Db::Postgresql(connection) => connection,
        Db::Sqlite(_) => panic!("a PostgreSQL store"),
    }
}

fn lease_test() {
    let (_dir, location, mut active) = fresh_store();
    let held = active.acquire_lease(Duration::from_millis(400), Duration::from_millis(20)).unwrap().expect("a lease");
    assert_eq!(held.epoch, 1);
    active.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).expect("the holder commits");

    let mut standby = Store::open(&location).unwrap();
    let refused = try_take(pg(&mut standby), "standby", Duration::from_secs(5)).unwrap();
    let (holder, left_ms) = refused.expect_err("the lease is held");
    assert_eq!(holder, held.holder);
    assert!(left_ms > 0 && left_ms <= 400, "{left_ms}");
    renew(pg(&mut active), &held, Duration::from_millis(400)).expect("the holder renews");

    std::thread::sleep(Duration::from_millis(500));
    let taken = try_take(pg(&mut standby), "standby", Duration::from_secs(5)).unwrap().expect("expired: taken");
    assert_eq!((taken.holder.as_str(), taken.epoch), ("standby", 2));

    // The old holder is fenced: its commit writes nothing, its renewal says who holds it now.
    let err = active.commit(&[StoreOp::InsertJob(Box::new(queued_job(2)))]).unwrap_err();
    assert!(matches!(&err, StoreError::LeaseLost { holder, epoch: 2 } if holder == "standby"), "{err:?}");
    let err = renew(pg(&mut active), &held, Duration::from_millis(400)).unwrap_err();
    assert!(matches!(err, StoreError::LeaseLost { epoch: 2, .. }), "{err:?}");
    let jobs: Vec<u64> = load(&mut standby).jobs.iter().map(|job| job.id.seq).collect();
    assert_eq!(jobs, [1], "only the commit made while holding the lease is stored");
}

/// [`keep`] on its own connection: renews for several lease times; once another server takes
/// the lease it reports the loss.
fn keep_test() {
    use std::sync::{Arc, Mutex};
    let (_dir, location, mut active) = fresh_store();
    let ttl = Duration::from_millis(500);
    let held = active.acquire_lease(ttl, Duration::from_millis(20)).unwrap().expect("a lease");
    let lost: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&lost);
    let url = match &location {
        crate::store::StoreLocation::Postgresql(url) => url.clone(),
        crate::store::StoreLocation::Sqlite(_) => unreachable!(),
    };
    keep(url, held, ttl, Box::new(move |why| record.lock().unwrap().push(why.to_string()))).unwrap();
    let mut standby = Store::open(&location).unwrap();
    for _ in 0..6 {
        std::thread::sleep(ttl / 2);
        assert!(try_take(pg(&mut standby), "standby", ttl).unwrap().is_err(), "the kept lease stays held");
    }
    assert!(lost.lock().unwrap().is_empty(), "{:?}", lost.lock().unwrap());
    active.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).expect("still the holder");
    // Taken behind its back (as a standby does once it expired): the keeper notices.
    diesel::connection::SimpleConnection::batch_execute(
        pg(&mut standby),
        "UPDATE server_lease SET holder = 'standby', epoch = epoch + 1",
    )
    .unwrap();
    tests_wait(Duration::from_secs(5), || !lost.lock().unwrap().is_empty());
    assert!(lost.lock().unwrap()[0].contains("taken by standby"), "{:?}", lost.lock().unwrap());
}

/// Polls `done` every 20 ms until it holds or `limit` passes (then panics).
fn tests_wait(limit: Duration, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + limit;
    while !done() {
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn on_postgresql_a_kept_lease_is_renewed_and_its_loss_noticed() {
    super::run_on(super::Backend::Postgresql, keep_test);
}

#[test]
fn sqlite_has_no_lease() {
    let (_dir, _location, mut store) = fresh_store();
    assert_eq!(store.acquire_lease(Duration::from_secs(1), Duration::from_millis(10)).unwrap(), None);
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).expect("commits without a lease");
}

#[test]
fn on_postgresql_one_server_holds_the_lease_and_a_lost_one_is_fenced() {
    super::run_on(super::Backend::Postgresql, lease_test);
}

/// A server connects, takes the lease, and only then migrates (a standby of a newer release must
/// not change the schema under the active server): connecting migrates nothing, and taking the
/// lease works on a store that has no tables yet.
fn connect_test() {
    let (_dir, location) = super::fresh_db();
    let mut store = Store::connect(&location).unwrap();
    assert!(super::pending(&mut store), "connect migrated the store");
    let held = store.acquire_lease(Duration::from_secs(1), Duration::from_millis(20)).unwrap();
    assert!(held.is_some());
    assert!(super::pending(&mut store), "taking the lease migrated the store");
    store.migrate().unwrap();
    assert!(!super::pending(&mut store));
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).expect("the holder commits");
}

#[test]
fn on_postgresql_connecting_and_taking_the_lease_migrate_nothing() {
    super::run_on(super::Backend::Postgresql, connect_test);
}
