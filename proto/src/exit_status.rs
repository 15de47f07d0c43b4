//! The negative exit statuses a mom reports for a job it did not run to its end (OpenPBS's
//! `JOB_EXEC_*`, `src/include/job.h`; pbs-reference 7.2), with OpenPBS's names and values.
//! Both sides rely on them: the mom reports them in `JobObit::exit_status`, the server acts on
//! some (`JOB_EXEC_RETRY` requeues) and shows or mails the others. They are part of the wire
//! protocol: a value never changes meaning.
//!
//! Must not: hold the TORQUE numbers (shown only in the server's `torque` flavor, which maps the
//! stored OpenPBS value when it displays it).

/// The job failed before its files were set up; it is not retried.
pub const JOB_EXEC_FAIL1: i32 = -1;
/// The job failed after its files were set up (also a prologue that exits 1); not retried.
pub const JOB_EXEC_FAIL2: i32 = -2;
/// The mom did not start the job and it should be retried: the server requeues it.
pub const JOB_EXEC_RETRY: i32 = -3;
/// A uid/gid the mom cannot run the job as (OpenPBS "invalid uid/gid").
pub const JOB_EXEC_INVALID_ID: i32 = -10;
/// Killed to be rerun (qrerun).
pub const JOB_EXEC_RERUN: i32 = -11;
/// Lost with its mother superior (the server records it for a job it cannot requeue).
pub const JOB_EXEC_RERUN_MS_FAIL: i32 = -20;
/// Killed: its ncpus burst over the limit.
pub const JOB_EXEC_KILL_NCPUS_BURST: i32 = -24;
/// Killed: its ncpus sum over the limit.
pub const JOB_EXEC_KILL_NCPUS_SUM: i32 = -25;
/// Killed: its vmem over the limit.
pub const JOB_EXEC_KILL_VMEM: i32 = -26;
/// Killed: its mem over the limit.
pub const JOB_EXEC_KILL_MEM: i32 = -27;
/// Killed: its cput over the limit.
pub const JOB_EXEC_KILL_CPUT: i32 = -28;
/// Killed: its walltime over the limit.
pub const JOB_EXEC_KILL_WALLTIME: i32 = -29;
