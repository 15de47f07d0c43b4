//! Job states (the letters `qstat` prints) and the only legal transitions between them.
//!
//! Invariant: the server changes a job's state only through [`JobState::apply`]; an illegal
//! transition is an error the caller must handle, never silently ignored.

use serde::{Deserialize, Serialize};

/// The state of a job, as OpenPBS names it (pbs-reference section 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum JobState {
    /// `Q`: queued and eligible to run.
    Queued,
    /// `H`: held (user, operator or system hold).
    Held,
    /// `W`: waiting for its execution time.
    Waiting,
    /// `R`: running on its nodes.
    Running,
    /// `E`: ended or being killed; output delivery and clean-up in progress.
    Exiting,
    /// `S`: suspended (`qsig -s suspend`): its processes are stopped; it keeps its nodes.
    Suspended,
    /// `F`: finished, kept in history.
    Finished,
    /// `B`: an array parent at least one of whose subjobs has started.
    Begun,
    /// `X`: a subjob that is over (expired), kept with its array.
    Expired,
}

/// What happens to a job. Each event names who triggers it in ARCHITECTURE.md's diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEvent {
    /// A hold was set (qhold, `qsub -h`).
    Hold,
    /// The last hold was released (qrls).
    Release,
    /// The scheduler placed the job and the server sent it to its mother superior.
    Run,
    /// The job was asked to end (qdel of a running job, walltime) or its script exited.
    Exit,
    /// The mom reported the end and output was delivered.
    Finish,
    /// qdel of a job that is not running.
    Delete,
    /// The job goes back to the queue (its mom was lost, or qrerun).
    Requeue,
    /// An array parent's first subjob started.
    Begin,
    /// A subjob is over: it ended, or was deleted before it ran.
    Expire,
    /// `qsig -s suspend`: the job's processes were stopped.
    Suspend,
    /// `qsig -s resume`: the job's processes were continued.
    Resume,
    /// Its execution time (`-a`) is still ahead: a queued job waits for it.
    Defer,
    /// Its execution time came: a waiting job is queued again.
    Wake,
}

/// An event that is not allowed in the job's current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {event:?} is not allowed for a job in state {}", state.letter())]
pub struct IllegalTransition {
    pub state: JobState,
    pub event: JobEvent,
}

impl JobState {
    /// The one-letter code shown by `qstat`.
    pub fn letter(self) -> char {
        match self {
            JobState::Queued => 'Q',
            JobState::Held => 'H',
            JobState::Waiting => 'W',
            JobState::Running => 'R',
            JobState::Exiting => 'E',
            JobState::Suspended => 'S',
            JobState::Finished => 'F',
            JobState::Begun => 'B',
            JobState::Expired => 'X',
        }
    }

    /// Parses a state letter (used by the store when it loads rows).
    pub fn from_letter(letter: char) -> Option<JobState> {
        Some(match letter {
            'Q' => JobState::Queued,
            'H' => JobState::Held,
            'W' => JobState::Waiting,
            'R' => JobState::Running,
            'E' => JobState::Exiting,
            'S' => JobState::Suspended,
            'F' => JobState::Finished,
            'B' => JobState::Begun,
            'X' => JobState::Expired,
            _ => return None,
        })
    }

    /// Whether the job is over (kept only as history): `F`, or `X` for a subjob.
    pub fn is_finished(self) -> bool {
        matches!(self, JobState::Finished | JobState::Expired)
    }

    /// Whether the job holds resources on nodes.
    pub fn is_active(self) -> bool {
        matches!(self, JobState::Running | JobState::Exiting | JobState::Suspended)
    }

    /// The state after `event`, or an error if the event is illegal here.
    pub fn apply(self, event: JobEvent) -> Result<JobState, IllegalTransition> {
        use JobEvent as Ev;
        use JobState as St;
        let next = match (self, event) {
            (St::Queued | St::Waiting, Ev::Hold) => St::Held,
            (St::Held, Ev::Hold) => St::Held,
            // Holding a running job records the hold; it applies if the job is requeued.
            (St::Running | St::Suspended, Ev::Hold) => self,
            (St::Held, Ev::Release) => St::Queued,
            (St::Queued | St::Waiting | St::Running | St::Suspended, Ev::Release) => self,
            (St::Queued, Ev::Run) => St::Running,
            (St::Running | St::Suspended, Ev::Exit) => St::Exiting,
            (St::Exiting, Ev::Exit) => St::Exiting,
            (St::Running | St::Exiting | St::Suspended, Ev::Finish) => St::Finished,
            (St::Queued | St::Held | St::Waiting, Ev::Delete) => St::Finished,
            (St::Running | St::Exiting | St::Suspended, Ev::Requeue) => St::Queued,
            (St::Running, Ev::Suspend) => St::Suspended,
            (St::Suspended, Ev::Resume) => St::Running,
            (St::Queued | St::Waiting, Ev::Defer) => St::Waiting,
            (St::Waiting | St::Queued, Ev::Wake) => St::Queued,
            // Array parents: begun when the first subjob starts; holds apply to the subjobs.
            (St::Queued | St::Held | St::Begun, Ev::Begin) => St::Begun,
            (St::Begun, Ev::Hold | Ev::Release) => St::Begun,
            (St::Begun, Ev::Finish) => St::Finished,
            // Subjobs end as X (expired), run or not.
            (St::Queued | St::Held | St::Waiting | St::Running | St::Exiting | St::Suspended, Ev::Expire) => {
                St::Expired
            }
            _ => return Err(IllegalTransition { state: self, event }),
        };
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use JobEvent as Ev;
    use JobState as St;

    const ALL_STATES: [St; 9] = [
        St::Queued,
        St::Held,
        St::Waiting,
        St::Running,
        St::Exiting,
        St::Finished,
        St::Begun,
        St::Expired,
        St::Suspended,
    ];
    const ALL_EVENTS: [Ev; 13] = [
        Ev::Hold,
        Ev::Release,
        Ev::Run,
        Ev::Exit,
        Ev::Finish,
        Ev::Delete,
        Ev::Requeue,
        Ev::Begin,
        Ev::Expire,
        Ev::Suspend,
        Ev::Resume,
        Ev::Defer,
        Ev::Wake,
    ];

    #[test]
    fn transition_table() {
        let mut table = String::new();
        for state in ALL_STATES {
            for event in ALL_EVENTS {
                let result = match state.apply(event) {
                    Ok(next) => next.letter().to_string(),
                    Err(_) => "-".to_string(),
                };
                table.push_str(&format!("{} {:?} -> {}\n", state.letter(), event, result));
            }
        }
        insta::assert_snapshot!(table);
    }

    #[test]
    fn finished_and_expired_are_terminal() {
        for event in ALL_EVENTS {
            assert!(St::Finished.apply(event).is_err(), "{event:?} left F");
            assert!(St::Expired.apply(event).is_err(), "{event:?} left X");
        }
    }

    #[test]
    fn letters_round_trip() {
        for state in ALL_STATES {
            assert_eq!(St::from_letter(state.letter()), Some(state));
        }
    }
}
