//! Scripts in the store: written once with the job, in a column of their own, never loaded
//! into memory (only their size is), read back for the job's start; a subjob reads its
//! parent's.

use std::sync::Arc;

use diesel::prelude::*;
use job::array::ArraySpec;
use job::JobId;

use super::{fresh_store, load, queued_job, SERVER};
use crate::state::Job;
use crate::store::{Store, StoreOp};

const SCRIPT: &str = "#!/bin/sh\n#PBS -N x\necho 'hello | world; 1,2' ünï\n";

/// A job as qsub's handler hands it to the store: with its script and its size.
fn with_script(mut job: Job, script: &str) -> Job {
    Arc::make_mut(&mut job.spec).script = script.to_string();
    job.script_bytes = script.len() as u64;
    job
}

#[test]
fn a_script_is_stored_but_not_loaded_and_is_read_by_key() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(with_script(queued_job(1), SCRIPT)))]).unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs[0].spec.script, "", "the state holds no script");
    assert_eq!(loaded.jobs[0].script_bytes, SCRIPT.len() as u64);
    let spec_json: String = crate::store::schema::jobs::table
        .select(crate::store::schema::jobs::spec_json)
        .first(store.connection())
        .unwrap();
    assert!(!spec_json.contains("hello"), "the spec column has no copy: {spec_json}");
    assert_eq!(store.script(JobId::new(1, SERVER).key()).unwrap().as_deref(), Some(SCRIPT));
    assert_eq!(store.script(JobId::new(2, SERVER).key()).unwrap(), None);
}

#[test]
fn an_altered_spec_keeps_the_stored_script() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(with_script(queued_job(1), SCRIPT)))]).unwrap();
    let mut altered = load(&mut store).jobs.remove(0);
    Arc::make_mut(&mut altered.spec).priority = 5;
    store.commit(&[StoreOp::UpdateJobSpec(Box::new(altered.clone())), StoreOp::UpdateJob(Box::new(altered))]).unwrap();
    assert_eq!(load(&mut store).jobs[0].spec.priority, 5);
    assert_eq!(store.script(JobId::new(1, SERVER).key()).unwrap().as_deref(), Some(SCRIPT));
}

#[test]
fn a_subjob_reads_its_parents_script() {
    let (_dir, _path, mut store) = fresh_store();
    let mut parent = with_script(queued_job(5), SCRIPT);
    Arc::make_mut(&mut parent.spec).array = Some(ArraySpec { indices: "1-2".to_string(), limit: None });
    parent.id = JobId::parent(5, SERVER);
    let mut sub = parent.clone();
    sub.id = JobId::sub(5, 2, SERVER);
    sub.script_bytes = 0;
    store.commit(&[StoreOp::InsertJob(Box::new(parent)), StoreOp::InsertJob(Box::new(sub.clone()))]).unwrap();
    assert_eq!(store.script(sub.id.key()).unwrap().as_deref(), Some(SCRIPT));
    // A started subjob that keeps its own spec after its array was altered still runs the
    // parent's script.
    store.commit(&[StoreOp::UpdateJobSpec(Box::new(sub.clone()))]).unwrap();
    assert_eq!(store.script(sub.id.key()).unwrap().as_deref(), Some(SCRIPT));
}

#[test]
fn the_migration_moves_scripts_out_of_stored_specs() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    // A row as the previous release wrote it: the script inside the spec, no script column.
    let mut old_spec = (*queued_job(1).spec).clone();
    old_spec.script = SCRIPT.to_string();
    let old_json = serde_json::to_string(&old_spec).unwrap();
    super::revert_down_to(&mut store, "20261125000000");
    diesel::sql_query(format!("UPDATE jobs SET spec_json = {}", super::sql_text(&old_json)))
        .execute(store.connection())
        .unwrap();
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs[0].spec.script, "");
    assert_eq!(loaded.jobs[0].script_bytes, SCRIPT.len() as u64);
    assert_eq!(store.script(JobId::new(1, SERVER).key()).unwrap().as_deref(), Some(SCRIPT));
}

super::on_postgresql!(
    a_script_is_stored_but_not_loaded_and_is_read_by_key,
    an_altered_spec_keeps_the_stored_script,
    a_subjob_reads_its_parents_script,
    the_migration_moves_scripts_out_of_stored_specs,
);
