//! The store's error type. Database causes are kept as shared `source`s (not diesel types in
//! the API) so that one failed group commit can hand the same error to every waiter.

use std::path::PathBuf;
use std::sync::Arc;

/// The underlying cause of a failed database call, shareable between the waiters of a batch.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

/// Everything that can go wrong in the store. The server treats any of these from a commit as
/// fatal: the state it holds in memory is then ahead of what is on disk.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// SQLite takes the path as UTF-8 text.
    #[error("store path {0:?} is not valid UTF-8")]
    BadPath(PathBuf),
    /// The database could not be opened, created or reached (`path` is the file, or the
    /// PostgreSQL URL without its password).
    #[error("cannot open the job store {path}")]
    Open {
        path: String,
        #[source]
        source: Cause,
    },
    /// The embedded migrations could not be applied.
    #[error("cannot apply the job store's migrations")]
    Migrate {
        #[source]
        source: Cause,
    },
    /// A query or transaction failed; `action` says which (e.g. `commit of 3 operations`).
    #[error("job store {action} failed")]
    Database {
        action: String,
        #[source]
        source: Cause,
    },
    /// A job has a value the schema cannot hold (a number beyond `i64`, a node name the
    /// `exec_hosts` format cannot carry). Nothing of its transaction was written.
    #[error("job {seq} cannot be stored: {message}")]
    Unstorable { seq: u64, message: String },
    /// A stored row does not map back to a job (garbled text, unknown state letter, a number
    /// out of range). Loading stops rather than dropping the job silently.
    #[error("stored job {seq} is corrupt: column {column}: {message}")]
    CorruptRow { seq: i64, column: &'static str, message: String },
    /// A `meta` entry the store relies on is not what it wrote.
    #[error("job store setting {key:?} is corrupt: {value:?}")]
    CorruptMeta { key: String, value: String },
    /// `UpdateJob` named a job that was never inserted (or was deleted): the update would be
    /// lost, so the whole transaction is refused.
    #[error("update of job {seq}, which is not in the job store")]
    NoSuchJob { seq: u64 },
    /// Another server took the store's lease (`lease.rs`): this one must not write again.
    #[error("another server ({holder}, epoch {epoch}) holds the job store's lease: this server is no longer active")]
    LeaseLost { holder: String, epoch: i64 },
    /// The store thread behind a `StoreHandle` is gone (it panicked); nothing more is durable.
    #[error("the job store thread has stopped")]
    Closed,
}

impl StoreError {
    /// Wraps a failed database call, naming what the store was doing.
    pub(super) fn database(action: impl Into<String>, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        StoreError::Database { action: action.into(), source: Arc::new(source) }
    }

    /// The message followed by its causes (`a: b: c`), for logs that print one line.
    pub fn report(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(err) = cause {
            text.push_str(": ");
            text.push_str(&err.to_string());
            cause = err.source();
        }
        text
    }
}
