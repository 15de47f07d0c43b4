//! A running job's supervision: what the daemon may ask of it ([`KillRequest`]) and how each
//! request is carried out (kill, rerun, signal, suspend/resume with the walltime clock, a new
//! walltime limit), and the wait for an interactive job's qsub to hang up. run.rs drives it.
//!
//! Owns: the effect of one request on a running job. Must not: reap or deliver (run.rs does).

use super::clock::WalltimeClock;
use super::contain;
use crate::cgroup::JobCgroup;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// What the daemon asks of a running job's task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillRequest {
    /// Kill it (qdel, stale job): SIGTERM, then SIGKILL after kill_delay.
    Kill,
    /// Kill it like `Kill` but discard its output (qrerun): it ends with `JOB_EXEC_RERUN`.
    Rerun,
    /// Send this signal number to every process of its session (qsig); `suspend`: the
    /// server's suspend/resume (SIGSTOP/SIGCONT), which alone pauses/resumes the walltime clock.
    Signal { number: i32, suspend: bool },
    /// Its walltime limit is now this many seconds from its start (`None`: no limit; qalter).
    Walltime(Option<u64>),
}

/// What supervision keeps of a running job besides its reaper and walltime timer.
pub(super) struct Supervision {
    pub(super) cgroup: Option<JobCgroup>,
    pub(super) sid: i32,
    /// Between SIGTERM and SIGKILL.
    pub(super) delay: Duration,
    pub(super) clock: WalltimeClock,
    pub(super) killer: Option<JoinHandle<()>>,
    pub(super) rerun: bool,
    /// An interactive job: kills start with SIGHUP.
    pub(super) hang_up: bool,
}

impl Supervision {
    /// Carries out one request of the daemon (the caller then re-arms the walltime timer).
    pub(super) fn on_request(&mut self, request: KillRequest) {
        match request {
            KillRequest::Kill => {
                tracing::info!("killing the job on request");
                contain::start_kill(&mut self.killer, (self.sid, self.cgroup.clone()), self.delay, self.hang_up);
            }
            KillRequest::Rerun => {
                tracing::info!("killing the job to rerun it");
                self.rerun = true;
                contain::start_kill(&mut self.killer, (self.sid, self.cgroup.clone()), self.delay, self.hang_up);
            }
            KillRequest::Signal { number, suspend } => {
                contain::send_signal(self.sid, self.cgroup.clone(), number);
                // Suspended time does not count against the walltime; a plain SIGSTOP (the
                // owner's own qsig) is no suspension: the owner could continue the processes
                // directly and run past the walltime.
                if suspend && number == libc::SIGSTOP {
                    self.clock.pause(Instant::now());
                } else if suspend && number == libc::SIGCONT {
                    self.clock.resume(Instant::now());
                }
            }
            KillRequest::Walltime(limit) => {
                tracing::info!(walltime = ?limit, "walltime limit changed");
                self.clock.limit = limit;
            }
        }
    }
}

/// Whether an interactive job's qsub hung up (false: the relay ended without saying).
pub(super) async fn wait_hangup(hangup: &mut Option<oneshot::Receiver<()>>) -> bool {
    match hangup {
        Some(receiver) => receiver.await.is_ok(),
        None => std::future::pending().await,
    }
}
