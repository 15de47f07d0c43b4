//! A fake local mom for the launcher tests: a Unix listener in a temporary directory speaking
//! proto::task frames, one thread per connection running the test's script, and a job
//! environment (`PBS_*`, `MINIPBS_TASK_SOCKET`, a node file) pointing at it.

use proto::frame;
use proto::task::{TaskInput, TaskOutput, TaskRequest};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a connection's script gets: the request and the stream to answer on.
pub struct Conn {
    pub request: TaskRequest,
    pub stream: UnixStream,
}

impl Conn {
    pub fn send(&mut self, output: TaskOutput) {
        let _ = frame::write(&mut self.stream, &output);
    }

    /// The launcher's next frame; `None` when it hung up.
    pub fn input(&mut self) -> Option<TaskInput> {
        frame::read(&mut self.stream).ok()
    }
}

/// What the fake mom saw, shared with the test.
#[derive(Default)]
pub struct Seen {
    pub requests: Vec<TaskRequest>,
    pub notes: Vec<String>,
}

pub struct FakeMom {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub seen: Arc<(Mutex<Seen>, Condvar)>,
}

impl FakeMom {
    /// Starts a mom whose connections run `script`, for a job on the hosts of `nodefile`.
    pub fn start(
        nodefile: &str,
        script: impl Fn(&mut Conn, &Arc<(Mutex<Seen>, Condvar)>) + Send + Sync + 'static,
    ) -> FakeMom {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("7.s"), nodefile).unwrap();
        let socket = dir.path().join("task.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let seen: Arc<(Mutex<Seen>, Condvar)> = Arc::default();
        let script = Arc::new(script);
        let shared = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let (script, seen) = (Arc::clone(&script), Arc::clone(&shared));
                std::thread::spawn(move || {
                    let Ok(request) = frame::read::<TaskRequest>(&mut stream) else { return };
                    note(&seen, |all| all.requests.push(request.clone()));
                    script(&mut Conn { request, stream }, &seen);
                });
            }
        });
        FakeMom { dir, socket, seen }
    }

    /// `program` in the job's environment.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env("PBS_ENVIRONMENT", "PBS_BATCH")
            .env("PBS_JOBID", "7.s")
            .env("PBS_JOBCOOKIE", "c00kie")
            .env("MINIPBS_TASK_SOCKET", &self.socket)
            .env("PBS_NODEFILE", self.dir.path().join("7.s"))
            .env_remove("MASTER_ADDR")
            .env_remove("MASTER_PORT")
            .current_dir(self.dir.path());
        command
    }

    /// Waits (with a deadline) until `done` holds of what was seen, and returns its answer.
    pub fn wait_for<T>(&self, what: &str, done: impl Fn(&Seen) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(30);
        let (lock, changed) = &*self.seen;
        let mut seen = lock.lock().unwrap();
        loop {
            if let Some(answer) = done(&seen) {
                return answer;
            }
            let left = deadline.checked_duration_since(Instant::now()).unwrap_or_else(|| panic!("no {what} in 30 s"));
            seen = changed.wait_timeout(seen, left).unwrap().0;
        }
    }
}

/// Changes what was seen and wakes the waiters.
pub fn note(seen: &Arc<(Mutex<Seen>, Condvar)>, change: impl FnOnce(&mut Seen)) {
    let (lock, changed) = &**seen;
    change(&mut lock.lock().unwrap());
    changed.notify_all();
}
