//! Accounting records in the store: committed with the change, loaded at start, forgotten up
//! to an id once written.

use super::{fresh_store, load, queued_job};
use crate::store::{AccountingRecord, Store, StoreOp};

fn record(id: u64) -> AccountingRecord {
    AccountingRecord { id, time: 1_700_000_000 + id as i64, line: format!("line {id}; ünï") }
}

#[test]
fn records_are_kept_until_forgotten_and_load_in_id_order() {
    let (_dir, path, mut store) = fresh_store();
    store
        .commit(&[StoreOp::InsertJob(Box::new(queued_job(1))), StoreOp::AddAccounting(vec![record(1), record(2)])])
        .unwrap();
    store.commit(&[StoreOp::AddAccounting(vec![record(3)])]).unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(load(&mut store).accounting, [record(1), record(2), record(3)]);
    store.commit(&[StoreOp::ForgetAccounting(2)]).unwrap();
    assert_eq!(load(&mut store).accounting, [record(3)]);
}

super::on_postgresql!(records_are_kept_until_forgotten_and_load_in_id_order,);
