//! The qmgr configuration in the store: a fresh database has none; queues and server
//! attributes come back as stored, a deleted queue does not.

use super::{fresh_db, load};
use crate::store::{Store, StoreOp, StoredQueue};

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

#[test]
fn configuration_round_trip() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    assert_eq!(load(&mut store).config, None, "a fresh store has no configuration");
    let short = StoredQueue {
        name: "short".into(),
        attrs: pairs(&[("queue_type", "Execution"), ("max_run", "[u:PBS_GENERIC=2]"), ("enabled", "True")]),
    };
    let gone = StoredQueue { name: "gone".into(), attrs: pairs(&[("enabled", "False")]) };
    store
        .commit(&[
            StoreOp::PutQueue(short.clone()),
            StoreOp::PutQueue(gone),
            StoreOp::DeleteQueue("gone".into()),
            StoreOp::SetServerAttrs(pairs(&[("scheduling", "False"), ("default_queue", "short")])),
        ])
        .unwrap();
    // Rewriting a queue replaces its rows.
    let short = StoredQueue { attrs: pairs(&[("queue_type", "Execution"), ("enabled", "False")]), ..short };
    store.commit(&[StoreOp::PutQueue(short.clone())]).unwrap();
    drop(store);
    let config = load(&mut Store::open(&path).unwrap()).config.expect("configuration stored");
    let mut expected = short.attrs.clone();
    expected.sort();
    assert_eq!(config.queues, vec![StoredQueue { name: "short".into(), attrs: expected }]);
    assert_eq!(config.server_attrs, pairs(&[("default_queue", "short"), ("scheduling", "False")]));
}

super::on_postgresql!(configuration_round_trip,);
