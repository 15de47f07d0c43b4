//! Collecting a job's top shell: its end seen on a pidfd (`pidfd_open`, readable once the
//! process is a zombie) by a task of the runtime, then one `wait4(WNOHANG)` that reaps it; its
//! status turned into a PBS exit status (pbs-reference 7.2) and its resource usage into
//! `resources_used`. No thread per job: a new thread cost the mom more than the rest of a
//! job's bookkeeping (its stack, and a malloc arena of its own on its first allocation).
//! Without pidfds (Linux < 5.3) or outside a runtime, a plain thread blocks in `wait4` as
//! before. Either way a job that outlives the runtime never blocks its shutdown.
//!
//! Owns: [`watch`] and [`pbs_exit_status`]. Must not: signal processes or wait for any pid
//! other than the one it was given.

use std::io;
use tokio::sync::oneshot;

/// What `wait4` reported for the top shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// 0..=255 for an exit, 256 + N for death by signal N.
    pub exit_status: i32,
    /// User plus system cpu time of the shell and the descendants it waited for.
    pub cput_secs: u64,
    /// The same in microseconds.
    pub cput_micros: u64,
    /// Peak resident set size in kilobytes.
    pub maxrss_kb: u64,
}

/// Starts waiting for `pid` (a child of this process); the receiver yields the result once.
pub fn watch(pid: i32) -> oneshot::Receiver<io::Result<Reaped>> {
    let (sender, receiver) = oneshot::channel();
    let runtime = tokio::runtime::Handle::try_current().ok();
    let pidfd = rustix::process::Pid::from_raw(pid)
        .and_then(|child| rustix::process::pidfd_open(child, rustix::process::PidfdFlags::empty()).ok());
    if let (Some(runtime), Some(pidfd)) = (runtime, pidfd) {
        runtime.spawn(async move {
            let _ = sender.send(wait_pidfd(pid, pidfd).await);
        });
        return receiver;
    }
    let spawned = std::thread::Builder::new().name(format!("reap-{pid}")).spawn(move || {
        let _ = sender.send(wait4(pid));
    });
    if let Err(err) = spawned {
        tracing::error!(pid, "cannot start a reaper thread: {err}");
    }
    receiver
}

/// Waits until `pidfd` (of `pid`) is readable, then reaps `pid` without blocking.
async fn wait_pidfd(pid: i32, pidfd: std::os::fd::OwnedFd) -> io::Result<Reaped> {
    // SAFETY: `pidfd` is an open descriptor owned by the `AsyncFd` until it is dropped.
    let pidfd = unsafe { tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
        .map_err(|error| error.into_parts().1)?;
    loop {
        let mut ready = pidfd.readable().await?;
        if let Some(reaped) = reap_now(pid)? {
            return Ok(reaped);
        }
        ready.clear_ready();
    }
}

/// Blocks until `pid` ends (waiting without reaping), then reaps it.
fn wait4(pid: i32) -> io::Result<Reaped> {
    loop {
        // SAFETY: siginfo is plain data; waits (without reaping) for our own child `pid`.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let waited = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if waited < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return Err(io::Error::last_os_error());
        }
        if let Some(reaped) = reap_now(pid)? {
            return Ok(reaped);
        }
    }
}

/// Reaps `pid` if it has ended, and forgets it among the started children in the same step.
fn reap_now(pid: i32) -> io::Result<Option<Reaped>> {
    super::children::reap_registered(pid, || reap(pid, libc::WNOHANG), |result| matches!(result, Ok(Some(_))))
}

/// One `wait4` for `pid` with `flags`: `None` when it has not ended (`WNOHANG`) or the wait
/// was interrupted.
fn reap(pid: i32, flags: libc::c_int) -> io::Result<Option<Reaped>> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to locals; waits only for our own child `pid`.
    let result = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
    if result == 0 {
        return Ok(None);
    }
    if result != pid {
        let err = io::Error::last_os_error();
        return if err.kind() == io::ErrorKind::Interrupted { Ok(None) } else { Err(err) };
    }
    let micros = |time: libc::timeval| time.tv_sec.max(0) as u64 * 1_000_000 + time.tv_usec.max(0) as u64;
    let cput_micros = micros(usage.ru_utime) + micros(usage.ru_stime);
    Ok(Some(Reaped {
        exit_status: pbs_exit_status(status),
        cput_secs: cput_micros / 1_000_000,
        cput_micros,
        maxrss_kb: usage.ru_maxrss.max(0) as u64,
    }))
}

/// A `wait` status as PBS reports it: the exit code, or 256 + the signal number.
pub fn pbs_exit_status(status: libc::c_int) -> i32 {
    if libc::WIFSIGNALED(status) {
        256 + libc::WTERMSIG(status)
    } else {
        libc::WEXITSTATUS(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        assert_eq!(pbs_exit_status(0), 0);
        assert_eq!(pbs_exit_status(3 << 8), 3);
        assert_eq!(pbs_exit_status(255 << 8), 255);
        assert_eq!(pbs_exit_status(libc::SIGTERM), 271);
        assert_eq!(pbs_exit_status(libc::SIGKILL), 265);
        assert_eq!(pbs_exit_status(libc::SIGKILL | 0x80), 265, "core dump flag ignored");
    }

    #[tokio::test]
    #[allow(clippy::zombie_processes)] // watch() reaps it
    async fn reaps_a_real_child() {
        let child = std::process::Command::new("/bin/sh").args(["-c", "exit 7"]).spawn().unwrap();
        let reaped = watch(child.id() as i32).await.unwrap().unwrap();
        assert_eq!(reaped.exit_status, 7);
    }

    #[test]
    #[allow(clippy::zombie_processes)] // watch() reaps it
    fn reaps_outside_a_runtime_on_a_thread() {
        let child = std::process::Command::new("/bin/sh").args(["-c", "kill -TERM $$"]).spawn().unwrap();
        let reaped = watch(child.id() as i32).blocking_recv().unwrap().unwrap();
        assert_eq!(reaped.exit_status, 256 + libc::SIGTERM);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[allow(clippy::zombie_processes)] // watch() reaps them
    async fn reaps_many_children_each_once() {
        let children: Vec<_> = (0..20)
            .map(|code| std::process::Command::new("/bin/sh").args(["-c", &format!("exit {code}")]).spawn().unwrap())
            .collect();
        let watches: Vec<_> = children.iter().map(|child| watch(child.id() as i32)).collect();
        for (code, watched) in watches.into_iter().enumerate() {
            assert_eq!(watched.await.unwrap().unwrap().exit_status, code as i32);
        }
    }
}
