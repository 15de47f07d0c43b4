//! `StoreHandle`: concurrent commits share transactions, a failed transaction fails every
//! batch in it, and batches from separate wake-ups stay independent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use job::JobState;
use tokio::sync::{oneshot, Barrier};

use super::{fresh_store, load, queued_job};
use crate::store::handle::{commit_histogram, run, Batch};
use crate::store::{Store, StoreError, StoreHandle, StoreOp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_commits_share_transactions() {
    const TASKS: u64 = 200;
    let (_dir, path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    let barrier = Arc::new(Barrier::new(TASKS as usize));
    let tasks: Vec<_> = (1..=TASKS)
        .map(|seq| {
            let handle = handle.clone();
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                barrier.wait().await;
                handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(seq))), StoreOp::SetNextSeq(seq + 1)]).await
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("task").expect("commit");
    }
    let transactions = handle.transactions();
    println!("{TASKS} concurrent commits took {transactions} transactions");
    assert!(transactions >= 1);
    assert!(transactions < TASKS, "{transactions} transactions for {TASKS} commits");
    drop(handle);

    let mut store = Store::open(&path).unwrap();
    let loaded = load(&mut store);
    assert_eq!(loaded.jobs.len() as u64, TASKS, "every acknowledged job is stored");
    assert_eq!(loaded.next_seq, TASKS + 1);
}

#[tokio::test]
async fn sequential_commits_are_each_durable_and_counted() {
    let (_dir, path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    for seq in 1..=3 {
        handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(seq)))]).await.unwrap();
        assert_eq!(handle.transactions(), seq);
    }
    handle.commit(Vec::new()).await.unwrap();
    assert_eq!(handle.transactions(), 3, "an empty batch is no transaction");
    let failed = handle.commit(vec![StoreOp::UpdateJob(Box::new(queued_job(9)))]).await;
    assert!(matches!(failed, Err(StoreError::NoSuchJob { seq: 9 })), "{failed:?}");
    handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(4)))]).await.expect("the thread goes on after a failure");
    assert_eq!(handle.transactions(), 4, "the failed transaction is not counted");
    drop(handle);
    let seqs: Vec<u64> = load(&mut Store::open(&path).unwrap()).jobs.iter().map(|job| job.id.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn enqueue_sends_at_once_so_commit_order_is_enqueue_order() {
    let (_dir, path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    let mut finished = queued_job(1);
    finished.set_state_for_test(JobState::Finished);
    // Both batches are handed over before either future is polled; the update, awaited
    // first, must still see the insert before it.
    let insert = handle.enqueue(vec![StoreOp::InsertJob(Box::new(queued_job(1)))]);
    let update = handle.enqueue(vec![StoreOp::UpdateJob(Box::new(finished.clone()))]);
    update.await.expect("update after insert");
    insert.await.expect("insert");
    drop(handle);
    assert_eq!(load(&mut Store::open(&path).unwrap()).jobs, vec![finished]);
}

/// Queues batches before the thread body runs, so they are drained into one transaction.
fn run_queued(store: Store, batches: Vec<Vec<StoreOp>>) -> (Vec<Result<(), StoreError>>, u64) {
    let (sender, receiver) = mpsc::channel();
    let mut answers = Vec::new();
    for ops in batches {
        let (reply, answer) = oneshot::channel();
        sender.send(Batch { ops, after: None, reply, lazy: false }).unwrap();
        answers.push(answer);
    }
    drop(sender);
    let transactions = AtomicU64::new(0);
    let latency = commit_histogram();
    run(store, &receiver, &transactions, &latency);
    assert_eq!(latency.get_sample_count(), transactions.load(Ordering::Relaxed), "one latency per transaction");
    let results = answers.into_iter().map(|mut answer| answer.try_recv().expect("every batch is answered")).collect();
    (results, transactions.into_inner())
}

#[test]
fn queued_batches_go_into_one_transaction() {
    let (_dir, path, store) = fresh_store();
    let batches = (1..=5).map(|seq| vec![StoreOp::InsertJob(Box::new(queued_job(seq)))]).collect();
    let (results, transactions) = run_queued(store, batches);
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(transactions, 1);
    assert_eq!(load(&mut Store::open(&path).unwrap()).jobs.len(), 5);
}

#[test]
fn a_failed_transaction_fails_every_batch_in_it() {
    let (_dir, path, store) = fresh_store();
    let batches = vec![
        vec![StoreOp::InsertJob(Box::new(queued_job(1)))],
        vec![StoreOp::UpdateJob(Box::new(queued_job(2)))],
        vec![StoreOp::InsertJob(Box::new(queued_job(3)))],
    ];
    let (results, transactions) = run_queued(store, batches);
    assert_eq!(results.len(), 3);
    for result in &results {
        assert!(matches!(result, Err(StoreError::NoSuchJob { seq: 2 })), "{result:?}");
    }
    assert_eq!(transactions, 0);
    assert!(load(&mut Store::open(&path).unwrap()).jobs.is_empty(), "nothing of the transaction is stored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_commit_work_runs_in_order_and_never_after_a_failure() {
    let (_dir, _path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waits = Vec::new();
    for seq in 1..=50u64 {
        let seen = Arc::clone(&seen);
        let after: crate::store::handle::AfterCommit =
            Box::new(move |_: &mut crate::store::Store| seen.lock().unwrap().push(seq));
        // Even numbers carry no rows: their work must still wait for the batches before them.
        let ops = if seq % 2 == 1 { vec![StoreOp::InsertJob(Box::new(queued_job(seq)))] } else { vec![] };
        waits.push(handle.enqueue_then(ops, Some(after)));
    }
    for wait in waits {
        wait.await.expect("commit");
    }
    assert_eq!(*seen.lock().unwrap(), (1..=50).collect::<Vec<u64>>());

    let seen_after_failure = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&seen_after_failure);
    let duplicate = vec![StoreOp::InsertJob(Box::new(queued_job(1)))];
    let result = handle
        .enqueue_then(
            duplicate,
            Some(Box::new(move |_: &mut crate::store::Store| flag.store(true, std::sync::atomic::Ordering::SeqCst))),
        )
        .await;
    assert!(result.is_err(), "inserting job 1 twice fails");
    assert!(!seen_after_failure.load(std::sync::atomic::Ordering::SeqCst), "no after-commit work for a failed batch");
}

super::on_postgresql!(
    concurrent_commits_share_transactions,
    sequential_commits_are_each_durable_and_counted,
    enqueue_sends_at_once_so_commit_order_is_enqueue_order,
    queued_batches_go_into_one_transaction,
    a_failed_transaction_fails_every_batch_in_it,
    after_commit_work_runs_in_order_and_never_after_a_failure,
);

#[tokio::test]
async fn a_lazy_batch_rides_the_next_transaction() {
    let (_dir, path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(1)))]).await.unwrap();
    assert_eq!(handle.transactions(), 1);
    let lazy = handle.enqueue_lazily(vec![StoreOp::DeleteJob(queued_job(1).id.key())]);
    handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(2)))]).await.unwrap();
    lazy.await.expect("the lazy batch is committed with the next one");
    assert_eq!(handle.transactions(), 2, "no transaction of its own");
    drop(handle);
    let seqs: Vec<u64> = load(&mut Store::open(&path).unwrap()).jobs.iter().map(|job| job.id.seq).collect();
    assert_eq!(seqs, vec![2]);
}

#[tokio::test]
async fn a_lazy_batch_alone_is_committed_after_a_while() {
    let (_dir, path, store) = fresh_store();
    let handle = StoreHandle::spawn(store);
    handle.commit(vec![StoreOp::InsertJob(Box::new(queued_job(1)))]).await.unwrap();
    // Awaited: no other batch comes, so it waits out LAZY_DELAY and commits alone.
    handle.enqueue_lazily(vec![StoreOp::DeleteJob(queued_job(1).id.key())]).await.expect("committed alone");
    assert_eq!(handle.transactions(), 2);
    let lazy = handle.enqueue_lazily(vec![StoreOp::InsertJob(Box::new(queued_job(3)))]);
    drop(handle);
    lazy.await.expect("the last handle gone, what was held is committed");
    let seqs: Vec<u64> = load(&mut Store::open(&path).unwrap()).jobs.iter().map(|job| job.id.seq).collect();
    assert_eq!(seqs, vec![3]);
}
