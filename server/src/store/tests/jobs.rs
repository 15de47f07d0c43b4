//! Job rows: insert and reload, update, delete, reopen, refusal of corrupt and unstorable
//! data, and the recomputation of the request on load.

use diesel::prelude::*;
use job::JobKey;
use job::{JobState, ResourceError, ResourceRequest};

use super::{fresh_store, full_job, load, queued_job, SERVER};
use crate::store::models::fallback_request;
use crate::store::{JobProgress, Store, StoreError, StoreOp};

/// Overwrites one text column of one row behind the store's back.
fn plant(store: &mut Store, column: &str, value: &str, seq: i64) {
    diesel::sql_query(format!(
        "UPDATE job_records SET {column} = {} WHERE seq = {}",
        super::sql_text(value),
        seq << 32
    ))
    .execute(store.connection())
    .expect("plant a value");
}

#[test]
fn insert_and_reload_keeps_every_field() {
    let (_dir, path, mut store) = fresh_store();
    let full = full_job(7);
    let queued = queued_job(3);
    store.commit(&[StoreOp::InsertJob(Box::new(full.clone())), StoreOp::InsertJob(Box::new(queued.clone()))]).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs, vec![queued, full], "ordered by seq, every field equal");
    assert_eq!(loaded.jobs[1].id.to_string(), format!("7.{SERVER}"));
}

#[test]
fn job_ids_take_the_server_name_given_to_load() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    let loaded = store.load_with("other", &super::fake_parser).unwrap();
    assert_eq!(loaded.jobs[0].id.to_string(), "1.other");
}

#[test]
fn update_changes_columns_but_keeps_the_spec() {
    let (_dir, _path, mut store) = fresh_store();
    let original = full_job(1);
    store.commit(&[StoreOp::InsertJob(Box::new(original.clone()))]).unwrap();

    let mut updated = queued_job(1);
    updated.set_state_for_test(JobState::Finished);
    updated.exit_status = Some(0);
    updated.times.obittime = Some(1_700_000_100);
    std::sync::Arc::make_mut(&mut updated.spec).name = "renamed".to_string();
    std::sync::Arc::make_mut(&mut updated.spec).script = "changed".to_string();
    store.commit(&[StoreOp::UpdateJob(Box::new(updated.clone()))]).unwrap();

    let loaded = load(&mut store);
    let mut expected = updated;
    expected.spec = original.spec;
    assert_eq!(loaded.jobs, vec![expected], "columns updated (Nones written as NULL), spec kept");
}

#[test]
fn a_progress_update_writes_its_columns_and_no_other() {
    let (_dir, _path, mut store) = fresh_store();
    let original = queued_job(1);
    store
        .commit(&[StoreOp::InsertJob(Box::new(original.clone())), StoreOp::InsertJob(Box::new(queued_job(2)))])
        .unwrap();

    // Every progress column changed (full_job's values), and every other column too.
    let mut progressed = full_job(1);
    progressed.times.ctime = 42;
    progressed.owner = "mallory".into();
    progressed.group = "wheel".into();
    progressed.queue = "express".into();
    progressed.output_path = crate::state::StdPath::literal("elsewhere:/o");
    progressed.error_path = crate::state::StdPath::literal("elsewhere:/e");
    progressed.script_bytes = 99;
    store.commit(&[JobProgress::op(&progressed)]).unwrap();

    let loaded = load(&mut store);
    let mut expected = full_job(1);
    expected.owner_uid = original.owner_uid;
    expected.times.ctime = original.times.ctime;
    assert_eq!(
        loaded.jobs,
        vec![expected, queued_job(2)],
        "progress written; owner, queue, paths kept; job 2 untouched"
    );
    let result = store.commit(&[JobProgress::op(&queued_job(5))]);
    assert!(matches!(result, Err(StoreError::NoSuchJob { seq: 5 })), "{result:?}");
}

#[test]
fn update_with_spec_changes_the_spec_and_survives_reopening() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(full_job(1))), StoreOp::InsertJob(Box::new(queued_job(2)))]).unwrap();
    let mut altered = full_job(1);
    std::sync::Arc::make_mut(&mut altered.spec).name = "renamed".to_string();
    std::sync::Arc::make_mut(&mut altered.spec).resources = vec![("walltime".to_string(), "00:00:03".to_string())];
    std::sync::Arc::make_mut(&mut altered.spec).priority = -7;
    altered.run_count = 9;
    store.commit(&[StoreOp::UpdateJobSpec(Box::new(altered.clone()))]).unwrap();
    drop(store);

    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs, vec![altered, queued_job(2)], "spec and columns rewritten, the other job untouched");
    let result = store.commit(&[StoreOp::UpdateJobSpec(Box::new(queued_job(5)))]);
    assert!(matches!(result, Err(StoreError::NoSuchJob { seq: 5 })), "{result:?}");
}

#[test]
fn update_of_a_missing_job_rolls_back_the_whole_transaction() {
    let (_dir, _path, mut store) = fresh_store();
    let result = store.commit(&[
        StoreOp::InsertJob(Box::new(queued_job(1))),
        StoreOp::SetNextSeq(2),
        StoreOp::UpdateJob(Box::new(queued_job(2))),
    ]);
    assert!(matches!(result, Err(StoreError::NoSuchJob { seq: 2 })), "{result:?}");
    let loaded = load(&mut store);
    assert!(loaded.jobs.is_empty(), "the insert was rolled back");
    assert_eq!(loaded.next_seq, 1, "the counter was rolled back");
}

#[test]
fn duplicate_insert_is_a_database_error_and_rolls_back() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    let result =
        store.commit(&[StoreOp::InsertJob(Box::new(queued_job(2))), StoreOp::InsertJob(Box::new(full_job(1)))]);
    let err = result.unwrap_err();
    assert!(matches!(err, StoreError::Database { .. }), "{err:?}");
    assert!(err.report().contains("insert of job 1"), "{}", err.report());
    assert_eq!(load(&mut store).jobs, vec![queued_job(1)]);
}

#[test]
fn delete_removes_only_that_job() {
    let (_dir, _path, mut store) = fresh_store();
    let ops: Vec<StoreOp> = (1..=3).map(|seq| StoreOp::InsertJob(Box::new(queued_job(seq)))).collect();
    store.commit(&ops).unwrap();
    store
        .commit(&[
            StoreOp::DeleteJob(JobKey::from_raw(2 << 32)),
            StoreOp::DeleteJob(JobKey::from_raw(99 << 32)),
            StoreOp::DeleteJob(JobKey::from_raw(u64::MAX)),
        ])
        .unwrap();
    let seqs: Vec<u64> = load(&mut store).jobs.iter().map(|job| job.id.seq).collect();
    assert_eq!(seqs, vec![1, 3]);
}

#[test]
fn reopen_after_drop_keeps_everything() {
    let (_dir, path, mut store) = fresh_store();
    let mut jobs: Vec<_> = (1..=20).map(queued_job).collect();
    jobs[4] = full_job(5);
    let ops: Vec<StoreOp> = jobs.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))).collect();
    store.commit(&ops).unwrap();
    store.commit(&[StoreOp::DeleteJob(JobKey::from_raw(20 << 32)), StoreOp::SetNextSeq(21)]).unwrap();
    jobs.pop();
    drop(store);

    for _ in 0..2 {
        let mut store = Store::open(&path).expect("reopen runs no migration twice");
        let loaded = load(&mut store);
        assert_eq!(loaded.jobs, jobs);
        assert_eq!(loaded.next_seq, 21);
    }
}

#[test]
fn open_sets_wal_and_full_sync() {
    #[derive(QueryableByName)]
    struct Pragma {
        #[diesel(sql_type = diesel::sql_types::Text)]
        journal_mode: String,
    }
    #[derive(QueryableByName)]
    struct Synchronous {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        synchronous: i32,
    }
    let (_dir, _path, mut store) = fresh_store();
    let mode: Pragma = diesel::sql_query("PRAGMA journal_mode").get_result(store.connection()).unwrap();
    assert_eq!(mode.journal_mode, "wal");
    let sync: Synchronous = diesel::sql_query("PRAGMA synchronous").get_result(store.connection()).unwrap();
    assert_eq!(sync.synchronous, 2, "FULL");
}

#[test]
fn garbled_exec_hosts_is_an_error_not_a_panic() {
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(full_job(4)))]).unwrap();
    plant(&mut store, "exec_hosts", "n1/0*2+n2/0*2", 4);
    // The real `load`: the row is refused before the resource parser is reached.
    let err = store.load(SERVER).unwrap_err();
    assert!(matches!(err, StoreError::CorruptRow { seq: 4, column: "exec_hosts", .. }), "{err:?}");
}

#[test]
fn other_corrupt_columns_are_errors_not_panics() {
    for (column, value) in [("state", "Z"), ("state", "QQ"), ("state", ""), ("spec_json", "{not json")] {
        let (_dir, _path, mut store) = fresh_store();
        store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
        plant(&mut store, column, value, 1);
        let err = store.load(SERVER).unwrap_err();
        assert!(
            matches!(err, StoreError::CorruptRow { seq: 1, column: c, .. } if c == column),
            "{column}={value:?}: {err:?}"
        );
    }
    let (_dir, _path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(1)))]).unwrap();
    diesel::sql_query("UPDATE job_records SET run_count = -1").execute(store.connection()).unwrap();
    let err = store.load(SERVER).unwrap_err();
    assert!(matches!(err, StoreError::CorruptRow { column: "run_count", .. }), "{err:?}");
}

#[test]
fn unstorable_jobs_are_refused_and_nothing_is_written() {
    let (_dir, _path, mut store) = fresh_store();
    let mut bad_node = full_job(2);
    bad_node.exec[1].node = "n2|x".into();
    let mut huge_seq = queued_job(1);
    huge_seq.id.seq = u64::MAX;
    let mut huge_cput = queued_job(3);
    huge_cput.used.cput_secs = u64::MAX;
    for bad in [bad_node, huge_seq, huge_cput] {
        let seq = bad.id.seq;
        let result = store.commit(&[StoreOp::InsertJob(Box::new(queued_job(9))), StoreOp::InsertJob(Box::new(bad))]);
        assert!(matches!(result, Err(StoreError::Unstorable { seq: s, .. }) if s == seq), "{result:?}");
    }
    assert!(load(&mut store).jobs.is_empty());
}

#[test]
fn a_resource_list_that_no_longer_parses_loads_with_a_fallback_request() {
    let (_dir, _path, mut store) = fresh_store();
    let job = full_job(1);
    store.commit(&[StoreOp::InsertJob(Box::new(job.clone()))]).unwrap();
    let refuse = |pairs: &[(String, String)]| -> Result<ResourceRequest, ResourceError> {
        Err(ResourceError {
            message: "unknown resource".to_string(),
            input: format!("{pairs:?}"),
            column: 0,
            token: "nodes".to_string(),
            kind: job::ResourceErrorKind::UnknownResource,
        })
    };
    let loaded = store.load_with(SERVER, &refuse).unwrap();
    let mut expected = job;
    expected.request = fallback_request(&expected.spec).into();
    expected.spec_bytes = crate::state::Job::spec_size(&expected.spec);
    assert_eq!(loaded.jobs, vec![expected]);
    assert_eq!(loaded.jobs[0].request.total_ncpus(), 1);
}

/// Uses the real `ResourceRequest::from_list`; fails (panics) until the parser work lands.
#[test]
fn load_recomputes_the_request_with_the_real_parser() {
    let (_dir, _path, mut store) = fresh_store();
    let mut job = queued_job(1);
    std::sync::Arc::make_mut(&mut job.spec).resources =
        vec![("select".to_string(), "2:ncpus=2:mem=1gb".to_string()), ("walltime".to_string(), "00:10:00".to_string())];
    store.commit(&[StoreOp::InsertJob(Box::new(job.clone()))]).unwrap();
    let loaded = store.load(SERVER).unwrap();
    let expected = ResourceRequest::from_list(&job.spec.resources).expect("the test's list is valid");
    assert_eq!(*loaded.jobs[0].request, expected);
    assert_eq!(loaded.jobs[0].request.total_ncpus(), 4);
}

/// A job's spec as the release before "shown as written" stored it (its request, with the
/// expanded select `1:ncpus=2:mem=2097152kb:mpiprocs=1` in its display, was never stored):
/// it loads, and `qstat -f` shows what its user wrote.
const SPEC_BEFORE_AS_WRITTEN: &str = r#"{"name":"old.sh","script":"","queue":"workq","resources":[["select","1:ncpus=2:mem=2GB:ompthreads=2"],["place","excl"],["walltime","1:00:00"]],"output_path":null,"error_path":null,"join":"No","keep":"n","user_hold":true,"rerunnable":true,"priority":0,"variables":[["PBS_O_WORKDIR","/home/alice"]],"shell":"/bin/bash","init_dir":null,"mail_points":"a","mail_users":["a@b.org"],"account":null,"submit_host":"login","submit_args":"old.sh","depend":[],"array":null,"interactive":null}"#;

#[test]
fn rows_of_the_previous_release_show_what_was_written() {
    let (_dir, path, mut store) = fresh_store();
    store.commit(&[StoreOp::InsertJob(Box::new(queued_job(5)))]).unwrap();
    plant(&mut store, "spec_json", SPEC_BEFORE_AS_WRITTEN, 5);
    drop(store);
    let mut store = Store::open(&path).unwrap();
    let loaded = store.load(SERVER).unwrap();
    let status = crate::status::job_status(&loaded.jobs[0], SERVER, crate::config::Flavor::OpenPbs, 0);
    let shown: Vec<String> = status
        .attrs
        .iter()
        .filter(|attr| attr.name.starts_with(['R', 'M', 'S', 's']) && attr.name != "server")
        .map(|attr| format!("{} = {}", attr.full_name(), attr.value))
        .collect();
    // `allow_duplicates!`: the same snapshot is asserted again by the PostgreSQL run.
    insta::allow_duplicates! { insta::assert_snapshot!(shown.join("\n"), @r"
    Mail_Points = a
    Mail_Users = a@b.org
    Rerunable = True
    Resource_List.mem = 2gb
    Resource_List.ncpus = 2
    Resource_List.nodect = 1
    Resource_List.place = excl
    Resource_List.select = 1:ncpus=2:mem=2GB:ompthreads=2
    Resource_List.walltime = 01:00:00
    schedselect = 1:ncpus=2:mem=2GB:ompthreads=2
    Shell_Path_List = /bin/bash
    Submit_arguments = old.sh
    Submit_Host = login
    "); }
}

/// A `nodes=` word naming a stored node shows as `host=NAME` after a restart too.
#[test]
fn load_shows_a_node_named_in_a_nodes_spec_as_a_host() {
    let (_dir, _path, mut store) = fresh_store();
    let node = crate::store::StoredNode {
        name: "node1".into(),
        np: 2,
        mem_bytes: 0,
        ngpus: 0,
        properties: Vec::new(),
        offline: false,
        comment: None,
    };
    let mut job = queued_job(1);
    std::sync::Arc::make_mut(&mut job.spec).resources = vec![("nodes".to_string(), "node1:ppn=2+1:gpu".to_string())];
    store.commit(&[StoreOp::SetNodes(vec![node]), StoreOp::InsertJob(Box::new(job))]).unwrap();
    let loaded = store.load(SERVER).unwrap();
    let select = loaded.jobs[0].request.display_value("select");
    assert_eq!(select, Some("1:ncpus=2:host=node1:mpiprocs=2+1:ncpus=1:gpu=True"));
}

super::on_postgresql!(
    a_progress_update_writes_its_columns_and_no_other,
    insert_and_reload_keeps_every_field,
    job_ids_take_the_server_name_given_to_load,
    update_changes_columns_but_keeps_the_spec,
    update_with_spec_changes_the_spec_and_survives_reopening,
    update_of_a_missing_job_rolls_back_the_whole_transaction,
    duplicate_insert_is_a_database_error_and_rolls_back,
    delete_removes_only_that_job,
    reopen_after_drop_keeps_everything,
    garbled_exec_hosts_is_an_error_not_a_panic,
    other_corrupt_columns_are_errors_not_panics,
    unstorable_jobs_are_refused_and_nothing_is_written,
    a_resource_list_that_no_longer_parses_loads_with_a_fallback_request,
    load_recomputes_the_request_with_the_real_parser,
    rows_of_the_previous_release_show_what_was_written,
    load_shows_a_node_named_in_a_nodes_spec_as_a_host,
);
