//! One task started through the local mom (proto::task): connect to the job's task socket,
//! send the request, then read what the mom sends until the task's exit status, while other
//! threads may send input (stdin, signals) through a [`Sender`]. Also the signal thread both
//! launchers use to forward SIGINT, SIGTERM and SIGHUP.
//!
//! Owns: the connection and its frames, bounded reads, stdin relay, catching signals.
//! Must not know: options, node files, what the caller does with output.

use nix::sys::signal::{SigSet, Signal};
use proto::frame::{self, FrameError, Limits, FRAME_DEADLINE};
use proto::task::{RequestBoundError, TaskInput, TaskOutput, TaskRequest, MAX_CHUNK};
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The largest frame taken from the mom: a `MAX_CHUNK` of output escaped as JSON text (at most
/// six bytes a byte) and room for the rest.
pub const OUTPUT_LIMITS: Limits = Limits { max_body: 6 * MAX_CHUNK + 4096, deadline: FRAME_DEADLINE };

/// The signals forwarded to tasks.
pub const FORWARDED: [Signal; 3] = [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP];

/// What the mom reports while a task runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Started { task: u32, node_num: u32 },
    Stdout(&'a [u8]),
    Stderr(&'a [u8]),
}

/// Why a task did not run to its end as far as the launcher can tell.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("{0}")]
    Bounds(#[from] RequestBoundError),
    #[error("cannot reach the local mom at {}: {source}", path.display())]
    Connect { path: PathBuf, source: std::io::Error },
    #[error("cannot send the task to the local mom: {0}")]
    Send(FrameError),
    /// The mom's own words.
    #[error("{0}")]
    Refused(String),
    #[error("the local mom closed the connection before the task ended")]
    Closed,
    #[error("lost the local mom: {0}")]
    Lost(FrameError),
}

/// Sends input to a running task; cloned freely (stdin thread, signal thread).
#[derive(Clone)]
pub struct Sender(Arc<Mutex<UnixStream>>);

impl Sender {
    pub fn send(&self, input: &TaskInput) -> Result<(), FrameError> {
        let mut stream = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        frame::write(&mut *stream, input)
    }
}

/// A task the local mom was asked to start.
pub struct Task {
    reader: UnixStream,
    sender: Sender,
}

impl Task {
    /// Checks `request` against the protocol's bounds, connects to `socket` and sends it.
    pub fn start(socket: &Path, request: &TaskRequest) -> Result<Task, TaskError> {
        request.check_bounds()?;
        let connect_error = |source| TaskError::Connect { path: socket.to_path_buf(), source };
        let mut reader = UnixStream::connect(socket).map_err(connect_error)?;
        frame::write(&mut reader, request).map_err(TaskError::Send)?;
        let writer = reader.try_clone().map_err(connect_error)?;
        Ok(Task { reader, sender: Sender(Arc::new(Mutex::new(writer))) })
    }

    pub fn sender(&self) -> Sender {
        self.sender.clone()
    }

    /// Reads the mom's frames, handing each to `on`, until the task's exit status (the code,
    /// or 128 + the signal that killed it).
    pub fn wait(mut self, mut on: impl FnMut(Event<'_>)) -> Result<i32, TaskError> {
        loop {
            match frame::read_limited::<TaskOutput>(&mut self.reader, OUTPUT_LIMITS) {
                Ok(TaskOutput::Started { task, node_num }) => on(Event::Started { task, node_num }),
                Ok(TaskOutput::Stdout(bytes)) => on(Event::Stdout(&bytes)),
                Ok(TaskOutput::Stderr(bytes)) => on(Event::Stderr(&bytes)),
                Ok(TaskOutput::Refused { message }) => return Err(TaskError::Refused(message)),
                Ok(TaskOutput::Exited { status }) => return Ok(status),
                Err(FrameError::Closed) => return Err(TaskError::Closed),
                Err(error) => return Err(TaskError::Lost(error)),
            }
        }
    }
}

/// Relays `input` to the task in chunks of at most `MAX_CHUNK`, then its end. Stops quietly
/// when the task is gone.
pub fn relay_stdin(sender: &Sender, mut input: impl Read) {
    let mut buffer = vec![0u8; MAX_CHUNK];
    loop {
        let read = match input.read(&mut buffer) {
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => 0,
        };
        let message = if read == 0 { TaskInput::StdinEof } else { TaskInput::Stdin(buffer[..read].to_vec()) };
        if sender.send(&message).is_err() || read == 0 {
            return;
        }
    }
}

/// Blocks [`FORWARDED`] in this thread (call it before any other thread starts, so every
/// thread inherits the mask) and starts a thread calling `handler` with each one caught.
pub fn catch_signals(handler: impl Fn(Signal) + Send + 'static) -> std::io::Result<()> {
    let mut set = SigSet::empty();
    for signal in FORWARDED {
        set.add(signal);
    }
    set.thread_block().map_err(std::io::Error::from)?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        while let Ok(signal) = set.wait() {
            handler(signal);
        }
    })?;
    Ok(())
}

/// A task's status as a process exit code: 0 to 255 as is, anything else 255.
pub fn exit_code(status: i32) -> u8 {
    u8::try_from(status).unwrap_or(255)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_become_exit_codes() {
        assert_eq!(exit_code(0), 0);
        assert_eq!(exit_code(3), 3);
        assert_eq!(exit_code(143), 143);
        assert_eq!(exit_code(-1), 255);
        assert_eq!(exit_code(300), 255);
    }

    #[test]
    fn output_limit_holds_a_full_chunk_of_any_bytes() {
        let worst = TaskOutput::Stdout(vec![0u8; MAX_CHUNK]);
        let body = frame::encode(&worst).unwrap().len() - 4;
        assert!(body <= OUTPUT_LIMITS.max_body, "{body}");
    }
}
