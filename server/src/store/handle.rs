//! Group commit: [`StoreHandle`] hands batches of [`StoreOp`]s to one dedicated thread that
//! owns the [`Store`]. The thread blocks for a batch, then takes every batch already queued
//! and commits them all in one transaction, so N concurrent submits cost a few fsyncs.
//!
//! A lazy batch ([`StoreHandle::enqueue_lazily`]: forgetting accounting records) makes no
//! transaction of its own: it rides the next one, or is committed alone after [`LAZY_DELAY`].
//!
//! No locks: callers only send on a channel and await a oneshot, so nothing is held across an
//! `.await`. The thread never touches server state. It also runs each batch's after-commit work,
//! which may read the store (job scripts, read only when a job starts).

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use tokio::sync::oneshot;

use super::database::Store;
use super::error::StoreError;
use super::StoreOp;

/// Work to run on the store thread once a batch is committed; it may read the store (the
/// script of a job being started, `shared.rs`).
pub type AfterCommit = Box<dyn FnOnce(&mut Store) + Send>;

/// One caller's operations, what to run after they are committed, and where to send the
/// outcome.
pub(super) struct Batch {
    pub ops: Vec<StoreOp>,
    pub after: Option<AfterCommit>,
    pub reply: oneshot::Sender<Result<(), StoreError>>,
    /// Rides the next transaction instead of making one ([`StoreHandle::enqueue_lazily`]).
    pub lazy: bool,
}

/// How long a lazy batch waits for a transaction to ride before it is committed alone.
pub(super) const LAZY_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

/// A cheap, cloneable way to commit through the store thread. The thread ends (and closes the
/// database) when the last handle is dropped.
#[derive(Clone)]
pub struct StoreHandle {
    sender: mpsc::Sender<Batch>,
    transactions: Arc<AtomicU64>,
    /// How long each transaction took to commit (the `/metrics` histogram; atomics only).
    commit_seconds: prometheus::Histogram,
}

impl StoreHandle {
    /// Starts the store thread, which owns `store` from now on.
    ///
    /// Panics if the OS cannot start a thread (the server cannot run without one).
    pub fn spawn(store: Store) -> StoreHandle {
        let (sender, receiver) = mpsc::channel();
        let transactions = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&transactions);
        let commit_seconds = commit_histogram();
        let latency = commit_seconds.clone();
        std::thread::Builder::new()
            .name("pbs-store".to_string())
            .spawn(move || run(store, &receiver, &counter, &latency))
            // Invariant: failing to start one thread at start-up is not recoverable.
            .expect("cannot start the store thread");
        StoreHandle { sender, transactions, commit_seconds }
    }

    /// Resolves once `ops` are durably committed. Everything pending when the thread wakes
    /// goes into one transaction (so 100 concurrent submits cost a handful of fsyncs). If that
    /// transaction fails, every caller whose ops were in it gets the error and none of those
    /// ops is stored.
    pub async fn commit(&self, ops: Vec<StoreOp>) -> Result<(), StoreError> {
        self.enqueue(ops).await
    }

    /// Hands `ops` to the store thread now, before returning, and gives back a future that
    /// resolves like [`StoreHandle::commit`]. Batches are committed in the order they were
    /// enqueued, so calling this while holding the state lock (and awaiting the future after
    /// releasing it) keeps the store's order equal to the order of the mutations.
    pub fn enqueue(&self, ops: Vec<StoreOp>) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        self.enqueue_then(ops, None)
    }

    /// Like [`StoreHandle::enqueue`], and runs `after` on the store thread once the batch is
    /// committed (never if it fails). `after`s run in enqueue order, so messages sent from them
    /// leave in the order of the mutations that caused them (a kill never overtakes its run).
    pub fn enqueue_then(
        &self,
        ops: Vec<StoreOp>,
        after: Option<AfterCommit>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        self.send(ops, after, false)
    }

    /// Hands `ops` to the store thread to commit with the next batch that makes a transaction
    /// (or alone after [`LAZY_DELAY`] without one), so they cost no fsync of their own. Only
    /// for ops that may be committed after batches enqueued later (forgetting accounting
    /// records already in the files: at worst they are found again, and not written twice, at
    /// the next start).
    pub fn enqueue_lazily(&self, ops: Vec<StoreOp>) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        self.send(ops, None, true)
    }

    fn send(
        &self,
        ops: Vec<StoreOp>,
        after: Option<AfterCommit>,
        lazy: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'static {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(Batch { ops, after, reply, lazy }).map_err(|_| StoreError::Closed);
        async move {
            sent?;
            answer.await.map_err(|_| StoreError::Closed)?
        }
    }

    /// Number of transactions committed so far (for tests and benchmarks).
    pub fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    /// The commit latency histogram (`minipbs_store_commit_seconds`), for `/metrics`.
    pub fn commit_seconds(&self) -> &prometheus::Histogram {
        &self.commit_seconds
    }
}

/// `minipbs_store_commit_seconds`: from a millisecond (an fsync on a fast disk) to seconds.
pub(super) fn commit_histogram() -> prometheus::Histogram {
    let opts = prometheus::HistogramOpts::new(
        "minipbs_store_commit_seconds",
        "Time the store thread took to commit one transaction (a group of batches).",
    )
    .buckets(vec![0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]);
    // Invariant: the name and the buckets above are valid (a unit test builds it).
    prometheus::Histogram::with_opts(opts).expect("a valid histogram")
}

/// The store thread: one transaction per wake-up until every handle is gone.
pub(super) fn run(
    mut store: Store,
    receiver: &mpsc::Receiver<Batch>,
    transactions: &AtomicU64,
    latency: &prometheus::Histogram,
) {
    // Lazy batches waiting for a transaction to ride.
    let mut held: Vec<Batch> = Vec::new();
    loop {
        let next = if held.is_empty() {
            receiver.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
        } else {
            receiver.recv_timeout(LAZY_DELAY)
        };
        let mut batches = std::mem::take(&mut held);
        let waited_out = match next {
            Ok(batch) => {
                batches.push(batch);
                false
            }
            Err(mpsc::RecvTimeoutError::Timeout) => true,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                commit_batches(&mut store, batches, transactions, latency);
                break;
            }
        };
        batches.extend(receiver.try_iter());
        if !waited_out && batches.iter().all(|batch| batch.lazy) {
            held = batches;
            continue;
        }
        commit_batches(&mut store, batches, transactions, latency);
    }
    tracing::debug!("store thread stopping: no handles left");
}

/// Commits `batches` in one transaction, runs their after-commit work and answers them.
fn commit_batches(store: &mut Store, batches: Vec<Batch>, transactions: &AtomicU64, latency: &prometheus::Histogram) {
    // The first batch's vector takes the others' ops: a lone batch (a qrls of 100,000 jobs)
    // is not copied into a second vector.
    let mut ops: Vec<StoreOp> = Vec::new();
    let mut replies = Vec::with_capacity(batches.len());
    let mut afters = Vec::new();
    for batch in batches {
        if ops.is_empty() {
            ops = batch.ops;
        } else {
            ops.extend(batch.ops);
        }
        replies.push(batch.reply);
        afters.extend(batch.after);
    }
    let started = std::time::Instant::now();
    let outcome = store.commit(&ops);
    match &outcome {
        Ok(()) if !ops.is_empty() => {
            latency.observe(started.elapsed().as_secs_f64());
            transactions.fetch_add(1, Ordering::Relaxed);
            tracing::trace!(batches = replies.len(), ops = ops.len(), "store transaction committed");
        }
        Ok(()) => {}
        Err(err) => {
            tracing::error!(batches = replies.len(), ops = ops.len(), error = %err.report(), "store transaction failed");
        }
    }
    if outcome.is_ok() {
        for after in afters {
            after(store);
        }
    }
    for reply in replies {
        // A caller that stopped waiting (its task was cancelled) needs no answer.
        let _ = reply.send(outcome.clone());
    }
}
