//! The v2 backend: `<root>/<slice>/<jobid>` in the unified hierarchy. Limits go to
//! `memory.max` (and `memory.swap.max` 0), `cpuset.cpus` or `cpu.max`; usage comes from
//! `cpu.stat` (`usage_usec`), `memory.peak` (or `memory.current`) and `memory.swap.peak`; the
//! OOM count from `memory.events`; a kill writes `cgroup.kill`. No device rules (they need an
//! eBPF program: not done).
//!
//! Owns: the v2 file names. Must not: decide limits or keep state.

use super::cpus::{self, CpuLimit};
use super::files;
use super::{CgroupError, Limits, Usage};
use nix::sys::signal::Signal;
use std::path::PathBuf;

/// The unified hierarchy, its available controllers and this mom's slice.
#[derive(Debug, Clone)]
pub struct V2 {
    pub root: PathBuf,
    pub controllers: Vec<String>,
    pub slice: String,
}

impl V2 {
    pub fn slice_dir(&self) -> PathBuf {
        self.root.join(&self.slice)
    }

    pub fn job_dir(&self, job: &str) -> PathBuf {
        self.slice_dir().join(job)
    }

    pub fn procs(&self, job: &str) -> PathBuf {
        self.job_dir(job).join("cgroup.procs")
    }

    /// Creates the job's cgroup (the controllers enabled down to it) and writes its limits.
    pub fn create(&self, job: &str, limits: &Limits) -> Result<(), CgroupError> {
        let failed = |source: std::io::Error| CgroupError::Create { job: job.to_string(), source };
        let slice = self.slice_dir();
        files::make_dir(&slice).map_err(failed)?;
        for parent in [&self.root, &slice] {
            for controller in ["memory", "pids", "cpu", "cpuset"] {
                if self.controllers.iter().any(|c| c == controller) {
                    // Already enabled (or enabled by the host's manager) is fine.
                    let _ = files::write(&parent.join("cgroup.subtree_control"), &format!("+{controller}"));
                }
            }
        }
        let dir = self.job_dir(job);
        files::make_dir(&dir).map_err(failed)?;
        self.write_limits(&dir, limits).map_err(failed)
    }

    fn write_limits(&self, dir: &std::path::Path, limits: &Limits) -> std::io::Result<()> {
        if let Some(bytes) = limits.mem_bytes {
            files::write(&dir.join("memory.max"), &bytes.to_string())?;
            let swap = dir.join("memory.swap.max");
            if swap.exists() {
                files::write(&swap, "0")?;
            }
        }
        match &limits.cpus {
            CpuLimit::Cores(cores) if dir.join("cpuset.cpus").exists() => {
                files::write(&dir.join("cpuset.cpus"), &cpus::format_list(cores))?;
            }
            CpuLimit::Cores(cores) => quota(dir, cores.len() as u32)?,
            CpuLimit::Quota(ncpus) => quota(dir, *ncpus)?,
            CpuLimit::Unlimited => {}
        }
        Ok(())
    }

    /// `cgroup.kill` (kernel 5.14+), else SIGKILL to every pid.
    pub fn kill_round(&self, job: &str) {
        let kill = self.job_dir(job).join("cgroup.kill");
        if !kill.exists() || files::write(&kill, "1").is_err() {
            files::signal_pids(&self.procs(job), Signal::SIGKILL);
        }
    }

    pub fn usage(&self, job: &str) -> Usage {
        let dir = self.job_dir(job);
        let stat = files::read(&dir.join("cpu.stat")).unwrap_or_default();
        let cput = files::keyed(&stat, "usage_usec").map(|usec| usec / 1_000_000);
        let mem = files::read_u64(&dir.join("memory.peak")).or_else(|| files::read_u64(&dir.join("memory.current")));
        let swap = files::read_u64(&dir.join("memory.swap.peak")).unwrap_or(0);
        Usage::from_raw(cput, mem, mem.map(|mem| mem + swap))
    }

    pub fn oom_killed(&self, job: &str) -> bool {
        let events = files::read(&self.job_dir(job).join("memory.events")).unwrap_or_default();
        files::keyed(&events, "oom_kill").is_some_and(|n| n > 0)
    }
}

/// `cpu.max`: `ncpus` periods of 100 ms per period.
fn quota(dir: &std::path::Path, ncpus: u32) -> std::io::Result<()> {
    const PERIOD: u64 = 100_000;
    files::write(&dir.join("cpu.max"), &format!("{} {PERIOD}", PERIOD * u64::from(ncpus.max(1))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake unified hierarchy in a temporary directory: the file logic without a kernel.
    fn fake() -> (tempfile::TempDir, V2) {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("cgroup.subtree_control"), "").unwrap();
        let controllers = ["cpu", "memory", "pids"].map(String::from).to_vec();
        let v2 = V2 { root: root.path().to_path_buf(), controllers, slice: "t.slice".into() };
        std::fs::create_dir(v2.slice_dir()).unwrap();
        std::fs::write(v2.slice_dir().join("cgroup.subtree_control"), "").unwrap();
        (root, v2)
    }

    #[test]
    fn limits_are_written() {
        let (_root, v2) = fake();
        let dir = v2.job_dir("7.s");
        std::fs::create_dir(&dir).unwrap();
        for name in ["memory.max", "memory.swap.max", "cpu.max"] {
            std::fs::write(dir.join(name), "").unwrap();
        }
        let limits = Limits { mem_bytes: Some(64 << 20), cpus: CpuLimit::Cores(vec![0, 1]), device_denials: vec![] };
        v2.create("7.s", &limits).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("memory.max")).unwrap(), "67108864");
        assert_eq!(std::fs::read_to_string(dir.join("memory.swap.max")).unwrap(), "0");
        assert_eq!(std::fs::read_to_string(dir.join("cpu.max")).unwrap(), "200000 100000", "no cpuset: quota");
        // One write per controller, never truncating (a fake file keeps the longest): the last is +cpu.
        assert!(std::fs::read_to_string(v2.slice_dir().join("cgroup.subtree_control")).unwrap().starts_with("+cpu"));
    }

    #[test]
    fn usage_and_oom_are_read() {
        let (_root, v2) = fake();
        let dir = v2.job_dir("8.s");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("cpu.stat"), "usage_usec 3500000\nuser_usec 3000000\n").unwrap();
        std::fs::write(dir.join("memory.peak"), "2097152\n").unwrap();
        std::fs::write(dir.join("memory.swap.peak"), "1048576\n").unwrap();
        std::fs::write(dir.join("memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n").unwrap();
        let usage = v2.usage("8.s");
        assert_eq!((usage.cput_secs, usage.mem_kb, usage.vmem_kb), (3, 2048, 3072));
        assert!(v2.oom_killed("8.s"));
        std::fs::write(dir.join("memory.events"), "oom 0\noom_kill 0\n").unwrap();
        assert!(!v2.oom_killed("8.s"));
    }
}
