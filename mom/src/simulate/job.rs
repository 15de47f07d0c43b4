//! One simulated job: no process, no file, only a clock. It "works" for the time its script
//! says (`script.rs`) and ends with exit 0; its walltime limit ends it earlier, as a real mom's
//! would (`JOB_EXEC_KILL_WALLTIME`); the daemon's requests act as on a real job whose script is
//! a `sleep`: a kill (qdel) ends it as SIGTERM ends `sleep` (271), a rerun with
//! `JOB_EXEC_RERUN`, a terminating signal with 256 + its number, suspend/resume stop and
//! continue both its work and its walltime clock, a new walltime limit applies at once.
//!
//! Owns: the life of one simulated job ([`run`]). Must not: fork, signal, or touch a file.

use crate::exec::clock::WalltimeClock;
use crate::exec::KillRequest;
use proto::exit_status::{JOB_EXEC_KILL_WALLTIME, JOB_EXEC_RERUN};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How a simulated job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimEnd {
    /// What its obit says (0: its work was done).
    pub exit_status: i32,
    /// The walltime it used, suspended time excluded.
    pub walltime: Duration,
}

/// Runs one simulated job that works for `work` under walltime limit `walltime` (seconds),
/// obeying `requests` until it ends. A closed request channel (the node is going) kills it.
pub async fn run(work: Duration, walltime: Option<u64>, mut requests: mpsc::UnboundedReceiver<KillRequest>) -> SimEnd {
    let mut clock = WalltimeClock::new(Instant::now(), walltime);
    let mut suspended = false;
    loop {
        let now = Instant::now();
        let left = work.saturating_sub(clock.used(now));
        if left.is_zero() {
            return SimEnd { exit_status: 0, walltime: clock.used(now) };
        }
        let done_at = (!suspended).then(|| now + left);
        let limit_at = clock.deadline();
        tokio::select! {
            biased;
            request = requests.recv() => {
                let now = Instant::now();
                let status = match request {
                    None => Some(SIGTERMED),
                    Some(request) => on_request(&mut clock, &mut suspended, request, now),
                };
                if let Some(exit_status) = status {
                    return SimEnd { exit_status, walltime: clock.used(now) };
                }
            }
            () = sleep_until(done_at) => {}
            () = tokio::time::sleep_until(limit_at) => {
                let now = Instant::now();
                if work > clock.used(now) && clock.deadline() <= now {
                    return SimEnd { exit_status: JOB_EXEC_KILL_WALLTIME, walltime: clock.used(now) };
                }
            }
        }
    }
}

/// How `sleep` ends on SIGTERM, the signal a kill starts with (256 + 15).
pub const SIGTERMED: i32 = 256 + libc::SIGTERM;

/// Applies one request at `now`; `Some(status)` when it ends the job.
fn on_request(clock: &mut WalltimeClock, suspended: &mut bool, request: KillRequest, now: Instant) -> Option<i32> {
    match request {
        KillRequest::Kill => Some(SIGTERMED),
        KillRequest::Rerun => Some(JOB_EXEC_RERUN),
        KillRequest::Walltime(limit) => {
            clock.limit = limit;
            None
        }
        KillRequest::Signal { number, suspend } => match number {
            libc::SIGSTOP | libc::SIGTSTP if suspend => {
                clock.pause(now);
                *suspended = true;
                None
            }
            libc::SIGCONT if suspend => {
                clock.resume(now);
                *suspended = false;
                None
            }
            // What `sleep` ignores or survives (a plain STOP/CONT only pauses a real one).
            0 | libc::SIGSTOP | libc::SIGTSTP | libc::SIGCONT | libc::SIGCHLD | libc::SIGURG | libc::SIGWINCH => None,
            _ => Some(256 + number),
        },
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(
        work: u64,
        walltime: Option<u64>,
    ) -> (mpsc::UnboundedSender<KillRequest>, tokio::task::JoinHandle<SimEnd>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (sender, tokio::spawn(run(Duration::from_secs(work), walltime, receiver)))
    }

    #[tokio::test(start_paused = true)]
    async fn works_for_its_time_and_ends_with_zero() {
        let (_requests, job) = start(30, Some(60));
        let end = job.await.unwrap();
        assert_eq!(end, SimEnd { exit_status: 0, walltime: Duration::from_secs(30) });
    }

    #[tokio::test(start_paused = true)]
    async fn the_walltime_limit_ends_it_first() {
        let (_requests, job) = start(30, Some(10));
        let end = job.await.unwrap();
        assert_eq!(end, SimEnd { exit_status: JOB_EXEC_KILL_WALLTIME, walltime: Duration::from_secs(10) });
        let (_requests, job) = start(10, Some(10));
        assert_eq!(job.await.unwrap().exit_status, 0, "work done exactly at the limit is done");
    }

    #[tokio::test(start_paused = true)]
    async fn a_kill_ends_it_early() {
        let (requests, job) = start(30, None);
        tokio::time::sleep(Duration::from_secs(5)).await;
        requests.send(KillRequest::Kill).unwrap();
        let end = job.await.unwrap();
        assert_eq!(end, SimEnd { exit_status: SIGTERMED, walltime: Duration::from_secs(5) });
        let (requests, job) = start(30, None);
        requests.send(KillRequest::Rerun).unwrap();
        assert_eq!(job.await.unwrap().exit_status, JOB_EXEC_RERUN);
        let (requests, job) = start(30, None);
        requests.send(KillRequest::Signal { number: libc::SIGUSR1, suspend: false }).unwrap();
        assert_eq!(job.await.unwrap().exit_status, 256 + libc::SIGUSR1);
    }

    #[tokio::test(start_paused = true)]
    async fn suspended_time_counts_for_neither_work_nor_walltime() {
        let (requests, job) = start(10, Some(12));
        tokio::time::sleep(Duration::from_secs(4)).await;
        requests.send(KillRequest::Signal { number: libc::SIGSTOP, suspend: true }).unwrap();
        tokio::time::sleep(Duration::from_secs(100)).await;
        assert!(!job.is_finished(), "a suspended job does not end");
        requests.send(KillRequest::Signal { number: libc::SIGCONT, suspend: true }).unwrap();
        let started = Instant::now();
        let end = job.await.unwrap();
        assert_eq!(end, SimEnd { exit_status: 0, walltime: Duration::from_secs(10) });
        assert_eq!(Instant::now() - started, Duration::from_secs(6));
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_walltime_applies_at_once() {
        let (requests, job) = start(30, None);
        tokio::time::sleep(Duration::from_secs(5)).await;
        requests.send(KillRequest::Walltime(Some(8))).unwrap();
        let end = job.await.unwrap();
        assert_eq!(end, SimEnd { exit_status: JOB_EXEC_KILL_WALLTIME, walltime: Duration::from_secs(8) });
    }
}
