//! What a job's life costs the store in statements (issue 19): counted through diesel's
//! instrumentation on the store's own connection, over the commits a job makes when it is
//! submitted, moved, started (with its script read), reported started, ended and purged from
//! history. The second job's statements must all come out of the statement cache: none is
//! parsed again. The hot ones run on the inner connection (`db::on_inner!`), the cache the same.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel::Connection;
use job::JobState;

use super::{fresh_store, full_job, queued_job};
use crate::store::{AccountingRecord, JobProgress, Store, StoreOp, StoredUsage, UsageKind};

/// The statements run (their SQL, binds cut off) and the SQL diesel put in its cache.
#[derive(Default)]
struct Seen {
    run: Vec<String>,
    cached: HashSet<String>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

impl Instrumentation for Recorder {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        let mut seen = self.0.lock().unwrap();
        match event {
            InstrumentationEvent::CacheQuery { sql, .. } => {
                seen.cached.insert(sql.to_string());
            }
            InstrumentationEvent::StartQuery { query, .. } => {
                let text = query.to_string();
                let sql = text.split(" -- binds: ").next().unwrap_or_default().to_string();
                seen.run.push(sql);
            }
            _ => {}
        }
    }
}

/// Transaction control runs through `sqlite3_exec`/a simple query, never a prepared statement.
fn is_transaction_control(sql: &str) -> bool {
    let word = sql.split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
    matches!(word.as_str(), "BEGIN" | "COMMIT" | "ROLLBACK" | "SAVEPOINT" | "RELEASE")
}

fn record(id: u64) -> AccountingRecord {
    AccountingRecord { id, time: 1_700_000_000, line: format!("11/14/2023 22:13:20;Q;{id}.head;queue=batch") }
}

/// One job's life as the server commits it: the ops of each commit, in order (a qmove while
/// queued rewrites the whole row; the start, its report and the end only the progress columns).
fn life(seq: u64, store: &mut Store) {
    let mut job = queued_job(seq);
    store.commit(&[StoreOp::InsertJob(Box::new(job.clone())), StoreOp::AddAccounting(vec![record(3 * seq)])]).unwrap();
    job.queue = "express".into();
    store.commit(&[StoreOp::UpdateJob(Box::new(job.clone()))]).unwrap();
    let ran = full_job(seq);
    job.set_state_for_test(JobState::Running);
    job.exec = ran.exec.clone();
    job.times.stime = ran.times.stime;
    job.comment = ran.comment.clone();
    job.run_count = 1;
    store.commit(&[JobProgress::op(&job), StoreOp::AddAccounting(vec![record(3 * seq + 1)])]).unwrap();
    assert!(store.script(job.id.key()).unwrap().is_some(), "the script is read when the job starts");
    job.session_id = Some(4242);
    store.commit(&[JobProgress::op(&job)]).unwrap();
    job.set_state_for_test(JobState::Finished);
    job.exit_status = Some(0);
    job.used = ran.used;
    let usage =
        StoredUsage { kind: UsageKind::User, name: "alice".into(), usage: 1.0, stamp: 1, group: "users".into() };
    store
        .commit(&[JobProgress::op(&job), StoreOp::AddAccounting(vec![record(3 * seq + 2)]), StoreOp::PutUsage(usage)])
        .unwrap();
    store.commit(&[StoreOp::ForgetAccounting(3 * seq + 2)]).unwrap();
    store.commit(&[StoreOp::DeleteJob(job.id.key()), StoreOp::SetNextSeq(seq + 1)]).unwrap();
}

#[test]
fn a_jobs_statements_are_prepared_once() {
    let (_dir, _location, mut store) = fresh_store();
    let recorder = Recorder::default();
    store.connection().set_instrumentation(recorder.clone());
    life(1, &mut store);
    let first = std::mem::take(&mut recorder.0.lock().unwrap().run);
    life(2, &mut store);
    let seen = recorder.0.lock().unwrap();
    let statements: Vec<&String> = seen.run.iter().filter(|sql| !is_transaction_control(sql)).collect();
    let uncached: Vec<&&String> = statements.iter().filter(|sql| !seen.cached.contains(sql.as_str())).collect();
    println!("a job's life: {} statements ({} the first time)", statements.len(), first.len());
    assert!(uncached.is_empty(), "prepared again for the second job:\n{uncached:#?}");
    assert!(statements.len() <= 16, "{} statements for one job's life:\n{statements:#?}", statements.len());
}

super::on_postgresql!(a_jobs_statements_are_prepared_once,);
