//! What every connection task shares: the state behind a lock, the store handle, the mom
//! links, and the scheduler's wake-up. Also [`Shared::apply`], the one path by which a handler's
//! effects are carried out in the right order.
//!
//! Invariant: the outbox's rows are handed to the store while the state lock is held (so the
//! store sees mutations in the order they happened), the commit is awaited without the lock,
//! and only then are mom messages sent and the reply returned.

use crate::config::ServerConfig;
use crate::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreHandle;
use proto::ServerToMom;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::{mpsc, Notify};

/// The channel to one connected mom, with an id so a stale connection cannot remove its
/// successor's entry.
pub struct MomLink {
    pub link_id: u64,
    pub sender: mpsc::UnboundedSender<ServerToMom>,
}

/// Shared by all tasks of one server.
pub struct Shared {
    pub config: ServerConfig,
    state: Mutex<ServerState>,
    pub store: StoreHandle,
    pub moms: Mutex<HashMap<String, MomLink>>,
    pub sched_wakeup: Notify,
}

/// Current time in epoch seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

impl Shared {
    pub fn new(config: ServerConfig, state: ServerState, store: StoreHandle) -> Shared {
        Shared {
            config,
            state: Mutex::new(state),
            store,
            moms: Mutex::new(HashMap::new()),
            sched_wakeup: Notify::new(),
        }
    }

    /// Locks the state. Never hold the guard across an `.await`.
    pub fn state(&self) -> MutexGuard<'_, ServerState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `handler` on the state, then carries out its effects: persist (awaited), send to
    /// moms, wake the scheduler. Returns the handler's result once everything is durable.
    pub async fn apply<R>(
        &self,
        handler: impl FnOnce(&mut ServerState, &mut Outbox) -> R,
    ) -> Result<R, crate::store::StoreError> {
        let (result, commit, to_moms, schedule) = {
            let mut state = self.state();
            let mut out = Outbox::default();
            let result = handler(&mut state, &mut out);
            let commit = (!out.persist.is_empty()).then(|| self.store.enqueue(std::mem::take(&mut out.persist)));
            (result, commit, out.to_moms, out.schedule)
        };
        if let Some(commit) = commit {
            commit.await?;
        }
        self.send_to_moms(to_moms);
        if schedule {
            self.sched_wakeup.notify_one();
        }
        Ok(result)
    }

    /// Sends messages to connected moms; a message to a mom that is not connected is dropped
    /// (the mom resyncs when it registers again).
    pub fn send_to_moms(&self, messages: Vec<(String, ServerToMom)>) {
        if messages.is_empty() {
            return;
        }
        let moms = self.moms.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (node, message) in messages {
            match moms.get(&node) {
                Some(link) => {
                    let _ = link.sender.send(message);
                }
                None => tracing::warn!(node = %node, ?message, "no connection to mom; message dropped"),
            }
        }
    }
}
