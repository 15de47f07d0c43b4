//! Starting a job's top shell: a new session (setsid), the user's identity (supplementary
//! groups, gid, uid), the job's umask (077 unless `-W umask`), the start directory, an environment built from nothing, and
//! the shell started as a login shell (`argv[0]` = `-bash`) reading, on its stdin, the path
//! of the script (an in-memory file kept open across exec), as OpenPBS does. An interactive
//! job's shell instead gets a pty slave as stdin, stdout, stderr and controlling terminal.
//!
//! The identity change is `setgroups` (the user's supplementary groups as `initgroups` computes
//! them, `user.rs`), then `setgid`, then `setuid`, and only then `chdir`: the start directory
//! (`-d`) is entered with the user's rights, so a directory the user may not enter fails the
//! job (`PBS: chdir to '<dir>' failed: <reason>` on its stderr, exit status -2) instead of
//! letting root's rights reach it.
//!
//! Owns: what the child before `exec` does and the data it needs (vfork.rs starts it without
//! copying the mom). Must not: wait for the child (reap.rs does), decide the environment
//! (env.rs does) or look users up in the child: every look-up and allocation happens before the
//! clone, the child only makes system calls.

use super::files::JobStdio;
use super::user::JobUser;
pub use super::vfork::close_inherited_descriptors;
use super::vfork::Prepared;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What to start.
#[derive(Debug)]
pub struct ShellSpec<'a> {
    /// Absolute path of the shell.
    pub shell: &'a Path,
    /// Whose identity the shell takes.
    pub user: &'a JobUser,
    /// Switch to the user's groups, gid and uid (the mom runs as root).
    pub change_identity: bool,
    /// The complete environment (nothing is inherited from the mom).
    pub env: &'a [(String, String)],
    /// Working directory, entered after the identity change.
    pub start_dir: &'a Path,
    /// The shell's umask (the job's `-W umask`, else 077).
    pub umask: u32,
    /// What the shell's standard streams are.
    pub stdio: ShellStdio,
    /// The `cgroup.procs` of the job's cgroup in each hierarchy (cgroup/): the child joins
    /// them first, before `setsid` and the identity change. Empty: uncontained.
    pub cgroup_fds: Vec<OwnedFd>,
}

/// The standard streams of a job's top shell.
#[derive(Debug)]
pub enum ShellStdio {
    /// A batch job: the script's path on stdin, spool files on stdout/stderr.
    Batch(JobStdio),
    /// An interactive job: a pty slave on all three, and as the controlling terminal.
    Terminal(OwnedFd),
}

/// Starts the job's top shell and returns its pid, which is also its session id (and process
/// group id). The child is not waited for here. It is started by vfork.rs (no copy of the mom):
/// everything the child needs is made here first, and the child only makes system calls (join
/// the cgroups, the streams, setsid, the terminal, setgroups, setgid, setuid, umask, chdir).
pub fn spawn_shell(spec: ShellSpec<'_>) -> io::Result<i32> {
    let nul = |what: &str| io::Error::new(io::ErrorKind::InvalidInput, format!("{what} contains a NUL byte"));
    let dir = CString::new(spec.start_dir.as_os_str().as_bytes()).map_err(|_| nul("start directory"))?;
    let program = CString::new(spec.shell.as_os_str().as_bytes()).map_err(|_| nul("shell path"))?;
    let argv = vec![CString::new(login_argv0(spec.shell)).map_err(|_| nul("shell name"))?];
    // As `Command::env_clear().envs(..)` made it: one value a name (the last given), sorted.
    let variables: std::collections::BTreeMap<&str, &str> =
        spec.env.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    let envp = variables
        .iter()
        .map(|(name, value)| CString::new(format!("{name}={value}")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| nul("environment"))?;
    // The script stays open across exec (the shell runs it by its /proc/self/fd path); the
    // mom's copies of every descriptor close when `stdio` is dropped after the spawn.
    let (stdio, keep_open, terminal) = match &spec.stdio {
        ShellStdio::Batch(files) => (
            [files.stdin.as_raw_fd(), files.stdout.as_raw_fd(), files.stderr.as_raw_fd()],
            Some(files.script.as_raw_fd()),
            false,
        ),
        ShellStdio::Terminal(slave) => ([slave.as_raw_fd(); 3], None, true),
    };
    let prepared = Prepared {
        program,
        argv,
        envp,
        stdio,
        keep_open,
        cgroup_fds: spec.cgroup_fds.iter().map(AsRawFd::as_raw_fd).collect(),
        terminal,
        identity: spec.change_identity.then(|| Identity::of(spec.user)),
        umask: (spec.umask & 0o777) as libc::mode_t,
        dir,
        chdir_failed: format!("PBS: chdir to '{}' failed: ", spec.start_dir.display()).into_bytes(),
        chdir_reason: errno_text,
    };
    let (pid, ()) = super::children::register(|| super::vfork::spawn(&prepared).map(|pid| (pid, ())))?;
    drop(spec);
    Ok(pid)
}

/// The text of the errors `chdir` gives, without allocating or locale look-ups (safe in a
/// forked child of a threaded process, unlike `strerror`).
fn errno_text(errno: i32) -> &'static str {
    match errno {
        libc::EACCES => "Permission denied",
        libc::ENOENT => "No such file or directory",
        libc::ENOTDIR => "Not a directory",
        libc::ELOOP => "Too many levels of symbolic links",
        libc::ENAMETOOLONG => "File name too long",
        libc::EIO => "Input/output error",
        _ => "cannot enter the directory",
    }
}

/// `argv[0]` of a login shell: `-` followed by the shell's file name (`/bin/bash` -> `-bash`).
pub fn login_argv0(shell: &Path) -> String {
    let name = shell.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "sh".into());
    format!("-{name}")
}

/// A user identity ready to be assumed in a forked child without allocating.
#[derive(Debug, Clone)]
pub struct Identity {
    uid: libc::uid_t,
    gid: libc::gid_t,
    groups: Vec<libc::gid_t>,
}

impl Identity {
    /// The identity of `user` (its groups as `initgroups` would set them).
    pub fn of(user: &JobUser) -> Identity {
        Identity { uid: user.uid, gid: user.gid, groups: user.groups.clone() }
    }

    /// The user's supplementary groups, gid and effective uid (and with it the file-system
    /// uid); the real and saved uids stay the mom's (root). Every effective capability goes
    /// with the effective uid, so what the child opens or enters is checked as the user's,
    /// while the user may neither signal nor trace it (it may wait on a hung file system, and
    /// the mom's thread with it). [`Identity::assume_in_full`] must follow before `execve`.
    /// Meant for a child before `execve` (`pre_exec`, the clones of vfork.rs and
    /// deliver_child.rs): raw system calls on data prepared before, this process alone changed.
    pub fn assume_effective(&self) -> io::Result<()> {
        const UNCHANGED: libc::uid_t = libc::uid_t::MAX;
        // SAFETY: plain system calls on owned, already-allocated data.
        unsafe {
            if libc::syscall(libc::SYS_setgroups, self.groups.len(), self.groups.as_ptr()) < 0
                || libc::syscall(libc::SYS_setresgid, self.gid, self.gid, self.gid) < 0
                || libc::syscall(libc::SYS_setresuid, UNCHANGED, self.uid, UNCHANGED) < 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// After [`Identity::assume_effective`] (and the `chdir`): the user's in full, as `setuid`
    /// from root gives (with no uid left 0 the kernel clears the permitted capabilities too),
    /// and not dumpable until `execve`, which makes the program's own memory dumpable as usual.
    pub fn assume_in_full(&self) -> io::Result<()> {
        // SAFETY: plain system calls without pointers.
        unsafe {
            if libc::syscall(libc::SYS_setresuid, self.uid, self.uid, self.uid) < 0
                || libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) < 0
            {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// Both steps at once, for a child with nothing to do as the user before `execve`.
    pub fn assume(&self) -> io::Result<()> {
        self.assume_effective()?;
        self.assume_in_full()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Between the two steps the child holds the user's effective uid but root's real and saved
    /// ones, so the user may not signal it (`kill` needs one of them); after the second it is the
    /// user's in full. The child waits between the steps until the test lets it go on.
    #[test]
    fn between_the_two_steps_the_user_may_not_signal_the_child() {
        use std::io::{Read, Write};
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        if !crate::test_support::is_root() {
            return;
        }
        let nobody = Identity { uid: 65534, gid: 65534, groups: vec![65534] };
        let (mut ids, ids_w) = std::io::pipe().unwrap();
        let (hold_r, mut hold) = std::io::pipe().unwrap();
        let (ids_fd, hold_fd, hold_w_fd) = (ids_w.as_raw_fd(), hold_r.as_raw_fd(), hold.as_raw_fd());
        let mut command = std::process::Command::new("/bin/true");
        // SAFETY: system calls on the stack only, in the forked child.
        unsafe {
            command.pre_exec(move || {
                let report = || {
                    let (mut real, mut effective, mut saved) = (0, 0, 0);
                    libc::getresuid(&mut real, &mut effective, &mut saved);
                    let words = [libc::getpid() as u32, real, effective, saved];
                    libc::write(ids_fd, words.as_ptr().cast(), 16);
                };
                nobody.assume_effective()?;
                report();
                // Its copy of the writing end closed: the test's, dropped, lets it go on.
                libc::close(hold_w_fd);
                let mut byte = 0u8;
                libc::read(hold_fd, (&mut byte as *mut u8).cast(), 1);
                nobody.assume_in_full()?;
                report();
                Ok(())
            });
        }
        let spawner = std::thread::spawn(move || command.spawn().map(|mut child| child.wait()));
        let mut read_ids = || {
            let mut bytes = [0u8; 16];
            ids.read_exact(&mut bytes).unwrap();
            let word = |i: usize| u32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap());
            (word(0), [word(1), word(2), word(3)])
        };
        let (pid, between) = read_ids();
        // A failed check leaves no stopped child behind.
        struct KillOnPanic(i32);
        impl Drop for KillOnPanic {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    // SAFETY: a plain system call; the child is not reaped while the test runs.
                    unsafe { libc::kill(self.0, libc::SIGKILL) };
                }
            }
        }
        let _guard = KillOnPanic(pid as i32);
        assert_eq!(between, [0, 65534, 0], "real, effective, saved uid between the steps");
        for signal in ["-0", "-STOP"] {
            let mut as_user = std::process::Command::new("kill");
            as_user.args([signal, &pid.to_string()]).uid(65534).gid(65534).stderr(std::process::Stdio::null());
            let refused = as_user.status().unwrap();
            assert!(!refused.success(), "the user signalled the child with kill {signal}");
        }
        hold.write_all(b"x").unwrap();
        assert_eq!(read_ids().1, [65534, 65534, 65534], "the user's in full before execve");
        assert!(spawner.join().unwrap().unwrap().unwrap().success());
    }

    #[test]
    fn login_shell_names() {
        assert_eq!(login_argv0(Path::new("/bin/bash")), "-bash");
        assert_eq!(login_argv0(Path::new("/usr/bin/zsh")), "-zsh");
        assert_eq!(login_argv0(Path::new("/")), "-sh");
    }
}
