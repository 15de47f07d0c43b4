//! Starting one task process: as the job's owner (supplementary groups, gid, uid; exec/identity.rs
//! `Identity`), in a new session, in the requested directory entered as the user (else the
//! home directory, else `/`), with an environment built from nothing, running its argv (found
//! on the task's `PATH`) or `$SHELL -c <line>`; stdin, stdout and stderr are pipes or files the
//! caller chose. Then [`wait`] reaps it with its usage.
//!
//! The cgroup join: [`TaskSpawn::join_fds`] are the `cgroup.procs` of the job's cgroup on this
//! node (`JobCgroup::attach_fds`; none when the job runs uncontained); the child joins them
//! first thing in `pre_exec` (`cgroup::join_in_child`), so a task and everything it starts are
//! the job's before it runs a single instruction of the user's.
//!
//! Owns: the code that runs in the forked child. Must not: decide the environment or the
//! directory (the caller does), or look anything up in the child.

use crate::exec::identity::Identity;
use crate::exec::spawn::close_inherited_descriptors;
use proto::mom::ResourcesUsed;
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// What to start.
#[derive(Debug)]
pub struct TaskSpawn {
    /// `argv[0]` is the program.
    pub argv: Vec<String>,
    /// The complete environment.
    pub env: Vec<(String, String)>,
    /// Tried in order after the identity change; the first that can be entered is used.
    pub dirs: Vec<PathBuf>,
    /// `None`: stay as the mom (a mom not running as root runs only its own user's jobs).
    pub identity: Option<Identity>,
    /// Descriptors of the job's cgroup, joined before the identity change (empty: none).
    pub join_fds: Vec<RawFd>,
    pub stdin: Stdio,
    pub stdout: Stdio,
    pub stderr: Stdio,
}

/// A started task.
#[derive(Debug)]
pub struct Spawned {
    /// Its pid, which is also its session and process group id.
    pub pid: i32,
    pub stdin: Option<std::process::ChildStdin>,
    pub stdout: Option<std::process::ChildStdout>,
    pub stderr: Option<std::process::ChildStderr>,
}

/// Starts the task (not waited for here).
pub fn spawn(task: TaskSpawn) -> io::Result<Spawned> {
    let dirs: Vec<CString> = task
        .dirs
        .iter()
        .map(|dir| CString::new(dir.as_os_str().as_bytes()))
        .chain([CString::new("/")])
        .collect::<Result<_, _>>()
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a directory contains a NUL byte"))?;
    let (program, args) = task.argv.split_first().ok_or_else(|| io::Error::other("empty argv"))?;
    let mut command = Command::new(program);
    command.args(args).env_clear().envs(task.env.iter().map(|(k, v)| (k, v)));
    command.stdin(task.stdin).stdout(task.stdout).stderr(task.stderr);
    let (identity, join_fds) = (task.identity, task.join_fds);
    // SAFETY: the closure runs in the forked child before exec and only makes system calls
    // on data prepared before the fork.
    unsafe {
        command.pre_exec(move || {
            crate::cgroup::join_in_child(&join_fds)?;
            close_inherited_descriptors();
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // The directory is entered as the user, who may not stop or trace this child
            // meanwhile: the mom waits for its `execve` (exec/identity.rs).
            if let Some(identity) = &identity {
                identity.assume_effective()?;
            }
            if !dirs.iter().any(|dir| libc::chdir(dir.as_ptr()) == 0) {
                return Err(io::Error::last_os_error());
            }
            if let Some(identity) = &identity {
                identity.assume_in_full()?;
            }
            Ok(())
        });
    }
    // Registered as the mom's own (exec/children.rs): only `wait` reaps it.
    let (_, mut child) = crate::exec::children::register(|| command.spawn().map(|child| (child.id() as i32, child)))?;
    let spawned = Spawned {
        pid: child.id() as i32,
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    };
    // Dropping `child` neither waits nor kills: [`wait`] reaps it.
    Ok(spawned)
}

/// Waits for task `pid` without a thread (its end seen on a pidfd, exec/reap.rs) and returns
/// its status as a shell reports it (the exit code, or 128 + the signal that killed it) and
/// its usage.
pub async fn wait(pid: i32) -> io::Result<(i32, ResourcesUsed)> {
    let reaped = crate::exec::reap::watch(pid).await.map_err(|_| io::Error::other("the reaper went away"))??;
    let code = match reaped.exit_status {
        signalled @ 256.. => 128 + (signalled - 256),
        exited => exited,
    };
    // To the nearest second, as resources_used.cput is shown.
    let cput_secs = (reaped.cput_micros + 500_000) / 1_000_000;
    Ok((code, ResourcesUsed { cput_secs, mem_kb: reaped.maxrss_kb, ..Default::default() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// Waiting for live tasks takes no thread of the blocking pool, which MUNGE, starts and
    /// file work need: a job may have more live tasks on a node than the pool has threads.
    #[test]
    fn waiting_tasks_hold_no_thread_of_the_blocking_pool() {
        // One thread: the waits have all been polled once the test's future yields.
        let runtime =
            tokio::runtime::Builder::new_current_thread().max_blocking_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            let mut children: Vec<_> =
                (0..4).map(|_| std::process::Command::new("sleep").arg("60").spawn().unwrap()).collect();
            let waits: Vec<_> = children.iter().map(|child| tokio::spawn(wait(child.id() as i32))).collect();
            tokio::task::yield_now().await;
            let other =
                tokio::time::timeout(std::time::Duration::from_secs(10), tokio::task::spawn_blocking(|| 7)).await;
            for child in &mut children {
                child.kill().unwrap();
            }
            for waited in waits {
                assert_eq!(waited.await.unwrap().unwrap().0, 128 + libc::SIGKILL);
            }
            assert_eq!(other.ok().map(Result::unwrap), Some(7), "the blocking pool was full");
        });
    }

    /// A task of a user enters the first directory the user may enter (a 0700 directory of
    /// root's is passed over, as it would be for them) and runs as the user in full.
    #[tokio::test]
    async fn a_task_enters_its_directory_as_the_user_and_runs_as_the_user_in_full() {
        if !crate::test_support::is_root() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let (private, open) = (tmp.path().join("private"), tmp.path().join("open"));
        for (dir, mode) in [(&private, 0o700), (&open, 0o755)] {
            std::fs::create_dir(dir).unwrap();
            std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
        }
        std::fs::set_permissions(tmp.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let user =
            crate::exec::user::JobUser { uid: 65534, gid: 65534, groups: vec![65534], ..crate::test_support::alice() };
        let script = "pwd; grep -E '^(Uid|Gid|CapPrm|CapEff):' /proc/self/status";
        let spawned = spawn(TaskSpawn {
            argv: ["/bin/sh", "-c", script].map(String::from).to_vec(),
            env: Vec::new(),
            dirs: vec![private, open.clone()],
            identity: Some(Identity::of(&user)),
            join_fds: Vec::new(),
            stdin: Stdio::null(),
            stdout: Stdio::piped(),
            stderr: Stdio::null(),
        })
        .unwrap();
        let mut out = String::new();
        spawned.stdout.unwrap().read_to_string(&mut out).unwrap();
        assert_eq!(wait(spawned.pid).await.unwrap().0, 0);
        let lines: Vec<String> =
            out.lines().map(|line| line.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        let expected = [
            open.display().to_string(),
            "Uid: 65534 65534 65534 65534".into(),
            "Gid: 65534 65534 65534 65534".into(),
            "CapPrm: 0000000000000000".into(),
            "CapEff: 0000000000000000".into(),
        ];
        assert_eq!(lines, expected, "{out}");
    }
}
