//! The accounting writer thread ([`Accountant`]): appends committed accounting records to
//! `server_priv/accounting/YYYYMMDD` (local day of each record), durably, and never drops one.
//!
//! Records are committed in the store with the change they record (`Shared::apply`), each
//! with an id in commit order. The writer appends them, fsyncs the file, and only then tells
//! the store to forget them (`forget(last id)`). A write or fsync error truncates the file back
//! to where it was, is logged, and is retried with a growing delay until it succeeds (a full
//! disk delays records, it does not lose them). At start the records still in the store (the
//! server died before they were written or forgotten) are written first; a line already in
//! its day's file (written, then the server died before forgetting it) is not written twice.
//!
//! Must not: block the store thread (the store thread only sends on an unbounded channel),
//! read or change server state.

use crate::store::AccountingRecord;
use pbslog::Tm;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The first delay before retrying a failed write; it doubles up to [`MAX_RETRY_DELAY`].
const FIRST_RETRY_DELAY: Duration = Duration::from_millis(200);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(10);

/// How long the writer gathers records after the first of a quiet spell, so that records a few
/// milliseconds apart (a job's queued, started and ended) share one write and one fsync instead
/// of one each (the writer's fsyncs were an eighth of the server's CPU per job). The records
/// are durable in the store meanwhile and forgotten only once in the file; only the file waits,
/// and a flush ends the gathering at once. The writer sleeps through the window rather than
/// waking for each record that arrives (a send to a receiver that is not waiting wakes nobody):
/// it woke about five times per job, each a context switch on the store thread's side too.
const GATHER: Duration = Duration::from_millis(25);

/// Tells the store that every record up to this id is durably in the files.
pub type Forget = Box<dyn Fn(u64) + Send>;

/// What the writer thread is asked to do.
enum Work {
    Append(Vec<AccountingRecord>),
    /// Answer once everything queued before is written.
    Flush(mpsc::Sender<()>),
}

/// Appends records on its own thread. Clones share the thread.
#[derive(Clone)]
pub struct Accountant {
    sender: mpsc::Sender<Work>,
    /// The writer thread, unparked by a flush so that it stops gathering at once.
    writer: std::thread::Thread,
}

impl Accountant {
    /// Starts the writer thread for `dir` (created if missing); it first writes `pending`, the
    /// records the store still holds from before.
    pub fn spawn(dir: PathBuf, pending: Vec<AccountingRecord>, forget: Forget) -> std::io::Result<Accountant> {
        Accountant::spawn_gathering(dir, pending, forget, GATHER)
    }

    /// [`Accountant::spawn`], gathering for `gather` ([`GATHER`]) after the first record of a
    /// quiet spell.
    fn spawn_gathering(
        dir: PathBuf,
        pending: Vec<AccountingRecord>,
        forget: Forget,
        gather: Duration,
    ) -> std::io::Result<Accountant> {
        std::fs::create_dir_all(&dir)?;
        let (sender, receiver) = mpsc::channel::<Work>();
        let thread = std::thread::Builder::new().name("accounting".to_string()).spawn(move || {
            let last = pending.last().map(|record| record.id);
            let mut pending = not_yet_written(&dir, pending);
            if pending.is_empty() {
                // Every one was written before the server stopped: the store may forget them.
                if let Some(last) = last {
                    forget(last);
                }
            }
            run(&dir, &receiver, &mut pending, &*forget, gather);
        })?;
        Ok(Accountant { sender, writer: thread.thread().clone() })
    }

    /// Queues committed records (never blocks).
    pub fn append(&self, records: Vec<AccountingRecord>) {
        if !records.is_empty() {
            let _ = self.sender.send(Work::Append(records));
        }
    }

    /// Waits (at most `limit`) until every record queued so far is written: at shutdown.
    pub fn flush(&self, limit: Duration) {
        let (done, written) = mpsc::channel();
        if self.sender.send(Work::Flush(done)).is_ok() {
            self.writer.unpark();
            let _ = written.recv_timeout(limit);
        }
    }
}

/// The thread's loop: take what is queued, write it (retrying until it is written), forget it.
fn run(
    dir: &Path,
    receiver: &mpsc::Receiver<Work>,
    pending: &mut Vec<AccountingRecord>,
    forget: &dyn Fn(u64),
    gather_for: Duration,
) {
    let mut waiting: Vec<mpsc::Sender<()>> = Vec::new();
    let mut delay = FIRST_RETRY_DELAY;
    loop {
        if pending.is_empty() {
            for done in waiting.drain(..) {
                let _ = done.send(());
            }
            match receiver.recv() {
                Ok(work) => take(work, pending, &mut waiting),
                Err(_) => return,
            }
            gather(receiver, pending, &mut waiting, Instant::now() + gather_for);
        }
        for work in receiver.try_iter() {
            take(work, pending, &mut waiting);
        }
        let (written, outcome) = append_all(dir, pending);
        if let Some(last) = pending[..written].last() {
            forget(last.id);
        }
        pending.drain(..written);
        match outcome {
            Ok(()) => delay = FIRST_RETRY_DELAY,
            Err((path, error)) => {
                tracing::error!(path = %path.display(), %error, records = pending.len(), retry_in = ?delay, "cannot write the accounting records; they are kept in the job store and retried");
                std::thread::sleep(delay);
                delay = (delay * 2).min(MAX_RETRY_DELAY);
            }
        }
    }
}

/// Takes what arrives until `deadline`, until a flush is waiting, or until every sender is
/// gone, whichever comes first. Between looks it sleeps (parked: [`Accountant::flush`] unparks
/// it) until the deadline, not until the next record ([`GATHER`]).
fn gather(
    receiver: &mpsc::Receiver<Work>,
    pending: &mut Vec<AccountingRecord>,
    waiting: &mut Vec<mpsc::Sender<()>>,
    deadline: Instant,
) {
    while waiting.is_empty() {
        match receiver.try_recv() {
            Ok(work) => take(work, pending, waiting),
            Err(mpsc::TryRecvError::Disconnected) => return,
            Err(mpsc::TryRecvError::Empty) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return;
                }
                std::thread::park_timeout(left);
            }
        }
    }
}

fn take(work: Work, pending: &mut Vec<AccountingRecord>, waiting: &mut Vec<mpsc::Sender<()>>) {
    match work {
        Work::Append(records) => pending.extend(records),
        Work::Flush(done) => waiting.push(done),
    }
}

/// Appends the records (in order) to the files of their (local) days, one open, write and
/// fsync for each run of records of the same day. Returns how many records are durably
/// written (a prefix), and the first error with its file.
fn append_all(dir: &Path, records: &[AccountingRecord]) -> (usize, Result<(), (PathBuf, std::io::Error)>) {
    let mut written = 0;
    while written < records.len() {
        let day = Tm::local(records[written].time).file_day();
        let run = records[written..].iter().take_while(|record| Tm::local(record.time).file_day() == day).count();
        let mut text = String::new();
        for record in &records[written..written + run] {
            text.push_str(&record.line);
            text.push('\n');
        }
        let path = dir.join(day);
        if let Err(error) = append_durably(&path, &text) {
            return (written, Err((path, error)));
        }
        written += run;
    }
    (written, Ok(()))
}

/// Appends `text` to `path` and fsyncs it; on an error the file is cut back to its length
/// before (so a retry does not leave half a record).
fn append_durably(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    let before = file.metadata()?.len();
    let outcome = file.write_all(text.as_bytes()).and_then(|()| file.sync_data());
    if outcome.is_err() {
        let _ = file.set_len(before);
    }
    outcome
}

/// The records whose line is not yet in its day's file. Only a file's tail can hold them (they
/// were appended after every record forgotten before), so only as many bytes as they take
/// are read from the end of each day's file.
fn not_yet_written(dir: &Path, records: Vec<AccountingRecord>) -> Vec<AccountingRecord> {
    if records.is_empty() {
        return records;
    }
    let mut tails: HashMap<String, u64> = HashMap::new();
    for record in &records {
        *tails.entry(Tm::local(record.time).file_day()).or_default() += record.line.len() as u64 + 1;
    }
    let mut present: HashSet<String> = HashSet::new();
    for (day, length) in tails {
        if let Ok(text) = read_tail(&dir.join(&day), length) {
            present.extend(text.lines().map(str::to_string));
        }
    }
    let before = records.len();
    let missing: Vec<AccountingRecord> = records.into_iter().filter(|record| !present.contains(&record.line)).collect();
    tracing::info!(pending = before, missing = missing.len(), "accounting records from before the start");
    missing
}

/// The last `length` bytes of a file (all of it if shorter), as text.
fn read_tail(path: &Path, length: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata()?.len();
    file.seek(SeekFrom::Start(size.saturating_sub(length)))?;
    let mut bytes = Vec::new();
    file.take(length).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
#[path = "accounting_writer_tests.rs"]
mod tests;
