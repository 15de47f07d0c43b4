//! The system-test harness: real local clusters (`minipbs up` in a temporary state directory:
//! one `pbs_server` and N `pbs_mom` processes on this host, talking over Unix sockets, or over
//! TCP + MUNGE on loopback when `MINIPBS_TEST_TRANSPORT=tcp`), the real command binaries, and
//! polling helpers with deadlines (never fixed sleeps).
//!
//! `netns.rs` and `netcluster.rs` spread a cluster over network namespaces instead (the
//! multi-host tests: TCP + MUNGE between "hosts").
//!
//! The binaries are built on first use with the same cargo that runs the tests, so
//! `cargo test --workspace` alone is enough.

#[cfg(test)]
mod layering;
#[cfg(test)]
mod map;
pub mod netcluster;
pub mod netns;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

/// Where the binaries are (`target/debug`), built once per test process.
pub fn bin_dir() -> PathBuf {
    static BUILD: Once = Once::new();
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().and_then(Path::parent).map(Path::to_path_buf))
        .expect("test binary lives in target/<profile>/deps");
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .args(["build", "--bins", "-p", "client", "-p", "server", "-p", "mom", "-p", "modules"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the binaries failed");
    });
    dir
}

/// Polls `check` every 20 ms until it returns `Some` or `limit` passes.
pub fn wait_for<T>(limit: Duration, what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped: in this VM pid 1 does
/// not reap the daemons `minipbs up` leaves to it).
pub fn process_gone(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty() || stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// Whether every cluster runs over TCP + MUNGE (`MINIPBS_TEST_TRANSPORT=tcp`).
pub fn tcp_transport() -> bool {
    std::env::var("MINIPBS_TEST_TRANSPORT").is_ok_and(|value| value == "tcp")
}

/// The `minipbs up` options of the transport under test (`--transport tcp` or none).
pub fn transport_args() -> &'static [&'static str] {
    if tcp_transport() {
        &["--transport", "tcp"]
    } else {
        &[]
    }
}

/// Whether this runs under CI: the environment variable `CI` is set (to anything but the empty
/// string), as `.ci/run` and CI services do.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty())
}

/// The one way a test skips when what it needs (root, a tool) is missing: prints
/// `SKIPPED: <reason>` and the caller returns, except under CI ([`under_ci`]), where a test
/// that cannot run is a failure: panics with the same reason, so nothing passes untested.
pub fn skip(reason: &str) {
    if under_ci() {
        panic!("SKIPPED under CI, which is a failure (CI is set): {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Whether this runs as root; when not, skips ([`skip`]) saying that `test` needs root for `what`.
pub fn root_or_skip(test: &str, what: &str) -> bool {
    let root = is_root();
    if !root {
        skip(&format!("{test} needs root {what}"));
    }
    root
}

/// Whether MUNGE is installed; when not, skips ([`skip`]: the caller returns, or under CI fails).
pub fn munge_installed() -> bool {
    let installed = Path::new("/usr/sbin/munged").exists() && Path::new("/usr/sbin/mungekey").exists();
    if !installed {
        skip("MUNGE is not installed (apt-get install munge)");
    }
    installed
}

/// A munged of its own (own key, socket, pid, log and seed files in a temporary directory),
/// for credentials of another MUNGE key; killed when dropped.
pub struct Munged {
    pub dir: tempfile::TempDir,
    child: std::process::Child,
}

impl Munged {
    /// Creates a key with `mungekey` and starts munged in the foreground.
    pub fn start() -> Munged {
        let dir = tempfile::Builder::new().prefix("minipbs-munge-").tempdir().expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let file = |name: &str| dir.path().join(name).display().to_string();
        let status = Command::new("mungekey").args(["--create", "--keyfile", &file("key")]).status().expect("mungekey");
        assert!(status.success(), "mungekey failed");
        let socket = format!("--socket={}", file("socket"));
        let child = Command::new("/usr/sbin/munged")
            .args(["--foreground", "--force", &socket, &format!("--key-file={}", file("key"))])
            .args([format!("--pid-file={}", file("pid")), format!("--log-file={}", file("log"))])
            .arg(format!("--seed-file={}", file("seed")))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("munged starts");
        let munged = Munged { dir, child };
        let socket = munged.socket();
        wait_for(Duration::from_secs(10), "munged to answer", || {
            let status = Command::new("munge").arg("-S").arg(&socket).args(["-n"]).stdout(Stdio::null()).status();
            status.ok()?.success().then_some(())
        });
        munged
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("socket")
    }
}

impl Drop for Munged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `shells` threads, each running `qsub script` `each` times in a row: every printed id is
/// counted in `printed` as it comes; each thread's handle gives back the ids it printed (a
/// failed qsub prints none). For tests that kill the server while jobs are submitted.
pub fn submit_concurrently(
    cluster: &std::sync::Arc<Cluster>,
    script: &Path,
    shells: usize,
    each: usize,
    printed: &std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> Vec<std::thread::JoinHandle<Vec<String>>> {
    (0..shells)
        .map(|_| {
            let (cluster, script, printed) = (cluster.clone(), script.to_path_buf(), printed.clone());
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                for _ in 0..each {
                    let output = cluster.command("qsub").arg(&script).output().unwrap();
                    if output.status.success() {
                        ids.push(String::from_utf8(output.stdout).unwrap().trim().to_string());
                        printed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                ids
            })
        })
        .collect()
}

/// `minipbs up`'s store options for this run: `--postgres` when `MINIPBS_TEST_STORE` is
/// `postgresql` (the cluster's own PostgreSQL; `.ci/run` runs the restart tests so), else none
/// (SQLite).
pub fn store_args() -> &'static [&'static str] {
    match std::env::var("MINIPBS_TEST_STORE").as_deref() {
        Ok("postgresql") => &["--postgres"],
        Ok("sqlite") | Err(_) => &[],
        Ok(other) => panic!("MINIPBS_TEST_STORE={other}: use sqlite or postgresql"),
    }
}

/// The URL of the PostgreSQL `minipbs up --postgres` started for the cluster in `state`.
pub fn postgres_url(state: &Path) -> String {
    format!("postgresql://postgres@/postgres?host={}", state.join("postgres").display())
}

/// Shape of a test cluster.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub nodes: u32,
    pub ppn: u32,
    pub gpus: u32,
}

/// A running local cluster; stopped (`minipbs down`) when dropped.
pub struct Cluster {
    /// State directory (socket, database, logs, spools).
    pub state: tempfile::TempDir,
    /// A submit directory, writable by everyone (tests submit as other users too).
    pub work: tempfile::TempDir,
    pub conf: PathBuf,
    pub bin: PathBuf,
    pub server_name: String,
}

impl Cluster {
    /// Starts a cluster with `minipbs up` (server name `testsrv`, kill delay 2 s).
    pub fn up(shape: Shape) -> Cluster {
        Cluster::up_with(shape, &[])
    }

    /// Starts a cluster with `minipbs up` and extra options (`--flavor torque`, `--sendmail <path>`,
    /// ...). Without `--sendmail` the cluster has no mailer (tests never mail through the host's).
    pub fn up_with(shape: Shape, extra: &[&str]) -> Cluster {
        let bin = bin_dir();
        let no_mailer: &[&str] = if extra.contains(&"--sendmail") { &[] } else { &["--sendmail", ""] };
        let transport = if extra.contains(&"--transport") { &[] } else { transport_args() };
        let store = if extra.contains(&"--standby") || extra.contains(&"--postgres") { &[] } else { store_args() };
        let state = tempfile::Builder::new().prefix("minipbs-state-").tempdir().expect("temp dir");
        let work = tempfile::Builder::new().prefix("minipbs-work-").tempdir().expect("temp dir");
        // Other users need to reach the socket (search) and write their output (work).
        std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        let output = Command::new(bin.join("minipbs"))
            .args(["up", "--state-dir"])
            .arg(state.path())
            .args(["--nodes", &shape.nodes.to_string(), "--ppn", &shape.ppn.to_string()])
            .args(["--gpus", &shape.gpus.to_string(), "--kill-delay", "2", "--server-name", "testsrv"])
            .args(extra)
            .args(no_mailer)
            .args(transport)
            .args(store)
            .output()
            .expect("minipbs runs");
        let cluster =
            Cluster { conf: state.path().join("pbs.conf"), state, work, bin, server_name: "testsrv".to_string() };
        assert!(
            output.status.success(),
            "minipbs up failed: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            cluster.logs()
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(stdout.trim(), format!("export PBS_CONF_FILE={}", cluster.conf.display()));
        cluster
    }

    /// A command of the cluster (`qsub`, `qstat`, ...) with `PBS_CONF_FILE` set, run in the
    /// submit directory.
    pub fn command(&self, name: &str) -> Command {
        let mut command = Command::new(self.bin.join(name));
        command.env("PBS_CONF_FILE", &self.conf).env_remove("PBS_SERVER").current_dir(self.work.path());
        // Jobs run through their owner's login shell; root's login files on a developer or CI
        // machine (pyenv, conda, ...) can take seconds or hang on a lock a killed job left
        // behind. `sh` reads only the POSIX profile files.
        command.env("PBS_SHELL", "/bin/sh");
        command.env("PWD", self.work.path());
        command
    }

    /// Runs a command with arguments and returns its output.
    pub fn run(&self, name: &str, args: &[&str]) -> Output {
        self.command(name).args(args).stdin(Stdio::null()).output().expect("command runs")
    }

    /// Every accounting record written so far (all day files, oldest first: a test may cross
    /// midnight).
    pub fn accounting(&self) -> Vec<String> {
        let dir = self.state.path().join("server_priv/accounting");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| entries.flatten().map(|entry| entry.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
            .iter()
            .flat_map(|path| {
                std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect::<Vec<_>>()
            })
            .collect()
    }

    /// Writes a script into the submit directory and returns its path.
    pub fn script(&self, name: &str, text: &str) -> PathBuf {
        let path = self.work.path().join(name);
        std::fs::write(&path, text).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    /// Submits a script file and returns the printed id; panics with stderr if qsub fails.
    pub fn qsub(&self, script: &Path, extra: &[&str]) -> String {
        let output = self.command("qsub").args(extra).arg(script).stdin(Stdio::null()).output().expect("qsub runs");
        assert!(output.status.success(), "qsub failed: {}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8(output.stdout).expect("utf8");
        assert_eq!(stdout.lines().count(), 1, "qsub printed more than the id: {stdout:?}");
        stdout.trim().to_string()
    }

    /// `qstat -x -f <id>` parsed into `name = value` pairs (continuation lines joined). OpenPBS
    /// flavor only: in the torque flavor `-x` prints XML (see `system/flavors.rs`).
    pub fn job_attrs(&self, id: &str) -> Option<Vec<(String, String)>> {
        let output = self.run("qstat", &["-x", "-f", "-1", id]);
        if !output.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&output.stdout);
        let attrs = text
            .lines()
            .filter_map(|line| line.trim_start().split_once(" = "))
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        Some(attrs)
    }

    /// One attribute of a job (from `qstat -x -f`).
    pub fn job_attr(&self, id: &str, name: &str) -> Option<String> {
        self.job_attrs(id)?.into_iter().find(|(attr, _)| attr == name).map(|(_, value)| value)
    }

    /// Waits until the job is finished (`F`) and returns its `Exit_status`.
    pub fn wait_finished(&self, id: &str, limit: Duration) -> i32 {
        wait_for(limit, &format!("job {id} to finish"), || (self.job_attr(id, "job_state")? == "F").then_some(()));
        self.job_attr(id, "Exit_status").and_then(|status| status.parse().ok()).unwrap_or(i32::MIN)
    }

    /// The server's TCP port, when the cluster runs over TCP.
    pub fn server_port(&self) -> Option<u16> {
        std::fs::read_to_string(self.state.path().join("server.port")).ok()?.trim().parse().ok()
    }

    /// The server's command line (to restart it after killing it; over TCP on the same port).
    pub fn start_server(&self) {
        // A killed server may not have exited yet; over TCP its port is free only once it has.
        if let Ok(old) = std::fs::read_to_string(self.state.path().join("pids/server.pid")) {
            if let Ok(pid) = old.trim().parse() {
                wait_for(Duration::from_secs(10), "the old server to exit", || process_gone(pid).then_some(()));
            }
        }
        let argv = self.server_argv();
        self.spawn_daemon("server", &argv);
    }

    /// The command line `start_server` runs: the cluster's server on its state directory, its
    /// name and, over TCP, the port it listens on now (`minipbs up` asked for any free one).
    pub fn server_argv(&self) -> Vec<String> {
        let mut argv = vec![self.bin.join("pbs_server").display().to_string(), "--state-dir".to_string()];
        argv.push(self.state.path().display().to_string());
        argv.extend(
            ["--name", &self.server_name, "--kill-delay", "2", "--sendmail", "", "--acl-roots", "root", "-v"]
                .map(String::from),
        );
        if self.state.path().join("postgres").is_dir() {
            argv.extend(["--store".to_string(), postgres_url(self.state.path())]);
        }
        if let Some(port) = self.server_port() {
            let munge_socket = self.state.path().join("munge/socket").display().to_string();
            argv.extend([
                "--listen".to_string(),
                format!("127.0.0.1:{port}"),
                "--munge-socket".to_string(),
                munge_socket,
            ]);
        }
        argv
    }

    /// The server's pid as recorded by `minipbs up` (or `start_server`).
    pub fn server_pid(&self) -> i32 {
        self.daemon_pid("server")
    }

    /// The pid recorded in `pids/` for daemon `name` (`server`, `node1`, ...).
    pub fn daemon_pid(&self, name: &str) -> i32 {
        let path = self.state.path().join(format!("pids/{name}.pid"));
        std::fs::read_to_string(path).unwrap().trim().parse().unwrap()
    }

    /// The command line daemon `name` runs with (to start it again, or another like it).
    pub fn daemon_argv(&self, name: &str) -> Vec<String> {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.daemon_pid(name))).unwrap();
        // Each argument ends with a NUL; an empty one (`--sendmail ''`) is kept.
        cmdline
            .strip_suffix(&[0])
            .unwrap_or(&cmdline)
            .split(|byte| *byte == 0)
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect()
    }

    /// Starts `argv` as daemon `name` the way `minipbs up` does: output appended to
    /// `logs/<name>.log`, pid recorded in `pids/<name>.pid` so `minipbs down` stops it.
    pub fn spawn_daemon(&self, name: &str, argv: &[String]) {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(self.state.path().join(format!("logs/{name}.log")))
            .unwrap();
        let child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("{} starts: {error}", argv[0]));
        std::fs::write(self.state.path().join(format!("pids/{name}.pid")), child.id().to_string()).unwrap();
        // The child is reaped by `minipbs down`'s kill; leaking the handle is deliberate.
        std::mem::forget(child);
    }

    /// All daemon logs, for failure messages.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        if let Ok(entries) = std::fs::read_dir(self.state.path().join("logs")) {
            for entry in entries.flatten() {
                let content = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let tail: Vec<&str> = content.lines().rev().take(40).collect();
                text.push_str(&format!("--- {}\n", entry.path().display()));
                for line in tail.into_iter().rev() {
                    text.push_str(line);
                    text.push('\n');
                }
            }
        }
        text
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(self.bin.join("minipbs")).args(["down", "--state-dir"]).arg(self.state.path()).output();
    }
}
