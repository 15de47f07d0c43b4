//! The store thread's CPU per job, without a cluster: commits the batches of a job's life
//! (submit with its `Q` record, start with its `S` record and the script read, the start report,
//! the end with its `E` record and usage, the lazy forget, the history purge) through [`Store`]
//! on SQLite, `N` jobs (default 2,000), and prints the thread's CPU and the wall time per job.
//! Prints figures only. The database is in a new directory under `BENCH_DIR` (default `/tmp`;
//! `/dev/shm` leaves out the disk's fsyncs).
//! `cargo run --release -p server --example store_life`

use server::state::outbox::Outbox;
use server::state::{Job, Requester, ServerState};
use server::store::{AccountingRecord, JobProgress, Store, StoreOp, StoredUsage, UsageKind};

/// This thread's CPU time so far, seconds.
fn thread_cpu() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write; the clock id is a constant.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
}

/// A queued job as `qsub job.sh` makes it (the handler's own, so its row is realistic).
fn template() -> Job {
    let mut state = ServerState::new("head", "workq", 10, 0);
    let requester = Requester { uid: 1000, gid: 1000, user: "alice".into() };
    let spec = job::JobSpec {
        submit_host: "login".into(),
        submit_args: "job.sh".into(),
        ..job::JobSpec::new("job.sh", "#!/bin/sh\necho hello from $PBS_JOBID\n")
    };
    server::handlers::submit_job::submit_job(&mut state, &mut Outbox::default(), &requester, 0, spec);
    let job = state.jobs().values().next().expect("the job was submitted");
    (**job).clone()
}

fn record(id: u64, kind: char) -> AccountingRecord {
    AccountingRecord { id, time: 1_700_000_000, line: format!("11/14/2023 22:13:20;{kind};{id}.head;queue=workq") }
}

/// One job's commits, in the server's order.
fn life(store: &mut Store, template: &Job, seq: u64) {
    let mut job = template.clone();
    job.id.seq = seq;
    store
        .commit(&[StoreOp::InsertJob(Box::new(job.clone())), StoreOp::AddAccounting(vec![record(3 * seq, 'Q')])])
        .unwrap();
    job.times.stime = Some(1_700_000_001);
    job.run_count = 1;
    store.commit(&[JobProgress::op(&job), StoreOp::AddAccounting(vec![record(3 * seq + 1, 'S')])]).unwrap();
    assert!(store.script(job.id.key()).unwrap().is_some(), "the script is read when the job starts");
    job.session_id = Some(4242);
    store.commit(&[JobProgress::op(&job)]).unwrap();
    job.exit_status = Some(0);
    let usage =
        StoredUsage { kind: UsageKind::User, name: "alice".into(), usage: 1.0, stamp: 1, group: "users".into() };
    store
        .commit(&[
            JobProgress::op(&job),
            StoreOp::AddAccounting(vec![record(3 * seq + 2, 'E')]),
            StoreOp::PutUsage(usage),
        ])
        .unwrap();
    store.commit(&[StoreOp::ForgetAccounting(3 * seq + 2), StoreOp::DeleteJob(job.id.key())]).unwrap();
}

fn main() {
    let jobs: u64 = std::env::var("N").ok().and_then(|text| text.parse().ok()).unwrap_or(2_000);
    let base = std::env::var("BENCH_DIR").unwrap_or_else(|_| "/tmp".to_string());
    let dir = tempfile::tempdir_in(&base).expect("a temporary directory");
    let mut store = Store::open_sqlite(&dir.path().join("server.db")).expect("a store");
    let template = template();
    // Warm up: every statement prepared, the pages cached.
    for seq in 1..=100 {
        life(&mut store, &template, seq);
    }
    let (cpu, wall) = (thread_cpu(), std::time::Instant::now());
    for seq in 101..101 + jobs {
        life(&mut store, &template, seq);
    }
    let (cpu, wall) = (thread_cpu() - cpu, wall.elapsed().as_secs_f64());
    println!(
        "store_life: {jobs} jobs in {base}: store thread CPU {:.1} us/job, wall {:.1} us/job (5 commits a job)",
        cpu * 1e6 / jobs as f64,
        wall * 1e6 / jobs as f64
    );
}
