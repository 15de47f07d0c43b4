//! What one peer, or many, may cost the server: caps on the connections held at once, and
//! warnings about refused connections, garbled frames and refused credentials that are
//! rate-limited, so a flood can exhaust neither the server nor its log. The time and memory
//! bounds of each connection are the frame reader's ([`proto::frame::Limits`]) plus the hello,
//! idle and write timeouts of the connection code.
//!
//! Connections are counted in three pools ([`Caps`]), so no kind of peer can starve another:
//! - *pending*, from accept until the handshake is done (`listener.rs`: 2 s at most): at most
//!   [`MAX_PENDING`], and [`PENDING_PER_PEER`] from one peer ([`PeerKey`]: a TCP address, or on
//!   the Unix socket the uid the kernel reports, `SO_PEERCRED`, except root's and the server's
//!   own, which local moms and admins use); the excess is closed at once;
//! - *clients*, authenticated commands: at most [`MAX_CONNECTIONS`], [`CONNECTIONS_PER_UID`]
//!   of one uid (the credential's); the excess is refused with a message;
//! - *moms*, registered by root or the server's uid: their own [`MAX_MOMS`], which commands
//!   cannot take, so a mom can always come back.
//!
//! Must not know: transports, message types, state.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Authenticated command connections held at once, at most (lower when the file descriptor
/// limit is).
pub const MAX_CONNECTIONS: usize = 1024;

/// Authenticated command connections of one uid held at once.
pub const CONNECTIONS_PER_UID: usize = 128;

/// Connections before their handshake, at once.
pub const MAX_PENDING: usize = 1024;

/// Connections before their handshake from one peer (address or local uid), at once.
pub const PENDING_PER_PEER: usize = 128;

/// Mom connections held at once (beside the commands').
pub const MAX_MOMS: usize = 1024;

/// Descriptors kept for the server's own files (database, logs, accounting, mail pipes).
const SPARE_FDS: u64 = 128;

/// At most one warning of a kind per this long; the others are counted.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// Who a connection comes from before it is authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerKey {
    /// A TCP peer's address.
    Addr(IpAddr),
    /// A Unix-socket peer's uid (`SO_PEERCRED`).
    Uid(u32),
}

impl std::fmt::Display for PeerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerKey::Addr(addr) => write!(f, "{addr}"),
            PeerKey::Uid(uid) => write!(f, "uid {uid} on the local socket"),
        }
    }
}

/// A held connection slot; dropping it frees the slot (and its share of its peer's cap).
#[derive(Debug)]
pub struct Slot {
    _global: OwnedSemaphorePermit,
    _peer: Option<PeerShare>,
}

/// One connection counted against a peer's cap; dropping it uncounts it.
#[derive(Debug)]
struct PeerShare {
    counts: Arc<Mutex<HashMap<PeerKey, usize>>>,
    key: PeerKey,
}

impl Drop for PeerShare {
    fn drop(&mut self) {
        // Recovered, not fatal: the counts cannot be half-changed (each change is one entry's
        // increment or removal), and this runs while unwinding too.
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = counts.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// A pool of slots with a cap per peer.
#[derive(Debug)]
struct Pool {
    slots: Arc<Semaphore>,
    size: usize,
    per_peer: usize,
    counts: Arc<Mutex<HashMap<PeerKey, usize>>>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("too many connections ({0} at most)")]
    Full(usize),
    #[error("too many connections from {0} ({1} at most)")]
    Peer(PeerKey, usize),
}

impl Pool {
    fn new(size: usize, per_peer: usize) -> Pool {
        Pool { slots: Arc::new(Semaphore::new(size)), size, per_peer, counts: Arc::default() }
    }

    fn take(&self, key: Option<PeerKey>) -> Result<Slot, Refused> {
        let share = match key {
            Some(key) => {
                // Recovered: pure counters (see `PeerShare::drop`).
                let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
                let count = counts.entry(key).or_insert(0);
                if *count >= self.per_peer {
                    return Err(Refused::Peer(key, self.per_peer));
                }
                *count += 1;
                Some(PeerShare { counts: self.counts.clone(), key })
            }
            None => None,
        };
        // On a full pool the share is dropped here, uncounting it.
        let global = self.slots.clone().try_acquire_owned().map_err(|_| Refused::Full(self.size))?;
        Ok(Slot { _global: global, _peer: share })
    }
}

/// The server's connection pools.
#[derive(Debug)]
pub struct Caps {
    pending: Pool,
    clients: Pool,
    moms: Pool,
}

impl Caps {
    /// Pools of the given sizes (one peer may take `per_peer` pending and `per_uid` client
    /// slots).
    pub fn new(pending: usize, per_peer: usize, clients: usize, per_uid: usize, moms: usize) -> Caps {
        Caps {
            pending: Pool::new(pending, per_peer),
            clients: Pool::new(clients, per_uid),
            moms: Pool::new(moms, moms),
        }
    }

    /// A slot for a new connection from `peer` (`None`: a peer not charged per peer) until its
    /// handshake is done.
    pub fn pending(&self, peer: Option<PeerKey>) -> Result<Slot, Refused> {
        self.pending.take(peer)
    }

    /// A slot for an authenticated command connection of `uid`.
    pub fn client(&self, uid: u32) -> Result<Slot, Refused> {
        self.clients.take(Some(PeerKey::Uid(uid)))
    }

    /// A slot for a mom's connection.
    pub fn mom(&self) -> Result<Slot, Refused> {
        self.moms.take(None)
    }
}

/// The server's pools: the constants above, shrunk to fit the descriptor limit (raised to its
/// hard limit first).
pub fn caps() -> &'static Caps {
    static CAPS: OnceLock<Caps> = OnceLock::new();
    CAPS.get_or_init(|| {
        let fds = raise_fd_limit().saturating_sub(SPARE_FDS).max(48) as usize;
        let share = |max: usize| max.min(fds / 3);
        Caps::new(
            share(MAX_PENDING),
            PENDING_PER_PEER.min(share(MAX_PENDING)),
            share(MAX_CONNECTIONS),
            CONNECTIONS_PER_UID.min(share(MAX_CONNECTIONS)),
            share(MAX_MOMS),
        )
    })
}

/// Takes a pending slot for a new connection from `peer` (`None`: root or the server's own uid
/// on the Unix socket, charged to no peer), or `None` (logged, rate-limited): the caller closes
/// the connection.
pub fn admit(peer: Option<PeerKey>) -> Option<Slot> {
    match caps().pending(peer) {
        Ok(slot) => Some(slot),
        Err(refused) => {
            REFUSED.warn(|more| tracing::warn!(more, "{refused}; new connection closed"));
            None
        }
    }
}

/// Takes the slot of an authenticated connection (a mom's or a command's of `uid`); the
/// refusal names the limit (and is logged, rate-limited).
pub fn admit_authenticated(mom: bool, uid: u32) -> Result<Slot, Refused> {
    let slot = if mom { caps().mom() } else { caps().client(uid) };
    if let Err(refused) = &slot {
        REFUSED.warn(|more| tracing::warn!(more, "{refused}; connection refused"));
    }
    slot
}

/// Logs (rate-limited) a connection dropped for a frame it could not read; `peer` names it.
pub fn bad_frame(peer: &str, stage: &str, error: &dyn std::fmt::Display) {
    GARBLED.warn(|more| tracing::warn!(peer, stage, %error, more, "unreadable frame; connection dropped"));
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
        // Recovered: a rate limit's window and count, which at worst log one line too many.
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
    fn one_peer_cannot_take_every_slot_and_moms_have_their_own() {
        let caps = Caps::new(4, 2, 3, 2, 1);
        let local = PeerKey::Uid(1000);
        let remote = PeerKey::Addr("10.0.0.9".parse().unwrap());
        let first = caps.pending(Some(local)).unwrap();
        let _second = caps.pending(Some(local)).unwrap();
        assert_eq!(caps.pending(Some(local)).unwrap_err(), Refused::Peer(local, 2));
        let _third = caps.pending(Some(remote)).unwrap();
        let _fourth = caps.pending(Some(PeerKey::Uid(1001))).unwrap();
        assert_eq!(caps.pending(Some(PeerKey::Uid(1002))).unwrap_err(), Refused::Full(4));
        drop(first);
        let _again = caps.pending(Some(local)).unwrap();

        let _clients = [caps.client(1000).unwrap(), caps.client(1000).unwrap()];
        assert_eq!(caps.client(1000).unwrap_err(), Refused::Peer(PeerKey::Uid(1000), 2));
        let _other = caps.client(0).unwrap();
        assert_eq!(caps.client(1).unwrap_err(), Refused::Full(3));
        let mom = caps.mom().unwrap();
        assert_eq!(caps.mom().unwrap_err(), Refused::Full(1));
        drop(mom);
        assert!(caps.mom().is_ok(), "the commands' pool being full keeps no mom out");
        assert_eq!(caps.pending.counts.lock().unwrap().len(), 3, "one entry per peer holding a slot");
    }

    #[test]
    fn the_caps_fit_the_descriptor_limit() {
        let caps = caps();
        assert!((16..=MAX_CONNECTIONS).contains(&caps.clients.size));
        assert!(caps.pending.per_peer <= caps.pending.size);
        assert!(admit(Some(PeerKey::Uid(4242))).is_some());
        assert!(admit(None).is_some());
    }
}
