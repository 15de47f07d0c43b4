//! Job execution on the mother superior: files, identity, environment, the top shell in its
//! own session, kills and limits, reaping, output delivery and clean-up.
//!
//! Layout: `run.rs` drives one job from start to end; `user.rs` resolves the identity (`groups.rs`: supplementary groups, kept a minute);
//! `files.rs` names and writes the spool files; `env.rs` computes the environment (pure);
//! `spawn.rs` prepares the shell's start and `vfork.rs` starts it without copying the mom; `contain.rs` puts it in the job's cgroup and kills through it;
//! `kill.rs` signals the session (the fallback without cgroups); `children.rs` tracks the mom's children (orphans of jobs are adopted, so a job's end needs no scan when none is left); `clock.rs` is the walltime clock
//! (suspensions excluded); `reap.rs` waits for the shell; `deliver.rs` copies output as the user (`deliver_child.rs`: a root mom's copy, in a child that runs no program);
//! `sessions.rs` logs running jobs' sessions for a restarted mom, `recover.rs` ends what they left;
//! `interactive.rs` connects an interactive job's pty to its waiting qsub; `modules_env.rs` gives
//! job shells the node's `module` command; `launch_env.rs` the variables of MPI and task launchers;
//! `pin.rs` checks a `qsub --pin` job's commit out; `supervise.rs` serves a running job's requests.
//!
//! Must not: speak the protocol or touch the job table. A job's result goes back to the daemon
//! as a [`JobOutcome`]; the daemon turns it into an obit.

pub mod children;
pub mod clock;
pub mod contain;
pub mod deliver;
pub mod deliver_child;
pub mod env;
pub mod files;
pub mod groups;
pub mod identity;
pub mod interactive;
pub mod kill;
pub mod launch_env;
pub mod modules_env;
pub mod pin;
pub mod reap;
pub mod recover;
pub mod run;
pub mod sessions;
pub mod spawn;
pub mod stage;
pub mod supervise;
pub mod user;
pub mod vfork;

pub use run::{run_job, JobOutcome};
pub use supervise::KillRequest;

use proto::exit_status::{JOB_EXEC_FAIL1, JOB_EXEC_FAIL2, JOB_EXEC_INVALID_ID, JOB_EXEC_RETRY};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// The umask of a job's shell and of its delivered output when it gives no `-W umask`
/// (OpenPBS `start_exec.c`: 077).
pub const DEFAULT_UMASK: u32 = 0o077;

/// What every job on this mom shares.
#[derive(Debug, Clone)]
pub struct ExecContext {
    /// This node's name (selects the local GPUs of an allocation).
    pub node: String,
    /// Where `<jobid>.SC/.OU/.ER` and `aux/` live.
    pub spool_dir: PathBuf,
    /// Parent of each job's `pbs.<jobid>` TMPDIR.
    pub tmpdir_base: PathBuf,
    /// `--code-dir`: where `qsub --pin` checkouts go (`pin.rs`); `None`: the job's TMPDIR.
    pub code_dir: Option<PathBuf>,
    /// Used when the launch's `kill_delay` is 0.
    pub default_kill_delay: Duration,
    /// The mom's effective uid (0: it can run anyone's job).
    pub mom_uid: u32,
    /// What every job gets unless it brought its own (the `module` function: modules_env.rs).
    pub job_defaults: Vec<(String, String)>,
    /// munged's socket on the TCP transport (a `qsub -I` must then prove with MUNGE that it
    /// runs as the job's owner); `None` on the Unix-socket transport.
    pub munge_socket: Option<PathBuf>,
    /// What jobs here are told about launching tasks (task socket, `pbs_tmrsh`, MPI variables).
    pub launcher: launch_env::LauncherEnv,
    /// Jobs' cgroups (`None`: uncontained, the session-based kill is all there is).
    pub cgroups: Option<std::sync::Arc<crate::cgroup::Cgroups>>,
    /// The GPU indices (device minors) of this node: a job's cgroup denies those not its own.
    pub gpu_minors: Vec<u32>,
    /// Where running jobs' sessions are recorded for a restarted mom (sessions.rs).
    pub sessions: std::sync::Arc<sessions::SessionLog>,
}

/// Why a job could not start. Each reason maps to a negative exit status (pbs-reference 7.2).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("job id {0:?} cannot name a spool file")]
    BadJobId(String),
    #[error("user {0:?} does not exist on this host")]
    UnknownUser(String),
    #[error("group {0:?} does not exist on this host")]
    UnknownGroup(String),
    #[error("user {user} is not a member of group {group} on this host")]
    NotMember { user: String, group: String },
    #[error("this mom runs as uid {mom_uid} and runs only its own user's jobs, not {user}'s (uid {uid})")]
    ForeignUser { mom_uid: u32, user: String, uid: u32 },
    #[error("user {0} is uid 0 here, and the server's acl_roots did not allow this job to run as root")]
    RootRefused(String),
    #[error("{0}")]
    StageIn(String),
    /// `qsub --pin`: the checkout failed (`pin.rs`); `JOB_EXEC_FAIL1`, never retried.
    #[error("{0}")]
    Pin(String),
    #[error("shell {0} does not exist or is not executable")]
    ShellMissing(PathBuf),
    #[error("cannot set up the job's spool files: {0}")]
    Files(#[source] io::Error),
    #[error("cannot open the job's spool files: {0}")]
    Stdio(#[source] io::Error),
    #[error("cannot start {shell} in {dir}: {source}")]
    Spawn { shell: PathBuf, dir: PathBuf, source: io::Error },
    #[error("cannot reach the waiting qsub at {host}:{port}: {reason}")]
    Interactive { host: String, port: u16, reason: String },
    #[error("cannot open a terminal for the job: {0}")]
    Pty(#[source] io::Error),
    #[error("{0}")]
    Cgroup(#[source] crate::cgroup::CgroupError),
}

impl StartError {
    /// The exit status the job ends with.
    pub fn exit_status(&self) -> i32 {
        match self {
            StartError::ForeignUser { .. } | StartError::RootRefused(_) | StartError::NotMember { .. } => {
                JOB_EXEC_INVALID_ID
            }
            StartError::Stdio(_) | StartError::Spawn { .. } | StartError::Pty(_) => JOB_EXEC_FAIL2,
            // The server requeues it (`--cgroups required`).
            StartError::Cgroup(_) => JOB_EXEC_RETRY,
            _ => JOB_EXEC_FAIL1,
        }
    }
}
