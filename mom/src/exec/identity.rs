//! [`Identity`]: a job user's uid, gid and groups, taken by a child of the mom before
//! `execve` in two steps (the effective uid, then the rest), with raw system calls on data
//! prepared before the child started, so that the clone children of vfork.rs and
//! deliver_child.rs may take it too (glibc's wrappers would change every thread of the mom).
//!
//! Owns: the order of the identity changes. Must not: look users up (user.rs does).

use super::user::JobUser;
use std::io;

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
}
