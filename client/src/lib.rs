//! The PBS commands as a library: one module per command (`qsub.rs`, `qstat.rs`, ...), each with
//! its clap arguments and a `main()` returning the exit code; `conf.rs` finds the server,
//! `conn.rs` talks to it, `output/` formats what people and programs read (pure,
//! snapshot-tested), `exit.rs` is the one exit-code table, `start.rs` every binary's entry
//! (`src/bin/` holds one line per command). The launchers inside a job (`pbsdsh.rs`,
//! `pbs_tmrsh.rs`) talk to the local mom instead; they share `launch.rs` (the job's context),
//! `nodefile.rs` (its hosts) and `task_conn.rs` (one task's connection).
//!
//! Commands share code only through homes of their own, never through another command's file:
//! `cli.rs` (arguments, connecting, the clock), `ids.rs` (job-id operands, a request per id
//! list), `submit.rs` and `submit_env.rs` (what qsub and qalter share). A command's sub-files
//! (`qsub_*.rs`, `qstat_*.rs`) are its own; `tests/src/layering.rs` checks this.
//!
//! Must not know: server internals, diesel, the scheduler. Speaks only `proto`.

pub mod cli;
pub mod conf;
pub mod conn;
pub mod directives;
pub mod exit;
pub mod ids;
pub mod launch;
pub mod minipbs;
pub mod minipbs_daemon;
pub mod minipbs_moms;
pub mod minipbs_postgres;
pub mod minipbs_simulate;
pub mod nodefile;
pub mod output;
pub mod pbs_tmrsh;
pub mod pbs_tmrsh_args;
pub mod pbsdsh;
pub mod pbsdsh_plan;
pub mod pbsdsh_run;
pub mod pbsfs;
pub mod pbsfs_output;
pub mod pbsnodes;
pub mod qalter;
pub mod qdel;
pub mod qhold;
pub mod qmgr;
pub mod qmgr_parse;
pub mod qmove;
pub mod qrerun;
pub mod qselect;
pub mod qsig;
pub mod qstat;
pub mod qstat_estimated;
pub mod qstat_queues;
pub mod qstat_watch;
pub mod qsub;
pub mod qsub_block;
pub mod qsub_greet;
pub mod qsub_interactive;
pub mod qsub_options;
pub mod qsub_pin;
pub mod select;
pub mod server_order;
pub mod start;
pub mod submit;
pub mod submit_env;
pub mod task_conn;
pub mod terminal;
pub mod tracejob;
