//! What one peer, or many, may cost the server: a cap on connections held at once (the excess
//! is closed at once), and warnings about refused connections, garbled frames and refused
//! credentials that are rate-limited, so a flood can exhaust neither the server nor its log. The time and memory
//! bounds of each connection are the frame reader's ([`proto::frame::Limits`]) plus the hello
//! and idle timeouts of the connection code.
//!
//! Must not know: transports, message types, state.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, SemaphorePermit};

/// Connections held at once, at most (lower when the file descriptor limit is).
pub const MAX_CONNECTIONS: usize = 1024;

/// Descriptors kept for the server's own files (database, logs, accounting, mail pipes).
const SPARE_FDS: u64 = 128;

/// At most one warning of a kind per this long; the others are counted.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// A held connection slot; dropping it frees the slot.
pub type Slot = SemaphorePermit<'static>;

/// Takes a slot for a new connection, or `None` at the limit: the caller closes the connection.
pub fn admit() -> Option<Slot> {
    let slots = connection_slots();
    match slots.try_acquire() {
        Ok(slot) => Some(slot),
        Err(_) => {
            REFUSED.warn(|more| {
                tracing::warn!(limit = max_connections(), more, "too many connections; new connection closed")
            });
            None
        }
    }
}

/// Logs (rate-limited) a connection dropped for a frame it could not read; `peer` names it.
pub fn bad_frame(peer: &str, stage: &str, error: &dyn std::fmt::Display) {
    GARBLED.warn(|more| tracing::warn!(peer, stage, %error, more, "unreadable frame; connection dropped"));
}

/// The connection cap: [`MAX_CONNECTIONS`], or fewer when the descriptor limit (raised to its
/// hard limit first) leaves less room.
pub fn max_connections() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| {
        let fds = raise_fd_limit();
        MAX_CONNECTIONS.min(fds.saturating_sub(SPARE_FDS).max(16) as usize)
    })
}

fn connection_slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(max_connections()))
}

/// Raises the soft descriptor limit to the hard one; returns the soft limit in force.
fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 1024;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    limit.rlim_cur
}

/// Logs (rate-limited, in bursts: an attack's first refusals each get their line, with the
/// peer) a message refused for its credential: replayed, forged, another key, another uid.
pub fn refused_credential(peer: &str, error: &dyn std::fmt::Display) {
    CREDENTIALS.warn(|more| {
        if more > 0 {
            tracing::warn!("refused a message from {peer}: {error}; connection closed ({more} more not logged)")
        } else {
            tracing::warn!("refused a message from {peer}: {error}; connection closed")
        }
    });
}

static REFUSED: RateLimited = RateLimited::new(1);
static GARBLED: RateLimited = RateLimited::new(1);
static CREDENTIALS: RateLimited = RateLimited::new(CREDENTIAL_BURST);

/// Credential refusals logged per [`WARN_EVERY`] before the rest are only counted.
const CREDENTIAL_BURST: u64 = 50;

/// One kind of warning, logged at most `burst` times per [`WARN_EVERY`].
struct RateLimited {
    /// The current window's start and the warnings logged in it.
    window: Mutex<Option<(Instant, u64)>>,
    burst: u64,
    suppressed: AtomicU64,
}

impl RateLimited {
    const fn new(burst: u64) -> RateLimited {
        RateLimited { window: Mutex::new(None), burst, suppressed: AtomicU64::new(0) }
    }

    /// Calls `log` with the number of warnings suppressed since the last one, or counts this one.
    fn warn(&self, log: impl FnOnce(u64)) {
        if self.due(Instant::now()) {
            log(self.suppressed.swap(0, Ordering::Relaxed));
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn due(&self, now: Instant) -> bool {
        let mut window = self.window.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *window {
            Some((start, logged)) if now.duration_since(*start) < WARN_EVERY => {
                *logged += 1;
                *logged <= self.burst
            }
            _ => {
                *window = Some((now, 1));
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_rate_limited_and_count_what_they_skipped() {
        let limited = RateLimited::new(1);
        let mut logged = Vec::new();
        for _ in 0..5 {
            limited.warn(|more| logged.push(more));
        }
        assert_eq!(logged, vec![0]);
        *limited.window.lock().unwrap() = Some((Instant::now() - WARN_EVERY, 1));
        limited.warn(|more| logged.push(more));
        assert_eq!(logged, vec![0, 4]);
        let bursty = RateLimited::new(3);
        let mut logged = Vec::new();
        for _ in 0..5 {
            bursty.warn(|more| logged.push(more));
        }
        assert_eq!(logged, vec![0, 0, 0], "three per window, the rest counted");
    }

    #[test]
    fn the_cap_fits_the_descriptor_limit() {
        assert!((16..=MAX_CONNECTIONS).contains(&max_connections()));
        assert!(admit().is_some());
    }
}
