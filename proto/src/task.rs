//! The task protocol (our TM): how `pbsdsh` and `pbs_tmrsh` start processes of a running job
//! on the job's nodes through the moms, never through ssh.
//!
//! A launcher runs inside a job (it has `PBS_JOBID`, `PBS_JOBCOOKIE` and the local mom's task
//! socket, `MINIPBS_TASK_SOCKET`, in its environment). It connects to that Unix socket and sends
//! one [`TaskRequest`]; the local mom checks the caller (its kernel-reported uid must be the job
//! owner's, the cookie the job's, the node one of the job's) and starts the task itself or asks
//! the target node's mom to (the mom-to-mom path, authenticated like every other hop). Then:
//! * mom -> launcher: [`TaskOutput::Started`] (or [`TaskOutput::Refused`] and the connection
//!   closes), any number of `Stdout`/`Stderr`, and last [`TaskOutput::Exited`];
//! * launcher -> mom: `Stdin` and `StdinEof` (only when the request asked for stdin),
//!   `Signal` to forward one to the task.
//!
//! If the launcher's connection goes away before `Exited`, the mom kills the task (ssh's
//! hang-up semantics: no orphan `orted` or proxy survives its launcher).
//!
//! Must not know: processes, sockets, cgroups; only the messages and their bounds.

use serde::{Deserialize, Serialize};

/// The version of this protocol, in [`TaskRequest::version`].
pub const TASK_VERSION: u32 = 1;

/// Most words in a task's argv (`getconf ARG_MAX`-like, far above what launchers send).
pub const MAX_ARGS: usize = 4096;
/// Most bytes in all of a request's words, variables and directory together.
pub const MAX_REQUEST_BYTES: usize = 1024 * 1024;
/// Most variables a request may add to the task's environment.
pub const MAX_ENV: usize = 1024;
/// Most bytes in one `Stdin`, `Stdout` or `Stderr` frame.
pub const MAX_CHUNK: usize = 64 * 1024;

/// What to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskCommand {
    /// Executed directly (`pbsdsh prog args`), looked up in the task's `PATH`.
    Argv(Vec<String>),
    /// Handed to the job owner's shell as `$SHELL -c <line>` (`pbs_tmrsh`: ssh semantics, the
    /// words joined by spaces).
    Shell(String),
}

/// The first frame from a launcher to its local mom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRequest {
    /// [`TASK_VERSION`].
    pub version: u32,
    pub job_id: String,
    /// `PBS_JOBCOOKIE` of the job (the launcher's proof that it runs inside the job).
    pub cookie: String,
    /// The node to run on, as the job's `PBS_NODEFILE` names it.
    pub node: String,
    pub command: TaskCommand,
    /// Added to (and overriding) the node's job environment for this task: `PBS_VNODENUM`,
    /// `RANK`... and what `pbsdsh -v`/`-e` pass.
    pub env: Vec<(String, String)>,
    /// Where the task starts (entered as the user; the user's home when absent or not there).
    pub cwd: Option<String>,
    /// The vnode (line of `PBS_NODEFILE`, from 0) the task is started for: `PBS_VNODENUM`.
    pub vnode: u32,
    /// Relay the launcher's stdin to the task; otherwise the task's stdin is `/dev/null`.
    pub stdin: bool,
    /// Send the task's stdout and stderr back as frames; otherwise they go to the job's output
    /// and error files on that node (OpenPBS's `pbsdsh` without TORQUE's `-o`).
    pub output: bool,
}

/// Frames from the launcher after its request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskInput {
    Stdin(#[serde(with = "crate::interactive::bytes_as_text")] Vec<u8>),
    StdinEof,
    /// Deliver this signal number to the task's process group.
    Signal(i32),
}

/// Frames from the mom to the launcher.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskOutput {
    /// The task runs: its number (`PBS_TASKNUM`) and its node's index in the job (`PBS_NODENUM`).
    Started {
        task: u32,
        node_num: u32,
    },
    /// The task was not started: why, for the launcher to print. The connection closes.
    Refused {
        message: String,
    },
    Stdout(#[serde(with = "crate::interactive::bytes_as_text")] Vec<u8>),
    Stderr(#[serde(with = "crate::interactive::bytes_as_text")] Vec<u8>),
    /// The task ended: its exit code, or 128 + the signal that killed it (as a shell reports).
    Exited {
        status: i32,
    },
}

/// From one mom to another mom of the same job (the peer path: over TCP sealed with MUNGE as
/// the moms' uid, `Direction::MomToMom`; on one machine over the target's task socket, its
/// kernel-reported uid the mom's own). The target checks again that the job runs there and
/// the cookie. On a task socket the first frame is this or a [`TaskRequest`]: a JSON object
/// with the single key `Task` or `EndTasks` is a peer's, anything else a launcher's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PeerRequest {
    /// Start this task here (`request.node` is the target). Then frames flow as for a launcher.
    Task { from: String, request: TaskRequest },
    /// The job is over on its mother superior (`from`): kill its tasks here and answer
    /// [`TasksEnded`] with their usage.
    EndTasks { from: String, job_id: String, cookie: String },
}

/// The answer to [`PeerRequest::EndTasks`]: what the job's tasks used on that node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TasksEnded {
    pub used: crate::mom::ResourcesUsed,
}

/// What a mom that reaches a peer over TCP writes first on its mom port, before any frame: it
/// can never begin a frame (as a length it is far above `frame::MAX_FRAME`), so the port tells
/// peer connections from the server's. It only selects which credential the port then
/// requires; it proves nothing.
pub const PEER_MAGIC: &[u8; 4] = b"PEER";

/// Why a request is refused before anything is looked up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestBoundError {
    #[error("task protocol version {0} is not supported (this mom speaks {TASK_VERSION})")]
    Version(u32),
    #[error("a task needs a command")]
    Empty,
    #[error("a task may have at most {MAX_ARGS} arguments, not {0}")]
    TooManyArgs(usize),
    #[error("a task may add at most {MAX_ENV} variables, not {0}")]
    TooManyVariables(usize),
    #[error("a task request may hold at most {MAX_REQUEST_BYTES} bytes of words, variables and directory, not {0}")]
    TooLarge(usize),
    #[error("a task's words, variables and directory may not contain NUL bytes")]
    Nul,
    #[error("variable name {0:?} is not a valid environment name")]
    BadName(String),
}

impl TaskRequest {
    /// Checks the bounds every mom applies before acting on a request.
    pub fn check_bounds(&self) -> Result<(), RequestBoundError> {
        if self.version != TASK_VERSION {
            return Err(RequestBoundError::Version(self.version));
        }
        let words: Vec<&str> = match &self.command {
            TaskCommand::Argv(args) => args.iter().map(String::as_str).collect(),
            TaskCommand::Shell(line) => vec![line.as_str()],
        };
        if words.first().is_none_or(|first| first.trim().is_empty()) {
            return Err(RequestBoundError::Empty);
        }
        if words.len() > MAX_ARGS {
            return Err(RequestBoundError::TooManyArgs(words.len()));
        }
        if self.env.len() > MAX_ENV {
            return Err(RequestBoundError::TooManyVariables(self.env.len()));
        }
        let env_words = self.env.iter().flat_map(|(name, value)| [name.as_str(), value.as_str()]);
        let all: Vec<&str> = words.into_iter().chain(env_words).chain(self.cwd.as_deref()).collect();
        let total: usize = all.iter().map(|word| word.len()).sum();
        if total > MAX_REQUEST_BYTES {
            return Err(RequestBoundError::TooLarge(total));
        }
        if all.iter().any(|word| word.contains('\0')) {
            return Err(RequestBoundError::Nul);
        }
        let valid = |name: &str| {
            let mut chars = name.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if let Some((name, _)) = self.env.iter().find(|(name, _)| !valid(name)) {
            return Err(RequestBoundError::BadName(name.clone()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: TaskCommand) -> TaskRequest {
        TaskRequest {
            version: TASK_VERSION,
            job_id: "1.s".into(),
            cookie: "c".into(),
            node: "n1".into(),
            command,
            env: vec![("RANK".into(), "0".into())],
            cwd: None,
            vnode: 0,
            stdin: false,
            output: true,
        }
    }

    #[test]
    fn frames_round_trip() {
        let asked = request(TaskCommand::Shell(" orted -mca ess \"env\"".into()));
        let bytes = crate::frame::encode(&asked).unwrap();
        assert_eq!(crate::frame::read::<TaskRequest>(&mut bytes.as_slice()).unwrap(), asked);
        let all: Vec<u8> = (0..=255).collect();
        for output in [TaskOutput::Stdout(all.clone()), TaskOutput::Exited { status: 137 }] {
            let bytes = crate::frame::encode(&output).unwrap();
            assert_eq!(crate::frame::read::<TaskOutput>(&mut bytes.as_slice()).unwrap(), output);
        }
        let bytes = crate::frame::encode(&TaskInput::Stdin(all.clone())).unwrap();
        assert_eq!(crate::frame::read::<TaskInput>(&mut bytes.as_slice()).unwrap(), TaskInput::Stdin(all));
    }

    #[test]
    fn peer_requests_are_not_shaped_like_launchers() {
        let asked = request(TaskCommand::Argv(vec!["hostname".into()]));
        let peer = serde_json::to_value(PeerRequest::Task { from: "n0".into(), request: asked.clone() }).unwrap();
        assert!(serde_json::from_value::<TaskRequest>(peer).is_err());
        let launcher = serde_json::to_value(&asked).unwrap();
        assert!(serde_json::from_value::<PeerRequest>(launcher).is_err());
        assert!(u32::from_be_bytes(*PEER_MAGIC) as usize > crate::frame::MAX_FRAME);
    }

    #[test]
    fn bounds_refuse_what_is_too_much_or_malformed() {
        assert_eq!(request(TaskCommand::Argv(vec!["hostname".into()])).check_bounds(), Ok(()));
        assert_eq!(request(TaskCommand::Argv(vec![])).check_bounds(), Err(RequestBoundError::Empty));
        assert_eq!(request(TaskCommand::Shell("  ".into())).check_bounds(), Err(RequestBoundError::Empty));
        let many = vec!["x".to_string(); MAX_ARGS + 1];
        assert_eq!(request(TaskCommand::Argv(many)).check_bounds(), Err(RequestBoundError::TooManyArgs(MAX_ARGS + 1)));
        let big = "x".repeat(MAX_REQUEST_BYTES);
        assert!(matches!(request(TaskCommand::Shell(big)).check_bounds(), Err(RequestBoundError::TooLarge(_))));
        assert_eq!(request(TaskCommand::Shell("a\0b".into())).check_bounds(), Err(RequestBoundError::Nul));
        let mut bad = request(TaskCommand::Shell("true".into()));
        bad.env.push(("A=B".into(), "x".into()));
        assert_eq!(bad.check_bounds(), Err(RequestBoundError::BadName("A=B".into())));
        bad.env = vec![("A".into(), String::new()); MAX_ENV + 1];
        assert_eq!(bad.check_bounds(), Err(RequestBoundError::TooManyVariables(MAX_ENV + 1)));
        bad.env.clear();
        bad.version = 9;
        assert_eq!(bad.check_bounds(), Err(RequestBoundError::Version(9)));
    }
}
