//! The session log: one append-only file per mom, `<spool>/sessions`, recording the session
//! (and this boot's id) of each job started here and each job's end, so a restarted mom can
//! end what its predecessor left running (recover.rs).
//!
//! One file for all jobs rather than a `<jobid>.SID` per job: every file created and removed
//! costs an inode allocation and a deletion, and on a file system without a journal each new
//! inode skips every inode deleted in the last minutes (ext4's `recently_deleted`), so per-job
//! files make each job's start dearer the more jobs ran before it. Appending a line allocates
//! nothing. The log is emptied in place when no job is left and rewritten (one new file) only
//! when it has grown past [`COMPACT_AT`] with jobs still running.
//!
//! Lines: `start <jobid> <sid> <boot>` and `end <jobid>`; job ids never hold spaces
//! (`files::job_id_is_safe`). Owns: the log's format, writing it, and reading the jobs it
//! leaves live. Must not: kill or clean up (recover.rs does).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The log's size past which it is rewritten with only the live jobs' lines (or twice theirs,
/// if more).
pub const COMPACT_AT: u64 = 256 * 1024;

/// A job the log leaves running: its session and the boot it was recorded in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSession {
    pub job_id: String,
    pub sid: i32,
    pub boot: String,
}

/// The open log. Shared by every job of the mom.
#[derive(Debug)]
pub struct SessionLog {
    path: PathBuf,
    state: Mutex<LogState>,
}

#[derive(Debug)]
struct LogState {
    file: File,
    /// Live jobs' `start` lines, by job id.
    live: HashMap<String, String>,
    len: u64,
}

/// The log's path in `spool`.
pub fn log_path(spool: &Path) -> PathBuf {
    spool.join("sessions")
}

impl SessionLog {
    /// Opens the log afresh, empty: call after recovery has read what it held.
    pub fn create(spool: &Path) -> io::Result<SessionLog> {
        let path = log_path(spool);
        let file = open_log(&path)?;
        Ok(SessionLog { path, state: Mutex::new(LogState { file, live: HashMap::new(), len: 0 }) })
    }

    /// Records that `job_id`'s shell runs in session `sid`.
    pub fn started(&self, job_id: &str, sid: i32) -> io::Result<()> {
        let line = format!("start {job_id} {sid} {}\n", super::files::boot_id());
        let mut state = pbslog::fatal::lock_or_exit(&self.state, "session log");
        state.append(&line)?;
        state.live.insert(job_id.to_string(), line);
        Ok(())
    }

    /// Records that `job_id` is gone (nothing if it never started here).
    pub fn ended(&self, job_id: &str) -> io::Result<()> {
        let mut state = pbslog::fatal::lock_or_exit(&self.state, "session log");
        if state.live.remove(job_id).is_none() {
            return Ok(());
        }
        if state.live.is_empty() {
            // Nothing left to recover: the log starts over in place.
            state.file.set_len(0)?;
            state.len = 0;
            return Ok(());
        }
        state.append(&format!("end {job_id}\n"))?;
        // Past the limit and mostly ended jobs' lines: however many jobs run, a rewrite comes
        // at most once per as many bytes appended as it writes.
        let live_len: u64 = state.live.values().map(|line| line.len() as u64).sum();
        if state.len > COMPACT_AT.max(2 * live_len) {
            state.compact(&self.path)?;
        }
        Ok(())
    }
}

impl LogState {
    fn append(&mut self, line: &str) -> io::Result<()> {
        self.file.write_all(line.as_bytes())?;
        self.len += line.len() as u64;
        Ok(())
    }

    /// Rewrites the log with the live jobs' lines only (a new file renamed over the old).
    fn compact(&mut self, path: &Path) -> io::Result<()> {
        let fresh = path.with_extension("new");
        let mut file = open_log(&fresh)?;
        let text: String = self.live.values().map(String::as_str).collect();
        file.write_all(text.as_bytes())?;
        std::fs::rename(&fresh, path)?;
        self.file = file;
        self.len = text.len() as u64;
        Ok(())
    }
}

/// Opens `path` empty, for appending (created mode 0600, no link followed).
fn open_log(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new().append(true).create(true).mode(0o600).custom_flags(libc::O_NOFOLLOW).open(path)?;
    file.set_len(0)?;
    Ok(file)
}

/// The jobs the log in `spool` leaves started and not ended (none when it is missing).
pub fn read_live(spool: &Path) -> Vec<LiveSession> {
    let text = std::fs::read_to_string(log_path(spool)).unwrap_or_default();
    parse_live(&text)
}

/// The jobs `text` leaves started and not ended, in the order they started (pure).
/// Malformed lines (a torn last write) are skipped.
pub fn parse_live(text: &str) -> Vec<LiveSession> {
    let mut live: Vec<LiveSession> = Vec::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["start", job_id, sid, boot] if super::files::job_id_is_safe(job_id) => {
                let Ok(sid) = sid.parse::<i32>() else { continue };
                live.retain(|session| session.job_id != *job_id);
                live.push(LiveSession { job_id: job_id.to_string(), sid, boot: boot.to_string() });
            }
            ["end", job_id] => live.retain(|session| session.job_id != *job_id),
            _ => {}
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(job_id: &str, sid: i32, boot: &str) -> LiveSession {
        LiveSession { job_id: job_id.into(), sid, boot: boot.into() }
    }

    #[test]
    fn started_and_not_ended_jobs_are_live() {
        let text = "start 1.h 100 b1\nstart 2.h 200 b1\nend 1.h\nstart 3[4].h 300 b1\n";
        assert_eq!(parse_live(text), vec![session("2.h", 200, "b1"), session("3[4].h", 300, "b1")]);
    }

    #[test]
    fn torn_and_hostile_lines_are_skipped() {
        let text = "start 1.h 100 b1\nstart ../x 5 b1\nstart 2.h notanumber b1\nstart 3.h 3\nend\ngarbage\nstart 4.h 4";
        assert_eq!(parse_live(text), vec![session("1.h", 100, "b1")]);
    }

    #[test]
    fn a_rerun_started_again_is_one_live_job() {
        assert_eq!(parse_live("start 1.h 100 b1\nstart 1.h 101 b1\n"), vec![session("1.h", 101, "b1")]);
    }

    #[test]
    fn the_log_records_starts_and_ends_and_empties_when_no_job_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::create(dir.path()).unwrap();
        log.started("1.h", 100).unwrap();
        log.started("2.h", 200).unwrap();
        log.ended("1.h").unwrap();
        log.ended("9.h").unwrap();
        let live = read_live(dir.path());
        assert_eq!(live.len(), 1);
        assert_eq!((live[0].job_id.as_str(), live[0].sid), ("2.h", 200));
        log.ended("2.h").unwrap();
        assert_eq!(std::fs::metadata(log_path(dir.path())).unwrap().len(), 0);
    }

    #[test]
    fn a_grown_log_is_rewritten_with_the_live_jobs_only() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::create(dir.path()).unwrap();
        log.started("1.h", 1).unwrap();
        let mut largest = 0;
        for seq in 2..20_000 {
            let id = format!("{seq}.h");
            log.started(&id, seq).unwrap();
            log.ended(&id).unwrap();
            largest = largest.max(std::fs::metadata(log_path(dir.path())).unwrap().len());
        }
        assert!(largest > COMPACT_AT / 2 && largest <= COMPACT_AT + 100, "grew to {largest} bytes at most");
        log.started("last.h", 7).unwrap();
        let mut ids: Vec<String> = read_live(dir.path()).into_iter().map(|s| s.job_id).collect();
        ids.sort();
        assert_eq!(ids, ["1.h", "last.h"], "the live jobs survive the rewrites and appends reach the new file");
    }

    #[test]
    fn many_live_jobs_do_not_make_every_end_a_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::create(dir.path()).unwrap();
        let mut seq = 0;
        while std::fs::metadata(log_path(dir.path())).unwrap().len() <= COMPACT_AT {
            seq += 1;
            log.started(&format!("{seq}.h"), seq).unwrap();
        }
        let before = std::fs::metadata(log_path(dir.path())).unwrap().len();
        log.ended("1.h").unwrap();
        let after = std::fs::metadata(log_path(dir.path())).unwrap().len();
        assert!(after > before, "appended, not rewritten: {before} -> {after} bytes");
        assert_eq!(read_live(dir.path()).len(), seq as usize - 1);
    }

    #[test]
    fn a_planted_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        std::os::unix::fs::symlink(&target, log_path(dir.path())).unwrap();
        assert!(SessionLog::create(dir.path()).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
