//! Running a planned `pbsdsh` launch: at most [`MAX_CONCURRENT`] tasks at once (the rest wait
//! their turn), or one after another with `-s`; each task's output printed on pbsdsh's stdout
//! and stderr a whole line at a time so tasks' lines do not mix; SIGINT, SIGTERM and SIGHUP
//! forwarded to every running task (and no further task started); the worst status returned.
//!
//! Owns: the worker threads, output lines, verbose texts. Must not know: options, node files.

use crate::exit;
use crate::task_conn::{self, Event, Sender, Task};
use proto::task::{TaskInput, TaskRequest, MAX_CHUNK};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Most tasks running (connections to the mom open) at once.
pub const MAX_CONCURRENT: usize = 256;

/// A partial line longer than this is written without waiting for its end.
pub const MAX_PENDING_LINE: usize = MAX_CHUNK;

/// How to run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// `-s`: one task after another.
    pub sequential: bool,
    /// `-v`: say on stderr when each task starts and ends.
    pub verbose: bool,
}

/// One stream of a task cut into whole lines.
#[derive(Debug, Default)]
pub struct Lines {
    pending: Vec<u8>,
}

impl Lines {
    /// Takes `bytes`; returns what is ready to write (whole lines, or a too long partial one).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<u8> {
        self.pending.extend_from_slice(bytes);
        match self.pending.iter().rposition(|&byte| byte == b'\n') {
            _ if self.pending.len() > MAX_PENDING_LINE => std::mem::take(&mut self.pending),
            Some(end) => self.pending.drain(..=end).collect(),
            None => Vec::new(),
        }
    }

    /// What is left at the end of the task.
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }
}

/// What the workers and the signal thread share.
struct Shared {
    socket: PathBuf,
    requests: Vec<TaskRequest>,
    options: RunOptions,
    next: AtomicUsize,
    stopped: AtomicBool,
    /// The signal that stopped the run (0: none yet), written under `running`'s lock.
    signal: AtomicI32,
    /// Workers between taking a request and entering their task in `running`: a signal that
    /// finds no task running ends pbsdsh only when none is on its way in either.
    starting: AtomicUsize,
    worst: AtomicU8,
    running: Mutex<BTreeMap<usize, Sender>>,
}

/// Runs every request through the mom at `socket`; the worst exit code of the tasks (1 for a
/// task that could not be run).
pub fn run_all(socket: &Path, requests: Vec<TaskRequest>, options: RunOptions) -> u8 {
    let workers = workers(requests.len(), options.sequential);
    let shared = Arc::new(Shared {
        socket: socket.to_path_buf(),
        requests,
        options,
        next: AtomicUsize::new(0),
        stopped: AtomicBool::new(false),
        signal: AtomicI32::new(0),
        starting: AtomicUsize::new(0),
        worst: AtomicU8::new(exit::SUCCESS),
        running: Mutex::new(BTreeMap::new()),
    });
    let for_signals = Arc::clone(&shared);
    if let Err(error) = task_conn::catch_signals(move |signal| forward(&for_signals, signal as i32)) {
        eprintln!("pbsdsh: unable to catch signals: {error}");
        return exit::FAILURE;
    }
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| work(&shared));
        }
    });
    shared.worst.load(Ordering::SeqCst)
}

/// How many worker threads run `tasks` tasks: each holds at most one connection to the mom at a
/// time, so this is the bound on tasks running at once.
pub fn workers(tasks: usize, sequential: bool) -> usize {
    if sequential {
        1
    } else {
        tasks.clamp(1, MAX_CONCURRENT)
    }
}

/// The signal thread: no new task starts, every running one gets the signal; with none
/// running pbsdsh ends as the signal would end it.
/// A task a worker is still starting gets the signal from that worker (`run_one`), so every
/// task is signalled exactly once, whenever the signal comes.
fn forward(shared: &Shared, signal: i32) {
    let running = lock(&shared.running);
    shared.signal.store(signal, Ordering::SeqCst);
    shared.stopped.store(true, Ordering::SeqCst);
    let delivered = running.values().filter(|sender| sender.send(&TaskInput::Signal(signal)).is_ok()).count();
    if delivered == 0 && shared.starting.load(Ordering::SeqCst) == 0 {
        std::process::exit(128 + signal);
    }
}

/// A worker: takes the next request until none is left or a signal came.
fn work(shared: &Shared) {
    loop {
        // Counted as starting before looking at `stopped`: a signal either stops this worker
        // here or finds it counted (and then the worker signals its task itself).
        shared.starting.fetch_add(1, Ordering::SeqCst);
        let index = shared.next.fetch_add(1, Ordering::SeqCst);
        let request = shared.requests.get(index).filter(|_| !shared.stopped.load(Ordering::SeqCst));
        let Some(request) = request else {
            shared.starting.fetch_sub(1, Ordering::SeqCst);
            return;
        };
        let code = run_one(shared, index, request);
        shared.worst.fetch_max(code, Ordering::SeqCst);
    }
}

/// One task, start to end; its exit code.
fn run_one(shared: &Shared, index: usize, request: &TaskRequest) -> u8 {
    let (node, vnode, verbose) = (&request.node, request.vnode, shared.options.verbose);
    let task = match Task::start(&shared.socket, request) {
        Ok(task) => task,
        Err(error) => {
            shared.starting.fetch_sub(1, Ordering::SeqCst);
            eprintln!("pbsdsh: {error}");
            return exit::FAILURE;
        }
    };
    {
        let mut running = lock(&shared.running);
        running.insert(index, task.sender());
        // A signal that came while this task was starting did not reach it: send it now.
        let signal = shared.signal.load(Ordering::SeqCst);
        if signal != 0 {
            let _ = task.sender().send(&TaskInput::Signal(signal));
        }
        shared.starting.fetch_sub(1, Ordering::SeqCst);
    }
    let (mut stdout, mut stderr) = (Lines::default(), Lines::default());
    let ended = task.wait(|event| match event {
        Event::Started { task, .. } if verbose => eprintln!("pbsdsh: spawned task {task} on {node} (vnode {vnode})"),
        Event::Started { .. } => {}
        Event::Stdout(bytes) => write_out(&stdout.push(bytes)),
        Event::Stderr(bytes) => write_err(&stderr.push(bytes)),
    });
    lock(&shared.running).remove(&index);
    write_out(&stdout.finish());
    write_err(&stderr.finish());
    match ended {
        Ok(status) => {
            if verbose {
                eprintln!("pbsdsh: task on {node} (vnode {vnode}) exited with status {status}");
            }
            task_conn::exit_code(status)
        }
        Err(error) => {
            eprintln!("pbsdsh: {error}");
            exit::FAILURE
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn write_out(bytes: &[u8]) {
    if !bytes.is_empty() {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(bytes).and_then(|()| stdout.flush());
    }
}

fn write_err(bytes: &[u8]) {
    if !bytes.is_empty() {
        let _ = std::io::stderr().lock().write_all(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_256_workers_and_one_with_s() {
        assert_eq!(workers(4, false), 4);
        assert_eq!(workers(300, false), MAX_CONCURRENT);
        assert_eq!(MAX_CONCURRENT, 256);
        assert_eq!(workers(300, true), 1);
        assert_eq!(workers(0, false), 1);
    }

    #[test]
    fn lines_come_out_whole() {
        let mut lines = Lines::default();
        assert_eq!(lines.push(b"one\ntw"), b"one\n");
        assert_eq!(lines.push(b"o"), b"");
        assert_eq!(lines.push(b"\nthree\nfo"), b"two\nthree\n");
        assert_eq!(lines.finish(), b"fo");
        assert_eq!(lines.finish(), b"");
    }

    #[test]
    fn a_partial_line_is_bounded() {
        let mut lines = Lines::default();
        assert!(lines.push(&vec![b'x'; MAX_PENDING_LINE]).is_empty());
        assert_eq!(lines.push(b"y").len(), MAX_PENDING_LINE + 1);
        assert!(lines.finish().is_empty());
    }
}
