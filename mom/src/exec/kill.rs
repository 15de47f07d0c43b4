//! Killing a job's processes: everything in the job's session, found both as the process
//! group and by scanning `/proc/*/stat` for the session id (processes that changed their
//! process group stay in the session). SIGTERM first, SIGKILL after `kill_delay`.
//!
//! Owns: signalling and the session scan. Must not: reap (reap.rs does) or signal anything
//! outside the job's session; session ids 0 and 1 and the mom's own session are refused.

use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use std::time::Duration;
use tokio::time::Instant;

/// How often a kill checks whether the session is empty.
const POLL: Duration = Duration::from_millis(50);

/// One line of `/proc/<pid>/stat`, the fields the scan needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatLine {
    pub pid: i32,
    pub state: char,
    pub session: i32,
}

/// Parses `/proc/<pid>/stat` (`pid (comm) state ppid pgrp session ...`); the command name
/// may contain spaces and parentheses, so fields are counted after the last `)`.
pub fn parse_stat(text: &str) -> Option<StatLine> {
    parse_stat_bytes(text.as_bytes())
}

/// [`parse_stat`] on the raw bytes: a command name need not be UTF-8 (a process must not
/// escape the scan by naming itself so).
pub fn parse_stat_bytes(text: &[u8]) -> Option<StatLine> {
    let close = text.iter().rposition(|&b| b == b')')?;
    let (head, tail) = (&text[..close], &text[close + 1..]);
    let pid = std::str::from_utf8(head.split(|&b| b == b' ').next()?).ok()?.trim().parse().ok()?;
    let mut fields = tail.split(|b| b.is_ascii_whitespace()).filter(|field| !field.is_empty());
    let state = char::from(*fields.next()?.first()?);
    let session = std::str::from_utf8(fields.nth(2)?).ok()?.parse().ok()?;
    Some(StatLine { pid, state, session })
}

/// `/proc/<pid>/stat` of one process (`None`: gone or unreadable).
pub fn read_stat(pid: i32) -> Option<StatLine> {
    let mut text = [0u8; 1024];
    let path = format!("/proc/{pid}/stat");
    let file = rustix::fs::open(
        path.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()?;
    let length = rustix::io::read(&file, &mut text).ok()?;
    parse_stat_bytes(&text[..length])
}

/// Live (not zombie) processes of session `sid`: every `/proc/<pid>/stat` read. Runs after
/// every job without a cgroup, so it costs three system calls a process (`openat` relative to
/// `/proc`, one `read` into a stack buffer, `close`) and allocates nothing per process.
pub fn session_members(sid: i32) -> Vec<i32> {
    use rustix::fs::{openat, Dir, Mode, OFlags, CWD};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(proc_dir) = openat(CWD, "/proc", flags, Mode::empty()) else { return Vec::new() };
    let Ok(listing) = openat(&proc_dir, ".", flags, Mode::empty()) else { return Vec::new() };
    let Ok(entries) = Dir::new(listing) else { return Vec::new() };
    let mut path = Vec::with_capacity(32);
    let mut text = [0u8; 1024];
    let mut members = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_bytes();
        if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        path.clear();
        path.extend_from_slice(name);
        path.extend_from_slice(b"/stat\0");
        let Ok(path) = std::ffi::CStr::from_bytes_with_nul(&path) else { continue };
        let Ok(file) = openat(&proc_dir, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()) else { continue };
        let Ok(length) = rustix::io::read(&file, &mut text) else { continue };
        if let Some(stat) = parse_stat_bytes(&text[..length]) {
            if stat.session == sid && stat.state != 'Z' && stat.state != 'X' {
                members.push(stat.pid);
            }
        }
    }
    members
}

/// Sends `signal` to the process group `sid` only (one system call, no scan): the job's
/// processes that kept the shell's group. Refuses what [`signal_session`] refuses.
pub fn signal_group(sid: i32, signal: Signal) {
    if !may_signal(sid) {
        tracing::error!(sid, "refusing to signal this session");
        return;
    }
    let _ = signal::killpg(Pid::from_raw(sid), signal);
}

/// Sends `signal` to the process group `sid` and to every live member of session `sid`.
/// Returns how many members the scan found.
pub fn signal_session(sid: i32, signal: Signal) -> usize {
    if !may_signal(sid) {
        tracing::error!(sid, "refusing to signal this session");
        return 0;
    }
    let _ = signal::killpg(Pid::from_raw(sid), signal);
    let members = session_members(sid);
    for pid in &members {
        let _ = signal::kill(Pid::from_raw(*pid), signal);
    }
    members.len()
}

/// Sends `signal` once to every live member of session `sid` (qsig): unlike
/// [`signal_session`] no process gets it twice, so a trap runs once. Returns how many members
/// got it.
pub fn signal_members(sid: i32, signal: Signal) -> usize {
    if !may_signal(sid) {
        tracing::error!(sid, "refusing to signal this session");
        return 0;
    }
    let members = session_members(sid);
    for pid in &members {
        let _ = signal::kill(Pid::from_raw(*pid), signal);
    }
    members.len()
}

/// How a [`terminate`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// SIGTERM was enough.
    Terminated,
    /// Something was left after `delay`; it got SIGKILL.
    Killed,
}

/// SIGTERM to the session, then SIGKILL after `delay` if anything is left.
/// The `/proc` scans run on the blocking pool, not on the runtime's threads.
pub async fn terminate(sid: i32, delay: Duration) -> Termination {
    blocking(move || signal_session(sid, Signal::SIGTERM)).await;
    // A suspended (stopped) job gets SIGTERM only once it runs again.
    blocking(move || signal_members(sid, Signal::SIGCONT)).await;
    let deadline = Instant::now().checked_add(delay).unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
    while Instant::now() < deadline {
        tokio::time::sleep(POLL).await;
        if blocking(move || session_members(sid).is_empty()).await {
            return Termination::Terminated;
        }
    }
    blocking(move || signal_session(sid, Signal::SIGKILL)).await;
    Termination::Killed
}

/// Runs a `/proc` scan on the blocking pool.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(value) => value,
        Err(error) => std::panic::resume_unwind(error.into_panic()),
    }
}

/// SIGKILL to whatever is left in the session, repeated until it is empty or `patience`
/// runs out. Returns whether the session is empty.
pub async fn kill_leftovers(sid: i32, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    loop {
        if blocking(move || signal_session(sid, Signal::SIGKILL)).await == 0 {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether `sid` may be signalled: a real session that is not the mom's own.
fn may_signal(sid: i32) -> bool {
    let own = nix::unistd::getsid(None).map(Pid::as_raw).unwrap_or(-1);
    sid > 1 && sid != own && sid != std::process::id() as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_stat_lines() {
        let line = "4242 (sleep) S 4240 4241 4241 0 -1 4194304 91 0 0 0";
        assert_eq!(parse_stat(line), Some(StatLine { pid: 4242, state: 'S', session: 4241 }));
        let odd = "77 (a) b (c)) Z 1 77 70 0";
        assert_eq!(parse_stat(odd), Some(StatLine { pid: 77, state: 'Z', session: 70 }));
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) R 0"), None);
        let foreign = b"88 (\xff\xfe) S 1 88 88 0";
        assert_eq!(parse_stat_bytes(foreign), Some(StatLine { pid: 88, state: 'S', session: 88 }));
    }

    #[test]
    fn never_signals_own_session_or_init() {
        let own = nix::unistd::getsid(None).unwrap().as_raw();
        assert!(!may_signal(own));
        assert!(!may_signal(1));
        assert!(!may_signal(0));
        assert!(!may_signal(-5));
    }

    #[test]
    fn finds_our_own_session() {
        let own = nix::unistd::getsid(None).unwrap().as_raw();
        assert!(session_members(own).contains(&(std::process::id() as i32)));
    }
}
