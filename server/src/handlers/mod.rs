//! One handler per request, named after it (`DeleteJob` -> `delete_job.rs`). Handlers are
//! synchronous functions of the state: they mutate it and record effects in an `Outbox`; they
//! never touch sockets or the database.
//!
//! A handler never imports another handler (`tests/src/layering.rs` checks it): a rule
//! two handlers share lives in `state/` (`holds.rs`, `submission.rs`, `requeue.rs`), and a
//! part of one handler only is its child module (`alter_job/array.rs`).

pub mod alter_job;
pub mod delete_job;
pub mod execution_time;
pub mod fairshare;
pub mod gpu_status;
pub mod hold_job;
pub mod job_ended;
pub mod job_started;
pub mod manage;
pub mod manage_node;
pub mod move_job;
pub mod node_fail;
pub mod purge_history;
pub mod register_mom;
pub mod rerun_job;
pub mod signal_job;
pub mod status_job;
pub mod status_node;
pub mod status_queue;
pub mod status_resource;
pub mod status_server;
pub mod submit_job;

#[cfg(test)]
mod alter_tests;
#[cfg(test)]
mod array_tests;
#[cfg(test)]
mod authz_tests;
#[cfg(test)]
mod display_tests;
#[cfg(test)]
mod exec_opts_tests;
#[cfg(test)]
mod fairshare_tests;
#[cfg(test)]
mod gpu_tests;
#[cfg(test)]
mod interaction_tests;
#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod mail_tests;
#[cfg(test)]
mod mom_report_tests;
#[cfg(test)]
mod options_tests;
#[cfg(test)]
mod pin_tests;
#[cfg(test)]
mod preempt_tests;
#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod quota_tests;
#[cfg(test)]
mod sched_wiring_tests;
#[cfg(test)]
mod site_tests;
#[cfg(test)]
mod subjob_signal_tests;
#[cfg(test)]
pub(crate) mod tests;
