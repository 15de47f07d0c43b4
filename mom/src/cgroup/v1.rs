//! The v1 backend: one directory per controller mount, `<mount>/<slice>/<jobid>`. Limits go
//! to `memory.limit_in_bytes` (and `memory.memsw.limit_in_bytes`: no swap beyond it),
//! `cpuset.cpus` or `cpu.cfs_quota_us`, `devices.deny`; usage comes from `cpuacct.usage`,
//! `memory.max_usage_in_bytes` and `memory.memsw.max_usage_in_bytes`; a kill freezes the
//! cgroup, SIGKILLs every pid and thaws it, so nothing forks in between.
//!
//! Owns: the v1 file names and their order. Must not: decide limits or keep state.

use super::cpus::{self, CpuLimit};
use super::files;
use super::mounts::Controller;
use super::{CgroupError, Limits, Usage};
use nix::sys::signal::Signal;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The v1 controllers this mom uses and its slice.
#[derive(Debug, Clone)]
pub struct V1 {
    pub mounts: BTreeMap<Controller, PathBuf>,
    pub slice: String,
}

impl V1 {
    /// Each distinct mount point once, with the controllers mounted there.
    fn hierarchies(&self) -> BTreeMap<&Path, Vec<Controller>> {
        let mut out: BTreeMap<&Path, Vec<Controller>> = BTreeMap::new();
        for (controller, mount) in &self.mounts {
            out.entry(mount.as_path()).or_default().push(*controller);
        }
        out
    }

    pub fn slice_dirs(&self) -> Vec<PathBuf> {
        self.hierarchies().keys().map(|mount| mount.join(&self.slice)).collect()
    }

    pub fn job_dirs(&self, job: &str) -> Vec<PathBuf> {
        self.slice_dirs().into_iter().map(|slice| slice.join(job)).collect()
    }

    fn dir(&self, controller: Controller, job: &str) -> Option<PathBuf> {
        self.mounts.get(&controller).map(|mount| mount.join(&self.slice).join(job))
    }

    /// The `cgroup.procs` listing the job's processes (freezer, else pids, else memory).
    pub fn procs(&self, job: &str) -> PathBuf {
        [Controller::Freezer, Controller::Pids, Controller::Memory]
            .into_iter()
            .find_map(|c| self.dir(c, job))
            .unwrap_or_default()
            .join("cgroup.procs")
    }

    /// Creates the job's directory in every hierarchy and writes its limits. The slice is made
    /// only when the job's directory finds it missing; its cpuset gets the root's cores and
    /// `cgroup.clone_children`, so the kernel gives each new job cpuset the slice's cores and
    /// memory nodes (two reads check it), instead of two copies by hand per job.
    pub fn create(&self, job: &str, limits: &Limits) -> Result<(), CgroupError> {
        let failed = |source: std::io::Error| CgroupError::Create { job: job.to_string(), source };
        for (mount, controllers) in self.hierarchies() {
            let slice = mount.join(&self.slice);
            let dir = slice.join(job);
            let cpuset = controllers.contains(&Controller::Cpuset);
            if !files::make_dir_under(&dir).map_err(failed)? {
                files::make_dir(&slice).map_err(failed)?;
                files::make_dir(&dir).map_err(failed)?;
            }
            if cpuset {
                job_cpuset(mount, &slice, &dir).map_err(failed)?;
            }
        }
        self.write_limits(job, limits).map_err(failed)
    }

    fn write_limits(&self, job: &str, limits: &Limits) -> std::io::Result<()> {
        if let (Some(bytes), Some(dir)) = (limits.mem_bytes, self.dir(Controller::Memory, job)) {
            files::write(&dir.join("memory.limit_in_bytes"), &bytes.to_string())?;
            let memsw = dir.join("memory.memsw.limit_in_bytes");
            if memsw.exists() {
                files::write(&memsw, &bytes.to_string())?;
            }
        }
        match &limits.cpus {
            CpuLimit::Cores(cores) => {
                if let Some(dir) = self.dir(Controller::Cpuset, job) {
                    files::write(&dir.join("cpuset.cpus"), &cpus::format_list(cores))?;
                }
            }
            CpuLimit::Quota(ncpus) => {
                if let Some(dir) = self.dir(Controller::Cpu, job) {
                    let period = files::read_u64(&dir.join("cpu.cfs_period_us")).unwrap_or(100_000);
                    files::write(&dir.join("cpu.cfs_quota_us"), &(period * u64::from(*ncpus)).to_string())?;
                }
            }
            CpuLimit::Unlimited => {}
        }
        if let Some(dir) = self.dir(Controller::Devices, job) {
            for rule in &limits.device_denials {
                files::write(&dir.join("devices.deny"), rule)?;
            }
        }
        Ok(())
    }

    /// The `cgroup.procs` of every hierarchy, for the child to join.
    pub fn attach_files(&self, job: &str) -> Vec<PathBuf> {
        self.job_dirs(job).into_iter().map(|dir| dir.join("cgroup.procs")).collect()
    }

    /// Freeze, SIGKILL every pid, thaw (without a freezer: SIGKILL every pid).
    pub fn kill_round(&self, job: &str) {
        let procs = self.procs(job);
        let Some(freezer) = self.dir(Controller::Freezer, job) else {
            files::signal_pids(&procs, Signal::SIGKILL);
            return;
        };
        let state = freezer.join("freezer.state");
        let _ = files::write(&state, "FROZEN");
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline && files::read(&state).is_ok_and(|s| s.trim() == "FREEZING") {
            std::thread::sleep(Duration::from_millis(5));
        }
        files::signal_pids(&procs, Signal::SIGKILL);
        let _ = files::write(&state, "THAWED");
    }

    pub fn usage(&self, job: &str) -> Usage {
        let memory = self.dir(Controller::Memory, job).unwrap_or_default();
        let cput_ns = self.dir(Controller::Cpuacct, job).and_then(|dir| files::read_u64(&dir.join("cpuacct.usage")));
        let mem = files::read_u64(&memory.join("memory.max_usage_in_bytes"));
        let vmem = files::read_u64(&memory.join("memory.memsw.max_usage_in_bytes")).or(mem);
        Usage::from_raw(cput_ns.map(|ns| ns / 1_000_000_000), mem, vmem)
    }

    /// The kernel's OOM killer acted in the job's memory cgroup (`oom_kill` of
    /// `memory.oom_control`, else a non-zero `memory.failcnt` as the OpenPBS hook reads it).
    pub fn oom_killed(&self, job: &str) -> bool {
        let Some(dir) = self.dir(Controller::Memory, job) else { return false };
        match files::read(&dir.join("memory.oom_control")).ok().and_then(|text| files::keyed(&text, "oom_kill")) {
            Some(kills) => kills > 0,
            None => files::read_u64(&dir.join("memory.failcnt")).is_some_and(|n| n > 0),
        }
    }
}

/// A job's new cpuset has cores and memory nodes: the kernel copied the slice's
/// (`cgroup.clone_children`), else they are copied here, from the slice, which gets the root's
/// first when it has none (a slice made elsewhere, or by an earlier mom) and the flag for the
/// next job.
fn job_cpuset(mount: &Path, slice: &Path, dir: &Path) -> std::io::Result<()> {
    if cpuset_is_set(dir)? {
        return Ok(());
    }
    if !cpuset_is_set(slice)? {
        inherit_cpuset(mount, slice)?;
    }
    files::write(&slice.join("cgroup.clone_children"), "1")?;
    inherit_cpuset(slice, dir)
}

const CPUSET_FILES: [&str; 2] = ["cpuset.mems", "cpuset.cpus"];

/// Whether both of the cpuset's lists are set.
fn cpuset_is_set(dir: &Path) -> std::io::Result<bool> {
    for name in CPUSET_FILES {
        if files::read(&dir.join(name))?.trim().is_empty() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A new v1 cpuset starts empty: it gets its parent's cores and memory nodes (only when
/// still empty, so a job's own cores are not overwritten).
fn inherit_cpuset(parent: &Path, child: &Path) -> std::io::Result<()> {
    for name in CPUSET_FILES {
        if files::read(&child.join(name))?.trim().is_empty() {
            files::write(&child.join(name), files::read(&parent.join(name))?.trim())?;
        }
    }
    Ok(())
}
