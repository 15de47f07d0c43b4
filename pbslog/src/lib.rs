//! PBS log lines, shared by the daemons (which write them) and `tracejob` (which reads them).
//!
//! Owns: the OpenPBS log line layout `MM/DD/YYYY HH:MM:SS;EEEE;object;type;name;message`
//! ([`line`]), local time stamps in PBS's forms ([`time`]), and the tracing layer the daemons
//! install in their `main` to write such lines ([`layer`]), and what a daemon does when a panic
//! leaves its memory untrusted: log and exit ([`fatal`]). Must not: know jobs, the protocol,
//! the store or any file layout beyond one line.

pub mod fatal;
pub mod layer;
pub mod line;
pub mod time;

pub use line::LogLine;
pub use time::Tm;
