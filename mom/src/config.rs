//! The mom's configuration: [`MomConfig`] (what `run` needs) and [`MomArgs`] (the `pbs_mom`
//! command line that produces it), plus the small size parser `--mem` uses.
//!
//! Owns: every default value, in one place ([`MomConfig::new`]). Must not: read environment
//! variables or configuration anywhere else, start anything, or know the protocol.

use crate::cgroup::CgroupMode;
use crate::gpu::GpuChoice;
use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// Everything the mom needs to run. Built once (by `main` from [`MomArgs`], or by tests) and
/// passed down; nothing else in the crate reads settings from the environment.
#[derive(Debug, Clone)]
pub struct MomConfig {
    /// The server's Unix socket (unless `server` is set).
    pub socket: PathBuf,
    /// The server's TCP address `HOST:PORT` (cluster transport, MUNGE-sealed frames); with
    /// failover, the primary head's.
    pub server: Option<String>,
    /// The secondary head's `HOST:PORT` (failover, OpenPBS's `PBS_SECONDARY`): the link tries
    /// `server` and this one in turn, one per reconnect.
    pub secondary: Option<String>,
    /// The mom port (TCP; port 0 = any): sealed instructions of `server_uid` only. `None` = no
    /// mom port.
    pub listen: Option<std::net::SocketAddr>,
    /// Where `/metrics` is served (`--http`; `http.rs`); `None`: not served.
    pub http: Option<std::net::SocketAddr>,
    /// munged's socket (TCP transport).
    pub munge_socket: PathBuf,
    /// The server's uid: the only one whose MUNGE credentials the mom obeys on TCP, and the
    /// one (with root) it trusts to serve `socket` (default: its own).
    pub server_uid: u32,
    /// This node's name as the server knows it (also the name written into `PBS_NODEFILE`).
    pub node: String,
    /// Cpu slots offered to the server.
    pub np: u32,
    /// Memory offered to the server, in bytes.
    pub mem_bytes: u64,
    /// Where the GPUs come from (`--gpus`; gpu/mod.rs).
    pub gpus: GpuChoice,
    /// Time between two samples of the GPUs.
    pub gpu_poll: Duration,
    /// How long a GPU must stay clean after a process outside the queue left it.
    pub gpu_foreign_hold: Duration,
    /// How long a GPU may stay dirty after its job before it is reported down.
    pub gpu_drain_timeout: Duration,
    /// `CUDA_VISIBLE_DEVICES` as UUIDs rather than indices.
    pub cuda_uuids: bool,
    /// The node's modulecmd: `None` finds one on PATH, `Some("none")` turns `module` in jobs off.
    pub modulecmd: Option<String>,
    /// A default `MODULEPATH` for jobs that bring none.
    pub modulepath: Option<String>,
    /// Where to look for a modulecmd when `modulecmd` is not set: the mom's own `PATH`.
    pub search_path: String,
    /// Node properties (`pbsnodes` "properties"), matched by `nodes=1:bigmem`.
    pub properties: Vec<String>,
    /// Spool directory: `<jobid>.SC`, `.OU`, `.ER`, and `aux/` for node and GPU files.
    pub spool_dir: PathBuf,
    /// Base of each job's private `TMPDIR` (`<base>/pbs.<jobid>`).
    pub tmpdir_base: PathBuf,
    /// `--code-dir`: where `qsub --pin` jobs' checkouts go (`<dir>/<jobid>`); `None`: in
    /// their TMPDIR (`exec/pin.rs`).
    pub code_dir: Option<PathBuf>,
    /// Time between two heartbeats to the server.
    pub heartbeat_interval: Duration,
    /// SIGTERM-to-SIGKILL delay used when a launch carries `kill_delay = 0`.
    pub kill_delay: Duration,
    /// First reconnect delay after the server connection fails; doubles up to `reconnect_max`.
    pub reconnect_min: Duration,
    /// Largest reconnect delay.
    pub reconnect_max: Duration,
    /// Whether `run` kills every running job before it returns. Off for the daemon (jobs
    /// survive a mom restart); tests turn it on so nothing outlives them.
    pub kill_jobs_on_shutdown: bool,
    /// The `pbs_tmrsh` jobs' MPI launchers use as their rsh agent (`--tmrsh`).
    pub tmrsh: PathBuf,
    /// Whether jobs get the MPI launcher variables (`OMPI_MCA_*`, `HYDRA_*`; `--mpi-env`).
    pub mpi_env: bool,
    /// Task-socket and peer connections held at once (`task::serve::MAX_CONNECTIONS`).
    pub task_connections: usize,
    /// Whether jobs run in cgroups (`--cgroups`; cgroup/mod.rs).
    pub cgroups: CgroupMode,
    /// The directory (in each hierarchy) holding this mom's job cgroups (`--cgroup-slice`).
    pub cgroup_slice: String,
    /// `--simulate N`, for benchmarks only: N simulated nodes `<node>1..<node>N` (simulate/).
    pub simulate: Option<u32>,
}

impl MomConfig {
    /// The task socket launchers in jobs connect to: `<spool>/task.sock`.
    pub fn task_socket(&self) -> PathBuf {
        self.spool_dir.join("task.sock")
    }

    /// A configuration with every default filled in: the host's cpus and memory, no GPUs (the
    /// `pbs_mom` flag defaults to `auto`), GPUs polled every 5 s with a 60 s foreign hold and a
    /// 300 s drain timeout, no
    /// properties, spool `/var/spool/minipbs/mom`, tmpdir `/var/tmp`, heartbeat 5 s,
    /// kill_delay 10 s (OpenPBS), reconnect backoff 50 ms .. 2 s.
    pub fn new(socket: impl Into<PathBuf>, node: impl Into<String>) -> MomConfig {
        MomConfig {
            socket: socket.into(),
            server: None,
            secondary: None,
            listen: None,
            http: None,
            munge_socket: PathBuf::from(proto::munge::DEFAULT_SOCKET),
            server_uid: nix::unistd::geteuid().as_raw(),
            node: node.into(),
            np: host_cpus(),
            mem_bytes: host_memory_bytes(),
            gpus: GpuChoice::None,
            gpu_poll: Duration::from_secs(5),
            gpu_foreign_hold: Duration::from_secs(60),
            gpu_drain_timeout: Duration::from_secs(300),
            cuda_uuids: false,
            modulecmd: None,
            modulepath: None,
            search_path: std::env::var("PATH").unwrap_or_default(),
            properties: Vec::new(),
            spool_dir: PathBuf::from("/var/spool/minipbs/mom"),
            tmpdir_base: PathBuf::from("/var/tmp"),
            code_dir: None,
            heartbeat_interval: Duration::from_secs(5),
            kill_delay: Duration::from_secs(10),
            reconnect_min: Duration::from_millis(50),
            reconnect_max: Duration::from_secs(2),
            kill_jobs_on_shutdown: false,
            tmrsh: default_tmrsh(),
            mpi_env: true,
            task_connections: crate::task::serve::MAX_CONNECTIONS,
            cgroups: CgroupMode::Auto,
            cgroup_slice: crate::cgroup::DEFAULT_SLICE.to_string(),
            simulate: None,
        }
    }
}

/// `pbs_mom` command-line flags.
#[derive(Debug, Parser)]
#[command(name = "pbs_mom", about = "minipbs execution daemon (one per compute node)", args_override_self = true)]
pub struct MomArgs {
    /// The server's Unix socket (one host).
    #[arg(long, required_unless_present = "server", conflicts_with = "server")]
    pub socket: Option<PathBuf>,
    /// The server's TCP address HOST:PORT (cluster transport: TCP + MUNGE); with failover,
    /// the primary head (OpenPBS's PBS_PRIMARY).
    #[arg(long, value_parser = parse_server_addr)]
    pub server: Option<String>,
    /// The secondary head's HOST:PORT (failover, OpenPBS's PBS_SECONDARY): every reconnect
    /// tries the other head, so the mom follows whichever one is active.
    #[arg(long, requires = "server", conflicts_with = "socket", value_parser = parse_server_addr)]
    pub secondary: Option<String>,
    /// The mom port for the server's sealed instructions, ADDR:PORT (port 0 = any; default
    /// 0.0.0.0:15002 with --server).
    #[arg(long)]
    pub listen: Option<std::net::SocketAddr>,
    /// Serve Prometheus metrics at http://ADDR/metrics (port 0 = any; the port is written to
    /// <spool>/mom.http). Off by default.
    #[arg(long)]
    pub http: Option<std::net::SocketAddr>,
    /// munged's socket (TCP transport).
    #[arg(long, default_value = proto::munge::DEFAULT_SOCKET)]
    pub munge_socket: PathBuf,
    /// The server's uid: the only one whose MUNGE credentials the mom obeys, and the one (with
    /// root) whose Unix socket it talks to (default: the uid it runs as).
    #[arg(long)]
    pub server_uid: Option<u32>,
    /// Node name (default: the short host name).
    #[arg(long)]
    pub name: Option<String>,
    /// Cpu slots (default: the host's cpus).
    #[arg(long)]
    pub np: Option<u32>,
    /// Memory, e.g. `8gb` (default: the host's memory).
    #[arg(long, value_parser = parse_size)]
    pub mem: Option<u64>,
    /// GPUs: auto (NVML if it loads, else none), nvml, none, N fake GPUs, or fake:FILE (a JSON
    /// inventory re-read on every poll; docs/gpus.md).
    #[arg(long, default_value = "auto")]
    pub gpus: GpuChoice,
    /// Milliseconds between two samples of the GPUs.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u64).range(50..))]
    pub gpu_poll: u64,
    /// Seconds a GPU must stay clean after a process outside the queue left it.
    #[arg(long, default_value_t = 60)]
    pub gpu_foreign_hold: u64,
    /// Seconds a GPU may stay dirty after its job before it is reported down.
    #[arg(long, default_value_t = 300)]
    pub gpu_drain_timeout: u64,
    /// CUDA_VISIBLE_DEVICES as `index` (TORQUE) or `uuid` (OpenPBS).
    #[arg(long, default_value = "index", value_parser = ["index", "uuid"])]
    pub cuda_visible_devices: String,
    /// The modulecmd whose `module` function job shells get (default: the one on PATH; `none`:
    /// no `module` in jobs).
    #[arg(long)]
    pub modulecmd: Option<String>,
    /// A default MODULEPATH for jobs that bring none.
    #[arg(long)]
    pub modulepath: Option<String>,
    /// Node properties, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub properties: Vec<String>,
    /// Spool directory.
    #[arg(long)]
    pub spool: Option<PathBuf>,
    /// Base directory of the jobs' TMPDIRs.
    #[arg(long)]
    pub tmpdir: Option<PathBuf>,
    /// Where `qsub --pin` checkouts go, `<dir>/<jobid>` (writable by users, mode 1777; shared,
    /// for the job's other nodes to see it). Default: the job's TMPDIR.
    #[arg(long)]
    pub code_dir: Option<PathBuf>,
    /// Heartbeat interval in seconds.
    #[arg(long)]
    pub heartbeat: Option<u64>,
    /// Default SIGTERM-to-SIGKILL delay in seconds.
    #[arg(long)]
    pub kill_delay: Option<u64>,
    /// Kill running jobs when the mom stops.
    #[arg(long)]
    pub kill_jobs_on_shutdown: bool,
    /// The rsh agent jobs' mpirun/mpiexec use (default: pbs_tmrsh next to pbs_mom, else on PATH).
    #[arg(long)]
    pub tmrsh: Option<PathBuf>,
    /// Set OMPI_MCA_* and HYDRA_* in jobs so mpirun starts ranks through the moms.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub mpi_env: String,
    /// Job cgroups: off, auto (when the host allows them) or required (a job that cannot get
    /// one does not start).
    #[arg(long, value_enum, default_value = "auto")]
    pub cgroups: CgroupMode,
    /// The cgroup directory holding this mom's jobs (one path component).
    #[arg(long, default_value = crate::cgroup::DEFAULT_SLICE)]
    pub cgroup_slice: String,
    /// FOR BENCHMARKS ONLY: simulate N nodes, named <name>1..<name>N, each with its own
    /// connection to the server and --np slots. Their jobs run nowhere (no process, no output):
    /// each takes the `sleep N` of its script (else its walltime) and ends with exit 0.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_SIMULATED_NODES as i64))]
    pub simulate: Option<u32>,
    /// More logging (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl MomArgs {
    /// The configuration these flags describe (defaults from [`MomConfig::new`]).
    pub fn into_config(self) -> MomConfig {
        let node = self.name.unwrap_or_else(short_host_name);
        let mut config = MomConfig::new(self.socket.unwrap_or_default(), node);
        if self.server.is_some() {
            config.listen = Some(self.listen.unwrap_or_else(|| ([0, 0, 0, 0], 15002).into()));
        }
        config.server = self.server;
        config.http = self.http;
        config.secondary = self.secondary;
        config.munge_socket = self.munge_socket;
        config.server_uid = self.server_uid.unwrap_or(config.server_uid);
        config.np = self.np.unwrap_or(config.np);
        config.mem_bytes = self.mem.unwrap_or(config.mem_bytes);
        config.gpus = self.gpus;
        config.gpu_poll = Duration::from_millis(self.gpu_poll);
        config.gpu_foreign_hold = Duration::from_secs(self.gpu_foreign_hold);
        config.gpu_drain_timeout = Duration::from_secs(self.gpu_drain_timeout);
        config.cuda_uuids = self.cuda_visible_devices == "uuid";
        config.modulecmd = self.modulecmd;
        config.modulepath = self.modulepath;
        config.properties = self.properties.into_iter().filter(|p| !p.is_empty()).collect();
        config.spool_dir = self.spool.unwrap_or(config.spool_dir);
        config.tmpdir_base = self.tmpdir.unwrap_or(config.tmpdir_base);
        config.code_dir = self.code_dir;
        if let Some(secs) = self.heartbeat {
            config.heartbeat_interval = Duration::from_secs(secs.max(1));
        }
        if let Some(secs) = self.kill_delay {
            config.kill_delay = Duration::from_secs(secs);
        }
        config.kill_jobs_on_shutdown = self.kill_jobs_on_shutdown;
        config.tmrsh = self.tmrsh.unwrap_or(config.tmrsh);
        config.mpi_env = self.mpi_env == "on";
        config.cgroups = self.cgroups;
        config.cgroup_slice = self.cgroup_slice;
        config.simulate = self.simulate;
        config
    }
}

/// `pbs_tmrsh` beside the running binary when it is there, else the bare name (found on the
/// job's `PATH`).
fn default_tmrsh() -> PathBuf {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("pbs_tmrsh")));
    beside.filter(|path| path.is_file()).unwrap_or_else(|| PathBuf::from("pbs_tmrsh"))
}

/// The most nodes one `pbs_mom --simulate` serves (the server holds 1,024 mom links anyway).
pub const MAX_SIMULATED_NODES: u32 = 10_000;

/// The longest `HOST` `--server` and `--secondary` may name (DNS's limit, brackets aside).
pub const MAX_HOST_CHARS: usize = 253;

/// Checks `--server` and `--secondary`: `HOST:PORT` or `[V6ADDR]:PORT`, a port from 1 to 65535,
/// a host of letters, digits, `.`, `-` and `_` (or an IPv6 address in brackets).
pub fn parse_server_addr(text: &str) -> Result<String, String> {
    let bad = || format!("{text:?} is not HOST:PORT");
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    port.parse::<u16>().ok().filter(|port| *port != 0).ok_or_else(bad)?;
    let host_ok = match host.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => {
            let chars_ok = host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
            !host.is_empty() && host.len() <= MAX_HOST_CHARS && chars_ok && !host.starts_with('-')
        }
    };
    host_ok.then(|| text.to_string()).ok_or_else(bad)
}

/// Parses `--mem` with the PBS size grammar (`8gb`, `2G`, `4096mb`, `1024`, `8w`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let size = job::size::Size::parse(text.trim())?;
    size.checked_bytes().ok_or_else(|| format!("size {text:?} is too large"))
}

fn host_cpus() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// `MemTotal` from `/proc/meminfo`, or 0 when it cannot be read.
fn host_memory_bytes() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn short_host_name() -> String {
    let name = nix::unistd::gethostname().ok().and_then(|n| n.into_string().ok());
    let name = name.unwrap_or_else(|| "localhost".to_string());
    name.split('.').next().unwrap_or("localhost").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("8gb"), Ok(8 << 30));
        assert_eq!(parse_size("4096mb"), Ok(4096 << 20));
        assert_eq!(parse_size("12kB"), Ok(12 << 10));
        assert_eq!(parse_size("8w"), Ok(64));
        assert_eq!(parse_size("3kw"), Ok(3 * 8 * 1024));
        assert!(parse_size("").is_err());
        assert!(parse_size("gb").is_err());
        assert!(parse_size("5xb").is_err());
        assert!(parse_size("99999999999999pb").is_err());
    }

    #[test]
    fn flags_fill_the_config() {
        let args = MomArgs::parse_from([
            "pbs_mom",
            "--socket",
            "/s",
            "--name",
            "n1",
            "--np",
            "4",
            "--mem",
            "8gb",
            "--gpus",
            "2",
            "--properties",
            "bigmem,fast",
            "--spool",
            "/sp",
            "--tmpdir",
            "/t",
            "--heartbeat",
            "3",
            "-vv",
        ]);
        assert_eq!(args.verbose, 2);
        let config = args.into_config();
        assert_eq!(config.node, "n1");
        assert_eq!(config.np, 4);
        assert_eq!(config.mem_bytes, 8 << 30);
        assert_eq!(config.gpus, GpuChoice::Count(2));
        assert_eq!(config.properties, vec!["bigmem", "fast"]);
        assert_eq!(config.spool_dir, PathBuf::from("/sp"));
        assert_eq!(config.tmpdir_base, PathBuf::from("/t"));
        assert_eq!(config.heartbeat_interval, Duration::from_secs(3));
        assert!(!config.kill_jobs_on_shutdown);
        assert_eq!(config.server, None);
        assert_eq!(config.listen, None);
    }

    #[test]
    fn gpu_flags() {
        let config = MomArgs::parse_from(["pbs_mom", "--socket", "/s"]).into_config();
        assert_eq!((config.gpus, config.gpu_poll, config.cuda_uuids), (GpuChoice::Auto, Duration::from_secs(5), false));
        let config = MomArgs::parse_from([
            "pbs_mom",
            "--socket=/s",
            "--gpus=fake:/g.json",
            "--gpu-poll=200",
            "--gpu-foreign-hold=1",
            "--gpu-drain-timeout=9",
            "--cuda-visible-devices=uuid",
        ])
        .into_config();
        assert_eq!(config.gpus, GpuChoice::Fake("/g.json".into()));
        assert_eq!(config.gpu_poll, Duration::from_millis(200));
        assert_eq!(
            (config.gpu_foreign_hold, config.gpu_drain_timeout),
            (Duration::from_secs(1), Duration::from_secs(9))
        );
        assert!(config.cuda_uuids);
        let err = MomArgs::try_parse_from(["pbs_mom", "--socket=/s", "--gpus=lots"]).unwrap_err().to_string();
        assert!(err.contains("\"lots\" is not auto, nvml, none, a number of GPUs or fake:FILE"), "{err}");
        assert!(MomArgs::try_parse_from(["pbs_mom", "--socket=/s", "--gpu-poll=1"]).is_err());
        let later = MomArgs::parse_from(["pbs_mom", "--socket=/s", "--gpus=0", "--gpus=nvml"]).into_config();
        assert_eq!(later.gpus, GpuChoice::Nvml, "a later flag wins (minipbs up --mom-arg)");
    }

    #[test]
    fn tcp_flags() {
        let config = MomArgs::parse_from(["pbs_mom", "--server", "head:15001", "--server-uid", "7"]).into_config();
        assert_eq!(config.server.as_deref(), Some("head:15001"));
        assert_eq!(config.listen, Some(([0, 0, 0, 0], 15002).into()));
        assert_eq!(config.server_uid, 7);
        assert!(MomArgs::try_parse_from(["pbs_mom"]).is_err(), "one of --socket and --server is required");
        assert!(MomArgs::try_parse_from(["pbs_mom", "--socket", "/s", "--server", "h:1"]).is_err());
        assert_eq!(config.secondary, None, "--server alone: one head");
    }

    #[test]
    fn failover_flags() {
        let args = ["pbs_mom", "--server", "h1:15001", "--secondary", "h2:15001"];
        let config = MomArgs::parse_from(args).into_config();
        assert_eq!((config.server.as_deref(), config.secondary.as_deref()), (Some("h1:15001"), Some("h2:15001")));
        let error = MomArgs::try_parse_from(["pbs_mom", "--socket", "/s", "--secondary", "h2:1"]).unwrap_err();
        assert!(error.to_string().contains("--socket"), "{error}");
        assert!(MomArgs::try_parse_from(["pbs_mom", "--secondary", "h2:1"]).is_err(), "needs --server");
    }

    #[test]
    fn server_addresses_are_checked() {
        for good in ["h:1", "head.example.org:15001", "10.0.0.1:65535", "[::1]:15001", "n_1:2"] {
            assert_eq!(parse_server_addr(good).as_deref(), Ok(good));
        }
        let long = format!("{}:1", "a".repeat(MAX_HOST_CHARS + 1));
        assert!(parse_server_addr(&format!("{}:1", "a".repeat(MAX_HOST_CHARS))).is_ok(), "the longest host");
        for bad in
            ["h", "h:", ":1", "h:0", "h:65536", "h:x", "h 1:1", "-h:1", "h/x:1", "::1:1", "[x]:1", "[::1:1", &long]
        {
            assert_eq!(parse_server_addr(bad), Err(format!("{bad:?} is not HOST:PORT")), "{bad}");
        }
        assert!(MomArgs::try_parse_from(["pbs_mom", "--server", "h1:15001", "--secondary", "h2"]).is_err());
        assert!(MomArgs::try_parse_from(["pbs_mom", "--server", "h1"]).is_err());
    }

    #[test]
    fn defaults_probe_the_host() {
        let config = MomArgs::parse_from(["pbs_mom", "--socket", "/s"]).into_config();
        assert!(config.np >= 1);
        assert!(!config.node.is_empty());
        assert_eq!(config.kill_delay, Duration::from_secs(10));
        assert_eq!((config.cgroups, config.cgroup_slice.as_str()), (CgroupMode::Auto, "minipbs.slice"));
    }

    #[test]
    fn cgroup_flags() {
        let config = MomArgs::parse_from(["pbs_mom", "--socket=/s", "--cgroups=required", "--cgroup-slice=x.slice"])
            .into_config();
        assert_eq!((config.cgroups, config.cgroup_slice.as_str()), (CgroupMode::Required, "x.slice"));
        assert!(MomArgs::try_parse_from(["pbs_mom", "--socket=/s", "--cgroups=maybe"]).is_err());
    }
}
