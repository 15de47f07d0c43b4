//! Durability across a process crash: a child process (this test binary again, running only
//! [`child_commits_then_aborts`]) commits jobs through a `StoreHandle` and calls `abort()`
//! without closing anything; the parent then reopens the database and finds every job whose
//! commit was acknowledged.
//!
//! The child's half is not a test of its own: it is `#[ignore]`d, so a plain run lists it as
//! ignored instead of counting it as passed, and run without its parent's environment (as
//! `--include-ignored` would) it fails. The parent runs it with `--ignored --exact`.

use std::process::Command;

use super::{fresh_db, full_job, load, queued_job};
use crate::state::Job;
use crate::store::{Store, StoreHandle, StoreLocation, StoreOp};

/// Set (to the store's location, `sqlite:PATH` or a URL) only in the child process.
const CHILD_DB_ENV: &str = "MINIPBS_STORE_CRASH_CHILD_DB";
/// The child's test, by its full path in this test binary.
const CHILD_TEST: &str = "store::tests::crash::child_commits_then_aborts";
/// Jobs the child commits, in batches of [`BATCH`] concurrent commits.
const JOBS: u64 = 60;
const BATCH: u64 = 10;

/// The job the child commits as `seq`: every seventh has every field set.
fn child_job(seq: u64) -> Job {
    if seq.is_multiple_of(7) {
        full_job(seq)
    } else {
        queued_job(seq)
    }
}

/// The child's half, run only by [`committed_jobs_survive_an_abort`] (which sets
/// [`CHILD_DB_ENV`]); on its own it fails.
#[test]
#[ignore = "the child process of committed_jobs_survive_an_abort, not a test"]
fn child_commits_then_aborts() {
    let location = std::env::var(CHILD_DB_ENV)
        .unwrap_or_else(|_| panic!("{CHILD_TEST} is run by committed_jobs_survive_an_abort, not on its own"));
    let location = StoreLocation::parse(&location).expect("child: a store location");
    let store = Store::open(&location).expect("child: open store");
    let handle = StoreHandle::spawn(store);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        for first in (1..=JOBS).step_by(BATCH as usize) {
            let commits: Vec<_> = (first..first + BATCH)
                .map(|seq| {
                    let handle = handle.clone();
                    let job = child_job(seq);
                    tokio::spawn(async move {
                        handle.commit(vec![StoreOp::InsertJob(Box::new(job)), StoreOp::SetNextSeq(seq + 1)]).await
                    })
                })
                .collect();
            for commit in commits {
                commit.await.expect("child: task").expect("child: commit");
            }
        }
    });
    println!("child committed {JOBS} jobs");
    use std::io::Write as _;
    std::io::stdout().flush().unwrap();
    // No drop of the handle, the store or the runtime: the process dies as in a crash.
    std::process::abort();
}

/// The location as `StoreLocation::parse` reads it (a URL keeps its password here).
fn location_text(location: &StoreLocation) -> String {
    match location {
        StoreLocation::Sqlite(path) => format!("sqlite:{}", path.display()),
        StoreLocation::Postgresql(url) => url.clone(),
    }
}

#[test]
fn committed_jobs_survive_an_abort() {
    let (_dir, path) = fresh_db();
    let exe = std::env::current_exe().expect("path of this test binary");
    let output = Command::new(exe)
        .args([CHILD_TEST, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_DB_ENV, location_text(&path))
        .output()
        .expect("run the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.contains(&format!("child committed {JOBS} jobs")), "child did not commit:\n{stdout}\n{stderr}");
    assert!(!output.status.success(), "the child should have aborted: {:?}", output.status);

    let mut store = Store::open(&path).expect("reopen after the crash");
    let loaded = load(&mut store);
    let expected: Vec<_> = (1..=JOBS).map(child_job).collect();
    assert_eq!(loaded.jobs, expected);
    assert_eq!(loaded.next_seq, JOBS + 1);
}

super::on_postgresql!(committed_jobs_survive_an_abort);
