//! Starting a job's top shell without copying the mom: `clone(CLONE_VM | CLONE_VFORK)`, the
//! child on a small stack of its own in the mom's memory, the mom's thread that asked waiting
//! until the child has called `execve` (or failed). A `fork` copied every page table of the mom
//! and then made each page the mom wrote before the child's `exec` a copy-on-write fault; it
//! also ran glibc's fork handlers (malloc's locks). Its cost grew with the mom's memory.
//!
//! Why this is safe with the steps before `exec` (cgroup join, `setsid`, identity, umask,
//! `chdir`): the child shares the mom's memory, so it must neither allocate, nor take a lock,
//! nor write anything but its own stack and the one error word the parent reads. Everything is
//! prepared before the clone ([`Prepared`]: C strings, pointer arrays, descriptors), and the
//! child only makes system calls:
//! - the identity changes are `Identity`'s two steps (exec/identity.rs), raw `setgroups`/
//!   `setresgid`/`setresuid` system calls, not glibc's wrappers: those broadcast the change to
//!   every thread of the *mom* (glibc's thread list is shared memory), which would be wrong and
//!   could hang. The effective uid becomes the user's before `chdir` (checked as the user's),
//!   the real and saved ones only after it (no signal or trace of the user's reaches the child
//!   while a `chdir` waits);
//! - all signals are blocked in the mom's thread across the clone, so no handler of the mom runs
//!   on the child's stack; the child sets every caught signal (and SIGPIPE, which Rust ignores)
//!   back to its default action, then unblocks everything just before `execve`, so the shell
//!   starts with default actions and an empty mask, as `std::process::Command` gives;
//! - the child has its own descriptor table (no `CLONE_FILES`), so its `dup2` and close-on-exec
//!   changes do not touch the mom's;
//! - other threads of the mom keep running but never see the prepared data or the stack: both
//!   belong to the calling thread, which is suspended until the `exec`.
//!
//! Owns: [`Prepared`] and [`spawn`]. Must not: look anything up or allocate in the child.

use super::identity::Identity;
use std::ffi::{c_char, c_int, c_void, CString};
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

/// The child's stack: the steps before `exec` need little (no allocation, no formatting).
const STACK_BYTES: usize = 64 * 1024;

/// What the child needs, all made before the clone.
#[derive(Debug)]
pub struct Prepared {
    pub program: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    /// Descriptors that become 0, 1 and 2 (each at 3 or above: see [`spawn`]).
    pub stdio: [RawFd; 3],
    /// A descriptor kept open across `exec` (the script).
    pub keep_open: Option<RawFd>,
    /// `cgroup.procs` of the job's cgroups: the child writes "0" to each first.
    pub cgroup_fds: Vec<RawFd>,
    /// The pty slave on stdin becomes the controlling terminal.
    pub terminal: bool,
    /// The user's (`None`: keep the mom's).
    pub identity: Option<Identity>,
    pub umask: libc::mode_t,
    pub dir: CString,
    /// Written on stderr, followed by the reason, when `dir` cannot be entered.
    pub chdir_failed: Vec<u8>,
    /// The reason's text for each errno `chdir` may give (no `strerror` in the child).
    pub chdir_reason: fn(i32) -> &'static str,
}

/// What the child reads: the prepared data, its pointer arrays and the error word.
struct Shared<'a> {
    prepared: &'a Prepared,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
    /// The errno of the step that failed (0: the `execve` happened).
    error: AtomicI32,
}

/// Starts `prepared` in a new process and returns its pid once it has exec'd; an error when a
/// step before `exec`, or `exec` itself, failed (the child is then reaped here).
pub fn spawn(prepared: &Prepared) -> io::Result<i32> {
    if prepared.stdio.iter().any(|fd| *fd < 3) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "standard stream descriptors must be 3 or above"));
    }
    let pointers = |strings: &[CString]| {
        strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect::<Vec<_>>()
    };
    let shared =
        Shared { prepared, argv: pointers(&prepared.argv), envp: pointers(&prepared.envp), error: AtomicI32::new(0) };
    // SAFETY: `child` only makes system calls on `shared`, which outlives the call.
    let pid = unsafe { clone_suspended(child, &shared, STACK_BYTES)? };
    match shared.error.load(Ordering::Acquire) {
        0 => Ok(pid),
        errno => {
            let mut status = 0;
            // SAFETY: reaps our own child, which has exited.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            Err(io::Error::from_raw_os_error(errno))
        }
    }
}

/// Runs `child(arg)` in a new process that shares this one's memory, on a stack of
/// `stack_bytes` of its own, and returns its pid once it has called `execve` or exited: this
/// thread is suspended until then (`CLONE_VM | CLONE_VFORK`). All signals are blocked in this
/// thread across the clone, so the child starts with every signal blocked and no handler of
/// the mom's can run on its stack. The child is not reaped here.
///
/// # Safety
/// `child` may only make system calls, read `arg` and write its atomics or buffers that this
/// thread owns and does not touch until the call returns: no allocation, no lock, no glibc
/// function that keeps state (see the header).
pub(super) unsafe fn clone_suspended<T>(
    child: extern "C" fn(*mut c_void) -> c_int,
    arg: &T,
    stack_bytes: usize,
) -> io::Result<i32> {
    let mut stack = vec![0u8; stack_bytes];
    // The stack grows down: its top, 16-byte aligned.
    let top = (stack.as_mut_ptr() as usize + stack_bytes) & !15;
    let (mut all, mut previous): (libc::sigset_t, libc::sigset_t) = (std::mem::zeroed(), std::mem::zeroed());
    libc::sigfillset(&mut all);
    libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut previous);
    // With CLONE_VFORK this thread resumes only after the child's execve or exit, so `arg`
    // and the stack outlive the child's use of them.
    let pid = libc::clone(
        child,
        top as *mut c_void,
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        std::ptr::from_ref(arg) as *mut c_void,
    );
    let error = io::Error::last_os_error();
    libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
    drop(stack);
    if pid < 0 {
        return Err(error);
    }
    Ok(pid)
}

/// The child: each step a system call; on failure the errno goes to the parent and the child
/// exits.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Shared`, alive until this process execs or exits.
    let shared = unsafe { &*(arg as *const Shared<'_>) };
    // SAFETY: only system calls on prepared, immutable data.
    let errno = unsafe { steps(shared) };
    shared.error.store(errno.max(1), Ordering::Release);
    // SAFETY: ends this process without running anything of the parent's (no atexit, no
    // stdio flush: those are the mom's).
    unsafe { libc::_exit(127) }
}

/// The steps before `execve`, then `execve`; returns the errno of what failed.
unsafe fn steps(shared: &Shared<'_>) -> i32 {
    let p = shared.prepared;
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL);
    default_signal_actions();
    for fd in &p.cgroup_fds {
        if libc::write(*fd, b"0".as_ptr().cast(), 1) < 0 {
            return errno();
        }
    }
    for (target, fd) in p.stdio.iter().enumerate() {
        if libc::dup2(*fd, target as c_int) < 0 {
            return errno();
        }
    }
    // Nothing the mom has open reaches the shell.
    close_inherited_descriptors();
    if let Some(fd) = p.keep_open {
        if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
            return errno();
        }
    }
    if libc::setsid() < 0 || (p.terminal && libc::ioctl(0, libc::TIOCSCTTY, 0) < 0) {
        return errno();
    }
    // The user's effective uid first: every effective capability goes with it, so `chdir` is
    // the user's. Root stays the real and saved uid until `chdir` is done: a `chdir` on a hung
    // file system can take long, and meanwhile the user may neither stop this process (and with
    // it the mom's thread) nor trace it (it holds the mom's memory).
    if p.identity.as_ref().is_some_and(|identity| identity.assume_effective().is_err()) {
        return errno();
    }
    libc::umask(p.umask);
    if libc::chdir(p.dir.as_ptr()) < 0 {
        let code = errno();
        for part in [&p.chdir_failed[..], (p.chdir_reason)(code).as_bytes(), b"\n"] {
            libc::write(2, part.as_ptr().cast(), part.len());
        }
        return code;
    }
    // The user's in full, not dumpable until `execve`.
    if p.identity.as_ref().is_some_and(|identity| identity.assume_in_full().is_err()) {
        return errno();
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    libc::execve(p.program.as_ptr(), shared.argv.as_ptr(), shared.envp.as_ptr());
    errno()
}

/// Marks every descriptor above stderr close-on-exec, so nothing the mom inherited from
/// whoever started it (a pipe, a root-opened file) reaches the job. Close-on-exec rather than
/// close: the standard library reports exec failures through one of them. For a child before
/// `exec` (`pre_exec`, or [`spawn`]'s child): one system call; without `close_range`, nothing.
pub fn close_inherited_descriptors() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: a plain system call without pointers.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC);
    }
}

/// Every signal the mom catches, and SIGPIPE (which Rust ignores), back to its default action,
/// so no handler of the mom's runs in the child once signals are unblocked.
unsafe fn default_signal_actions() {
    for signal in 1..=libc::SIGRTMAX() {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &mut current) < 0 {
            continue;
        }
        let caught = current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
        if caught || signal == libc::SIGPIPE {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &default, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn no_reason(_: i32) -> &'static str {
        "cannot enter"
    }

    /// `sh -c script` in `dir`, its stdout and stderr to files of `tmp`; returns the spawn's
    /// result, then the two files' text once it ended.
    fn run(tmp: &std::path::Path, program: &str, script: &str, dir: &str) -> (io::Result<i32>, String, String) {
        run_as(tmp, program, script, dir, None)
    }

    fn run_as(
        tmp: &std::path::Path,
        program: &str,
        script: &str,
        dir: &str,
        identity: Option<Identity>,
    ) -> (io::Result<i32>, String, String) {
        let stdin = std::fs::File::open("/dev/null").unwrap();
        let (out, err) = (tmp.join("out"), tmp.join("err"));
        let (stdout, stderr) = (std::fs::File::create(&out).unwrap(), std::fs::File::create(&err).unwrap());
        let prepared = Prepared {
            program: CString::new(program).unwrap(),
            argv: ["sh", "-c", script].iter().map(|a| CString::new(*a).unwrap()).collect(),
            envp: vec![CString::new("GREETING=hello").unwrap()],
            stdio: [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()],
            keep_open: None,
            cgroup_fds: Vec::new(),
            terminal: false,
            identity,
            umask: 0o027,
            dir: CString::new(dir).unwrap(),
            chdir_failed: b"PBS: chdir failed: ".to_vec(),
            chdir_reason: no_reason,
        };
        let spawned = spawn(&prepared);
        if let Ok(pid) = spawned {
            let mut status = 0;
            // SAFETY: waits for the child just started.
            assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        }
        (spawned, std::fs::read_to_string(out).unwrap(), std::fs::read_to_string(err).unwrap())
    }

    #[test]
    fn the_child_runs_in_its_session_directory_environment_and_umask() {
        let tmp = tempfile::tempdir().unwrap();
        let script = "echo $GREETING; pwd; umask; ps -o sid= -p $$ | tr -d ' '; echo $$";
        let (spawned, out, _) = run(tmp.path(), "/bin/sh", script, "/usr");
        let pid = spawned.unwrap();
        assert_eq!(out, format!("hello\n/usr\n0027\n{pid}\n{pid}\n"), "a session of its own, led by the shell");
    }

    #[test]
    fn the_child_starts_with_default_signal_actions_and_nothing_blocked() {
        let tmp = tempfile::tempdir().unwrap();
        let (spawned, out, _) = run(tmp.path(), "/bin/sh", "grep -E '^Sig(Blk|Ign)' /proc/self/status", "/");
        spawned.unwrap();
        let field = |name: &str| {
            let line = out.lines().find(|line| line.starts_with(name)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        assert_eq!(field("SigBlk:"), 0, "{out}");
        assert_eq!(field("SigIgn:") & (1 << (libc::SIGPIPE - 1)), 0, "SIGPIPE is not ignored: {out}");
    }

    #[test]
    fn a_directory_that_cannot_be_entered_fails_the_spawn_and_says_why() {
        let tmp = tempfile::tempdir().unwrap();
        let (spawned, out, err) = run(tmp.path(), "/bin/sh", "echo ran", "/no/such/dir");
        assert_eq!(spawned.unwrap_err().raw_os_error(), Some(libc::ENOENT));
        assert_eq!((out.as_str(), err.as_str()), ("", "PBS: chdir failed: cannot enter\n"));
    }

    /// The shell is the user's in full (all four uids and gids, no capability left), and its
    /// start directory was entered with the user's rights, not root's.
    #[test]
    fn the_child_is_the_user_in_full_and_enters_its_directory_as_the_user() {
        if !crate::test_support::is_root() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let user =
            super::super::user::JobUser { uid: 65534, gid: 65534, groups: vec![65534], ..crate::test_support::alice() };
        let nobody = Some(Identity::of(&user));
        let script = "grep -E '^(Uid|Gid|Groups|CapPrm|CapEff|CapAmb):' /proc/self/status";
        let (spawned, out, _) = run_as(tmp.path(), "/bin/sh", script, "/", nobody.clone());
        spawned.unwrap();
        let fields: Vec<String> =
            out.lines().map(|line| line.split_whitespace().collect::<Vec<_>>().join(" ")).collect();
        assert_eq!(
            fields,
            [
                "Uid: 65534 65534 65534 65534",
                "Gid: 65534 65534 65534 65534",
                "Groups: 65534",
                "CapPrm: 0000000000000000",
                "CapEff: 0000000000000000",
                "CapAmb: 0000000000000000"
            ],
            "{out}"
        );
        // A directory of root's that others may not enter.
        let private_dir = tmp.path().join("private");
        std::fs::create_dir(&private_dir).unwrap();
        std::fs::set_permissions(&private_dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let private = private_dir.to_str().unwrap();
        let (spawned, out, err) = run_as(tmp.path(), "/bin/sh", "echo ran", private, nobody);
        assert_eq!(spawned.unwrap_err().raw_os_error(), Some(libc::EACCES));
        assert_eq!((out.as_str(), err.as_str()), ("", "PBS: chdir failed: cannot enter\n"));
    }

    #[test]
    fn a_missing_program_fails_the_spawn() {
        let tmp = tempfile::tempdir().unwrap();
        let (spawned, _, _) = run(tmp.path(), "/no/such/shell", "true", "/");
        assert_eq!(spawned.unwrap_err().raw_os_error(), Some(libc::ENOENT));
    }
}
