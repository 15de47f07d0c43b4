//! The child copy as another user: what the kernel lets `nobody` do, the directory case, the
//! refusals and the timeout. Needs root (under CI it fails rather than skip).

use super::*;
use crate::exec::user;
use crate::test_support::is_root;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;

fn nobody() -> (Identity, u32) {
    let user = user::resolve("nobody", None).expect("the nobody account");
    (Identity::of(&user), user.uid)
}

fn spool(dir: &Path, text: &str) -> File {
    let path = dir.join("1.OU");
    std::fs::write(&path, text).unwrap();
    File::open(path).unwrap()
}

/// A directory anyone may write (`/tmp`'s mode), for files `nobody` creates.
fn open_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    dir
}

#[test]
fn a_file_is_made_by_the_user_with_the_umask_in_a_directory_or_at_its_name() {
    if !is_root() {
        return;
    }
    let (nobody, uid) = nobody();
    let dir = open_dir();
    let source = spool(dir.path(), "hello\n");
    copy(&source, dir.path(), "job.o1", &nobody, 0o027).unwrap();
    let made = dir.path().join("job.o1");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "hello\n");
    let meta = std::fs::metadata(&made).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (uid, 0o640), "the user's file, the job's umask");

    // An existing file of the user's, longer: emptied first, its mode kept.
    let named = dir.path().join("named.out");
    std::fs::write(&named, "much older and longer text\n").unwrap();
    std::os::unix::fs::chown(&named, Some(uid), None).unwrap();
    std::fs::set_permissions(&named, std::fs::Permissions::from_mode(0o604)).unwrap();
    copy(&source, &named, "job.o1", &nobody, 0o077).unwrap();
    assert_eq!(std::fs::read_to_string(&named).unwrap(), "hello\n");
    assert_eq!(std::fs::metadata(&named).unwrap().mode() & 0o777, 0o604);

    // The source is read from its start, however far the mom's own reads went.
    let mut big = Vec::new();
    for line in 0..20_000 {
        writeln!(big, "line {line}").unwrap();
    }
    let source = spool(dir.path(), std::str::from_utf8(&big).unwrap());
    copy(&source, &named, "x", &nobody, 0o077).unwrap();
    assert_eq!(std::fs::read(&named).unwrap(), big);
    copy(&source, Path::new("/dev/null"), "x", &nobody, 0o077).unwrap();
}

#[test]
fn the_kernel_checks_the_users_rights_not_roots() {
    if !is_root() {
        return;
    }
    let (nobody, _) = nobody();
    let dir = tempfile::tempdir().unwrap(); // root's: others may not write in it
    let source = spool(dir.path(), "secret\n");
    let refused = copy(&source, dir.path(), "job.o1", &nobody, 0o077).unwrap_err();
    let expected = format!("cannot create {}: Permission denied", dir.path().join("job.o1").display());
    assert_eq!(refused.to_string(), expected);
    assert!(!dir.path().join("job.o1").exists());

    // A link the user planted towards a root file: followed as the user, so refused.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let open = open_dir();
    let link = open.path().join("out.link");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let refused = copy(&source, &link, "x", &nobody, 0o077).unwrap_err();
    assert!(refused.to_string().ends_with("Permission denied"), "{refused}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    // The mom itself is still root in every thread.
    assert!(nix::unistd::geteuid().is_root() && nix::unistd::getegid().as_raw() == 0);
}

#[test]
fn a_fifo_is_refused_at_once_and_a_stuck_copy_times_out() {
    if !is_root() {
        return;
    }
    let (nobody, uid) = nobody();
    let dir = open_dir();
    let source = spool(dir.path(), "x\n");
    // The user's own FIFO (the kernel's protected_fifos refuses others' in a sticky directory).
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    std::os::unix::fs::chown(&fifo, Some(uid), None).unwrap();
    let refused = copy(&source, &fifo, "x", &nobody, 0o077).unwrap_err();
    assert_eq!(refused.to_string(), format!("{}: not a regular file", fifo.display()), "no reader: ENXIO");
    // A FIFO with a reader opens: then the type check refuses it.
    let _reader = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    let refused = copy(&source, &fifo, "x", &nobody, 0o077).unwrap_err();
    assert_eq!(refused.to_string(), format!("{}: not a regular file", fifo.display()));

    // A terminal nobody reads: the writes block once its buffer is full, the alarm ends them.
    let pty = nix::pty::openpty(None, None).unwrap();
    let slave = std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd())).unwrap();
    let big = spool(dir.path(), &"0123456789abcdef".repeat(64 * 1024));
    let root = Identity::of(&user::resolve("root", None).unwrap());
    let stuck = copy_within(&big, &slave, "x", &root, 0o077, 1).unwrap_err();
    assert_eq!(stuck.to_string(), format!("copy to {} timed out after 1 seconds", slave.display()));
}

/// The pids of this process's children whose effective uid is `uid`.
fn children_as(uid: u32) -> Vec<i32> {
    let effective = |pid: i32| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let uids = status.lines().find_map(|line| line.strip_prefix("Uid:"))?;
        uids.split_whitespace().nth(1)?.parse::<u32>().ok()
    };
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else { continue };
        found.extend(
            list.split_whitespace().filter_map(|pid| pid.parse().ok()).filter(|pid| effective(*pid) == Some(uid)),
        );
    }
    found
}

/// Sets `fs.suid_dumpable` for the guard's life, then puts the old value back.
struct SuidDumpable(String);

impl SuidDumpable {
    const PATH: &'static str = "/proc/sys/fs/suid_dumpable";

    fn set(value: &str) -> SuidDumpable {
        let old = std::fs::read_to_string(Self::PATH).unwrap();
        std::fs::write(Self::PATH, value).unwrap();
        SuidDumpable(old.trim().to_string())
    }
}

impl Drop for SuidDumpable {
    fn drop(&mut self) {
        let _ = std::fs::write(Self::PATH, &self.0);
    }
}

/// The copy holds the mom's memory and, blocked, one of its threads: the user may neither stop
/// it (the thread would wait past the alarm) nor read its memory, even with `fs.suid_dumpable`
/// at 1 (a debugging setting some hosts keep, under which the kernel leaves a process that
/// changed identity traceable by that identity).
#[test]
fn the_user_can_neither_stop_nor_read_the_copy_that_holds_the_moms_memory() {
    if !is_root() {
        return;
    }
    let _debugging = SuidDumpable::set("1");
    let (nobody, uid) = nobody();
    let dir = open_dir();
    let big = spool(dir.path(), &"0123456789abcdef".repeat(64 * 1024));
    let pty = nix::pty::openpty(None, None).unwrap();
    nix::unistd::fchown(pty.slave.as_raw_fd(), Some(nix::unistd::Uid::from_raw(uid)), None).unwrap();
    let slave = std::fs::read_link(format!("/proc/self/fd/{}", pty.slave.as_raw_fd())).unwrap();
    let stuck = std::thread::spawn(move || copy_within(&big, &slave, "x", &nobody, 0o077, 3));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let pid = loop {
        if let Some(pid) = children_as(uid).first() {
            break *pid;
        }
        assert!(std::time::Instant::now() < deadline, "the copy child never ran as the user");
        std::thread::yield_now();
    };
    let stop = std::process::Command::new("kill").args(["-STOP", &pid.to_string()]).uid(uid).gid(uid).output().unwrap();
    if stop.status.success() {
        // Else the stopped copy would hold its thread, and this test, for ever.
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
    assert!(!stop.status.success(), "the user stopped the copy");
    for file in ["environ", "mem"] {
        let read = std::process::Command::new("head")
            .args(["-c", "1", &format!("/proc/{pid}/{file}")])
            .uid(uid)
            .gid(uid)
            .output()
            .unwrap();
        assert!(!read.status.success(), "the user read the copy's {file}");
        assert!(String::from_utf8_lossy(&read.stderr).contains("Permission denied"), "{read:?}");
    }
    assert!(stuck.join().unwrap().unwrap_err().to_string().contains("timed out after 3 seconds"));
}
