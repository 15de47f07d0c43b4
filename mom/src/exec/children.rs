//! The mom's children, tracked, so a job without a cgroup ends without scanning every
//! `/proc/*/stat` in the common case (nothing of it survived its shell).
//!
//! How: the mom is a child subreaper (`PR_SET_CHILD_SUBREAPER`, [`become_subreaper`]), so a
//! process of a job whose parent dies is re-parented to the mom, not to init. Every process
//! of a job's session descends from its top shell, so once that shell is reaped, each survivor
//! is a child of one of the mom's threads or below one. The mom's own children are of three
//! kinds: the top shells and tasks it started (each in a session of its own, [`register`]ed
//! while it is started and until it is reaped), helpers it runs and waits for itself (copies,
//! stage commands, `git`: in the mom's own session), and adopted orphans (anything else).
//! [`adopted_orphans`] lists `/proc/self/task/<main thread>/children`, where orphans go: no
//! adopted orphan means no process of any ended job is left, and the scan is skipped. Adopted
//! orphans that already ended are reaped there (nobody else waits for them); live ones make the
//! caller scan as before.
//!
//! Owns: the subreaper setting, the registry of started children and the orphan pass. Must
//! not: reap a registered child or one in the mom's own session (their owners wait for them).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Whether this process is a subreaper (orphans come here, so [`adopted_orphans`] sees them).
static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// The started children not yet reaped (top shells, tasks).
static STARTED: Mutex<Option<HashSet<i32>>> = Mutex::new(None);

fn started() -> MutexGuard<'static, Option<HashSet<i32>>> {
    STARTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Makes this process the subreaper of its descendants. Without it, [`adopted_orphans`] says
/// nothing (`None`) and the callers scan.
pub fn become_subreaper() {
    // SAFETY: a plain system call without pointers.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } == 0 {
        SUBREAPER.store(true, Ordering::Release);
    } else {
        tracing::warn!("cannot become the subreaper of jobs: {}", std::io::Error::last_os_error());
    }
}

/// Starts a child with `start` and registers its pid before any orphan pass can see it.
///
/// A start can take long: its parent waits until the child has entered the job's directory,
/// which may be on a hung file system. The registry's lock is held across it only where the
/// orphan pass could see the child: on a kernel older than 3.19 (every thread's children are
/// read), or when the start runs on the main thread. Starts run on the blocking pool, whose
/// children the pass never reads, so elsewhere the lock is taken to record the pid alone, and
/// a start that hangs holds up neither the reaping of other children nor the pass.
pub fn register<T>(start: impl FnOnce() -> std::io::Result<(i32, T)>) -> std::io::Result<(i32, T)> {
    // SAFETY: a plain system call without arguments.
    let on_main_thread = unsafe { libc::gettid() } as u32 == std::process::id();
    let seen_by_the_pass = !orphans_go_to_main_thread() || on_main_thread;
    let held = seen_by_the_pass.then(started);
    let (pid, value) = start()?;
    held.unwrap_or_else(started).get_or_insert_with(HashSet::new).insert(pid);
    Ok((pid, value))
}

/// Reaps registered child `pid` with `reap` (a `wait4` that returns `Some` once reaped) and
/// forgets it in the same step, so its pid, reused, is never taken for it.
pub fn reap_registered<T>(pid: i32, reap: impl FnOnce() -> T, reaped: impl Fn(&T) -> bool) -> T {
    let mut started = started();
    let result = reap();
    if reaped(&result) {
        if let Some(set) = started.as_mut() {
            set.remove(&pid);
        }
    }
    result
}

/// Whether adopted orphans (processes of ended jobs, or that left a job) live on: `None` when
/// the mom is no subreaper or its children cannot be listed (the caller must scan). Those that
/// ended are reaped here.
pub fn adopted_orphans() -> Option<bool> {
    if !SUBREAPER.load(Ordering::Acquire) {
        return None;
    }
    let own_session = nix::unistd::getsid(None).ok()?.as_raw();
    let started = started();
    let mut alive = false;
    for pid in children()? {
        if started.as_ref().is_some_and(|set| set.contains(&pid)) {
            continue;
        }
        let Some(stat) = super::kill::read_stat(pid) else { continue };
        if stat.session == own_session {
            continue;
        }
        if stat.state == 'Z' {
            // SAFETY: reaps an adopted orphan that ended; nobody else waits for it.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        } else {
            alive = true;
        }
    }
    Some(alive)
}

/// The mom's children that may be adopted orphans. The kernel gives an orphan to the first
/// live thread of the subreaper's thread group (`find_new_reaper` and `find_alive_thread` in
/// `kernel/exit.c`, since Linux 3.19), and that list starts with the main thread, which lives
/// as long as the mom: only its `children` file is read. Every other thread's children are the
/// mom's own starts (registered) or helpers (in its session), which the pass skips anyway;
/// reading them cost five system calls per thread of the blocking pool at every job's end.
/// Older kernels gave an orphan to the thread that had forked its ancestor: all are read there.
fn children() -> Option<Vec<i32>> {
    let mut pids = Vec::new();
    if orphans_go_to_main_thread() {
        read_children(&format!("/proc/self/task/{}/children", std::process::id()), &mut pids)?;
        return Some(pids);
    }
    for thread in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        read_children(&thread.path().join("children").to_string_lossy(), &mut pids)?;
    }
    Some(pids)
}

/// Appends the pids listed in a `children` file to `pids` (one read into a buffer, without the
/// `statx` of `fs::read_to_string`).
fn read_children(path: &str, pids: &mut Vec<i32>) -> Option<()> {
    use rustix::fs::{open, Mode, OFlags};
    let file = open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let (mut text, mut length) = (vec![0u8; 1024], 0);
    loop {
        if length == text.len() {
            text.resize(text.len() * 2, 0);
        }
        match rustix::io::read(&file, &mut text[length..]) {
            Ok(0) => break,
            Ok(read) => length += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
    let text = std::str::from_utf8(&text[..length]).ok()?;
    pids.extend(text.split_whitespace().filter_map(|pid| pid.parse::<i32>().ok()));
    Some(())
}

/// Whether this kernel (3.19 or later) gives a subreaper's orphans to its main thread.
fn orphans_go_to_main_thread() -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| kernel_at_least(&rustix::system::uname().release().to_string_lossy(), (3, 19)))
}

/// Whether a kernel release ("6.1.0-27-amd64") is `wanted` (major, minor) or later.
fn kernel_at_least(release: &str, wanted: (u32, u32)) -> bool {
    let mut numbers = release.split(|c: char| !c.is_ascii_digit()).map(|part| part.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= wanted,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Runs [`scenario`] in a fresh copy of this test binary: a subreaper's pass may reap any
    /// unregistered child, so no other test may share its process.
    #[test]
    fn orphans_are_adopted_seen_and_reaped_registered_children_are_not() {
        if std::env::var_os("MOM_CHILDREN_SCENARIO").is_some() {
            return scenario();
        }
        let name = "exec::children::tests::orphans_are_adopted_seen_and_reaped_registered_children_are_not";
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1", "--nocapture"])
            .env("MOM_CHILDREN_SCENARIO", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && text.contains("1 passed"),
            "{text}{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// A start that waits (here, until the test lets it go on) does not hold up the reaping of
    /// another registered child, which the runtime's threads do (exec/reap.rs). The orphan
    /// pass takes the same lock; it is not run here, as this process is no subreaper.
    #[test]
    fn a_start_that_waits_does_not_hold_up_reaping() {
        assert!(orphans_go_to_main_thread(), "this kernel is older than 3.19");
        let (go_on, wait) = std::sync::mpsc::channel::<()>();
        let (in_start, entered) = std::sync::mpsc::channel();
        let starter = std::thread::spawn(move || {
            register(|| {
                in_start.send(()).unwrap();
                let _ = wait.recv();
                Err::<(i32, ()), _>(std::io::Error::other("not started"))
            })
        });
        entered.recv_timeout(Duration::from_secs(10)).unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            reap_registered(-1, || 0, |_| false);
            done.send(()).unwrap();
        });
        let result = finished.recv_timeout(Duration::from_secs(10));
        drop(go_on);
        assert!(starter.join().unwrap().is_err());
        assert!(result.is_ok(), "reaping waited for the start");
    }

    #[test]
    fn kernel_releases_compare_by_major_then_minor() {
        assert!(kernel_at_least("6.1.0-27-amd64", (3, 19)));
        assert!(kernel_at_least("3.19.0", (3, 19)));
        assert!(kernel_at_least("4.0", (3, 19)));
        assert!(!kernel_at_least("3.10.0-1160.el7.x86_64", (3, 19)));
        assert!(!kernel_at_least("2.6.32", (3, 19)));
        assert!(!kernel_at_least("", (3, 19)));
        assert!(!kernel_at_least("garbage", (3, 19)));
    }

    fn scenario() {
        // Orphans must reach the main thread's list: this scenario's children are started on
        // libtest's test thread, never the main one.
        assert!(orphans_go_to_main_thread(), "this kernel is older than 3.19");
        become_subreaper();
        assert_eq!(adopted_orphans(), Some(false));
        // A started child (registered) that has ended: never reaped by the pass.
        let (shell, _child) = register(|| {
            let child = std::process::Command::new("/bin/sh").args(["-c", "exit 3"]).spawn()?;
            Ok((child.id() as i32, child))
        })
        .unwrap();
        // A session whose leader exits at once, leaving a sleeper: adopted by us.
        let output = std::process::Command::new("setsid")
            .args(["-w", "sh", "-c", "sleep 30 >/dev/null 2>&1 </dev/null & echo $!"])
            .output()
            .unwrap();
        let orphan: i32 = String::from_utf8_lossy(&output.stdout).trim().parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !children().unwrap().contains(&orphan) {
            assert!(Instant::now() < deadline, "the orphan was not adopted");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(adopted_orphans(), Some(true));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(orphan), nix::sys::signal::Signal::SIGKILL).unwrap();
        while children().unwrap().contains(&orphan) {
            assert!(Instant::now() < deadline, "the dead orphan was not reaped");
            let _ = adopted_orphans();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(adopted_orphans(), Some(false));
        let mut status = 0;
        // SAFETY: waits for our own registered child.
        let reaped = reap_registered(shell, || unsafe { libc::waitpid(shell, &mut status, 0) }, |r| *r == shell);
        assert_eq!((reaped, libc::WEXITSTATUS(status)), (shell, 3), "the registered child was left to its owner");
    }
}
