//! Store tests: each test opens a fresh database in its own temporary directory, with the
//! embedded migrations applied by `Store::open`. Helpers here build jobs with every field set.
//!
//! Loading goes through `Store::load_with` and [`fake_parser`] unless a test is about the real
//! resource parser, so these tests do not depend on `ResourceRequest::from_list`.

mod accounting;
mod arrays;
mod crash;
mod fairshare;
mod group_commit;
mod jobs;
mod migrations;
mod next_seq;
mod previous_release;
mod queues;
mod scripts;
mod site;

use std::path::PathBuf;

use job::spec::Join;
use job::{Chunk, JobId, JobSpec, JobState, Placement, ResourceError, ResourceRequest};
use proto::mom::ResourcesUsed;
use tempfile::TempDir;

use super::{Loaded, Store};
use crate::state::{Job, JobTimes, NodeShare};

/// The server name tests load with.
const SERVER: &str = "head";

/// A fresh database path in a new temporary directory (kept alive by the returned guard).
fn fresh_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("jobs.db");
    (dir, path)
}

/// Opens (creating and migrating) the database at a fresh path.
fn fresh_store() -> (TempDir, PathBuf, Store) {
    let (dir, path) = fresh_db();
    let store = Store::open(&path).expect("open fresh store");
    (dir, path, store)
}

/// The request every test job carries, built by hand (the real parser may not exist yet).
fn sample_request() -> ResourceRequest {
    ResourceRequest {
        chunks: vec![Chunk {
            count: 2,
            ncpus: 2,
            ngpus: 1,
            mem: Some(1 << 30),
            mpiprocs: 2,
            host: None,
            properties: vec!["fast".to_string()],
            mps: None,
            amounts: Vec::new(),
        }],
        place: Placement::Scatter,
        exclusive: true,
        walltime: Some(3600),
        cput: None,
        first_ppn: 2,
        display: vec![
            ("ncpus".to_string(), "4".to_string()),
            ("nodes".to_string(), "2:ppn=2:gpus=1:fast".to_string()),
            ("walltime".to_string(), "01:00:00".to_string()),
        ]
        .into(),
    }
}

/// Stands in for `ResourceRequest::from_list`: always the sample request.
fn fake_parser(_pairs: &[(String, String)]) -> Result<ResourceRequest, ResourceError> {
    Ok(sample_request())
}

/// Loads with [`fake_parser`] and server name [`SERVER`]. Checks each job's `spec_bytes` (its
/// spec's size, 0 for a subjob sharing its parent's) and then zeroes it, as the test jobs have it.
fn load(store: &mut Store) -> Loaded {
    let mut loaded = store.load_with(SERVER, &fake_parser).expect("load");
    let mut earlier: Vec<std::sync::Arc<JobSpec>> = Vec::new();
    for job in &mut loaded.jobs {
        let shared = earlier.iter().any(|spec| std::sync::Arc::ptr_eq(spec, &job.spec));
        let expected = if shared { 0 } else { Job::spec_size(&job.spec) };
        assert_eq!(job.spec_bytes, expected, "spec_bytes of {}", job.id);
        job.spec_bytes = 0;
        earlier.push(std::sync::Arc::clone(&job.spec));
    }
    loaded
}

/// A spec with most fields set (the rest as `JobSpec::default`), distinct per seq.
fn sample_spec(seq: u64) -> JobSpec {
    JobSpec {
        name: format!("job{seq}"),
        // As the state holds it: the script lives in its own column (`scripts.rs`).
        script: String::new(),
        queue: Some("batch".to_string()),
        resources: vec![
            ("nodes".to_string(), "2:ppn=2:gpus=1:fast".to_string()),
            ("walltime".to_string(), "1:00:00".to_string()),
        ],
        output_path: Some("login:/home/alice/out/".to_string()),
        join: Join::OutErr,
        keep: "oe".to_string(),
        user_hold: true,
        rerunnable: false,
        priority: -17,
        variables: vec![("PBS_O_WORKDIR".to_string(), "/home/alice".to_string()), ("EMPTY".to_string(), String::new())]
            .into(),
        shell: Some("/bin/bash".to_string()),
        mail_points: "abe".to_string(),
        mail_users: vec!["alice@example.com".to_string(), "bob".to_string()],
        account: Some("proj-1".to_string()),
        submit_host: "login".to_string(),
        submit_args: "-l nodes=2:ppn=2 job.sh".to_string(),
        ..JobSpec::default()
    }
}

/// A queued job: every optional field `None`, no allocation.
fn queued_job(seq: u64) -> Job {
    let mut job = Job::new(JobId::new(seq, SERVER), sample_spec(seq).into(), sample_request(), JobState::Queued);
    job.owner = "alice".to_string();
    job.owner_uid = 1000;
    job.group = "users".to_string();
    job.queue = "batch".to_string();
    job.times = JobTimes {
        ctime: 1_700_000_000,
        qtime: 1_700_000_001,
        mtime: 1_700_000_002,
        etime: 1_700_000_003,
        stime: None,
        obittime: None,
    };
    job.output_path = format!("login:/home/alice/out/job{seq}.o{seq}");
    job.error_path = format!("login:/home/alice/job{seq}.e{seq}");
    job
}

/// A job that ran on two nodes and ended: every optional field `Some`, extreme values where
/// the types allow them.
fn full_job(seq: u64) -> Job {
    let mut job = queued_job(seq);
    job.set_state_for_test(JobState::Exiting);
    job.owner_uid = u32::MAX;
    job.hold_types = "uos".to_string();
    job.times.ctime = -5;
    job.times.stime = Some(1_700_000_010);
    job.times.obittime = Some(i64::MAX);
    job.exec = vec![
        NodeShare {
            node: "n1".to_string(),
            slots: vec![0, 1],
            gpus: vec![0],
            mem_bytes: 1 << 30,
            mpiprocs: 2,
            mps: None,
            amounts: vec![("scratch".to_string(), 60 << 30)],
        },
        NodeShare {
            node: "n2.cluster".to_string(),
            slots: vec![4, 5],
            gpus: Vec::new(),
            mem_bytes: 0,
            mpiprocs: 2,
            mps: None,
            amounts: Vec::new(),
        },
    ];
    job.session_id = Some(i32::MAX);
    job.exit_status = Some(-9);
    job.used =
        ResourcesUsed { cput_secs: 7, mem_kb: 2048, vmem_kb: i64::MAX as u64, walltime_secs: 65, ncpus: u32::MAX };
    job.run_count = 3;
    job.comment = Some("Job run at Mon Jan 1 on (n1:ncpus=2)+(n2:ncpus=2) — ünïcode 'quoted'".to_string());
    job.delete_requested = true;
    job.rerun_requested = true;
    job.sched_preempted = Some(1_700_000_050);
    job.shares_released = true;
    job
}
