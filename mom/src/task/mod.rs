//! Tasks: processes a job's launchers (`pbsdsh`, `pbs_tmrsh`, proto::task) start on the job's
//! nodes through the moms, never through ssh.
//!
//! Layout: `check.rs` decides whether a request may run and where (pure); `board.rs` holds the
//! jobs this node serves and their live tasks; `env.rs` makes a task's environment (pure);
//! `spawn.rs` starts the process as the job's owner in a new session; `local.rs` runs one task
//! and relays its frames; `peer.rs` reaches another node's mom; `serve.rs` is the task socket,
//! the peer connections and the end of a job's tasks on every node.
//!
//! Must not: talk to the server or touch the job table (the daemon adds and ends shares).

pub mod board;
pub mod check;
pub mod env;
pub mod local;
pub mod peer;
pub mod serve;
pub mod spawn;

pub use board::TaskBoard;
pub use serve::TaskServer;
