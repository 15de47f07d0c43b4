//! The PBS commands as a library: one module per command (`qsub.rs`, `qstat.rs`, ...), each with
//! its clap arguments and a `main()` returning the exit code; `conf.rs` finds the server,
//! `conn.rs` talks to it, `output/` formats what people and programs read (pure,
//! snapshot-tested), `exit.rs` is the one exit-code table.
//!
//! Must not know: server internals, diesel, the scheduler. Speaks only `proto`.

pub mod cli;
pub mod conf;
pub mod conn;
pub mod directives;
pub mod exit;
pub mod minipbs;
pub mod output;
pub mod pbsnodes;
pub mod qdel;
pub mod qhold;
pub mod qstat;
pub mod qsub;
pub mod qsub_env;
pub mod qsub_interactive;
pub mod terminal;
