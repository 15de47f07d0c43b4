//! When a daemon can no longer trust its memory: a panic anywhere in `pbs_server` or `pbs_mom`
//! ends the process, as a failed store commit does, instead of leaving half-changed state
//! behind (a tokio task would otherwise swallow the panic and the daemon go on serving).
//!
//! Owns: [`install_panic_hook`] (the daemons' `main` installs it: the panic is printed and
//! logged, then the process exits with [`EXIT_SOFTWARE`]), and [`lock_or_exit`], which a lock
//! whose data a panic may have left half-changed uses instead of recovering the poison (a
//! library user, such as an in-process test, has no hook: the next locker ends the process).
//! The server's store is the truth: a restarted server recovers from it, a restarted mom ends
//! its leftover jobs and the server reconciles them when it registers.

use std::sync::{Mutex, MutexGuard};

/// The exit status of a daemon that stopped to recover from its store (`EX_SOFTWARE`,
/// sysexits.h): a failed commit, a panic, a poisoned lock.
pub const EXIT_SOFTWARE: i32 = 70;

/// Makes every panic of this process fatal: the standard message (with its location, and a
/// backtrace under `RUST_BACKTRACE`) goes to stderr, an error line to the daemon's log, then
/// the process exits with [`EXIT_SOFTWARE`] before any unwinding can leave a lock poisoned or
/// a task half-done. `daemon` names the process in the log line. For daemons' `main` only:
/// tests keep the default hook (a failed assertion is a panic).
pub fn install_panic_hook(daemon: &'static str) {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default(info);
        let location = info.location().map(|at| at.to_string()).unwrap_or_default();
        let payload = info.payload();
        let message =
            payload.downcast_ref::<&str>().copied().or_else(|| payload.downcast_ref::<String>().map(String::as_str));
        tracing::error!(
            %location,
            message = message.unwrap_or("?"),
            "{daemon} panicked; it exits to recover from its stored state at restart"
        );
        std::process::exit(EXIT_SOFTWARE);
    }));
}

/// Locks `mutex`; if a panic poisoned it (its data may be half-changed), logs and exits with
/// [`EXIT_SOFTWARE`]. `what` names the data in the log line.
pub fn lock_or_exit<'a, T>(mutex: &'a Mutex<T>, what: &str) -> MutexGuard<'a, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(_) => {
            tracing::error!(
                "the {what} lock is poisoned (a panic while it was held); exiting to recover from the stored state"
            );
            std::process::exit(EXIT_SOFTWARE);
        }
    }
}
