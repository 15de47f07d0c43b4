//! How a command's process starts and ends: the C `main` of every binary in `src/bin/`
//! ([`command_main!`]), in place of std's runtime entry. Std's entry also asks glibc for the
//! main thread's stack bounds (to name its guard page in a stack-overflow message), which reads
//! all of `/proc/self/maps`: a measurable share of a short command such as `qsub`. What the
//! entry does that the commands rely on is done here: the standard descriptors are open (a
//! closed one becomes `/dev/null`, so a socket never lands on fd 1), SIGPIPE is ignored (a
//! closed socket or pipe is an `EPIPE` error), a panic exits with 101, and stdout is flushed
//! at the end. `std::env::args` needs nothing: glibc hands std the arguments before `main`.
//! Not kept, seen only on a bug: a stack overflow is a plain SIGSEGV (no `has overflowed its
//! stack` line), a panic message names the thread `<unnamed>` (not `main`) and a
//! `RUST_BACKTRACE=1` trace shows the frames below the command's `main` too.

use std::ffi::c_int;
use std::io::Write;
use std::process::ExitCode;

/// Defines the C `main` of a command binary, which runs `$main` (a `fn() -> ExitCode`, or a
/// closure calling one) through [`run`]. The binary's crate must say
/// `#![cfg_attr(not(test), no_main)]`: its test build (`cargo test` builds every binary's, with
/// no tests) keeps the test harness's `main`.
#[macro_export]
macro_rules! command_main {
    ($main:expr) => {
        /// The process's entry, called by the C runtime: see `client::start`.
        #[cfg(not(test))]
        #[unsafe(no_mangle)]
        pub extern "C" fn main(_argc: ::std::ffi::c_int, _argv: *const *const ::std::ffi::c_char) -> ::std::ffi::c_int {
            $crate::start::run($main)
        }
    };
}

/// Runs a command's `main` as std's entry would, and returns the process's exit status.
pub fn run(main: impl FnOnce() -> ExitCode + std::panic::UnwindSafe) -> c_int {
    open_standard_descriptors();
    // SAFETY: setting a signal's disposition to SIG_IGN, before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let status = std::panic::catch_unwind(main).map_or(PANIC_STATUS, status);
    let _ = std::io::stdout().lock().flush();
    status
}

/// The exit status of a panic that reached `main` (std's).
const PANIC_STATUS: c_int = 101;

/// The number an [`ExitCode`] stands for (std has no stable getter: `ExitCode::exit_process`
/// is unstable, rust-lang/rust#97100); on Unix every code is made from a `u8`.
fn status(code: ExitCode) -> c_int {
    (0..=u8::MAX).find(|&number| ExitCode::from(number) == code).map_or(1, c_int::from)
}

/// Makes sure fds 0, 1 and 2 are open, opening `/dev/null` in place of a closed one (as std's
/// entry does); aborts when that fails, as std does.
fn open_standard_descriptors() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd { fd, events: 0, revents: 0 });
    // SAFETY: `fds` is a valid array of three pollfds; a zero timeout never blocks.
    while unsafe { libc::poll(fds.as_mut_ptr(), 3, 0) } == -1 {
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // poll refused (a tight RLIMIT_NOFILE): ask each descriptor instead.
            for pollfd in &mut fds {
                // SAFETY: F_GETFD only reads the descriptor's flags.
                let closed = unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) } == -1;
                pollfd.revents = if closed { libc::POLLNVAL } else { 0 };
            }
            break;
        }
    }
    for pollfd in fds {
        // SAFETY: opening a constant path; the descriptor is meant to stay open.
        if pollfd.revents & libc::POLLNVAL != 0 && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } == -1 {
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_exit_code_keeps_its_number() {
        for number in 0..=u8::MAX {
            assert_eq!(status(ExitCode::from(number)), c_int::from(number));
        }
        assert_eq!(status(ExitCode::SUCCESS), 0);
        assert_eq!(status(ExitCode::FAILURE), 1);
    }
}
