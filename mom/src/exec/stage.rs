//! `-W sandbox=PRIVATE`, `-W stagein` and `-W stageout` on the mother superior: the job's
//! private directory (`$HOME/pbs.<jobid>.x8z`, OpenPBS `jobdirname` in `start_exec.c`) and
//! the files copied into it before the job and out of it after.
//!
//! Everything here happens **as the user**: each step is a child process that has taken the
//! user's groups, gid and uid (a root mom) before it runs `mkdir`, `cp`, `scp` or `rm` with
//! `--` before every path (the grammar in `job::exec_opts` already refuses paths starting with
//! `-` and `..` components), an empty environment and no shell; the kernel checks every path
//! against the user, so a link planted towards a root file gets the user's rights only. Each
//! runs under `timeout`, which is the user's process too: the mom waits at most that long and
//! [`OVER_TIMEOUT`] more, then kills the command's process group itself.
//!
//! A host is this one when it names this node, this machine or `localhost`: the copy is a
//! local `cp -rp` (OpenPBS `$usecp`); any other host is copied with `scp -B -r -p`, which
//! works when the user can reach it without a password (as OpenPBS's `pbs_rcp`/scp do).
//!
//! Owns: the job directory's name, creation and removal, and the copies. Must not: decide
//! what a failure does to the job (run.rs does).

use super::identity::Identity;
use super::user::JobUser;
use job::exec_opts::{Sandbox, StageItem};
use proto::mom::JobLaunch;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Seconds one copy may take before it is given up.
const COPY_TIMEOUT: &str = "3600";

/// Seconds the mom waits beyond a command's `timeout` before it kills the command's process
/// group itself: `timeout` runs as the user, who may stop it.
const OVER_TIMEOUT: u64 = 10;

/// At most this much of a command's error output is kept for the message.
const MAX_ERROR_OUTPUT: u64 = 64 * 1024;

/// Runs `command` (its stdout not kept) and waits for it at most `limit`, then kills its
/// process group (`timeout` leads one) and it; the error output goes to a memory file, so
/// nothing the command left running can hold the wait. Returns the status and the first
/// [`MAX_ERROR_OUTPUT`] bytes of its error output.
fn run_bounded(mut command: Command, limit: Duration) -> std::io::Result<(std::process::ExitStatus, Vec<u8>)> {
    use std::io::{Read, Seek};
    let errors = std::fs::File::from(rustix::fs::memfd_create("stage-errors", rustix::fs::MemfdFlags::CLOEXEC)?);
    let mut child = command.stderr(errors.try_clone()?).spawn()?;
    if !ends_within(&mut child, std::time::Instant::now() + limit) {
        // Unreaped, its pid (and so its group's id) cannot be taken by another process.
        let pid = rustix::process::Pid::from_child(&child);
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        let _ = child.kill();
    }
    let status = child.wait()?;
    let mut stderr = Vec::new();
    let mut errors = errors;
    errors.rewind()?;
    errors.take(MAX_ERROR_OUTPUT).read_to_end(&mut stderr)?;
    Ok((status, stderr))
}

/// Whether `child` ends (it is not reaped) before `deadline`: seen on its pidfd, or without
/// pidfds (Linux < 5.3) by looking every 50 ms.
fn ends_within(child: &mut std::process::Child, deadline: std::time::Instant) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let pid = rustix::process::Pid::from_child(child);
    let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
        return seen_ending_within(child, deadline);
    };
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
        match poll(&mut [PollFd::new(&pidfd, PollFlags::IN)], Some(&timeout)) {
            Ok(0) => return false,
            Err(rustix::io::Errno::INTR) => {}
            // Readable, or the poll failed: the caller's wait decides.
            _ => return true,
        }
    }
}

/// [`ends_within`] without a pidfd: a look every 50 ms.
fn seen_ending_within(child: &std::process::Child, deadline: std::time::Instant) -> bool {
    loop {
        // SAFETY: waits without reaping for our own child; siginfo is plain data.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let waited = unsafe { libc::waitid(libc::P_PID, child.id(), &mut info, flags) };
        // SAFETY: si_pid is set by waitid (0 when nothing ended).
        if waited == 0 && unsafe { info.si_pid() } != 0 {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The job's private directory when it asked for `sandbox=PRIVATE`.
pub fn job_dir(launch: &JobLaunch, home: &Path) -> Option<PathBuf> {
    (launch.exec.sandbox == Some(Sandbox::Private)).then(|| home.join(format!("pbs.{}.x8z", launch.job_id)))
}

/// How the mom runs commands as the job's user.
#[derive(Debug, Clone, Copy)]
pub struct AsUser<'a> {
    pub user: &'a JobUser,
    /// Change identity in the child (the mom is root).
    pub change_identity: bool,
    pub umask: u32,
}

impl AsUser<'_> {
    /// Runs `program args...` as the user (under `timeout`), from `/`, with an empty
    /// environment; `Err` carries its error output.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        self.run_for(COPY_TIMEOUT, program, args)
    }

    /// [`AsUser::run`] given `timeout` seconds (`pin.rs`'s git).
    pub(super) fn run_for(&self, timeout: &str, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let identity = self.change_identity.then(|| Identity::of(self.user));
        let umask = (self.umask & 0o777) as libc::mode_t;
        let mut command = Command::new("timeout");
        command
            .arg(timeout)
            .arg(program)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.user.home)
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        // SAFETY: only system calls on data prepared before the fork (see Identity::assume).
        unsafe {
            command.pre_exec(move || {
                super::spawn::close_inherited_descriptors();
                if let Some(identity) = &identity {
                    identity.assume()?;
                }
                libc::umask(umask);
                Ok(())
            });
        }
        let limit = timeout.parse::<u64>().unwrap_or(0).saturating_add(OVER_TIMEOUT);
        let (status, stderr) =
            run_bounded(command, Duration::from_secs(limit)).map_err(|err| format!("{program}: {err}"))?;
        if status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&stderr).trim().to_string();
        Err(if stderr.is_empty() { format!("{program}: {status}") } else { stderr })
    }

    /// Creates the job directory (mode 0700).
    pub fn create_dir(&self, dir: &Path) -> Result<(), String> {
        self.run("mkdir", &["-m".as_ref(), "700".as_ref(), "--".as_ref(), dir.as_os_str()])
    }

    /// Removes the job directory and what it holds.
    pub fn remove_dir(&self, dir: &Path) -> Result<(), String> {
        self.run("rm", &["-rf".as_ref(), "--".as_ref(), dir.as_os_str()])
    }

    /// Copies `from` to `to`; `remote` names the side (`host:path`) that is on another host.
    fn copy(&self, from: &std::ffi::OsStr, to: &std::ffi::OsStr, remote: bool) -> Result<(), String> {
        if remote {
            self.run("scp", &["-B".as_ref(), "-r".as_ref(), "-p".as_ref(), "--".as_ref(), from, to])
        } else {
            self.run("cp", &["-r".as_ref(), "-p".as_ref(), "--".as_ref(), from, to])
        }
    }
}

/// Where staged files are: the host they are on and, for this host, which names mean it.
#[derive(Debug, Clone)]
pub struct Hosts<'a> {
    /// This node's name.
    pub node: &'a str,
    /// This machine's host name.
    pub machine: String,
}

impl Hosts<'_> {
    /// Whether `host` is this one (short names compared).
    pub fn is_local(&self, host: &str) -> bool {
        let short = |name: &str| name.split('.').next().unwrap_or(name).to_ascii_lowercase();
        let host = short(host);
        host == "localhost" || host == short(self.node) || host == short(&self.machine)
    }
}

/// This machine's host name.
pub fn machine_name() -> String {
    nix::unistd::gethostname().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The two ends of one staged file, as the copy takes them: the local path (relative: in
/// `base`) and the other end, `host:remote` or, on this host, the path (relative: in `home`).
fn ends(item: &StageItem, base: &Path, home: &Path, hosts: &Hosts<'_>) -> (PathBuf, std::ffi::OsString, bool) {
    let local = base.join(&item.local);
    if hosts.is_local(&item.host) {
        (local, home.join(&item.remote).into_os_string(), false)
    } else {
        (local, format!("{}:{}", item.host, item.remote).into(), true)
    }
}

/// One file that could not be staged, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageFailure {
    pub local: PathBuf,
    pub other: String,
    pub error: String,
}

/// Copies each `stagein` file to its local name; stops at the first failure.
pub fn stage_in(items: &[StageItem], base: &Path, hosts: &Hosts<'_>, as_user: &AsUser<'_>) -> Result<(), StageFailure> {
    for item in items {
        let (local, other, remote) = ends(item, base, &as_user.user.home, hosts);
        as_user.copy(&other, local.as_os_str(), remote).map_err(|error| StageFailure {
            local: local.clone(),
            other: other.to_string_lossy().into_owned(),
            error,
        })?;
    }
    Ok(())
}

/// Copies each `stageout` file to its destination; returns those that failed (the others
/// are copied all the same).
pub fn stage_out(items: &[StageItem], base: &Path, hosts: &Hosts<'_>, as_user: &AsUser<'_>) -> Vec<StageFailure> {
    let mut failures = Vec::new();
    for item in items {
        let (local, other, remote) = ends(item, base, &as_user.user.home, hosts);
        if let Err(error) = as_user.copy(local.as_os_str(), &other, remote) {
            failures.push(StageFailure { local, other: other.to_string_lossy().into_owned(), error });
        }
    }
    failures
}

/// Before a batch job: creates its private directory (`sandbox=PRIVATE`) and stages its
/// `stagein` files into it (or the home directory). `Err`: why the job cannot start (its
/// directory is removed again).
pub fn before_job(launch: &JobLaunch, node: &str, as_user: &AsUser<'_>) -> Result<(), String> {
    let dir = job_dir(launch, &as_user.user.home);
    if let Some(dir) = &dir {
        as_user.create_dir(dir).map_err(|error| format!("cannot create the job directory: {error}"))?;
    }
    let hosts = Hosts { node, machine: machine_name() };
    let base = dir.as_deref().unwrap_or(&as_user.user.home);
    stage_in(&launch.exec.stagein, base, &hosts, as_user).map_err(|failure| {
        if let Some(dir) = &dir {
            let _ = as_user.remove_dir(dir);
        }
        format!("stagein of {} from {} failed: {}", failure.local.display(), failure.other, failure.error)
    })
}

/// After a batch job: stages its `stageout` files out, then removes its private directory
/// unless a file could not be staged out (it stays there, as OpenPBS keeps it). Returns the
/// files that could not be staged out.
pub fn after_job(launch: &JobLaunch, node: &str, as_user: &AsUser<'_>) -> Vec<StageFailure> {
    let dir = job_dir(launch, &as_user.user.home);
    let hosts = Hosts { node, machine: machine_name() };
    let base = dir.as_deref().unwrap_or(&as_user.user.home);
    let failures = stage_out(&launch.exec.stageout, base, &hosts, as_user);
    if let (Some(dir), true) = (&dir, failures.is_empty()) {
        if let Err(error) = as_user.remove_dir(dir) {
            tracing::warn!(dir = %dir.display(), "cannot remove the job directory: {error}");
        }
    }
    failures
}

/// Removes the job's private directory, if it has one, without staging out (a rerun, a job
/// whose shell could not start): the next run creates it afresh.
pub fn discard(launch: &JobLaunch, as_user: &AsUser<'_>) {
    if let Some(dir) = job_dir(launch, &as_user.user.home) {
        if let Err(error) = as_user.remove_dir(&dir) {
            tracing::warn!(dir = %dir.display(), "cannot remove the job directory: {error}");
        }
    }
}

#[cfg(test)]
#[path = "stage_tests.rs"]
mod tests;
