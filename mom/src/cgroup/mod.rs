//! A cgroup per job on this node: detection of the hierarchy (v2 when the unified one has
//! the controllers, else v1), each job's cgroup `<root>/<slice>/<jobid>` (v1: under each
//! controller's mount) with its memory, cpu and GPU-device limits, joining it from a forked
//! child, killing everything in it (processes that left the session included), its usage and
//! OOM kills, and removing it. docs/cgroups.md describes what is contained.
//!
//! Layout: `mounts.rs` finds the hierarchies (pure); `cpus.rs` keeps which job holds which
//! cores (pure); `devices.rs` makes the GPU device rules (pure); `files.rs` reads and writes
//! cgroup files; `v1.rs` and `v2.rs` are the two backends.
//!
//! Owns: [`Cgroups`] and [`JobCgroup`]. Must not: know jobs beyond their id and limits, the
//! protocol, or sessions (exec/ keeps the session-based fallback).

pub mod cpus;
pub mod devices;
pub mod files;
pub mod mounts;
#[cfg(test)]
mod tests;
pub mod v1;
pub mod v2;

use cpus::{CpuLimit, CpuPool};
use mounts::{Choice, Controller};
use nix::sys::signal::Signal;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `pbs_mom --cgroups`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CgroupMode {
    /// Jobs run uncontained.
    Off,
    /// Cgroups when the host allows them, else uncontained with one warning.
    Auto,
    /// A job whose cgroup cannot be made does not start (the server requeues it).
    Required,
}

/// The default `--cgroup-slice`.
pub const DEFAULT_SLICE: &str = "minipbs.slice";

/// The longest slice name or job id used as a directory name.
const MAX_COMPONENT: usize = 200;

/// Why a cgroup could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("{0:?} cannot name a cgroup (one path component of at most {MAX_COMPONENT} bytes, not starting with '.')")]
    BadName(String),
    #[error("cannot create the cgroup of job {job}: {source}")]
    Create { job: String, source: io::Error },
    #[error("cgroups are required but not usable here: {0}")]
    Unavailable(String),
}

/// What a job's cgroup on this node is limited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Memory (and memory+swap) in bytes; `None`: not limited, only accounted.
    pub mem_bytes: Option<u64>,
    pub cpus: CpuLimit,
    /// v1 `devices.deny` rules (devices.rs).
    pub device_denials: Vec<String>,
}

/// A job's use of this node, as `resources_used` wants it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub cput_secs: u64,
    pub mem_kb: u64,
    pub vmem_kb: u64,
    /// Cores it was limited to (0: not limited).
    pub ncpus: u32,
}

impl Usage {
    fn from_raw(cput_secs: Option<u64>, mem: Option<u64>, vmem: Option<u64>) -> Usage {
        let kb = |bytes: Option<u64>| bytes.map_or(0, |b| b.div_ceil(1024));
        Usage { cput_secs: cput_secs.unwrap_or(0), mem_kb: kb(mem), vmem_kb: kb(vmem), ncpus: 0 }
    }
}

#[derive(Debug)]
enum Backend {
    V1(v1::V1),
    V2(v2::V2),
}

/// This mom's cgroups: the hierarchy, the slice and who holds which cores.
#[derive(Debug)]
pub struct Cgroups {
    backend: Backend,
    required: bool,
    pool: Mutex<CpuPool>,
}

/// One job's cgroup. Derived from the job id alone, so any code can find it.
#[derive(Debug, Clone)]
pub struct JobCgroup {
    job_id: String,
    cgroups: Arc<Cgroups>,
}

/// Whether `name` is one safe path component (a job id or a slice name).
pub fn is_safe_component(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_COMPONENT
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_graphic() && b != b'/' && b != b'\\')
}

impl Cgroups {
    /// Detects the hierarchy from `/proc/self/mountinfo`. `Ok(None)`: run uncontained (`off`,
    /// or `auto` on a host without usable cgroups: the caller warns once). One log line says
    /// which. `required` fails when nothing is usable.
    pub fn detect(mode: CgroupMode, slice: &str) -> Result<Option<Arc<Cgroups>>, CgroupError> {
        if mode == CgroupMode::Off {
            return Ok(None);
        }
        if !is_safe_component(slice) {
            return Err(CgroupError::BadName(slice.to_string()));
        }
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let found = mounts::parse_mountinfo(&text);
        let v2_controllers =
            found.v2.as_ref().and_then(|root| files::read(&root.join("cgroup.controllers")).ok()).unwrap_or_default();
        let choice = mounts::choose(&found, &v2_controllers);
        match Cgroups::from_choice(choice, slice, mode == CgroupMode::Required) {
            Ok(cgroups) => Ok(Some(Arc::new(cgroups))),
            Err(reason) if mode == CgroupMode::Required => Err(CgroupError::Unavailable(reason)),
            Err(reason) => {
                tracing::warn!("jobs run without cgroups: {reason}");
                Ok(None)
            }
        }
    }

    fn from_choice(choice: Choice, slice: &str, required: bool) -> Result<Cgroups, String> {
        let (backend, root) = match choice {
            Choice::None(reason) => return Err(reason),
            Choice::V2 { root, controllers } => {
                let dir = root.clone();
                (Backend::V2(v2::V2 { root, controllers, slice: slice.to_string() }), dir)
            }
            Choice::V1(found) => {
                let dir = found.get(&Controller::Memory).cloned().unwrap_or_default();
                (Backend::V1(v1::V1 { mounts: found, slice: slice.to_string() }), dir)
            }
        };
        if !writable(&root) {
            return Err(format!("{} is not writable by this mom (not root?)", root.display()));
        }
        let cores = match &backend {
            Backend::V1(v1) => v1.mounts.get(&Controller::Cpuset).map(|m| m.join("cpuset.cpus")),
            Backend::V2(v2) => Some(v2.root.join("cpuset.cpus.effective")),
        };
        let cores =
            cores.and_then(|path| files::read(&path).ok()).and_then(|t| cpus::parse_list(&t)).unwrap_or_default();
        let cgroups = Cgroups { backend, required, pool: Mutex::new(CpuPool::new(cores)) };
        tracing::info!("{}", cgroups.describe());
        Ok(cgroups)
    }

    /// One line: which hierarchy, where, which slice.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::V1(v1) => {
                let names: Vec<&str> = v1.mounts.keys().map(|c| c.name()).collect();
                format!("jobs run in cgroups v1 ({}), slice {}", names.join(","), v1.slice)
            }
            Backend::V2(v2) => format!("jobs run in cgroups v2 at {}, slice {}", v2.root.display(), v2.slice),
        }
    }

    /// Whether a job that cannot get its cgroup must not start (`--cgroups required`).
    pub fn required(&self) -> bool {
        self.required
    }

    /// The cgroup of `job_id`; refused when the id is not a safe path component.
    pub fn job(self: &Arc<Self>, job_id: &str) -> Result<JobCgroup, CgroupError> {
        if !is_safe_component(job_id) {
            return Err(CgroupError::BadName(job_id.to_string()));
        }
        Ok(JobCgroup { job_id: job_id.to_string(), cgroups: self.clone() })
    }

    /// The limits of a job using `ncpus` cores and `mem_bytes` here: cores not held by another
    /// job (else a quota), and no GPU device but `job_gpus` among `node_gpus` (v1).
    pub fn limits(
        &self,
        job_id: &str,
        ncpus: u32,
        mem_bytes: Option<u64>,
        node_gpus: &[u32],
        job_gpus: &[u32],
    ) -> Limits {
        let cpus = pbslog::fatal::lock_or_exit(&self.pool, "cpu pool").assign(job_id, ncpus);
        let device_denials = match &self.backend {
            Backend::V1(v1) if v1.mounts.contains_key(&Controller::Devices) => {
                devices::gpu_deny_rules(node_gpus, job_gpus)
            }
            _ => Vec::new(),
        };
        Limits { mem_bytes, cpus, device_denials }
    }

    /// Every job directory of the slice (the slice's subdirectories in the first hierarchy).
    fn job_ids(&self) -> Vec<String> {
        let slice = match &self.backend {
            Backend::V1(v1) => v1.slice_dirs().into_iter().next().unwrap_or_default(),
            Backend::V2(v2) => v2.slice_dir(),
        };
        let Ok(entries) = std::fs::read_dir(&slice) else { return Vec::new() };
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| is_safe_component(name))
            .collect()
    }

    /// At mom start: kills and removes every job cgroup a previous mom left in the slice.
    /// Returns the job ids found.
    pub fn clean_leftovers(self: &Arc<Self>) -> Vec<String> {
        let ids = self.job_ids();
        for id in &ids {
            if let Ok(cgroup) = self.job(id) {
                if !cgroup.kill_all(Duration::ZERO) {
                    tracing::error!(job_id = %id, "processes of a leftover job cgroup survived SIGKILL");
                }
                cgroup.remove();
            }
        }
        ids
    }

    /// Removes the slice when it is empty (the mom stops; a running job keeps it).
    pub fn remove_slice(&self) {
        let dirs = match &self.backend {
            Backend::V1(v1) => v1.slice_dirs(),
            Backend::V2(v2) => vec![v2.slice_dir()],
        };
        for dir in dirs {
            let _ = files::remove_dir(&dir);
        }
    }
}

/// Whether this process may create directories in `dir`.
fn writable(dir: &Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}

/// How long a kill keeps SIGKILLing what is left before it gives up.
const KILL_PATIENCE: Duration = Duration::from_secs(10);

/// How often a kill checks whether the cgroup is empty.
const POLL: Duration = Duration::from_millis(20);

impl JobCgroup {
    pub fn job_id(&self) -> &str {
        &self.job_id
    }

    fn dirs(&self) -> Vec<PathBuf> {
        match &self.cgroups.backend {
            Backend::V1(v1) => v1.job_dirs(&self.job_id),
            Backend::V2(v2) => vec![v2.job_dir(&self.job_id)],
        }
    }

    fn procs(&self) -> PathBuf {
        match &self.cgroups.backend {
            Backend::V1(v1) => v1.procs(&self.job_id),
            Backend::V2(v2) => v2.procs(&self.job_id),
        }
    }

    /// Creates the cgroup (the slice too) with `limits`.
    pub fn create(&self, limits: &Limits) -> Result<(), CgroupError> {
        let created = match &self.cgroups.backend {
            Backend::V1(v1) => v1.create(&self.job_id, limits),
            Backend::V2(v2) => v2.create(&self.job_id, limits),
        };
        if created.is_err() {
            self.remove();
        }
        created
    }

    /// The `cgroup.procs` of each hierarchy, opened for writing here, in the parent, for
    /// [`join_in_child`] after the fork.
    pub fn attach_fds(&self) -> io::Result<Vec<OwnedFd>> {
        self.dirs()
            .into_iter()
            .map(|dir| {
                let file = std::fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))?;
                Ok(OwnedFd::from(file))
            })
            .collect()
    }

    /// Sends `signal` to every process in the cgroup; returns how many there were.
    pub fn signal_all(&self, signal: Signal) -> usize {
        files::signal_pids(&self.procs(), signal)
    }

    /// Whether no live process is left in it.
    pub fn is_empty(&self) -> bool {
        files::live_pids(&self.procs()).is_empty()
    }

    /// SIGTERM (and SIGCONT, for stopped processes) to every process, then after `delay`
    /// kill rounds (v2 `cgroup.kill`; v1 freeze, SIGKILL, thaw) until it is empty. Blocking;
    /// returns whether it is empty.
    pub fn kill_all(&self, delay: Duration) -> bool {
        if !delay.is_zero() {
            self.signal_all(Signal::SIGTERM);
            self.signal_all(Signal::SIGCONT);
            let deadline = Instant::now() + delay;
            while Instant::now() < deadline {
                if self.is_empty() {
                    return true;
                }
                std::thread::sleep(POLL);
            }
        }
        let deadline = Instant::now() + KILL_PATIENCE;
        loop {
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            match &self.cgroups.backend {
                Backend::V1(v1) => v1.kill_round(&self.job_id),
                Backend::V2(v2) => v2.kill_round(&self.job_id),
            }
            std::thread::sleep(POLL);
        }
    }

    /// cpu time, peak memory and memory+swap of everything that ran in it.
    pub fn usage(&self) -> Usage {
        let mut usage = match &self.cgroups.backend {
            Backend::V1(v1) => v1.usage(&self.job_id),
            Backend::V2(v2) => v2.usage(&self.job_id),
        };
        let pool = pbslog::fatal::lock_or_exit(&self.cgroups.pool, "cpu pool");
        usage.ncpus = pool.held(&self.job_id).map_or(0, |cores| cores.len() as u32);
        usage
    }

    /// Whether the kernel OOM-killed a process of it.
    pub fn oom_killed(&self) -> bool {
        match &self.cgroups.backend {
            Backend::V1(v1) => v1.oom_killed(&self.job_id),
            Backend::V2(v2) => v2.oom_killed(&self.job_id),
        }
    }

    /// Removes its directories (retrying briefly while the kernel lets go of the last
    /// processes) and gives its cores back.
    pub fn remove(&self) {
        pbslog::fatal::lock_or_exit(&self.cgroups.pool, "cpu pool").release(&self.job_id);
        let deadline = Instant::now() + Duration::from_secs(2);
        for dir in self.dirs() {
            loop {
                match files::remove_dir(&dir) {
                    Ok(()) => break,
                    // Only a cgroup still holding processes (EBUSY) is worth waiting for; a
                    // directory that never existed (ENOENT, ENOTDIR) is not, and a job whose
                    // cgroup could not be made reaches here at once.
                    Err(err) if err.raw_os_error() != Some(libc::EBUSY) || Instant::now() >= deadline => {
                        tracing::warn!(dir = %dir.display(), "cannot remove the job's cgroup: {err}");
                        break;
                    }
                    Err(_) => std::thread::sleep(POLL),
                }
            }
        }
    }
}

/// Moves the calling (forked) process into the cgroups whose `cgroup.procs` are `fds`: a
/// `write` of "0" to each. Async-signal-safe: meant for `pre_exec`.
pub fn join_in_child(fds: &[RawFd]) -> io::Result<()> {
    for fd in fds {
        // SAFETY: a plain system call on a descriptor the parent opened, with a static buffer.
        if unsafe { libc::write(*fd, b"0".as_ptr().cast(), 1) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
