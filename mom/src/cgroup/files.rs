//! Reading and writing cgroup files: bounded reads, one-write writes, the `key value` and
//! pid-list formats both hierarchies use, and signalling the pids of a `cgroup.procs`.
//!
//! Owns: the small file helpers v1.rs and v2.rs share. Must not: know which hierarchy it is in.

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use std::io::{self, Read, Write};
use std::path::Path;

/// The most bytes read from one cgroup file (a `cgroup.procs` of ~400 000 pids).
pub const MAX_READ: u64 = 4 << 20;

/// The file's text, at most [`MAX_READ`] bytes.
pub fn read(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_READ).read_to_string(&mut text)?;
    Ok(text)
}

/// A file holding one number.
pub fn read_u64(path: &Path) -> Option<u64> {
    read(path).ok()?.trim().parse().ok()
}

/// Writes `text` in one `write` (cgroup files take one value per write).
pub fn write(path: &Path, text: &str) -> io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(text.as_bytes())
        .map_err(|err| io::Error::new(err.kind(), format!("writing {text:?} to {}: {err}", path.display())))
}

/// The value of `key` in `key value` lines (`memory.events`, `cpu.stat`, `memory.oom_control`).
pub fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

/// The live (not zombie) pids listed in a `cgroup.procs` file; empty when it cannot be read.
pub fn live_pids(procs: &Path) -> Vec<i32> {
    let Ok(text) = read(procs) else { return Vec::new() };
    text.split_whitespace()
        .filter_map(|pid| pid.parse::<i32>().ok())
        .filter(|pid| *pid > 1 && !is_zombie(*pid))
        .collect()
}

/// Whether `pid` has exited and waits to be reaped (a zombie stays listed in v1 cgroups).
fn is_zombie(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    stat.rsplit_once(')')
        .and_then(|(_, tail)| tail.split_whitespace().next())
        .is_none_or(|state| state == "Z" || state == "X")
}

/// Sends `signal` to every live pid of `procs`; returns how many got it. The mom's own pid is
/// never signalled.
pub fn signal_pids(procs: &Path, signal: Signal) -> usize {
    let own = std::process::id() as i32;
    let pids = live_pids(procs);
    for pid in pids.iter().filter(|pid| **pid != own) {
        let _ = nix::sys::signal::kill(Pid::from_raw(*pid), signal);
    }
    pids.len()
}

/// Removes a cgroup directory (an empty cgroup: only its control files); gone already is fine.
pub fn remove_dir(dir: &Path) -> io::Result<()> {
    match std::fs::remove_dir(dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Creates `dir` (an existing one is fine); `Ok(false)` when its parent is missing, so the
/// caller makes the parent only then instead of trying it every time.
pub fn make_dir_under(dir: &Path) -> io::Result<bool> {
    match std::fs::create_dir(dir) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(true),
        Err(err) => Err(io::Error::new(err.kind(), format!("cannot create {}: {err}", dir.display()))),
        Ok(()) => Ok(true),
    }
}

/// Creates a cgroup directory; one that exists already (a rerun, a mom restart) is reused.
pub fn make_dir(dir: &Path) -> io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map_err(|err| io::Error::new(err.kind(), format!("cannot create {}: {err}", dir.display()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_values() {
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(keyed(events, "oom_kill"), Some(1));
        assert_eq!(keyed(events, "oom"), Some(1));
        assert_eq!(keyed(events, "absent"), None);
        let oom_control = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(keyed(oom_control, "oom_kill"), Some(3));
        let stat = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n";
        assert_eq!(keyed(stat, "usage_usec"), Some(2_500_000));
    }

    #[test]
    fn pid_lists_skip_the_dead() {
        let dir = tempfile::tempdir().unwrap();
        let procs = dir.path().join("cgroup.procs");
        let me = std::process::id();
        std::fs::write(&procs, format!("{me}\n1\n999999999\njunk\n")).unwrap();
        assert_eq!(live_pids(&procs), vec![me as i32], "init, a dead pid and junk are skipped");
    }
}
