//! A database as a released build left it still opens and loads to the same state: the
//! fixture `server/tests/fixtures/store/<release>.sql` is an SQL dump (`sqlite3 .dump`) of
//! that release's schema and rows, migrations table included. The test loads it into a fresh
//! SQLite file, opens it with [`Store::open`] (which runs every migration added since) and
//! compares what it loads (through the tests' resource parser, then the real load) with the
//! samples that release stored ([`release_0_1_0`]): a queued job with its script, a finished
//! job, an array, a node with a site resource, a queue, the server attributes and an
//! accounting record not yet written.
//!
//! A new release adds its samples (a new function in [`RELEASES`]) and writes its dump once
//! with this build (it needs the `sqlite3` command):
//!
//! ```text
//! MINIPBS_WRITE_FIXTURES=0.2.0 cargo test -p server --lib store::tests::previous_release
//! ```
//!
//! An earlier release's dump is never rewritten: its rows are what that release stored.

use std::path::PathBuf;
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use job::array::ArraySpec;
use job::{JobId, JobKey, JobState};

use super::{fresh_db, full_job, load, queued_job, SERVER};
use crate::state::Job;
use crate::store::{AccountingRecord, StoredConfig, StoredNode, StoredQueue, StoredResourceDef};
use crate::store::{Loaded, Store, StoreOp};

/// A release with a fixture, and what its build stored.
struct Release {
    name: &'static str,
    sample: fn() -> Sample,
}

const RELEASES: &[Release] = &[Release { name: "0.1.0", sample: release_0_1_0 }];

/// What a release stored: the operations it committed, and what loading must give back.
struct Sample {
    ops: Vec<StoreOp>,
    jobs: Vec<Job>,
    scripts: Vec<(JobKey, &'static str)>,
    next_seq: u64,
    nodes: Vec<StoredNode>,
    config: StoredConfig,
    accounting: Vec<AccountingRecord>,
    resource_defs: Vec<StoredResourceDef>,
    node_resources: Vec<(String, String, String)>,
}

fn fixture(release: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/store/{release}.sql"))
}

#[test]
fn every_release_database_loads_to_what_it_stored() {
    if let Ok(release) = std::env::var("MINIPBS_WRITE_FIXTURES") {
        write_fixture(&release);
    }
    for Release { name: release, sample } in RELEASES {
        let sample = sample();
        let dump = std::fs::read_to_string(fixture(release)).expect("the release's dump");
        let (_dir, path) = fresh_db();
        let file = path.sqlite_path().expect("release dumps are SQLite's");
        let mut connection = SqliteConnection::establish(file.to_str().unwrap()).unwrap();
        connection.batch_execute(&dump).unwrap_or_else(|error| panic!("{release}: the dump does not load: {error}"));
        drop(connection);
        let mut store = Store::open(&path).unwrap_or_else(|error| panic!("{release}: {}", error.report()));
        let loaded = load(&mut store);
        check(release, &loaded, &sample);
        // The real load: site resources, and every stored request parsed as this build does.
        let real = store.load(SERVER).unwrap_or_else(|error| panic!("{release}: {}", error.report()));
        assert_eq!(real.jobs.len(), sample.jobs.len(), "{release}: jobs with their requests parsed");
        assert_eq!(real.resource_defs, sample.resource_defs, "{release}: site resources");
        assert_eq!(real.node_resources, sample.node_resources, "{release}: node resources");
        for (key, script) in &sample.scripts {
            assert_eq!(store.script(*key).unwrap().as_deref(), Some(*script), "{release}: script of key {key}");
        }
    }
}

fn check(release: &str, loaded: &Loaded, sample: &Sample) {
    assert_eq!(loaded.jobs, sample.jobs, "{release}: jobs");
    assert!(Arc::ptr_eq(&loaded.jobs[3].spec, &loaded.jobs[2].spec), "{release}: a subjob shares its parent's spec");
    assert_eq!(loaded.next_seq, sample.next_seq, "{release}: next_seq");
    assert_eq!(loaded.nodes, sample.nodes, "{release}: nodes");
    assert_eq!(loaded.config.as_ref(), Some(&sample.config), "{release}: queues and server attributes");
    assert_eq!(loaded.accounting, sample.accounting, "{release}: accounting records");
}

/// Commits `release`'s samples to a fresh database with this build and dumps it to its fixture.
fn write_fixture(release: &str) {
    let sample = RELEASES.iter().find(|known| known.name == release).expect("MINIPBS_WRITE_FIXTURES: a release").sample;
    let (_dir, path) = fresh_db();
    let mut store = Store::open(&path).unwrap();
    store.commit(&sample().ops).unwrap();
    drop(store);
    let file = path.sqlite_path().expect("release dumps are SQLite's");
    let dump = std::process::Command::new("sqlite3").arg(file).arg(".dump").output().expect("the sqlite3 command");
    assert!(dump.status.success(), "sqlite3 .dump: {}", String::from_utf8_lossy(&dump.stderr));
    std::fs::create_dir_all(fixture(release).parent().unwrap()).unwrap();
    std::fs::write(fixture(release), dump.stdout).unwrap();
}

/// Release 0.1.0: job 1 queued with its script, job 2 finished after running on two nodes,
/// array 5 with two subjobs, node `n1` with a site resource, queue `batch`, server attributes.
fn release_0_1_0() -> Sample {
    let script = "#!/bin/sh\necho queued\n";
    let mut queued = queued_job(1);
    Arc::make_mut(&mut queued.spec).script = script.to_string();
    queued.script_bytes = script.len() as u64;
    let mut finished = full_job(2);
    finished.set_state_for_test(JobState::Finished);
    // 0.1.0 had no preemption columns: they load as never preempted.
    finished.sched_preempted = None;
    finished.shares_released = false;
    let array = array_of_two(5);
    let node = StoredNode {
        name: "n1".into(),
        np: 8,
        mem_bytes: 16 << 30,
        ngpus: 1,
        properties: vec!["fast".into()],
        offline: true,
        comment: Some("disk check".into()),
    };
    let queue = StoredQueue {
        name: "batch".into(),
        attrs: vec![("enabled".into(), "True".into()), ("queue_type".into(), "Execution".into())],
    };
    let server_attrs = vec![("default_queue".to_string(), "batch".to_string()), ("scheduling".into(), "True".into())];
    let record =
        AccountingRecord { id: 1, time: 1_700_000_100, line: "11/14/2023 22:15:00;E;2.head;user=alice".into() };
    let def = StoredResourceDef { name: "scratch".into(), kind: "size".into(), flags: "nh".into() };
    let node_values = vec![("scratch".to_string(), "100gb".to_string())];

    let mut ops = vec![StoreOp::InsertJob(Box::new(queued.clone())), StoreOp::InsertJob(Box::new(finished.clone()))];
    ops.extend(array.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))));
    ops.extend([
        StoreOp::SetNextSeq(7),
        StoreOp::SetNodes(vec![node.clone()]),
        StoreOp::PutResourceDef(def.clone()),
        StoreOp::SetNodeResources { node: "n1".into(), values: node_values },
        StoreOp::PutQueue(queue.clone()),
        StoreOp::SetServerAttrs(server_attrs.clone()),
        StoreOp::AddAccounting(vec![record.clone()]),
    ]);
    // The state holds no script: the loaded job has its size only.
    Arc::make_mut(&mut queued.spec).script = String::new();
    let mut jobs = vec![queued, finished];
    jobs.extend(array);
    Sample {
        ops,
        jobs,
        scripts: vec![(JobId::new(1, SERVER).key(), script)],
        next_seq: 7,
        nodes: vec![node],
        config: StoredConfig { queues: vec![queue], server_attrs },
        accounting: vec![record],
        resource_defs: vec![def],
        node_resources: vec![("n1".into(), "scratch".into(), "100gb".into())],
    }
}

/// Array `seq` of subjobs 1 and 2, sharing the parent's spec; subjob 1 has run and expired.
fn array_of_two(seq: u64) -> Vec<Job> {
    let mut parent = queued_job(seq);
    Arc::make_mut(&mut parent.spec).array = Some(ArraySpec { indices: "1-2".into(), limit: Some(1) });
    parent.id = JobId::parent(seq, SERVER);
    let mut jobs = vec![parent.clone()];
    for index in 1..=2 {
        let mut sub = parent.clone();
        sub.id = JobId::sub(seq, index, SERVER);
        sub.set_state_for_test(if index == 1 { JobState::Expired } else { JobState::Queued });
        sub.output_path = crate::state::StdPath::literal(&format!("login:/home/alice/job{seq}.o{seq}.{index}"));
        jobs.push(sub);
    }
    jobs
}
