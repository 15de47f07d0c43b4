//! A root mom's copy of a spool file to its destination **as the user**, in a child that runs
//! no program: started as vfork.rs starts a job's shell (`clone(CLONE_VM | CLONE_VFORK)`, the
//! mom's thread suspended until the child exits), it takes the user's supplementary groups,
//! gid and uid (raw system calls: this process alone changes), opens the destination and
//! copies, then exits. Before, each delivered file ran `sh`, `timeout`, `sh` and `cat` (two
//! forks of the mom's size and four `exec`s): most of what a job cost a root mom.
//!
//! The rules are the ones that script kept:
//! - the kernel checks every path component, symbolic link and permission of the destination
//!   against the user: the child has the user's identity, the mom's threads keep root's;
//! - a destination that is a directory (as the user sees it) gets the file under its name;
//! - a destination that exists and is neither a regular file nor a character device is
//!   refused: it is opened non-blocking (a FIFO or a terminal cannot hold the open), checked
//!   with `fstat`, and only then emptied;
//! - a new file is created `0666` under the job's umask and owned by the user;
//! - [`COPY_SECONDS`] bounds the whole copy: the child's `SIGALRM` (default action, the one
//!   signal unblocked in it) ends it, as `timeout` did.
//!
//! The child shares the mom's memory, so it only makes system calls on what [`copy`] prepared
//! (C strings, the identity, the source descriptor) and writes nothing but its stack and the
//! atomics of [`Shared`]. Error texts are made in the parent, from the step and errno. It takes
//! the user's effective uid (with every capability dropped, so the kernel checks the user's
//! rights) but keeps root as its real and saved uid: the user can neither signal it (a
//! `SIGSTOP` held the mom's thread for ever, past any timeout, when the copy was the user's
//! own `cat`) nor trace it or read its memory, which is the mom's, whatever
//! `fs.suid_dumpable` says.
//!
//! Owns: [`copy`]. Must not: open anything as root, or allocate, lock or format in the child.

use super::identity::Identity;
use nix::errno::Errno;
use std::ffi::{c_int, c_void, CString};
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

/// How long one copy may take, the open included (what `timeout 300` gave before).
pub const COPY_SECONDS: u32 = 300;

/// The child's stack: a copy buffer for the rare fallback from `sendfile`, and little else.
const STACK_BYTES: usize = 128 * 1024;

/// Bytes per `sendfile` call (Linux moves at most about 2 GiB per call anyway).
const SENDFILE_CHUNK: usize = 1 << 30;

/// The step the child failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Step {
    Identity = 1,
    Open,
    NotRegular,
    Empty,
    Write,
}

/// What the child reads and writes.
struct Shared {
    identity: Identity,
    umask: libc::mode_t,
    source: RawFd,
    dest: CString,
    in_dir: CString,
    seconds: u32,
    /// The [`Step`] that failed (0: none) and its errno.
    step: AtomicU8,
    errno: AtomicI32,
    /// Whether the file was `in_dir` (the destination is a directory).
    used_in_dir: AtomicBool,
}

/// Why a copy failed, in words for the user's mail and the job's comment.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CopyError(pub String);

/// Copies `source` (from its start) to `dest`, or to `dest/file_name` when `dest` is a
/// directory, as `identity`, new files under `umask`; waits for the child.
pub fn copy(source: &File, dest: &Path, file_name: &str, identity: &Identity, umask: u32) -> Result<(), CopyError> {
    copy_within(source, dest, file_name, identity, umask, COPY_SECONDS)
}

fn copy_within(
    source: &File,
    dest: &Path,
    file_name: &str,
    identity: &Identity,
    umask: u32,
    seconds: u32,
) -> Result<(), CopyError> {
    let c_path = |path: &Path| {
        CString::new(path.as_os_str().as_bytes())
            .map_err(|_| CopyError(format!("{}: a NUL byte in the path", path.display())))
    };
    let in_dir_path = dest.join(file_name);
    let shared = Shared {
        identity: identity.clone(),
        umask: umask as libc::mode_t,
        source: source.as_raw_fd(),
        dest: c_path(dest)?,
        in_dir: c_path(&in_dir_path)?,
        seconds,
        step: AtomicU8::new(0),
        errno: AtomicI32::new(0),
        used_in_dir: AtomicBool::new(false),
    };
    // SAFETY: `child` only makes system calls on `shared` (see the header); `shared` and
    // `groups` outlive the child, which has exited when this returns.
    let pid = unsafe { super::vfork::clone_suspended(child, &shared, STACK_BYTES) }
        .map_err(|err| CopyError(format!("cannot start the copy: {err}")))?;
    let mut status = 0;
    // SAFETY: reaps our own child, which has exited (CLONE_VFORK) or is about to.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 && Errno::last() == Errno::EINTR {}
    let target: &Path = if shared.used_in_dir.load(Ordering::Acquire) { &in_dir_path } else { dest };
    let shown = target.display();
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        return Err(CopyError(if signal == libc::SIGALRM {
            format!("copy to {shown} timed out after {seconds} seconds")
        } else {
            format!("copy to {shown} ended by signal {signal}")
        }));
    }
    let reason = || Errno::from_raw(shared.errno.load(Ordering::Acquire)).desc();
    match shared.step.load(Ordering::Acquire) {
        0 => Ok(()),
        step if step == Step::Identity as u8 => {
            Err(CopyError(format!("cannot take the user's identity: {}", reason())))
        }
        step if step == Step::Open as u8 => Err(CopyError(format!("cannot create {shown}: {}", reason()))),
        step if step == Step::NotRegular as u8 => Err(CopyError(format!("{shown}: not a regular file"))),
        step if step == Step::Empty as u8 => Err(CopyError(format!("cannot empty {shown}: {}", reason()))),
        _ => Err(CopyError(format!("cannot write {shown}: {}", reason()))),
    }
}

/// The child: the steps, then `_exit` (the result is in `Shared`).
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the parent's `Shared`, alive until this process exits.
    let shared = unsafe { &*(arg as *const Shared) };
    // SAFETY: only system calls on prepared data.
    if let Err((step, errno)) = unsafe { steps(shared) } {
        shared.errno.store(errno, Ordering::Release);
        shared.step.store(step as u8, Ordering::Release);
    }
    // SAFETY: ends this process without running anything of the mom's (no atexit, no flush).
    unsafe { libc::_exit(0) }
}

unsafe fn steps(s: &Shared) -> Result<(), (Step, i32)> {
    let errno = || Errno::last_raw();
    // The timeout: SIGALRM at its default action (end the process), the one signal unblocked.
    let mut default: libc::sigaction = std::mem::zeroed();
    default.sa_sigaction = libc::SIG_DFL;
    libc::sigaction(libc::SIGALRM, &default, std::ptr::null_mut());
    let mut alarm: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut alarm);
    libc::sigaddset(&mut alarm, libc::SIGALRM);
    libc::pthread_sigmask(libc::SIG_UNBLOCK, &alarm, std::ptr::null_mut());
    libc::alarm(s.seconds);
    // The effective uid only (every capability dropped, each check the user's); the real and
    // saved uids stay root's: no process of the user's may signal this one (a SIGSTOP would
    // hold the mom's thread past the alarm) or trace it (it holds the mom's memory).
    if s.identity.assume_effective().is_err() {
        return Err((Step::Identity, errno()));
    }
    libc::umask(s.umask);
    let mut stat: libc::stat = std::mem::zeroed();
    let is_dir = libc::stat(s.dest.as_ptr(), &mut stat) == 0 && stat.st_mode & libc::S_IFMT == libc::S_IFDIR;
    let target = if is_dir { &s.in_dir } else { &s.dest };
    s.used_in_dir.store(is_dir, Ordering::Release);
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    let fd = libc::open(target.as_ptr(), flags, 0o666 as libc::c_uint);
    if fd < 0 {
        // ENXIO: a FIFO nobody reads, a socket or a device without its driver.
        let errno = errno();
        return Err((if errno == libc::ENXIO { Step::NotRegular } else { Step::Open }, errno));
    }
    if libc::fstat(fd, &mut stat) < 0 {
        return Err((Step::Open, errno()));
    }
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG => {
            if libc::ftruncate(fd, 0) < 0 {
                return Err((Step::Empty, errno()));
            }
        }
        libc::S_IFCHR => {}
        _ => return Err((Step::NotRegular, 0)),
    }
    // Written as `cat` wrote, blocking (a character device such as a terminal).
    libc::fcntl(fd, libc::F_SETFL, 0);
    send(s.source, fd).map_err(|errno| (Step::Write, errno))?;
    // A network file system reports a failed write at the latest here.
    if libc::close(fd) < 0 {
        return Err((Step::Write, errno()));
    }
    Ok(())
}

/// Copies `source` from offset 0 to `fd`: `sendfile`, or `read` and `write` through a buffer
/// on the child's stack where `sendfile` cannot (an output it does not support).
unsafe fn send(source: RawFd, fd: RawFd) -> Result<(), i32> {
    let mut offset: libc::off_t = 0;
    loop {
        match libc::sendfile(fd, source, &mut offset, SENDFILE_CHUNK) {
            0 => return Ok(()),
            n if n > 0 => {}
            _ if Errno::last() == Errno::EINTR => {}
            _ if offset == 0 && matches!(Errno::last(), Errno::EINVAL | Errno::ENOSYS) => break,
            _ => return Err(Errno::last_raw()),
        }
    }
    let mut buffer = [0u8; 32 * 1024];
    loop {
        let read = libc::pread(source, buffer.as_mut_ptr().cast(), buffer.len(), offset);
        if read == 0 {
            return Ok(());
        }
        if read < 0 {
            if Errno::last() == Errno::EINTR {
                continue;
            }
            return Err(Errno::last_raw());
        }
        let mut written = 0;
        while written < read as usize {
            let n = libc::write(fd, buffer[written..].as_ptr().cast(), read as usize - written);
            if n < 0 {
                if Errno::last() == Errno::EINTR {
                    continue;
                }
                return Err(Errno::last_raw());
            }
            if n == 0 {
                return Err(libc::EIO);
            }
            written += n as usize;
        }
        offset += read as libc::off_t;
    }
}

#[cfg(test)]
#[path = "deliver_child_tests.rs"]
mod tests;
