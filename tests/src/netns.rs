//! Several "hosts" on one machine for the multi-host system tests: one network namespace per
//! host, all joined by a bridge in a "switch" namespace (addresses `10.201.0.<n>/24`, the same
//! in every test: each test has its own switch, so nothing clashes), a private `/etc/hosts` per
//! host (`/etc/netns/<ns>/hosts`, bind-mounted over `/etc/hosts` for each program run there), the host's own name for the
//! programs run on it (a UTS namespace each), and one `munged` per host, all
//! with the same key, plus one `munged` with another key for the forged-credential cases.
//!
//! Owns: creating and removing namespaces, links and munge daemons, and running programs and
//! closures inside a namespace. Must not know minipbs (`netcluster.rs` starts the daemons).
//! Everything is undone on drop, also when a test panics: every process left in the
//! namespaces is killed, the namespaces (and with them the links) are deleted.

use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Name prefix of every namespace these tests create (`mpbs<pid>x<n>-<host>`).
const PREFIX: &str = "mpbs";
/// Where each namespace's hosts file lives (where `ip netns exec` would look for it too).
const ETC_NETNS: &str = "/etc/netns";

/// One simulated host.
#[derive(Debug, Clone)]
pub struct Host {
    /// The host name, as in the hosts files (`testsrv`, `hosta`, ...).
    pub name: String,
    /// The network namespace.
    pub ns: String,
    pub addr: Ipv4Addr,
    /// This host's `munged` socket (the shared key).
    pub munge_socket: PathBuf,
}

impl Host {
    /// Moves the calling thread (only it) into this host's network namespace: the sockets it
    /// creates from now on live there.
    pub fn enter(&self) {
        enter_namespace(&format!("/run/netns/{}", self.ns));
    }
}

/// A private network of hosts; torn down on drop.
pub struct Net {
    prefix: String,
    /// Keys, munge sockets and logs, and whatever the tests put there (mode 0755).
    pub dir: tempfile::TempDir,
    hosts: Vec<Host>,
    /// The socket of a `munged` with a different key (runs in the first host's namespace).
    pub other_key_socket: PathBuf,
    children: Mutex<Vec<Child>>,
}

impl Net {
    /// Creates the hosts (first one `10.201.0.1`, ...) and their munge daemons, or skips
    /// (`crate::skip`: `SKIPPED: ...` and `None`, a failure under CI) when this is not root,
    /// `ip netns` does not work or MUNGE is not installed.
    pub fn new(names: &[&str]) -> Option<Net> {
        if !crate::is_root() {
            crate::skip("the multi-host tests need root and ip netns (not root)");
            return None;
        }
        if !crate::munge_installed() {
            return None;
        }
        remove_stale_namespaces();
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let prefix = format!("{PREFIX}{}x{}", std::process::id(), COUNTER.fetch_add(1, Ordering::SeqCst));
        let switch = format!("{prefix}-sw");
        let bridge = ip(&["netns", "add", &switch]).and_then(|()| {
            ip(&["-n", &switch, "link", "add", "br0", "type", "bridge"])?;
            ip(&["-n", &switch, "link", "set", "br0", "up"])
        });
        if let Err(error) = bridge {
            crate::skip(&format!("the multi-host tests need root and ip netns ({error})"));
            delete_namespace(&switch);
            return None;
        }
        let dir = tempfile::Builder::new().prefix("minipbs-netns-").tempdir().expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let hosts = names
            .iter()
            .zip(1u8..)
            .map(|(name, n)| Host {
                name: name.to_string(),
                ns: format!("{prefix}-{name}"),
                addr: Ipv4Addr::new(10, 201, 0, n),
                munge_socket: dir.path().join(format!("munge-{name}.sock")),
            })
            .collect();
        let net = Net {
            prefix,
            other_key_socket: dir.path().join("munge-other.sock"),
            dir,
            hosts,
            children: Mutex::new(Vec::new()),
        };
        net.build_network(&switch);
        net.start_munge();
        Some(net)
    }

    /// One namespace per host, its `eth0` a veth whose other end is on the switch's bridge.
    fn build_network(&self, switch: &str) {
        let hosts_file: String = std::iter::once("127.0.0.1 localhost\n".to_string())
            .chain(self.hosts.iter().map(|host| format!("{} {}\n", host.addr, host.name)))
            .collect();
        for host in &self.hosts {
            ip(&["netns", "add", &host.ns]).expect("namespace");
            ip(&["-n", &host.ns, "link", "set", "lo", "up"]).expect("loopback up");
            ip(&["-n", switch, "link", "add", &host.name, "type", "veth", "peer", "name", "eth0", "netns", &host.ns])
                .expect("veth pair");
            ip(&["-n", switch, "link", "set", &host.name, "master", "br0", "up"]).expect("veth on the bridge");
            ip(&["-n", &host.ns, "addr", "add", &format!("{}/24", host.addr), "dev", "eth0"]).expect("address");
            ip(&["-n", &host.ns, "link", "set", "eth0", "up"]).expect("eth0 up");
            let etc = Path::new(ETC_NETNS).join(&host.ns);
            std::fs::create_dir_all(&etc).expect("create /etc/netns/<ns>");
            std::fs::write(etc.join("hosts"), &hosts_file).expect("write hosts file");
        }
    }

    /// One `munged` per host with the shared key, one more with another key.
    fn start_munge(&self) {
        let key = self.dir.path().join("munge.key");
        let other_key = self.dir.path().join("munge-other.key");
        for path in [&key, &other_key] {
            let output = Command::new("mungekey").arg("-c").arg("-k").arg(path).output().expect("mungekey runs");
            assert!(output.status.success(), "mungekey: {}", String::from_utf8_lossy(&output.stderr));
        }
        for host in &self.hosts {
            self.start_munged(host, &host.name, &key, &host.munge_socket);
        }
        self.start_munged(&self.hosts[0], "other", &other_key, &self.other_key_socket);
    }

    fn start_munged(&self, host: &Host, tag: &str, key: &Path, socket: &Path) {
        let file = |ext: &str| self.dir.path().join(format!("munged-{tag}.{ext}"));
        let log = std::fs::File::create(file("out")).expect("munged output file");
        let mut command = self.command(host, "munged");
        command
            .arg("--foreground")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", file("pid").display()))
            .arg(format!("--log-file={}", file("log").display()))
            .arg(format!("--seed-file={}", file("seed").display()))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("dup"))
            .stderr(log);
        self.spawn(command);
        crate::wait_for(Duration::from_secs(10), &format!("munged {tag} to listen"), || {
            let output = Command::new("munge").arg("-n").arg("-S").arg(socket).output().ok()?;
            output.status.success().then_some(())
        });
    }

    /// The host named `name`.
    pub fn host(&self, name: &str) -> &Host {
        self.hosts.iter().find(|host| host.name == name).unwrap_or_else(|| panic!("no host {name}"))
    }

    /// `program` to be run inside `host`'s network namespace, with the host's `/etc/hosts`
    /// bind-mounted in a mount namespace of its own, in a UTS namespace of its own named after
    /// the host (`hostname`, `gethostname` give the host's name); the child's pid is the
    /// program's (each step execs). Not `ip netns exec`: it remounts `/sys`, which hides the
    /// cgroup hierarchies mounted under `/sys/fs/cgroup` from the moms.
    pub fn command(&self, host: &Host, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("nsenter");
        command.arg(format!("--net=/run/netns/{}", host.ns));
        command.args(["unshare", "--mount", "--propagation", "private", "--uts", "--", "sh", "-c"]);
        command.arg(r#"hostname "$0" && mount --bind "$1" /etc/hosts && shift && exec "$@""#);
        command.arg(&host.name).arg(self.hosts_file(host)).arg(program);
        command
    }

    /// `host`'s hosts file: rewriting it in place changes what names resolve to on that host,
    /// also for the programs already running there.
    pub fn hosts_file(&self, host: &Host) -> PathBuf {
        Path::new(ETC_NETNS).join(&host.ns).join("hosts")
    }

    /// Runs `command` to its end and returns its output.
    pub fn run(&self, host: &Host, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
        self.command(host, program).args(args).stdin(Stdio::null()).output().expect("nsenter runs")
    }

    /// Starts a long-running process; it is killed when the network goes.
    pub fn spawn(&self, mut command: Command) -> i32 {
        let child = command.spawn().unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let pid = child.id() as i32;
        self.children.lock().unwrap().push(child);
        pid
    }

    /// Runs `work` on a thread inside `host`'s network namespace: the sockets it creates
    /// live there (also when used later from other threads).
    pub fn in_host<T: Send>(&self, host: &Host, work: impl FnOnce() -> T + Send) -> T {
        self.in_host_as(host, None, work)
    }

    /// Like [`Net::in_host`], and with the thread's uid and gid set to `ids` (the kernel
    /// keeps credentials per thread; only glibc's wrappers broadcast them, the raw system calls
    /// do not), so a credential MUNGE encodes on that thread is of that user.
    pub fn in_host_as<T: Send>(&self, host: &Host, ids: Option<(u32, u32)>, work: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|scope| {
            scope
                .spawn(move || {
                    host.enter();
                    if let Some((uid, gid)) = ids {
                        set_thread_ids(uid, gid);
                    }
                    work()
                })
                .join()
                .expect("the thread in the namespace panicked")
        })
    }

    /// Unplugs (`up = false`) or plugs back `host`'s network cable: its `eth0` goes down or up,
    /// so its peers see silence, not a closed connection.
    pub fn set_link(&self, host: &Host, up: bool) {
        ip(&["-n", &host.ns, "link", "set", "eth0", if up { "up" } else { "down" }]).expect("set eth0");
    }

    /// Kills one process started with [`Net::spawn`] with SIGKILL and reaps it.
    pub fn kill9(&self, pid: i32) {
        let mut children = self.children.lock().unwrap();
        if let Some(index) = children.iter().position(|child| child.id() as i32 == pid) {
            let mut child = children.remove(index);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let namespaces: Vec<String> = self
            .hosts
            .iter()
            .map(|host| host.ns.clone())
            .chain(std::iter::once(format!("{}-sw", self.prefix)))
            .collect();
        for ns in &namespaces {
            kill_all_in(ns);
        }
        for mut child in self.children.lock().unwrap_or_else(|poison| poison.into_inner()).drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
        for ns in &namespaces {
            delete_namespace(ns);
        }
    }
}

/// Runs `ip args...`; the error is ip's stderr.
fn ip(args: &[&str]) -> Result<(), String> {
    let output = Command::new("ip").args(args).output().map_err(|error| format!("cannot run ip: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
    }
}

/// SIGKILLs every process in namespace `ns` (the daemons, jobs they left, munged).
fn kill_all_in(ns: &str) {
    let Ok(output) = Command::new("ip").args(["netns", "pids", ns]).output() else { return };
    for pid in String::from_utf8_lossy(&output.stdout).split_whitespace().filter_map(|pid| pid.parse::<i32>().ok()) {
        // SAFETY: kill has no memory preconditions; the pid is in a namespace we created.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

fn delete_namespace(ns: &str) {
    let _ = ip(&["netns", "del", ns]);
    let _ = std::fs::remove_dir_all(Path::new(ETC_NETNS).join(ns));
    let _ = std::fs::remove_dir(ETC_NETNS);
}

/// Namespaces of earlier test processes that died before their drop ran (SIGKILL, abort).
fn remove_stale_namespaces() {
    let Ok(output) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Some(ns) = line.split_whitespace().next() else { continue };
        let Some(pid) = ns.strip_prefix(PREFIX).and_then(|rest| rest.split_once('x')).map(|(pid, _)| pid) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            kill_all_in(ns);
            delete_namespace(ns);
        }
    }
}

fn enter_namespace(path: &str) {
    let file = std::fs::File::open(path).unwrap_or_else(|error| panic!("cannot open {path}: {error}"));
    // SAFETY: setns on a valid namespace file descriptor; it changes only this thread.
    let rc = unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&file), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
}

fn set_thread_ids(uid: u32, gid: u32) {
    // SAFETY: raw setresgid/setresuid change only the calling thread's credentials, which is
    // the point; the thread ends after its work.
    unsafe {
        assert_eq!(libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()), 0, "setgroups");
        assert_eq!(libc::syscall(libc::SYS_setresgid, gid, gid, gid), 0, "setresgid");
        assert_eq!(libc::syscall(libc::SYS_setresuid, uid, uid, uid), 0, "setresuid");
    }
}
