//! `minipbs up` and `minipbs down` (design.md section 9): a local cluster of one `pbs_server`
//! and N `pbs_mom`s on this host, over Unix sockets, with its state under one directory
//! (default `~/.minipbs`). `up` returns once every node is free and prints the
//! `export PBS_CONF_FILE=...` line; `down` stops every process it started.

use crate::conf::PbsConf;
use crate::conn::Connection;
use clap::{Parser, Subcommand};
use proto::{ClientRequest, ServerReply};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Local cluster launcher.
#[derive(Parser, Debug)]
#[command(name = "minipbs", version, about = "Start and stop a local minipbs cluster on this host")]
struct Args {
    #[command(subcommand)]
    command: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Start a server and N moms; returns when every node is free.
    Up(UpArgs),
    /// Stop the cluster started in the state directory.
    Down {
        #[arg(long)]
        state_dir: Option<PathBuf>,
    },
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
    /// Cpu slots per node.
    #[arg(long, default_value_t = 4)]
    pub ppn: u32,
    /// Memory per node, e.g. 8gb.
    #[arg(long, default_value = "4gb")]
    pub mem: String,
    /// Fake GPUs per node.
    #[arg(long, default_value_t = 0)]
    pub gpus: u32,
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
}

/// Entry point of the `minipbs` binary.
pub fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Action::Up(up_args) => up(&up_args).map(|conf_path| println!("export PBS_CONF_FILE={}", conf_path.display())),
        Action::Down { state_dir } => down(&state_dir.unwrap_or_else(default_state_dir)),
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
    let server_name = args.server_name.clone().unwrap_or_else(crate::qsub_env::hostname);
    let conf = PbsConf {
        server_name: server_name.clone(),
        socket: dir.join("server.sock"),
        home: Some(dir.clone()),
        source: dir.join("pbs.conf"),
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
    spawn_daemon(&bin_dir.join("pbs_server"), &server_args, &dir, "server")?;
    wait_until(Duration::from_secs(20), || Connection::open_conf(&conf).is_ok())
        .map_err(|_| format!("pbs_server did not start; see {}", dir.join("logs/server.log").display()))?;
    for index in 1..=args.nodes {
        let name = format!("node{index}");
        let mom_args = vec![
            "--socket".to_string(),
            conf.socket.display().to_string(),
            "--name".to_string(),
            name.clone(),
            "--np".to_string(),
            args.ppn.to_string(),
            "--mem".to_string(),
            mem.bytes().to_string(),
            "--gpus".to_string(),
            args.gpus.to_string(),
            "--spool".to_string(),
            dir.join("mom").join(&name).display().to_string(),
            "--tmpdir".to_string(),
            dir.join("tmp").display().to_string(),
            "--kill-delay".to_string(),
            args.kill_delay.to_string(),
            "--kill-jobs-on-shutdown".to_string(),
            "-v".to_string(),
        ];
        spawn_daemon(&bin_dir.join("pbs_mom"), &mom_args, &dir, &name)?;
    }
    let mut dead = None;
    let started = wait_until(Duration::from_secs(30), || {
        dead = recorded_daemons(&dir).into_iter().find(|(_, pid)| !is_our_daemon(*pid)).map(|(name, _)| name);
        dead.is_some() || count_up_nodes(&conf) >= args.nodes as usize
    });
    if let Some(name) = dead {
        let _ = down(&dir);
        return Err(format!("{name} exited at start; see {}", dir.join("logs").join(format!("{name}.log")).display()));
    }
    started.map_err(|_| format!("not every node came up; see the logs in {}", dir.join("logs").display()))?;
    let conf_path = dir.join("pbs.conf");
    let text =
        format!("PBS_SERVER={server_name}\nPBS_HOME={}\nPBS_SERVER_SOCKET={}\n", dir.display(), conf.socket.display());
    std::fs::write(&conf_path, text).map_err(|error| format!("cannot write {}: {error}", conf_path.display()))?;
    Ok(conf_path)
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
    let log_path = dir.join("logs").join(format!("{name}.log"));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|error| format!("cannot open {}: {error}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|error| error.to_string())?;
    let mut command = Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(log).stderr(log_err);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(std::io::Error::from));
    }
    let child = command.spawn().map_err(|error| format!("cannot start {}: {error}", program.display()))?;
    std::fs::create_dir_all(dir.join("pids")).map_err(|error| error.to_string())?;
    std::fs::write(dir.join("pids").join(format!("{name}.pid")), child.id().to_string())
        .map_err(|error| error.to_string())?;
    Ok(())
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
/// server; SIGKILL for anything still there after 15 s.
pub fn down(dir: &Path) -> Result<(), String> {
    if !dir.join("pids").is_dir() {
        return Err(format!("no cluster is running in {}", dir.display()));
    }
    let pid_dir = dir.join("pids");
    let (moms, server): (Vec<_>, Vec<_>) = recorded_daemons(dir).into_iter().partition(|(name, _)| name != "server");
    for group in [moms, server] {
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

/// Whether `pid` is a live (not zombie) `pbs_server` or `pbs_mom`.
fn is_our_daemon(pid: i32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let program = cmdline.split(|byte| *byte == 0).next().unwrap_or_default();
    let name = Path::new(std::str::from_utf8(program).unwrap_or_default()).file_name().and_then(|name| name.to_str());
    matches!(name, Some("pbs_server" | "pbs_mom")) && !is_zombie(pid)
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
