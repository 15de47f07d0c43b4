//! Collecting a job's top shell: `wait4` on a dedicated thread, its status turned into a PBS
//! exit status (pbs-reference 7.2) and its resource usage into `resources_used`.
//!
//! Owns: [`watch`] and [`pbs_exit_status`]. Must not: signal processes or wait for any pid
//! other than the one it was given. A plain thread (not tokio's blocking pool) waits, so a
//! job that outlives the runtime never blocks its shutdown.

use std::io;
use tokio::sync::oneshot;

/// What `wait4` reported for the top shell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// 0..=255 for an exit, 256 + N for death by signal N.
    pub exit_status: i32,
    /// User plus system cpu time of the shell and the descendants it waited for.
    pub cput_secs: u64,
    /// Peak resident set size in kilobytes.
    pub maxrss_kb: u64,
}

/// Starts waiting for `pid` on its own thread; the receiver yields the result once.
pub fn watch(pid: i32) -> oneshot::Receiver<io::Result<Reaped>> {
    let (sender, receiver) = oneshot::channel();
    let spawned = std::thread::Builder::new().name(format!("reap-{pid}")).spawn(move || {
        let _ = sender.send(wait4(pid));
    });
    if let Err(err) = spawned {
        tracing::error!(pid, "cannot start a reaper thread: {err}");
    }
    receiver
}

/// Blocks until `pid` ends.
fn wait4(pid: i32) -> io::Result<Reaped> {
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; zeroed is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to locals; waits only for our own child `pid`.
        let result = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if result == pid {
            break;
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let cput = usage.ru_utime.tv_sec + usage.ru_stime.tv_sec;
    let micros = usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
    let cput_secs = (cput + micros / 1_000_000).max(0) as u64;
    Ok(Reaped { exit_status: pbs_exit_status(status), cput_secs, maxrss_kb: usage.ru_maxrss.max(0) as u64 })
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
}
