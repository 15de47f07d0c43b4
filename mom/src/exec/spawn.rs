//! Starting a job's top shell: a new session (setsid), the user's identity (supplementary
//! groups, gid, uid), the job's umask (077 unless `-W umask`), the start directory, an environment built from nothing, and
//! the shell started as a login shell (`argv[0]` = `-bash`) reading, on its stdin, the path
//! of the script (an in-memory file kept open across exec), as OpenPBS does. An interactive
//! job's shell instead gets a pty slave as stdin, stdout, stderr and controlling terminal.
//!
//! The identity change (exec/identity.rs: the user's supplementary groups as `initgroups`
//! computes them, `user.rs`, then gid, then the effective uid; the real and saved uids after
//! the `chdir`) comes before the `chdir`: the start directory (`-d`) is entered with the user's
//! rights, so a directory the user may not enter fails the job (`PBS: chdir to '<dir>' failed:
//! <reason>` on its stderr, exit status -2) instead of letting root's rights reach it.
//!
//! Owns: what the child before `exec` does and the data it needs (vfork.rs starts it without
//! copying the mom). Must not: wait for the child (reap.rs does), decide the environment
//! (env.rs does) or look users up in the child: every look-up and allocation happens before the
//! clone, the child only makes system calls.

use super::files::JobStdio;
use super::identity::Identity;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn login_shell_names() {
        assert_eq!(login_argv0(Path::new("/bin/bash")), "-bash");
        assert_eq!(login_argv0(Path::new("/usr/bin/zsh")), "-zsh");
        assert_eq!(login_argv0(Path::new("/")), "-sh");
    }
}
