//! Site resources in the store: definitions and node values come back as stored (a deleted
//! definition takes its node values with it), and `Store::load` parses jobs knowing the
//! definitions, so a job asking for a site resource loads with it.

use super::{fresh_db, queued_job, SERVER};
use crate::store::{Store, StoreOp, StoredResourceDef};
use std::sync::Arc;

fn def(name: &str, kind: &str, flags: &str) -> StoredResourceDef {
    StoredResourceDef { name: name.into(), kind: kind.into(), flags: flags.into() }
}

fn values(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

#[test]
fn definitions_and_node_values_round_trip() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    store
        .commit(&[
            StoreOp::PutResourceDef(def("gpu_type", "string", "h")),
            StoreOp::PutResourceDef(def("scratch", "size", "hn")),
            StoreOp::PutResourceDef(def("gone", "boolean", "h")),
            StoreOp::SetNodeResources { node: "n1".into(), values: values(&[("gpu_type", "a100"), ("gone", "True")]) },
            StoreOp::SetNodeResources { node: "n2".into(), values: values(&[("scratch", "10gb")]) },
            StoreOp::DeleteResourceDef("gone".into()),
            // Retyped in place.
            StoreOp::PutResourceDef(def("scratch", "long", "hn")),
        ])
        .unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(SERVER).unwrap();
    assert_eq!(loaded.resource_defs, vec![def("gpu_type", "string", "h"), def("scratch", "long", "hn")]);
    let expected = [("n1", "gpu_type", "a100"), ("n2", "scratch", "10gb")];
    let expected: Vec<_> = expected.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect();
    assert_eq!(loaded.node_resources, expected);
}

#[test]
fn jobs_asking_for_site_resources_load_with_them() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    let mut job = queued_job(1);
    let mut spec = (*job.spec).clone();
    spec.resources = values(&[("select", "1:ncpus=1:gpu_type=a100")]);
    job.spec = Arc::new(spec);
    store
        .commit(&[StoreOp::PutResourceDef(def("gpu_type", "string", "h")), StoreOp::InsertJob(Box::new(job))])
        .unwrap();
    drop(store);
    let loaded = Store::open(&path).unwrap().load(SERVER).expect("the definition is known when jobs are parsed");
    assert_eq!(loaded.jobs[0].request.chunks[0].properties, ["gpu_type=a100"]);
}

#[test]
fn a_corrupt_definition_stops_the_load() {
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    store.commit(&[StoreOp::PutResourceDef(def("bad", "colour", ""))]).unwrap();
    drop(store);
    let error = Store::open(&path).unwrap().load(SERVER).map(|_| ()).unwrap_err();
    assert!(error.to_string().contains("resource_defs.bad"), "{error}");
}

super::on_postgresql!(
    definitions_and_node_values_round_trip,
    jobs_asking_for_site_resources_load_with_them,
    a_corrupt_definition_stops_the_load,
);
