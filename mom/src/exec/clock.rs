//! A job's walltime clock: the time it has run, not counting the time it was suspended
//! (`qsig -s suspend` stops it, `resume` continues it; a plain `qsig -s STOP` does not), and
//! the deadline its walltime limit sets.
//!
//! Owns: that arithmetic. Must not: sleep, signal or read the real clock (callers pass `now`).

use std::time::Duration;
use tokio::time::Instant;

/// Limits beyond this are no limit (a far deadline every `Instant` can represent).
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The walltime clock of one running job.
#[derive(Debug, Clone, Copy)]
pub struct WalltimeClock {
    /// When the job started, moved later by every suspension once it ends.
    start: Instant,
    /// Since when the job is suspended, if it is.
    paused_at: Option<Instant>,
    /// The walltime limit in seconds; `None` is no limit.
    pub limit: Option<u64>,
}

impl WalltimeClock {
    /// A clock for a job started at `start` with walltime `limit`.
    pub fn new(start: Instant, limit: Option<u64>) -> WalltimeClock {
        WalltimeClock { start, paused_at: None, limit }
    }

    /// When the limit is reached: far in the future without a limit or while suspended.
    pub fn deadline(&self) -> Instant {
        let far = self.start.checked_add(FAR_FUTURE).unwrap_or(self.start);
        match (self.paused_at, self.limit) {
            (None, Some(limit)) => self.start.checked_add(Duration::from_secs(limit).min(FAR_FUTURE)).unwrap_or(far),
            _ => far,
        }
    }

    /// The job was suspended at `now` (a second suspension changes nothing).
    pub fn pause(&mut self, now: Instant) {
        self.paused_at.get_or_insert(now);
    }

    /// The job was resumed at `now`: the suspended time does not count.
    pub fn resume(&mut self, now: Instant) {
        if let Some(paused_at) = self.paused_at.take() {
            self.start += now.saturating_duration_since(paused_at);
        }
    }

    /// The walltime used up to `now`, suspended time excluded.
    pub fn used(&self, now: Instant) -> Duration {
        self.paused_at.unwrap_or(now).saturating_duration_since(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suspended_time_does_not_count() {
        let start = Instant::now();
        let at = |secs| start + Duration::from_secs(secs);
        let mut clock = WalltimeClock::new(start, Some(10));
        assert_eq!(clock.deadline(), at(10));
        clock.pause(at(4));
        assert!(clock.deadline() > at(1000), "no deadline while suspended");
        assert_eq!(clock.used(at(100)), Duration::from_secs(4));
        clock.resume(at(104));
        assert_eq!(clock.deadline(), at(110));
        assert_eq!(clock.used(at(105)), Duration::from_secs(5));
        clock.resume(at(200));
        assert_eq!(clock.deadline(), at(110), "a resume without a suspension changes nothing");
    }

    #[test]
    fn no_or_enormous_limits_are_far_away() {
        let start = Instant::now();
        assert!(WalltimeClock::new(start, None).deadline() > start + Duration::from_secs(1 << 30));
        assert!(WalltimeClock::new(start, Some(u64::MAX)).deadline() > start + Duration::from_secs(1 << 30));
    }
}
