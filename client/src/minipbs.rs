//! `minipbs up` and `minipbs down` (design.md section 9): a local cluster of one `pbs_server`
//! and N `pbs_mom`s on this host, over Unix sockets or (`--transport tcp`) over TCP + MUNGE on
//! loopback with its own `munged` and key under `<state_dir>/munge/`, with its state under one
//! directory (default `~/.minipbs`). `up` returns once every node is free and prints the
//! `export PBS_CONF_FILE=...` line; `down` stops every process it started. `--postgres` keeps
//! the jobs in a PostgreSQL of its own (`minipbs_postgres.rs`), `--standby` adds a second
//! server on that store; `--simulate` makes the nodes one benchmark `pbs_mom --simulate`
//! (`minipbs_moms.rs` starts the moms). `simulate` replays
//! a workload trace through the scheduler without any cluster (`minipbs_simulate.rs`).

use crate::conf::{PbsConf, ServerAddr};
use crate::conn::Connection;
use clap::{Parser, Subcommand};
use proto::{ClientRequest, ServerReply};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Local cluster launcher.
#[derive(Parser, Debug)]
#[command(
    name = "minipbs",
    version,
    about = "Start and stop a local minipbs cluster on this host; replay workload traces"
)]
struct Args {
    #[command(subcommand)]
    command: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Start a server and N moms; returns when every node is free.
    Up(Box<UpArgs>),
    /// Stop the cluster started in the state directory.
    Down {
        #[arg(long)]
        state_dir: Option<PathBuf>,
    },
    /// Replay a Standard Workload Format trace through the scheduler on a virtual clock.
    Simulate(crate::minipbs_simulate::SimulateArgs),
}

/// `minipbs up` options.
#[derive(Parser, Debug, Clone)]
pub struct UpArgs {
    /// Where the socket, database, spools and logs live (default ~/.minipbs).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Number of nodes (node1..nodeN).
    #[arg(long, default_value_t = 2)]
    pub nodes: u32,
    /// FOR BENCHMARKS ONLY: the --nodes are simulated by one `pbs_mom --simulate`, each with
    /// its own connection; their jobs run nowhere and end after their `sleep N` (docs/design.md section 9).
    #[arg(long)]
    pub simulate: bool,
    /// Cpu slots per node.
    #[arg(long, default_value_t = 4)]
    pub ppn: u32,
    /// Memory per node, e.g. 8gb.
    #[arg(long, default_value = "4gb")]
    pub mem: String,
    /// Fake GPUs per node, described in `<state-dir>/gpus/<node>.json` (edit a file to play a
    /// process outside the queue using a GPU: docs/gpus.md).
    #[arg(long, default_value_t = 0)]
    pub gpus: u32,
    /// An extra argument for every pbs_mom (repeatable), e.g. `--mom-arg=--gpu-poll=200`.
    #[arg(long = "mom-arg", allow_hyphen_values = true)]
    pub mom_args: Vec<String>,
    /// Seconds between SIGTERM and SIGKILL when a job is killed.
    #[arg(long, default_value_t = 10)]
    pub kill_delay: u64,
    /// Server name in job ids (default: the short host name).
    #[arg(long)]
    pub server_name: Option<String>,
    /// Output flavor of the server: openpbs or torque.
    #[arg(long, default_value = "openpbs")]
    pub flavor: proto::Flavor,
    /// Seconds finished jobs stay in plain qstat listings as C (torque flavor; default 300).
    #[arg(long)]
    pub keep_completed: Option<u64>,
    /// Mailer for job mail (qsub -m/-M), passed to pbs_server (default: /usr/sbin/sendmail
    /// if it exists; '' = none).
    #[arg(long)]
    pub sendmail: Option<String>,
    /// Managers beside root and the server's user (`user@host,...`), passed to pbs_server.
    #[arg(long)]
    pub managers: Option<String>,
    /// Operators (`user@host,...`), passed to pbs_server.
    #[arg(long)]
    pub operators: Option<String>,
    /// Owners whose jobs may run as root, passed to pbs_server as the initial `acl_roots`.
    /// A personal cluster lets its root run jobs; '' = nobody (OpenPBS's default).
    #[arg(long, default_value = "root")]
    pub acl_roots: String,
    /// How the daemons and commands talk: unix (sockets, this host only) or tcp (the cluster
    /// transport, TCP + MUNGE on 127.0.0.1, with a munged of its own).
    #[arg(long, value_enum, default_value = "unix")]
    pub transport: Transport,
    /// The job store, passed to pbs_server: `sqlite:PATH` or `postgresql://USER@HOST/DB`
    /// (default: SQLite in the state directory).
    #[arg(long, conflicts_with = "postgres")]
    pub store: Option<String>,
    /// Start the cluster's own PostgreSQL (in <state-dir>/postgres) and keep the jobs there.
    #[arg(long)]
    pub postgres: bool,
    /// Start a second pbs_server on the same PostgreSQL store: the standby, which takes over
    /// when the active one dies (implies --postgres without --store).
    #[arg(long)]
    pub standby: bool,
    /// Serve the server's /metrics and web view on a free loopback port, written to pbs.conf
    /// as `MINIPBS_HTTP` and printed; each mom's /metrics on another (`mom/<node>/mom.http`).
    #[arg(long)]
    pub http: bool,
    /// An extra argument for each pbs_server (repeatable), e.g. `--server-arg=--lease-time=2`.
    #[arg(long = "server-arg", allow_hyphen_values = true)]
    pub server_args: Vec<String>,
}

/// `minipbs up --transport`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Unix,
    Tcp,
}

/// Entry point of the `minipbs` binary.
pub fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Action::Up(up_args) => up(&up_args).map(|conf_path| println!("export PBS_CONF_FILE={}", conf_path.display())),
        Action::Down { state_dir } => down(&state_dir.unwrap_or_else(default_state_dir)),
        Action::Simulate(simulate_args) => crate::minipbs_simulate::run(&simulate_args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("minipbs: {message}");
            ExitCode::from(crate::exit::FAILURE)
        }
    }
}

/// `~/.minipbs`.
pub fn default_state_dir() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp")).join(".minipbs")
}

/// Starts the cluster and returns the path of its pbs.conf.
pub fn up(args: &UpArgs) -> Result<PathBuf, String> {
    let dir = args.state_dir.clone().unwrap_or_else(default_state_dir);
    let dir = std::path::absolute(&dir).map_err(|error| format!("bad state directory {}: {error}", dir.display()))?;
    let mem = job::size::Size::parse(&args.mem).map_err(|error| format!("bad --mem: {error}"))?;
    if args.nodes == 0 || args.ppn == 0 {
        return Err("--nodes and --ppn must be at least 1".to_string());
    }
    std::fs::create_dir_all(dir.join("logs")).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    let server_name = args.server_name.clone().unwrap_or_else(crate::submit_env::hostname);
    let mut conf = PbsConf {
        server_name: server_name.clone(),
        server: ServerAddr::Unix(dir.join("server.sock")),
        secondary: None,
        home: Some(dir.clone()),
        source: dir.join("pbs.conf"),
        // The daemons run as whoever runs `minipbs up`.
        server_uid: Some(nix::unistd::geteuid().as_raw()),
    };
    let leftovers: Vec<String> =
        recorded_daemons(&dir).into_iter().filter(|(_, pid)| is_our_daemon(*pid)).map(|(name, _)| name).collect();
    if Connection::open_conf(&conf).is_ok() || !leftovers.is_empty() {
        return Err(format!(
            "a cluster is already running in {} ({}): run minipbs down --state-dir {} first",
            dir.display(),
            if leftovers.is_empty() { "its server answers".to_string() } else { leftovers.join(", ") },
            dir.display()
        ));
    }
    let bin_dir = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)).unwrap_or_default();
    let mut server_args = vec![
        "--state-dir".to_string(),
        dir.display().to_string(),
        "--name".to_string(),
        server_name.clone(),
        "--kill-delay".to_string(),
        args.kill_delay.to_string(),
        "--flavor".to_string(),
        args.flavor.name().to_string(),
        "-v".to_string(),
    ];
    if let Some(keep) = args.keep_completed {
        server_args.extend(["--keep-completed".to_string(), keep.to_string()]);
    }
    if let Some(sendmail) = &args.sendmail {
        let sendmail = if sendmail.is_empty() {
            PathBuf::new()
        } else {
            std::path::absolute(sendmail).map_err(|error| format!("bad --sendmail: {error}"))?
        };
        server_args.extend(["--sendmail".to_string(), sendmail.display().to_string()]);
    }
    for (flag, list) in [("--managers", &args.managers), ("--operators", &args.operators)] {
        if let Some(list) = list {
            server_args.extend([flag.to_string(), list.clone()]);
        }
    }
    if !args.acl_roots.is_empty() {
        server_args.extend(["--acl-roots".to_string(), args.acl_roots.clone()]);
    }
    if args.standby && args.store.as_deref().is_some_and(|store| !store.starts_with("postgres")) {
        return Err("--standby needs a PostgreSQL store (--postgres or --store postgresql://...)".to_string());
    }
    let store = match &args.store {
        Some(store) => Some(store.clone()),
        None if args.postgres || args.standby => Some(crate::minipbs_postgres::start(&dir)?),
        None => None,
    };
    if let Some(store) = store {
        server_args.extend(["--store".to_string(), store]);
    }
    let _ = std::fs::remove_file(dir.join("server.http"));
    if args.http {
        server_args.extend(["--http".to_string(), "127.0.0.1:0".to_string()]);
    }
    server_args.extend(args.server_args.iter().cloned());
    let munge_socket = dir.join("munge").join("socket");
    if args.transport == Transport::Tcp {
        start_munged(&dir)?;
        let _ = std::fs::remove_file(dir.join("server.port"));
        server_args.extend(["--listen".to_string(), "127.0.0.1:0".to_string(), "--munge-socket".to_string()]);
        server_args.push(munge_socket.display().to_string());
    }
    spawn_daemon(&bin_dir.join("pbs_server"), &server_args, &dir, "server")?;
    let server_failed = || format!("pbs_server did not start; see {}", dir.join("logs/server.log").display());
    if args.transport == Transport::Tcp {
        let mut port = None;
        wait_until(Duration::from_secs(20), || {
            port = std::fs::read_to_string(dir.join("server.port")).ok().and_then(|text| text.trim().parse().ok());
            port.is_some()
        })
        .map_err(|_| server_failed())?;
        let munge_socket = munge_socket.clone();
        conf.server = ServerAddr::Tcp { host: "127.0.0.1".to_string(), port: port.unwrap_or(0), munge_socket };
    }
    wait_until(Duration::from_secs(20), || Connection::open_conf(&conf).is_ok()).map_err(|_| server_failed())?;
    if args.standby {
        // Started once the first one serves: it waits for the lease as the standby, on the same
        // state directory, socket and TCP port, and binds them when it takes over.
        let port = match &conf.server {
            ServerAddr::Tcp { port, .. } => format!("127.0.0.1:{port}"),
            ServerAddr::Unix(_) => String::new(),
        };
        let standby_args: Vec<String> =
            server_args.iter().map(|arg| if arg == "127.0.0.1:0" { port.clone() } else { arg.clone() }).collect();
        spawn_daemon(&bin_dir.join("pbs_server"), &standby_args, &dir, "server2")?;
    }
    let moms = crate::minipbs_moms::Moms {
        nodes: args.nodes,
        simulate: args.simulate,
        ppn: args.ppn,
        mem_bytes: mem.bytes(),
        gpus: args.gpus,
        kill_delay: args.kill_delay,
        http: args.http,
        extra: args.mom_args.clone(),
    };
    crate::minipbs_moms::spawn(&moms, &conf.server, &dir, &bin_dir)?;
    let mut dead = None;
    let started = wait_until(Duration::from_secs(if args.simulate { 300 } else { 30 }), || {
        dead = recorded_daemons(&dir).into_iter().find(|(_, pid)| !is_our_daemon(*pid)).map(|(name, _)| name);
        dead.is_some() || count_up_nodes(&conf) >= args.nodes as usize
    });
    if let Some(name) = dead {
        let _ = down(&dir);
        return Err(format!("{name} exited at start; see {}", dir.join("logs").join(format!("{name}.log")).display()));
    }
    started.map_err(|_| format!("not every node came up; see the logs in {}", dir.join("logs").display()))?;
    let conf_path = dir.join("pbs.conf");
    let text = match &conf.server {
        ServerAddr::Unix(socket) => {
            format!("PBS_SERVER={server_name}\nPBS_HOME={}\nPBS_SERVER_SOCKET={}\n", dir.display(), socket.display())
        }
        ServerAddr::Tcp { host, port, munge_socket } => format!(
            "PBS_SERVER={server_name}\nPBS_HOME={}\nPBS_SERVER_HOST_NAME={host}\nPBS_BATCH_SERVICE_PORT={port}\nPBS_MUNGE_SOCKET={}\nPBS_SERVER_UID={}\n",
            dir.display(),
            munge_socket.display(),
            conf.server_uid.unwrap_or(0)
        ),
    };
    let mut text = text;
    if args.http {
        let mut port = String::new();
        wait_until(Duration::from_secs(20), || {
            port = std::fs::read_to_string(dir.join("server.http")).unwrap_or_default().trim().to_string();
            !port.is_empty()
        })
        .map_err(|_| server_failed())?;
        text.push_str(&format!("MINIPBS_HTTP=http://127.0.0.1:{port}/\n"));
        eprintln!("minipbs: the web view at http://127.0.0.1:{port}/, metrics at http://127.0.0.1:{port}/metrics");
    }
    std::fs::write(&conf_path, text).map_err(|error| format!("cannot write {}: {error}", conf_path.display()))?;
    Ok(conf_path)
}

/// Starts the cluster's own munged (foreground, recorded like the daemons) with the key in
/// `<dir>/munge/munge.key` (made by `mungekey` the first time, 0600), and waits until it
/// answers on `<dir>/munge/socket`.
fn start_munged(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let munge_dir = dir.join("munge");
    std::fs::create_dir_all(&munge_dir).map_err(|error| format!("cannot create {}: {error}", munge_dir.display()))?;
    std::fs::set_permissions(&munge_dir, std::fs::Permissions::from_mode(0o755)).map_err(|error| error.to_string())?;
    let key = munge_dir.join("munge.key");
    if !key.exists() {
        let mungekey = munge_program("mungekey")?;
        let status =
            Command::new(mungekey).arg("--create").arg("--keyfile").arg(&key).status().map_err(|error| {
                format!("cannot run mungekey ({error}): install MUNGE (Debian: apt-get install munge)")
            })?;
        if !status.success() {
            return Err(format!("mungekey could not create {}", key.display()));
        }
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).map_err(|error| error.to_string())?;
    let file = |name: &str| munge_dir.join(name).display().to_string();
    let munged_args = [
        "--foreground".to_string(),
        "--force".to_string(),
        format!("--socket={}", file("socket")),
        format!("--key-file={}", file("munge.key")),
        format!("--pid-file={}", file("munged.pid")),
        format!("--log-file={}", file("munged.log")),
        format!("--seed-file={}", file("munged.seed")),
    ];
    spawn_daemon(&munge_program("munged")?, &munged_args, dir, "munged")?;
    wait_until(Duration::from_secs(10), || proto::munge::encode(&munge_dir.join("socket"), b"").is_ok())
        .map_err(|_| format!("munged did not start; see {}", dir.join("logs/munged.log").display()))
}

/// Where MUNGE's `name` (`munged`, `mungekey`) is installed: Debian puts them in /usr/sbin, which
/// an ordinary user's PATH often lacks, so those directories are looked at before PATH.
fn munge_program(name: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = [PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")].into_iter().chain(std::env::split_paths(&path));
    dirs.map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("{name} not found: install MUNGE (Debian: apt-get install munge)"))
}

/// Nodes whose mom is registered (free, or busy with jobs kept from an earlier run).
fn count_up_nodes(conf: &PbsConf) -> usize {
    let Ok(mut conn) = Connection::open_conf(conf) else { return 0 };
    let up = |state: &str| !state.split(',').any(|part| part == "down" || part == "offline");
    match conn.request(&ClientRequest::StatusNode { names: Vec::new() }) {
        Ok(ServerReply::Nodes { nodes, .. }) => nodes.iter().filter(|node| node.get("state").is_some_and(up)).count(),
        _ => 0,
    }
}

/// Starts `program` detached (own session, stdin closed, output to `logs/<name>.log`) and
/// records its pid in `pids/<name>.pid`.
fn spawn_daemon(program: &Path, args: &[String], dir: &Path, name: &str) -> Result<(), String> {
    let mut command = Command::new(program);
    command.args(args);
    crate::minipbs_daemon::spawn_logged(command, dir, name)
}

/// Polls `done` every 20 ms until it is true or `limit` passes.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> Result<(), ()> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(())
}

/// Stops every daemon recorded under `dir/pids`: moms first (they kill their jobs), then the
/// servers, then munged and PostgreSQL; SIGKILL for anything still there after 15 s.
pub fn down(dir: &Path) -> Result<(), String> {
    if !dir.join("pids").is_dir() {
        return Err(format!("no cluster is running in {}", dir.display()));
    }
    let pid_dir = dir.join("pids");
    let (last, moms): (Vec<_>, Vec<_>) = recorded_daemons(dir)
        .into_iter()
        .partition(|(name, _)| name.starts_with("server") || name == "munged" || name == "postgres");
    let (helpers, servers): (Vec<_>, Vec<_>) =
        last.into_iter().partition(|(name, _)| name == "munged" || name == "postgres");
    for group in [moms, servers, helpers] {
        // Only processes that are still our daemons: after a reboot a pid may name anything.
        let live: Vec<i32> = group.iter().map(|(_, pid)| *pid).filter(|pid| is_our_daemon(*pid)).collect();
        for pid in &live {
            signal(*pid, nix::sys::signal::Signal::SIGTERM);
        }
        if wait_until(Duration::from_secs(15), || live.iter().all(|pid| !is_our_daemon(*pid))).is_err() {
            for pid in live.iter().filter(|pid| is_our_daemon(**pid)) {
                signal(*pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
        for (name, _) in &group {
            let _ = std::fs::remove_file(pid_dir.join(format!("{name}.pid")));
        }
    }
    Ok(())
}

/// The daemons recorded under `dir/pids` as (name, pid).
fn recorded_daemons(dir: &Path) -> Vec<(String, i32)> {
    let Ok(entries) = std::fs::read_dir(dir.join("pids")) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().strip_suffix(".pid")?.to_string();
            let pid = std::fs::read_to_string(entry.path()).ok()?.trim().parse().ok()?;
            Some((name, pid))
        })
        .collect()
}

/// Whether `pid` is a live (not zombie) `pbs_server`, `pbs_mom`, `munged` or `postgres`.
fn is_our_daemon(pid: i32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let program = cmdline.split(|byte| *byte == 0).next().unwrap_or_default();
    let name = Path::new(std::str::from_utf8(program).unwrap_or_default()).file_name().and_then(|name| name.to_str());
    matches!(name, Some("pbs_server" | "pbs_mom" | "munged" | "postgres")) && !is_zombie(pid)
}

fn signal(pid: i32, signal: nix::sys::signal::Signal) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}
