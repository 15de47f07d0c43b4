//! A minipbs cluster spread over the hosts of a [`Net`]: `pbs_server` on host `testsrv`
//! (`10.201.0.1`, TCP port 15001), one `pbs_mom` per compute host (port 15002, registering over
//! TCP), and a `login` host whose commands reach the server through a pbs.conf naming
//! `PBS_SERVER=testsrv` and `PBS_BATCH_SERVICE_PORT`. Every cross-host message is TCP + MUNGE,
//! each host with its own `munged`.
//!
//! Owns: the daemons' command lines, the client pbs.conf, where the logs go. Must not know
//! namespaces (`netns.rs` does).

use crate::netns::{Host, Net};
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// The server's TCP port (OpenPBS's default).
pub const SERVER_PORT: u16 = 15001;
/// The moms' TCP port (OpenPBS's default).
pub const MOM_PORT: u16 = 15002;
/// The server's name and host name.
pub const SERVER: &str = "testsrv";
/// The host the commands run on.
pub const LOGIN: &str = "login";

/// A running cluster over a private network; everything is killed when dropped.
pub struct NetCluster {
    /// Running moms by host name, with their pids.
    moms: Mutex<HashMap<String, i32>>,
    pub net: Net,
    /// The server's state directory.
    pub state: PathBuf,
    /// A submit directory, writable by everyone (shared by all hosts: one file system).
    pub work: PathBuf,
    /// The commands' pbs.conf.
    pub conf: PathBuf,
    pub bin: PathBuf,
    pub server_pid: i32,
    /// Slots (`--np`) of every mom.
    np: u32,
}

impl NetCluster {
    /// Hosts `testsrv`, `moms...` (one slot each) and `login`; waits until every mom is
    /// `free`. `None` (after a `SKIPPED:` line; a failure under CI) when namespaces are not available.
    pub fn up(moms: &[&str]) -> Option<NetCluster> {
        NetCluster::up_with_np(moms, 1)
    }

    /// Like [`NetCluster::up`], with `np` slots on every mom (`nodes=2:ppn=2` needs 2).
    pub fn up_with_np(moms: &[&str], np: u32) -> Option<NetCluster> {
        let names: Vec<&str> = std::iter::once(SERVER).chain(moms.iter().copied()).chain([LOGIN]).collect();
        let bin = crate::bin_dir();
        let net = Net::new(&names)?;
        let root = net.dir.path().to_path_buf();
        let (state, work) = (root.join("server"), root.join("work"));
        for dir in [&state, &work, &root.join("logs")] {
            std::fs::create_dir_all(dir).expect("create dir");
        }
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        let conf = root.join("pbs.conf");
        let conf_text = format!(
            "PBS_SERVER={SERVER}\nPBS_BATCH_SERVICE_PORT={SERVER_PORT}\nPBS_MUNGE_SOCKET={}\n",
            net.host(LOGIN).munge_socket.display()
        );
        std::fs::write(&conf, conf_text).expect("write pbs.conf");
        let server_pid = start_server(&net, &bin, &state);
        let cluster = NetCluster { moms: Mutex::new(HashMap::new()), net, state, work, conf, bin, server_pid, np };
        for mom in moms {
            cluster.start_mom(mom);
        }
        for mom in moms {
            cluster.wait_node_state(mom, "free", Duration::from_secs(30));
        }
        Some(cluster)
    }

    /// Starts (or starts again) the mom of host `name`.
    pub fn start_mom(&self, name: &str) -> i32 {
        let host = self.net.host(name).clone();
        let spool = self.net.dir.path().join(name);
        std::fs::create_dir_all(spool.join("tmp")).expect("create mom dir");
        let mut command = self.net.command(&host, self.bin.join("pbs_mom"));
        command
            .args(["--server", &format!("{SERVER}:{SERVER_PORT}")])
            .args(["--listen", &format!("{}:{MOM_PORT}", host.addr)])
            .arg("--munge-socket")
            .arg(&host.munge_socket)
            .args(["--name", name, "--np", &self.np.to_string(), "--mem", "1gb", "--kill-delay", "2"])
            .args(["--heartbeat", "1"])
            .arg("--spool")
            .arg(spool.join("spool"))
            .arg("--tmpdir")
            .arg(spool.join("tmp"))
            .args(["--kill-jobs-on-shutdown", "-v"])
            // A slice of this cluster's own: clusters run side by side on one host.
            .args(["--cgroup-slice", &cgroup_slice(self.net.dir.path(), name)]);
        let pid = self.net.spawn(with_log(command, &self.log_path(name)));
        self.moms.lock().unwrap().insert(name.to_string(), pid);
        pid
    }

    /// kill -9 of host `name`'s mom.
    pub fn kill9_mom(&self, name: &str) {
        let pid = self.moms.lock().unwrap().remove(name).unwrap_or_else(|| panic!("no mom {name} running"));
        self.net.kill9(pid);
    }

    /// `program` (a minipbs command) to run on the login host with the cluster's pbs.conf.
    pub fn command(&self, program: &str) -> Command {
        let mut command = self.net.command(self.net.host(LOGIN), self.bin.join(program));
        command.env("PBS_CONF_FILE", &self.conf).env_remove("PBS_SERVER").current_dir(&self.work);
        command.env("PBS_SHELL", "/bin/sh").env("PWD", &self.work);
        command
    }

    /// `program` on the login host as user `name` (uid `uid`, gid `gid`, their groups), through
    /// `setpriv` (`ip netns exec` itself must run as root).
    pub fn command_as(&self, program: &str, name: &str, uid: u32, gid: u32) -> Command {
        let mut command = self.net.command(self.net.host(LOGIN), "setpriv");
        command
            .args([format!("--reuid={uid}"), format!("--regid={gid}"), "--init-groups".to_string()])
            .arg(self.bin.join(program));
        command.env("PBS_CONF_FILE", &self.conf).env_remove("PBS_SERVER").current_dir(&self.work);
        command.env("PBS_SHELL", "/bin/sh").env("PWD", &self.work).env("HOME", format!("/home/{name}"));
        command.env("USER", name).env("LOGNAME", name);
        command
    }

    /// Runs a command on the login host and returns its output.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        self.command(program).args(args).stdin(Stdio::null()).output().expect("command runs")
    }

    /// A host of the cluster's network.
    pub fn host(&self, name: &str) -> &Host {
        self.net.host(name)
    }

    /// `pbsnodes <node>` as `name = value` pairs (empty when pbsnodes fails).
    pub fn node_attrs(&self, node: &str) -> HashMap<String, String> {
        attrs(&self.run("pbsnodes", &[node]))
    }

    /// Waits until node `node`'s `state` is `state`.
    pub fn wait_node_state(&self, node: &str, state: &str, limit: Duration) -> HashMap<String, String> {
        crate::wait_for(limit, &format!("node {node} {state}"), || {
            let attrs = self.node_attrs(node);
            (attrs.get("state").map(String::as_str) == Some(state)).then_some(attrs)
        })
    }

    /// `qstat -x -f <id>` as `name = value` pairs (empty when qstat fails).
    pub fn job_attrs(&self, id: &str) -> HashMap<String, String> {
        attrs(&self.run("qstat", &["-x", "-f", "-1", id]))
    }

    /// Where daemon `name`'s output goes (`server`, or a mom's host name).
    pub fn log_path(&self, name: &str) -> PathBuf {
        self.net.dir.path().join("logs").join(format!("{name}.log"))
    }

    /// Daemon `name`'s log so far.
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.log_path(name)).unwrap_or_default()
    }

    /// Every daemon log, for failure messages.
    pub fn logs(&self) -> String {
        let mut names: Vec<String> = self.moms.lock().unwrap().keys().cloned().collect();
        names.sort();
        std::iter::once("server".to_string())
            .chain(names)
            .map(|name| format!("--- {name}\n{}", self.log(&name)))
            .collect()
    }
}

impl Drop for NetCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.logs());
        }
    }
}

fn start_server(net: &Net, bin: &Path, state: &Path) -> i32 {
    let host = net.host(SERVER);
    let mut command = net.command(host, bin.join("pbs_server"));
    command
        .arg("--state-dir")
        .arg(state)
        .args(["--name", SERVER, "--listen", &format!("{}:{SERVER_PORT}", host.addr)])
        .arg("--munge-socket")
        .arg(&host.munge_socket)
        .args(["--kill-delay", "2", "--sendmail", "", "-v"]);
    net.spawn(with_log(command, &net.dir.path().join("logs/server.log")))
}

fn with_log(mut command: Command, log: &Path) -> Command {
    let file = std::fs::OpenOptions::new().create(true).append(true).open(log).expect("open log");
    command.stdin(Stdio::null()).stdout(file.try_clone().expect("dup")).stderr(file);
    command
}

/// `name = value` lines of a `qstat -f` / `pbsnodes` listing.
fn attrs(output: &Output) -> HashMap<String, String> {
    if !output.status.success() {
        return HashMap::new();
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.trim_start().split_once(" = "))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

/// The cgroup slice of one mom of the network cluster in `dir` (as `minipbs up` names its
/// moms': `client/src/minipbs_moms.rs::cgroup_slice`; this crate's library does not link `client`).
fn cgroup_slice(dir: &std::path::Path, node: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let (dev, ino) = std::fs::metadata(dir).map_or((0, 0), |meta| (meta.dev(), meta.ino()));
    format!("minipbs-{dev:x}-{ino:x}-{node}.slice")
}
