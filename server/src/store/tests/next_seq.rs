//! The next sequence number: stored counter, the max rule, persistence across reopen.

use super::{fresh_store, load, queued_job};
use crate::store::{Store, StoreError, StoreOp};
use diesel::prelude::*;
use job::JobKey;

#[test]
fn an_empty_store_starts_at_one() {
    let (_dir, _path, mut store) = fresh_store();
    let loaded = store.load("head").expect("load of an empty store needs no parser");
    assert!(loaded.jobs.is_empty());
    assert_eq!(loaded.next_seq, 1);
}

#[test]
fn a_zero_counter_still_gives_one() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::SetNextSeq(0)]).unwrap();
    assert_eq!(load(&mut store).next_seq, 1);
}

#[test]
fn the_stored_counter_persists_across_reopen() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::SetNextSeq(50)]).unwrap();
    store.commit(&[StoreOp::SetNextSeq(60)]).unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(load(&mut store).next_seq, 60, "the last value written wins");
}

#[test]
fn next_seq_is_the_larger_of_counter_and_highest_seq_plus_one() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(70))), StoreOp::SetNextSeq(50)]).unwrap();
    assert_eq!(load(&mut store).next_seq, 71, "a job above the counter wins");

    store.commit(&[StoreOp::SetNextSeq(100)]).unwrap();
    assert_eq!(load(&mut store).next_seq, 100, "a counter above the jobs wins");

    store.commit(&[StoreOp::DeleteJob(JobKey::from_raw(70 << 32)), StoreOp::SetNextSeq(71)]).unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert!(loaded.jobs.is_empty());
    assert_eq!(loaded.next_seq, 71, "ids of deleted jobs are not handed out again");
}

#[test]
fn a_garbled_counter_is_an_error() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::SetNextSeq(5)]).unwrap();
    diesel::sql_query("UPDATE meta SET value = 'five' WHERE key = 'next_seq'").execute(store.connection()).unwrap();
    let err = store.load("head").unwrap_err();
    assert!(matches!(err, StoreError::CorruptMeta { ref value, .. } if value == "five"), "{err:?}");
}

#[test]
fn node_list_survives_reopening() {
    let (_dir, path, mut store) = fresh_store();
    let node = |name: &str, np| crate::store::StoredNode {
        name: name.into(),
        np,
        mem_bytes: 1 << 30,
        ngpus: 1,
        properties: vec!["gpu".into()],
        offline: false,
        comment: None,
    };
    store.commit(&[StoreOp::SetNodes(vec![node("node1", 4)])]).unwrap();
    store.commit(&[StoreOp::SetNodes(vec![node("node1", 8), node("node2", 2)])]).unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(load(&mut store).nodes, vec![node("node1", 8), node("node2", 2)]);
}

super::on_postgresql!(
    an_empty_store_starts_at_one,
    a_zero_counter_still_gives_one,
    the_stored_counter_persists_across_reopen,
    next_seq_is_the_larger_of_counter_and_highest_seq_plus_one,
    a_garbled_counter_is_an_error,
    node_list_survives_reopening,
);
