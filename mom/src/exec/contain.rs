//! A job's cgroup seen from exec/: its limits on this node (memory and cpus summed over the
//! node's chunks, GPU devices), creating it before the fork (`--cgroups required`: a job that
//! cannot get one does not start; `auto`: it runs uncontained with a warning), killing and
//! signalling through it (processes that left the session die too), and at the end emptying
//! it, reading its usage and OOM kills and removing it. Without a cgroup every step falls back
//! to the session (kill.rs).
//!
//! With a cgroup the session is never scanned (`/proc/*/stat`): the top shell joined the cgroup
//! before `setsid` and `exec` (spawn.rs), so every process of its session was born in the
//! cgroup, and only root can move one out (a root job can as well leave the session). The
//! session's process group still gets each signal first: it is one system call.
//!
//! Owns: the choice between the cgroup and the session. Must not: write cgroup files
//! (cgroup/ does) or reap.

use super::children;
use super::kill::{self, Termination};
use super::{ExecContext, StartError};
use crate::cgroup::{JobCgroup, Usage};
use nix::sys::signal::Signal;
use proto::mom::{JobLaunch, ResourcesUsed};
use std::time::Duration;
use tokio::task::JoinHandle;

/// The message the OpenPBS cgroup hook writes on the job's stderr when the memory cgroup hit
/// its limit (`pbs_cgroups.PY`, `update_job_usage`, epilogue on the mother superior).
pub const MEM_EXCEEDED: &str = "Cgroup mem limit exceeded";

/// What this node holds of the job: cpus, memory (`None` when no chunk here asks for any)
/// and GPU indices.
pub fn node_share(launch: &JobLaunch, node: &str) -> (u32, Option<u64>, Vec<u32>) {
    let chunks = launch.hosts.iter().filter(|host| host.node == node);
    let (mut ncpus, mut mem, mut gpus) = (0u32, None::<u64>, Vec::new());
    for chunk in chunks {
        ncpus = ncpus.saturating_add(chunk.ncpus);
        if let Some(bytes) = chunk.mem_bytes {
            mem = Some(mem.unwrap_or(0).saturating_add(bytes));
        }
        gpus.extend(&chunk.gpus);
    }
    (ncpus, mem, gpus)
}

/// Creates the job's cgroup with this node's share; `Ok(None)` without cgroups or when one
/// cannot be made under `auto`.
pub fn create(launch: &JobLaunch, context: &ExecContext) -> Result<Option<JobCgroup>, StartError> {
    let Some(cgroups) = &context.cgroups else { return Ok(None) };
    let (ncpus, mem, gpus) = node_share(launch, &context.node);
    let made = cgroups.job(&launch.job_id).and_then(|cgroup| {
        let limits = cgroups.limits(&launch.job_id, ncpus, mem, &context.gpu_minors, &gpus);
        cgroup.create(&limits).map(|()| cgroup)
    });
    match made {
        Ok(cgroup) => Ok(Some(cgroup)),
        Err(error) if cgroups.required() => Err(StartError::Cgroup(error)),
        Err(error) => {
            tracing::warn!("the job runs without a cgroup: {error}");
            Ok(None)
        }
    }
}

/// SIGTERM, then SIGKILL after `delay`, to everything of the job: its cgroup, else its session.
pub async fn terminate(cgroup: Option<JobCgroup>, sid: i32, delay: Duration) -> Termination {
    match cgroup {
        Some(cgroup) => {
            // Its process group first (one call, no scan): the shell's own processes see the
            // SIGTERM before the cgroup's round reaches them.
            kill::signal_group(sid, Signal::SIGTERM);
            let empty = blocking(move || cgroup.kill_all(delay)).await;
            if empty {
                Termination::Terminated
            } else {
                Termination::Killed
            }
        }
        None => kill::terminate(sid, delay).await,
    }
}

/// Sends `signal` once to every process of the job (qsig, suspend, resume).
pub fn signal(cgroup: Option<&JobCgroup>, sid: i32, signal: Signal) -> usize {
    match cgroup {
        Some(cgroup) => cgroup.signal_all(signal),
        None => kill::signal_members(sid, signal),
    }
}

/// After the top shell ended: kills what is left (the job ends only when its cgroup is
/// empty), reads the cgroup's usage and whether the kernel OOM-killed in it, and removes it.
/// Returns whether nothing survived, the usage, and the OOM verdict.
pub async fn end(cgroup: Option<JobCgroup>, sid: i32, patience: Duration) -> (bool, Option<Usage>, bool) {
    let Some(cgroup) = cgroup else {
        // The shell is reaped: a survivor would be an orphan the mom adopted (children.rs).
        // Inline, not on the blocking pool: a few reads of /proc (memory, never a disk) and the
        // registry's lock (held to record or forget a pid; across a start only on kernels
        // before 3.19, children.rs) cost less than the hand-over to a pool thread and back,
        // paid at every job's end.
        if children::adopted_orphans() == Some(false) {
            return (true, None, false);
        }
        let empty = kill::kill_leftovers(sid, patience).await;
        // The orphans just killed were adopted: reaped now (or by the next job's end).
        blocking(children::adopted_orphans).await;
        return (empty, None, false);
    };
    kill::signal_group(sid, Signal::SIGKILL);
    blocking(move || {
        let empty = cgroup.kill_all(Duration::ZERO);
        let (usage, oom) = (cgroup.usage(), cgroup.oom_killed());
        cgroup.remove();
        // Its orphans, killed with the cgroup, were adopted by the mom: reaped here.
        children::adopted_orphans();
        (empty, Some(usage), oom)
    })
    .await
}

/// `resources_used`: the cgroup's figures when the job had one (everything it ran, not only
/// what the top shell waited for), else the top shell's.
pub fn resources_used(
    cput_secs: u64,
    mem_kb: u64,
    cgroup: Option<Usage>,
    walltime_secs: u64,
    ncpus: u32,
) -> ResourcesUsed {
    match cgroup {
        Some(usage) => ResourcesUsed {
            cput_secs: usage.cput_secs.max(cput_secs),
            mem_kb: usage.mem_kb.max(mem_kb),
            vmem_kb: usage.vmem_kb,
            walltime_secs,
            // The job's ncpus (all its chunks), as OpenPBS reports it, not this node's cores.
            ncpus,
        },
        None => ResourcesUsed { cput_secs, mem_kb, vmem_kb: 0, walltime_secs, ncpus },
    }
}

pub fn attach_error(launch: &JobLaunch, source: std::io::Error) -> crate::cgroup::CgroupError {
    crate::cgroup::CgroupError::Create { job: launch.job_id.clone(), source }
}

/// Sends signal `number` to the job's cgroup or session (off the runtime threads: it scans
/// `/proc`).
pub fn send_signal(sid: i32, cgroup: Option<JobCgroup>, number: i32) {
    match nix::sys::signal::Signal::try_from(number) {
        Ok(signal) => {
            tracing::info!(sid, %signal, "signalling the job");
            tokio::task::spawn_blocking(move || self::signal(cgroup.as_ref(), sid, signal));
        }
        Err(_) => tracing::warn!(sid, number, "refusing an unknown signal number"),
    }
}

/// Starts the SIGTERM/SIGKILL sequence once (later requests are no-ops); `hang_up` sends
/// SIGHUP first.
pub fn start_kill(
    killer: &mut Option<JoinHandle<()>>,
    (sid, cgroup): (i32, Option<JobCgroup>),
    delay: Duration,
    hang_up: bool,
) {
    if killer.is_some() {
        return;
    }
    *killer = Some(tokio::spawn(async move {
        if hang_up {
            // An interactive job's terminal session (rare: the scan's cost does not matter).
            let _ = tokio::task::spawn_blocking(move || kill::signal_session(sid, Signal::SIGHUP)).await;
        }
        if terminate(cgroup, sid, delay).await == Termination::Killed {
            tracing::info!(sid, "session needed SIGKILL");
        }
    }));
}

/// Runs blocking cgroup work on tokio's blocking pool.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::mom::HostAlloc;

    fn host(node: &str, ncpus: u32, mem: Option<u64>, gpus: Vec<u32>) -> HostAlloc {
        HostAlloc {
            node: node.into(),
            ncpus,
            mpiprocs: ncpus,
            gpus,
            mem_bytes: mem,
            gpu_uuids: vec![],
            mps: None,
            mom_addr: None,
        }
    }

    #[test]
    fn the_share_sums_this_nodes_chunks() {
        let hosts = vec![
            host("a", 2, Some(1 << 30), vec![0]),
            host("b", 4, None, vec![]),
            host("a", 1, Some(1 << 20), vec![1]),
        ];
        let launch = crate::test_support::launch("1.s", hosts);
        assert_eq!(node_share(&launch, "a"), (3, Some((1 << 30) + (1 << 20)), vec![0, 1]));
        assert_eq!(node_share(&launch, "b"), (4, None, vec![]));
        assert_eq!(node_share(&launch, "c"), (0, None, vec![]));
    }
}
