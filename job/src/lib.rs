//! The job model shared by every part of minipbs: job ids, states and their legal transitions,
//! the resource grammar (`nodes=`, `select=`, sizes, durations), `#PBS` directive extraction and
//! the attribute lists that `qstat` displays.
//!
//! Architecture invariant: this crate is pure. It has no tokio, no sockets, no files, no diesel,
//! no clap and no processes; everything here is a function of its arguments.

pub mod array;
pub mod attrs;
pub mod depend;
pub mod directives;
pub mod duration;
pub mod exec_opts;
pub mod exec_time;
pub mod id;
pub mod key;
pub mod limits;
pub mod mail;
pub mod options;
pub mod pairs;
pub mod pin;
pub mod resources;
pub mod shell;
pub mod size;
pub mod spec;
pub mod state;

#[cfg(test)]
mod no_panic;

pub use attrs::Attr;
pub use id::JobId;
pub use key::JobKey;
pub use pairs::PairList;
pub use resources::{Chunk, Placement, ResourceError, ResourceErrorKind, ResourceRequest};
pub use spec::JobSpec;
pub use state::{JobEvent, JobState};
