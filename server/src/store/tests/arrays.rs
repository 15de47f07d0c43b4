//! Arrays in the store: the parent's row holds the spec, subjob rows hold none and share the
//! parent's spec on load; the parent is recognised from its spec (its key cannot tell).

use std::sync::Arc;

use diesel::prelude::*;
use job::array::ArraySpec;
use job::id::ArrayPart;
use job::{JobId, JobState};

use super::{fresh_store, load, queued_job, SERVER};
use crate::state::Job;
use crate::store::{Store, StoreError, StoreOp};

/// Array 5 with subjobs 1..=n, the parent and every subjob sharing one spec.
fn array(n: u32) -> Vec<Job> {
    let mut parent = queued_job(5);
    Arc::make_mut(&mut parent.spec).array = Some(ArraySpec { indices: format!("1-{n}"), limit: Some(2) });
    parent.id = JobId::parent(5, SERVER);
    let mut jobs = vec![parent.clone()];
    for index in 1..=n {
        let mut sub = parent.clone();
        sub.id = JobId::sub(5, index, SERVER);
        sub.set_state_for_test(if index == 1 { JobState::Expired } else { JobState::Queued });
        sub.output_path = crate::state::StdPath::literal(&format!("login:/home/alice/job5.o5.{index}"));
        jobs.push(sub);
    }
    jobs
}

#[test]
fn an_array_round_trips_with_its_parent_id_and_one_shared_spec() {
    let (_dir, path, mut store) = fresh_store();
    let jobs = array(3);
    let mut ops: Vec<StoreOp> = jobs.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))).collect();
    ops.push(StoreOp::InsertJob(Box::new(queued_job(6))));
    store.commit(&ops).unwrap();
    let spec_lengths: Vec<usize> = diesel::sql_query("SELECT seq, spec_json FROM job_records ORDER BY seq")
        .load::<SpecRow>(store.connection())
        .unwrap()
        .into_iter()
        .map(|row| row.spec_json.len())
        .collect();
    assert!(spec_lengths[0] > 0 && spec_lengths[1..4].iter().all(|len| *len == 0), "{spec_lengths:?}");
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs[..4], jobs[..], "every field equal, ids included");
    assert_eq!(loaded.jobs[0].id.array, Some(ArrayPart::Parent));
    assert_eq!(loaded.jobs[0].id.to_string(), format!("5[].{SERVER}"));
    for sub in &loaded.jobs[1..4] {
        assert!(Arc::ptr_eq(&sub.spec, &loaded.jobs[0].spec), "{} shares the parent's spec", sub.id);
    }
    assert_eq!(loaded.jobs[4].id, JobId::new(6, SERVER), "an ordinary job after the array");
    assert_eq!(loaded.next_seq, 7);
}

#[test]
fn loaded_subjobs_share_their_parents_path_text_unless_theirs_differs() {
    use crate::state::StdPath;
    let (_dir, path, mut store) = fresh_store();
    let mut jobs = array(3);
    jobs[0].output_path = StdPath::literal("login:/home/alice/job5.o5.^array_index^");
    let parent_path = jobs[0].output_path.clone();
    for (index, sub) in (1..).zip(&mut jobs[1..]) {
        sub.output_path = StdPath::of_subjob(&parent_path, index);
    }
    jobs[3].output_path = StdPath::literal("login:/home/alice/kept.o5");
    store.commit(&jobs.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))).collect::<Vec<_>>()).unwrap();
    drop(store);

    let loaded = load(&mut Store::open(&path).unwrap());
    assert_eq!(loaded.jobs[..4], jobs[..]);
    let parent = &loaded.jobs[0].output_path;
    assert_eq!(loaded.jobs[2].output_path.to_string(), "login:/home/alice/job5.o5.2");
    assert!(loaded.jobs[1].output_path.shares_text_with(parent) && loaded.jobs[2].output_path.shares_text_with(parent));
    assert_eq!(loaded.jobs[3].output_path.to_string(), "login:/home/alice/kept.o5", "its own path, kept");
    assert!(!loaded.jobs[3].output_path.shares_text_with(parent));
}

#[test]
fn a_subjob_without_its_parent_is_a_corrupt_row() {
    let (_dir, _path, mut store) = fresh_store();
    let jobs = array(2);
    store.commit(&[StoreOp::InsertJob(Box::new(jobs[1].clone()))]).unwrap();
    let err = store.load(SERVER).unwrap_err();
    assert!(matches!(err, StoreError::CorruptRow { seq: 5, .. }), "{err:?}");
}

#[test]
fn a_started_subjob_keeps_its_own_spec_after_the_parent_is_altered() {
    let (_dir, path, mut store) = fresh_store();
    let mut jobs = array(3);
    let ops: Vec<StoreOp> = jobs.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))).collect();
    store.commit(&ops).unwrap();
    // qalter of the parent: it and the waiting subjobs get a new spec; subjob 1 (started)
    // keeps the old one, stored on its own row.
    let old_spec = Arc::clone(&jobs[0].spec);
    Arc::make_mut(&mut jobs[0].spec).name = "renamed".to_string();
    let new_spec = Arc::clone(&jobs[0].spec);
    for sub in &mut jobs[2..4] {
        sub.spec = Arc::clone(&new_spec);
    }
    jobs[1].run_count = 1;
    let mut ops = vec![StoreOp::UpdateJobSpec(Box::new(jobs[0].clone()))];
    ops.push(StoreOp::UpdateJobSpec(Box::new(jobs[1].clone())));
    ops.extend(jobs[2..4].iter().map(|job| StoreOp::UpdateJob(Box::new(job.clone()))));
    store.commit(&ops).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs[..4], jobs[..]);
    assert_eq!(loaded.jobs[1].id.array, Some(ArrayPart::Sub(1)));
    assert_eq!(loaded.jobs[1].spec.name, old_spec.name);
    assert!(!Arc::ptr_eq(&loaded.jobs[1].spec, &loaded.jobs[0].spec));
    for sub in &loaded.jobs[2..4] {
        assert!(Arc::ptr_eq(&sub.spec, &loaded.jobs[0].spec), "{} shares the new spec", sub.id);
        assert_eq!(sub.spec.name, "renamed");
    }
}

#[derive(QueryableByName)]
struct SpecRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    spec_json: String,
}

super::on_postgresql!(
    an_array_round_trips_with_its_parent_id_and_one_shared_spec,
    a_subjob_without_its_parent_is_a_corrupt_row,
    a_started_subjob_keeps_its_own_spec_after_the_parent_is_altered,
);
