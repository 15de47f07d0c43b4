//! The evaluation limits: a [`Budget`] (commands evaluated, work and bytes in proportion to the
//! size of what is copied or built, a wall-clock deadline) that one or several interpreters
//! share, the largest value and the largest list.
//!
//! Owns: what counts and how much. Every command and loop iteration counts one; every 4 KiB a
//! command produces, copies or scans counts one more; the bytes produced add up to at most
//! [`MAX_TOTAL_BYTES`]. A limit once reached stays reached: every later count fails, and
//! `catch` does not stop the error (control.rs), so a modulefile cannot go on past it.

use std::cell::Cell;
use std::time::{Duration, Instant};

use super::{error, Exception};

/// Largest string a command may produce.
pub(crate) const MAX_STRING: usize = 64 << 20;
/// Most elements a list may be split into.
pub(crate) const MAX_LIST: usize = 1 << 20;
/// What one element of a split list costs beyond its text (its `String` and the smallest
/// allocation), counted as bytes produced for the lists held while a script runs.
pub(crate) const ELEMENT_COST: usize = 64;
/// Most bytes the commands of one budget may produce, in all (a bound on the memory held).
pub const MAX_TOTAL_BYTES: u64 = 1 << 30;
/// Bytes of work that count as one command.
pub(crate) const BYTES_PER_COMMAND: u64 = 4096;
/// Default command limit.
pub const DEFAULT_COMMANDS: u64 = 10_000_000;

/// The limit an evaluation reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Limit {
    /// More commands (or their equivalent in bytes of work) than allowed.
    #[error("too many commands evaluated (infinite loop?)")]
    Commands,
    /// More bytes than this were produced.
    #[error("too much data produced (over {} MiB in all)", .0 >> 20)]
    Memory(u64),
    /// The deadline, this long after the budget was made, passed.
    #[error("evaluation time limit of {} s exceeded", seconds(.0))]
    Time(Duration),
}

/// `d` in seconds as a person writes it (`10`, `0.5`).
pub fn seconds(d: &Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}", d.as_secs_f64())
    }
}

/// What the interpreters sharing it may still do.
#[derive(Debug)]
pub struct Budget {
    commands: Cell<u64>,
    command_limit: Cell<u64>,
    bytes: Cell<u64>,
    byte_limit: Cell<u64>,
    time: Option<(Instant, Duration)>,
    hit: Cell<Option<Limit>>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(None)
    }
}

impl Budget {
    /// A fresh budget; with `time`, it runs out that long from now.
    pub fn new(time: Option<Duration>) -> Budget {
        Budget {
            commands: Cell::new(0),
            command_limit: Cell::new(DEFAULT_COMMANDS),
            bytes: Cell::new(0),
            byte_limit: Cell::new(MAX_TOTAL_BYTES),
            time: time.map(|d| (Instant::now() + d, d)),
            hit: Cell::new(None),
        }
    }

    /// Sets the command limit.
    pub fn set_command_limit(&self, n: u64) {
        self.command_limit.set(n);
    }

    /// Sets the most bytes that may be produced in all (default [`MAX_TOTAL_BYTES`]).
    pub fn set_byte_limit(&self, n: u64) {
        self.byte_limit.set(n);
    }

    /// The limit reached, if one was.
    pub fn exceeded(&self) -> Option<Limit> {
        self.hit.get()
    }

    fn fail(&self, limit: Limit) -> Result<(), Exception> {
        self.hit.set(Some(limit));
        Err(error(limit.to_string()))
    }

    /// Counts `n` commands, then checks every limit.
    pub(crate) fn count(&self, n: u64) -> Result<(), Exception> {
        if let Some(limit) = self.hit.get() {
            return Err(error(limit.to_string()));
        }
        self.commands.set(self.commands.get().saturating_add(n));
        if self.commands.get() > self.command_limit.get() {
            return self.fail(Limit::Commands);
        }
        match self.time {
            Some((deadline, d)) if Instant::now() >= deadline => self.fail(Limit::Time(d)),
            _ => Ok(()),
        }
    }

    /// Counts the work of scanning or copying `n` bytes.
    pub(crate) fn work(&self, n: usize) -> Result<(), Exception> {
        self.count(n as u64 / BYTES_PER_COMMAND)
    }

    /// Counts `n` bytes produced: work, and against the total.
    pub(crate) fn bytes(&self, n: usize) -> Result<(), Exception> {
        self.bytes.set(self.bytes.get().saturating_add(n as u64));
        if self.bytes.get() > self.byte_limit.get() && self.hit.get().is_none() {
            return self.fail(Limit::Memory(self.byte_limit.get()));
        }
        self.work(n)
    }
}

/// Counts steps of a long native loop against a budget, a command every [`BYTES_PER_COMMAND`].
pub(crate) struct Steps<'a> {
    budget: Option<&'a Budget>,
    pending: u64,
}

impl<'a> Steps<'a> {
    /// Steps counted against `budget`; none when it is `None`.
    pub fn new(budget: Option<&'a Budget>) -> Steps<'a> {
        Steps { budget, pending: 0 }
    }

    /// Counts `n` steps.
    pub fn add(&mut self, n: usize) -> Result<(), Exception> {
        self.pending = self.pending.saturating_add(n as u64);
        if self.pending >= BYTES_PER_COMMAND {
            let whole = self.pending / BYTES_PER_COMMAND;
            self.pending %= BYTES_PER_COMMAND;
            if let Some(b) = self.budget {
                b.count(whole)?;
            }
        }
        Ok(())
    }
}

/// Errors when a result of `n` bytes would exceed [`MAX_STRING`].
pub(crate) fn check_len(n: usize) -> Result<(), Exception> {
    if n > MAX_STRING {
        Err(error("result string too long (over 64 MiB)"))
    } else {
        Ok(())
    }
}

/// Errors when a list of `n` elements would exceed [`MAX_LIST`].
pub(crate) fn check_list(n: usize) -> Result<(), super::TclError> {
    if n > MAX_LIST {
        Err(super::TclError::new("list too long (over 1048576 elements)"))
    } else {
        Ok(())
    }
}

/// Opens `path` for reading if it is a regular file, without blocking: a FIFO (whose open
/// waits for a writer) or a device (`/dev/zero`, endless) is refused, not waited on.
pub fn open_regular(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "not a regular file"));
    }
    Ok(file)
}

/// Reads a script file of at most [`MAX_STRING`] bytes (a larger one, or one that is not a
/// regular file, is refused rather than read into memory or waited on).
pub fn read_script(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?.take(MAX_STRING as u64 + 1).read_to_string(&mut text)?;
    if text.len() > MAX_STRING {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "file larger than 64 MiB"));
    }
    Ok(text)
}

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
