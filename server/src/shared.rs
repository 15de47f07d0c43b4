//! What every connection task shares: the state behind a lock, the store handle, the mom
//! links, and the scheduler's wake-up. Also [`Shared::apply`], the one path by which a handler's
//! effects are carried out in the right order.
//!
//! Invariant: the outbox's rows and its mom messages are handed to the store thread while the
//! state lock is held, so the store commits mutations in the order they happened and sends each
//! batch's mom messages right after its commit, in that same order (a `KillJob` never overtakes
//! the `RunJob` it follows). The caller awaits the commit without the lock, then replies. A
//! failed commit is fatal: memory would no longer match the store, so the server exits and a
//! restart recovers from the store. A handler's accounting records are committed with its rows
//! and handed to the accounting writer after the commit (`accounting_writer.rs`). The
//! scheduling pass a handler asks for runs in the same turn when it is cheap, its starts in the
//! handler's commit ([`Shared::schedule_inline`]).

use crate::accounting_writer::Accountant;
use crate::config::ServerConfig;
use crate::state::outbox::{Notice, Outbox};
use crate::state::ServerState;
use crate::store::{AccountingRecord, AfterCommit, Store, StoreHandle, StoreOp};
use proto::ServerToMom;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, Notify};

/// The channel to one connected mom, with an id so a stale connection cannot remove its
/// successor's entry.
pub struct MomLink {
    pub link_id: u64,
    /// Where the mom's connection comes from (a registration under its name from another
    /// address is refused while this link lives).
    pub peer: crate::peer::Peer,
    pub sender: mpsc::UnboundedSender<ServerToMom>,
}

/// Takes the notices of one commit, on the store thread, right after the commit and the mom
/// messages (so it must not block for long: queue slow work elsewhere).
pub type NoticeSink = Arc<dyn Fn(Vec<Notice>) + Send + Sync>;

/// Shared by all tasks of one server.
pub struct Shared {
    pub config: ServerConfig,
    state: Mutex<ServerState>,
    pub store: StoreHandle,
    pub moms: Arc<Mutex<HashMap<String, MomLink>>>,
    pub sched_wakeup: Notify,
    notice_sink: NoticeSink,
    /// The accounting writer, and the id of the next record (assigned under the state lock,
    /// so ids follow the commit order). `None`: no accounting (tests).
    accounting: Option<(Accountant, AtomicU64)>,
    /// Counters and histograms for `/metrics` (`metrics.rs`).
    pub metrics: crate::metrics::ServerMetrics,
    /// How long the last scheduling pass took ([`Shared::schedule_inline`]).
    last_pass_nanos: AtomicU64,
}

/// [`Shared::schedule_inline`] runs a pass in a request's turn only while at most this many
/// jobs are queued (a pass's cost grows with them; a long queue is the loop's to coalesce)...
pub const INLINE_PASS_MAX_QUEUED: usize = 16;
/// ...and the last pass took at most this long (a pass's cost also grows with the nodes and
/// the running jobs: on a large cluster every pass is the loop's).
pub const INLINE_PASS_MAX: std::time::Duration = std::time::Duration::from_micros(200);

/// Current time in epoch seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Shared {
    /// munged's socket, for sealing TCP frames.
    pub fn munge_socket(&self) -> Arc<std::path::Path> {
        Arc::from(self.config.munge_socket.as_path())
    }

    pub fn new(config: ServerConfig, state: ServerState, store: StoreHandle) -> Shared {
        let metrics = crate::metrics::ServerMetrics::new(store.commit_seconds().clone());
        Shared {
            metrics,
            config,
            state: Mutex::new(state),
            store,
            moms: Arc::new(Mutex::new(HashMap::new())),
            sched_wakeup: Notify::new(),
            notice_sink: Arc::new(log_notices),
            accounting: None,
            last_pass_nanos: AtomicU64::new(0),
        }
    }

    /// Records job events in the accounting log through `accountant`; `next_id` is above every
    /// record id still stored.
    pub fn with_accountant(mut self, accountant: Accountant, next_id: u64) -> Shared {
        self.accounting = Some((accountant, AtomicU64::new(next_id)));
        self
    }

    /// Replaces where notices go (the accounting log and the mailer).
    pub fn with_notice_sink(mut self, sink: NoticeSink) -> Shared {
        self.notice_sink = sink;
        self
    }

    /// Locks the state. Never hold the guard across an `.await`. A handler that panicked while
    /// holding it may have left the state half-changed: the server exits (as on a failed
    /// commit) rather than serve it, and a restart recovers from the store.
    pub fn state(&self) -> MutexGuard<'_, ServerState> {
        pbslog::fatal::lock_or_exit(&self.state, "server state")
    }

    /// Runs `handler` on the state, then carries out its effects: its rows are committed and
    /// its mom messages sent right after the commit (both by the store thread, in lock order),
    /// the scheduler is woken, and the handler's result is returned once all that is durable.
    pub async fn apply<R>(&self, handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R) -> R {
        let (result, commit, schedule) = {
            let mut state = self.state();
            let (result, mut out) = run_handler(&mut state, now(), handler);
            self.schedule_inline(&mut state, &mut out);
            self.metrics.count(&out.notices);
            #[cfg(debug_assertions)]
            panic_if_asked(&out);
            // The accounting records go into the same commit as the change they record, in the
            // flavor of the moment (qmgr may change it): records follow the displays.
            let records = self.accounting_records(&out.notices, state.flavor);
            if !records.is_empty() {
                out.persist.push(StoreOp::AddAccounting(records.clone()));
            }
            let commit = if out.persist.is_empty() && out.to_moms.is_empty() && out.notices.is_empty() {
                None
            } else if out.is_lazy() {
                // Not awaited: the batch is with the store thread already, and this handler
                // (a mom's connection) must not wait for the next transaction. A failure is
                // logged there; what was lost is reported again (`Outbox::persist_lazily`).
                drop(self.store.enqueue_lazily(std::mem::take(&mut out.persist)));
                None
            } else {
                let moms = Arc::clone(&self.moms);
                let messages = self.address(std::mem::take(&mut out.to_moms));
                let notices = std::mem::take(&mut out.notices);
                let sink = Arc::clone(&self.notice_sink);
                let accountant = self.accounting.as_ref().map(|(accountant, _)| accountant.clone());
                let after: AfterCommit = Box::new(move |store| {
                    send_to_moms(&moms, messages, store);
                    if let Some(accountant) = accountant {
                        accountant.append(records);
                    }
                    if !notices.is_empty() {
                        sink(notices);
                    }
                });
                Some(self.store.enqueue_then(std::mem::take(&mut out.persist), Some(after)))
            };
            (result, commit, out.schedule)
        };
        if let Some(commit) = commit {
            if let Err(error) = commit.await {
                // Memory already holds the change the store refused: continuing would let the
                // two drift apart (a job acknowledged but not stored, or stored twice). Exit and
                // let a restart recover from the store, which is consistent.
                tracing::error!(error = %error.report(), "store commit failed; pbs_server exits to recover from the store");
                std::process::exit(pbslog::fatal::EXIT_SOFTWARE);
            }
        }
        if schedule {
            self.sched_wakeup.notify_one();
        }
        result
    }
}

impl Shared {
    /// Runs the scheduling pass a handler asked for in the handler's own turn of the state lock,
    /// so its starts ride the handler's commit: a job submitted to a cluster with room is
    /// stored queued and started in one transaction (one fsync), not two. Only when that is
    /// cheap: the outbox is not lazy (a mom's report must not wait for a start's commit), at
    /// most [`INLINE_PASS_MAX_QUEUED`] jobs are queued and the last pass took at most
    /// [`INLINE_PASS_MAX`]. Otherwise the scheduler loop's pass, which coalesces the requests
    /// of a few milliseconds, does it as before.
    fn schedule_inline(&self, state: &mut ServerState, out: &mut Outbox) {
        let cheap = self.last_pass_nanos.load(Ordering::Relaxed) <= INLINE_PASS_MAX.as_nanos() as u64;
        if !out.schedule || out.is_lazy() || !cheap || state.queued_count() > INLINE_PASS_MAX_QUEUED {
            return;
        }
        out.schedule = false;
        let ((), pass) = run_handler(state, now(), |state, pass| self.timed_pass(state, pass));
        out.absorb(pass);
    }

    /// One scheduling pass (`sched_loop.rs`), timed for `/metrics` and for
    /// [`Shared::schedule_inline`]'s choice.
    pub fn timed_pass(&self, state: &mut ServerState, out: &mut Outbox) {
        let started = std::time::Instant::now();
        crate::sched_loop::schedule_pass(state, out, now());
        let took = started.elapsed();
        self.metrics.observe_pass(took.as_secs_f64());
        self.last_pass_nanos.store(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// The accounting records of a handler's notices, with their ids (call under the state
    /// lock); none without an accountant.
    fn accounting_records(&self, notices: &[Notice], flavor: crate::config::Flavor) -> Vec<AccountingRecord> {
        let Some((_, next_id)) = &self.accounting else { return Vec::new() };
        crate::accounting::records(notices, flavor)
            .into_iter()
            .map(|(time, line)| AccountingRecord { id: next_id.fetch_add(1, Ordering::Relaxed), time, line })
            .collect()
    }

    /// Pins each message to the mom connection current now, while the state lock is held: a
    /// message decided for one connection must not reach the next one, whose registration has
    /// already reconciled the jobs.
    fn address(&self, messages: Vec<(String, ServerToMom)>) -> Vec<(String, Option<u64>, ServerToMom)> {
        if messages.is_empty() {
            return Vec::new();
        }
        let moms = lock_moms(&self.moms);
        messages
            .into_iter()
            .map(|(node, message)| (node.clone(), moms.get(&node).map(|link| link.link_id), message))
            .collect()
    }
}

/// Runs `handler` on the state and completes what every handler's change implies: array
/// parents follow their subjobs in the same outbox (so in the same commit). The synchronous
/// half of [`Shared::apply`]; handler tests call it to run handlers exactly as the server does.
pub(crate) fn run_handler<R>(
    state: &mut ServerState,
    now: i64,
    handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R,
) -> (R, Outbox) {
    let mut out = Outbox::default();
    let result = handler(state, &mut out);
    state.settle_arrays(&mut out, now);
    // Fair-share usage charged by the handler's changes is stored in the same commit.
    out.persist.extend(state.fairshare.take_pending());
    (result, out)
}

/// [`run_handler`], then the state's invariants checked (`ServerState::sanity_check`): what
/// handler tests run.
#[cfg(test)]
pub(crate) fn run_checked<R>(
    state: &mut ServerState,
    now: i64,
    handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R,
) -> (R, Outbox) {
    let done = run_handler(state, now, handler);
    state.sanity_check();
    done
}

/// Locks the mom links; a panic while they were held (under the state lock, as registration
/// holds them) ends the server, as for the state ([`Shared::state`]).
pub fn lock_moms(moms: &Mutex<HashMap<String, MomLink>>) -> MutexGuard<'_, HashMap<String, MomLink>> {
    pbslog::fatal::lock_or_exit(moms, "mom links")
}

/// Debug builds only (compiled out of release builds): fault injection for the test that a
/// panic in a handler ends the server (`tests/tests/system/panics.rs`). If the environment
/// variable `MINIPBS_DEBUG_PANIC_ON_SUBMIT` (read once) names the job being stored, panics
/// here, with the state lock held and the state changed but not committed.
#[cfg(debug_assertions)]
fn panic_if_asked(out: &Outbox) {
    static NAME: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let Some(name) = NAME.get_or_init(|| std::env::var("MINIPBS_DEBUG_PANIC_ON_SUBMIT").ok()) else { return };
    for op in &out.persist {
        if let StoreOp::InsertJob(job) = op {
            if &job.spec.name == name {
                panic!("MINIPBS_DEBUG_PANIC_ON_SUBMIT: job {} is named {:?}", job.id, job.spec.name);
            }
        }
    }
}

/// Sends messages to the mom connections they were addressed to; a message whose connection
/// is gone is dropped (the mom reconciles when it registers again). A `RunJob` leaves the
/// handler without its script (the state keeps none): it is read from `store` here, on the
/// store thread, just before sending; one whose script cannot be read is dropped and logged
/// (the mom does not know the job, so its registration ends it as lost).
fn send_to_moms(
    moms: &Mutex<HashMap<String, MomLink>>,
    messages: Vec<(String, Option<u64>, ServerToMom)>,
    store: &mut Store,
) {
    if messages.is_empty() {
        return;
    }
    let mut ready = Vec::with_capacity(messages.len());
    for (node, link_id, mut message) in messages {
        if let ServerToMom::RunJob(launch) = &mut message {
            match read_script(store, &launch.job_id) {
                Ok(script) => launch.script = script,
                Err(error) => {
                    tracing::error!(job_id = %launch.job_id, node = %node, %error, "cannot read the job's script; RunJob not sent");
                    continue;
                }
            }
        }
        ready.push((node, link_id, message));
    }
    let moms = lock_moms(moms);
    for (node, link_id, message) in ready {
        match moms.get(&node) {
            Some(link) if Some(link.link_id) == link_id => {
                let _ = link.sender.send(message);
            }
            _ => tracing::warn!(node = %node, message = %summary(&message), "mom connection gone; message dropped"),
        }
    }
}

/// The stored script of the job `job_id` (a launch's id, which names the job's key).
fn read_script(store: &mut Store, job_id: &str) -> Result<String, String> {
    let id = job::JobId::parse(job_id, "").map_err(|error| error.to_string())?;
    match store.script(id.key()) {
        Ok(Some(script)) => Ok(script),
        Ok(None) => Err("no stored script".to_string()),
        Err(error) => Err(error.report()),
    }
}

/// A mom message as the log may show it: a job launch by its id only (its script and
/// environment are the owner's to read, and the logs are anyone's).
fn summary(message: &ServerToMom) -> String {
    match message {
        ServerToMom::RunJob(launch) => format!("RunJob {}", launch.job_id),
        ServerToMom::JoinJob(launch) => format!("JoinJob {}", launch.job_id),
        other => format!("{other:?}"),
    }
}

/// The default notice sink: one debug line per notice.
fn log_notices(notices: Vec<Notice>) {
    for notice in notices {
        tracing::debug!(job_id = %notice.job.id, kind = ?notice.kind, "job notice");
    }
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
