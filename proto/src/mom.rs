//! Messages between `pbs_server` and `pbs_mom`. The mom opens the connection, registers, and
//! then both sides send on it: the server pushes work, the mom reports starts and ends.
//! Invariant: a mom resends every `JobEnded` until the server acknowledges it with `ObitAck`,
//! so an end is never lost across a server restart. Every report about a job carries the run
//! number of the `JobLaunch` it answers; the server heeds only reports of the current run from
//! its mother superior (a sister's, for `ShareRefused`) and acknowledges the others.

use job::spec::Join;
use serde::{Deserialize, Serialize};

/// From a mom to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MomToServer {
    /// First message after the handshake; again after every reconnect.
    Register(Registration),
    /// Sent every few seconds; the server marks a silent node down.
    Heartbeat,
    /// The use of this node's GPUs changed (a job took or released one, a foreign process
    /// came or went, a draining GPU came clean): every GPU's current report.
    GpuStatus(Vec<crate::gpu::GpuReport>),
    /// A sister could not take its share of a job (one of its GPUs is no longer usable): the
    /// server requeues the job, like a mother superior's `JOB_EXEC_RETRY`.
    ShareRefused {
        job_id: String,
        reason: String,
        /// The run the share belongs to ([`JobLaunch::run_count`]; 0 from an older mom).
        #[serde(default)]
        run_count: u32,
    },
    /// The mother superior started the job's top shell.
    JobStarted {
        job_id: String,
        session_id: i32,
        /// The run started ([`JobLaunch::run_count`]; 0 from an older mom).
        #[serde(default)]
        run_count: u32,
    },
    /// The job's top shell ended (or could not start: negative status).
    JobEnded(JobObit),
}

/// What a mom tells the server about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub node: String,
    /// Cpu slots.
    pub np: u32,
    pub mem_bytes: u64,
    pub ngpus: u32,
    pub properties: Vec<String>,
    /// Changes every time the mom process starts, so the server can tell a restart from a
    /// reconnect.
    pub start_id: String,
    /// Jobs this mom still runs or holds a share of (after a server restart or reconnect).
    pub jobs: Vec<String>,
    /// The mom's TCP port (`pbs_mom --listen`); 0 = none (Unix socket link).
    #[serde(default)]
    pub port: u16,
    /// The GPUs, in NVML index order (`gpus[i].index == i`); `ngpus == gpus.len()`. Empty
    /// from a mom that predates GPU inventories: the server then invents `ngpus` free GPUs
    /// without UUIDs.
    #[serde(default)]
    pub gpus: Vec<crate::gpu::GpuInfo>,
    /// Their use now, one report per GPU.
    #[serde(default)]
    pub gpu_states: Vec<crate::gpu::GpuReport>,
    /// The mom's task socket (`<spool>/task.sock`): where other moms on this machine reach it
    /// (Unix transport: `HostAlloc::mom_addr` is `unix:<this>`). `None` from an older mom.
    #[serde(default)]
    pub task_socket: Option<String>,
    /// Asks for [`ServerToMom::Heartbeat`] every this many milliseconds, kept within
    /// [`server_heartbeat`]'s bounds (0, from an older mom: none). A mom that has had one drops
    /// a link silent for [`SILENT_HEARTBEATS`] of them: a server stopped with its connections
    /// open (SIGSTOP, a hung host) is then left for the other head.
    #[serde(default)]
    pub heartbeat_ms: u64,
}

/// The fewest and the most milliseconds between two server heartbeats.
pub const SERVER_HEARTBEAT_MS: (u64, u64) = (1_000, 60_000);

/// A link silent for this many server heartbeats is dropped by the mom.
pub const SILENT_HEARTBEATS: u32 = 3;

/// The interval of the server heartbeats a mom asking for `asked_ms` gets (`None`: it asked
/// for none), within [`SERVER_HEARTBEAT_MS`].
pub fn server_heartbeat(asked_ms: u64) -> Option<std::time::Duration> {
    let (fewest, most) = SERVER_HEARTBEAT_MS;
    (asked_ms > 0).then(|| std::time::Duration::from_millis(asked_ms.clamp(fewest, most)))
}

/// The end of a job as the mother superior saw it (pbs-reference section 7.2).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobObit {
    pub job_id: String,
    pub exit_status: i32,
    pub session_id: i32,
    pub used: ResourcesUsed,
    /// Output files the mom could not deliver (pbs-reference 10.5): the server records them
    /// in the job's comment and mails the owner.
    #[serde(default)]
    pub undelivered: Vec<Undelivered>,
    /// The run that ended ([`JobLaunch::run_count`]). 0 from a mom that predates run numbers
    /// (or a job it recovered from one): the server then checks only that the reporting node
    /// is the mother superior of the job's current run.
    #[serde(default)]
    pub run_count: u32,
    /// Why the job's `-W stagein` failed (it did not start): the server queues it again on a
    /// user hold, with this in its comment.
    #[serde(default)]
    pub stagein_failed: Option<String>,
    /// The kernel killed a process of the job for going over its memory limit (its cgroup's
    /// OOM count rose): the server says so in the job's comment. `false` from an older mom.
    #[serde(default)]
    pub mem_exceeded: bool,
}

/// One spool file the mom could not copy to its destination as the user, and where it kept
/// it instead.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undelivered {
    /// The spool file (`<spool>/<jobid>.OU`).
    pub spool: String,
    /// Where it should have gone.
    pub dest: String,
    /// Why the copy failed.
    pub error: String,
    /// Where the output is kept on the mom's host; empty when it could not be kept either.
    pub kept: String,
}

/// `resources_used.*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ResourcesUsed {
    pub cput_secs: u64,
    pub mem_kb: u64,
    pub vmem_kb: u64,
    pub walltime_secs: u64,
    pub ncpus: u32,
}

/// From the server to a mom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerToMom {
    /// Answer to `Register`. `stale_jobs` are jobs the mom reported that the server does not
    /// consider running here: the mom kills them.
    Registered { server_name: String, stale_jobs: Vec<String> },
    /// Answer to `Register` when the server will not have this mom (another live mom holds
    /// the node name from another address).
    Refused { message: String },
    /// Start the job here as mother superior.
    RunJob(Box<JobLaunch>),
    /// Hold a share of the job here as a sister node.
    JoinJob(Box<JobLaunch>),
    /// Kill the job's processes (qdel): SIGTERM, then SIGKILL after `kill_delay`.
    KillJob { job_id: String },
    /// The job is over: a sister drops its share and cleans up.
    EndJob { job_id: String },
    /// The server has committed this job's end; the mom may forget it.
    ObitAck { job_id: String },
    /// qrerun: kill the job like `KillJob` but discard its output; the server queues it again.
    RerunJob { job_id: String },
    /// qsig: send signal number `signal` to every process of the job's session. `suspend`: it
    /// is `qsig -s suspend`/`resume` (operators and managers only), whose SIGSTOP pauses and
    /// SIGCONT resumes the mom's walltime clock; a plain signal (the owner's `-s STOP`) never
    /// touches the clock.
    SignalJob {
        job_id: String,
        signal: i32,
        #[serde(default)]
        suspend: bool,
    },
    /// qalter of a running job's walltime (managers): the new limit in seconds from the job's
    /// start (`None`: no limit); a limit already passed ends the job at once (-29).
    SetWalltime { job_id: String, walltime: Option<u64> },
    /// Nothing to say: the server is alive, not merely its kernel. Sent only to a mom that
    /// asked (`Registration::heartbeat_ms`; an older mom could not read it).
    Heartbeat,
}

/// One node's part of a job's allocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostAlloc {
    pub node: String,
    pub ncpus: u32,
    /// Lines this node gets in `PBS_NODEFILE`.
    pub mpiprocs: u32,
    /// GPU indices on this node.
    pub gpus: Vec<u32>,
    pub mem_bytes: Option<u64>,
    /// The UUIDs of `gpus`, in the same order (empty for GPUs registered without UUIDs). The
    /// mom re-checks them at start and refuses a GPU that is not there or not free.
    #[serde(default)]
    pub gpu_uuids: Vec<String>,
    /// An MPS share: the job's percentage of its single GPU (`gpus` has one index). `None`
    /// for exclusive GPUs.
    #[serde(default)]
    pub mps: Option<u8>,
    /// Where the other moms of the job reach this node's mom for tasks (proto::task's peer
    /// path): `<ip>:<port>` (TCP, sealed with MUNGE) or `unix:<task socket>` (one machine).
    /// `None` from an older server or for a mom that gave neither.
    #[serde(default)]
    pub mom_addr: Option<String>,
}

/// Everything a mom needs to run (or join) a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobLaunch {
    pub job_id: String,
    pub name: String,
    pub queue: String,
    /// Execution user and group names, looked up on the execution host.
    pub user: String,
    pub group: Option<String>,
    pub script: String,
    /// `Variable_List` (PBS_O_*, -v/-V). The mom sets its own variables after these.
    pub variables: job::PairList,
    /// Allocation, mother superior first.
    pub hosts: Vec<HostAlloc>,
    pub walltime: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL.
    pub kill_delay: u64,
    /// Destination of stdout as an absolute path on this host.
    pub output_path: String,
    pub error_path: String,
    pub join: Join,
    pub shell: Option<String>,
    /// `-d` start directory; default is the user's home.
    pub init_dir: Option<String>,
    /// `PBS_NUM_PPN`.
    pub num_ppn: u32,
    /// Cpus of the first chunk: `NCPUS` and `OMP_NUM_THREADS` when `omp_threads` is `None`.
    pub first_ncpus: u32,
    /// `NCPUS` and `OMP_NUM_THREADS` (OpenPBS sets both to the chunk's thread count):
    /// `ompthreads` of the first chunk, else its cpus. `None` from an older server.
    #[serde(default)]
    pub omp_threads: Option<u32>,
    /// Per-job random cookie (`PBS_JOBCOOKIE`).
    pub cookie: String,
    /// A subjob's array index (`PBS_ARRAY_INDEX`, `PBS_ARRAYID`).
    #[serde(default)]
    pub array_index: Option<u32>,
    /// A subjob's array parent id, `123[].server` (`PBS_ARRAY_ID`).
    #[serde(default)]
    pub array_id: Option<String>,
    /// `qsub -I`: the mother superior connects there and runs a login shell on a pty instead
    /// of the script (proto/src/interactive.rs).
    #[serde(default)]
    pub interactive: Option<job::spec::Interactive>,
    /// The server's `acl_roots` lets this job's owner run jobs as root. A mom refuses a job
    /// whose user is uid 0 without it (a server that predates it never allows root).
    #[serde(default)]
    pub root_allowed: bool,
    /// Which run of the job this is (OpenPBS `run_count`, 1 for the first). The mom returns it
    /// in every report about the job, so the server can tell a report of an old run (a node
    /// back after `node_fail_requeue`) from one of the current run. 0 from an older server.
    #[serde(default)]
    pub run_count: u32,
    /// `qsub -F` (TORQUE): the script's arguments, `$1`... (`job::options::check_script_args`).
    #[serde(default)]
    pub script_args: Vec<String>,
    /// The file names the mom gives stdout and stderr in a directory destination (`-o logs/`,
    /// or an existing directory): `<jobname>.o<seq>` (a subjob: `.o<seq>.<index>`, TORQUE
    /// flavor `-<index>`). Empty from an older server: the mom then uses `<jobid>.OU`/`.ER`.
    #[serde(default)]
    pub output_name: String,
    #[serde(default)]
    pub error_name: String,
    /// `-W umask` (the job's shell and its delivered output files are created with it; none:
    /// 077), `sandbox`, `stagein`, `stageout` (the mom's `exec/stage.rs`).
    #[serde(default)]
    pub exec: job::exec_opts::ExecOptions,
    /// `-k` (`Keep_Files`): a `qsub --pin` job's checkout is kept when it names `o` or `e`
    /// (`job::pin::keeps_checkout`). Empty from an older server: nothing kept.
    #[serde(default)]
    pub keep: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn server_heartbeats_are_asked_for_and_bounded() {
        assert_eq!(server_heartbeat(0), None, "an older mom asks for none");
        assert_eq!(server_heartbeat(1), Some(Duration::from_secs(1)));
        assert_eq!(server_heartbeat(5_000), Some(Duration::from_secs(5)));
        assert_eq!(server_heartbeat(u64::MAX), Some(Duration::from_secs(60)));
        // A registration from before the field decodes as asking for none.
        let old = r#"{"node":"n","np":1,"mem_bytes":1,"ngpus":0,"properties":[],"start_id":"s","jobs":[]}"#;
        assert_eq!(serde_json::from_str::<Registration>(old).unwrap().heartbeat_ms, 0);
        assert_eq!(serde_json::to_string(&ServerToMom::Heartbeat).unwrap(), r#""Heartbeat""#);
    }
}
