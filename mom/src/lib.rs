//! `pbs_mom`, the execution daemon of one compute node, as a library: [`run`] connects to the
//! server, registers the node, and runs the jobs the server sends as their users.
//!
//! Layout:
//! * `config.rs`: [`MomConfig`] and the `pbs_mom` flags ([`MomArgs`]).
//! * `link.rs`: the server connection (Unix or TCP + MUNGE; handshake, register, heartbeat,
//!   reconnect, obit resend).
//! * `port.rs`: the mom port (TCP): sealed instructions of the server uid, forwarded like the
//!   link's.
//! * `jobs.rs`: the job table and the decision taken on each server message (pure).
//! * `daemon.rs`: the main loop carrying those decisions out.
//! * `exec/`: running one job (files, identity, environment, session, kill, reap, delivery).
//! * `cgroup/`: a cgroup per job (v1 or v2): limits, joining, killing, usage.
//! * `gpu/`: the node's GPUs (NVML, fake or none), their use, claims by jobs, MPS daemons.
//! * `http.rs`: `--http`, this node's `/metrics`.
//! * `simulate/`: `--simulate N`, for benchmarks only: N nodes in one process whose jobs are
//!   clocks, not processes.
//! * `task/`: the task socket and the peer path: processes of a job started on its nodes by
//!   its launchers (pbsdsh, pbs_tmrsh).
//!
//! Must not know: the database, other nodes' state, scheduling policy, queue rules. The
//! tracing subscriber is installed by the binary, never here.

pub mod cgroup;
pub mod config;
pub mod daemon;
pub mod exec;
pub mod gpu;
pub mod http;
pub mod jobs;
pub mod link;
pub mod port;
pub mod simulate;
pub mod task;
#[cfg(test)]
mod test_support;

pub use config::{MomArgs, MomConfig};

use anyhow::Context;
use std::fs;
use std::future::Future;
use std::os::unix::fs::MetadataExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::Instrument;

/// Runs the mom until `shutdown` completes. Running jobs are left running unless
/// `config.kill_jobs_on_shutdown` is set, in which case they are killed (and their ends
/// awaited) first. Fails only when the spool directories cannot be prepared; an absent server
/// is retried for ever.
pub async fn run(config: MomConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    prepare_directories(&config)?;
    if config.server.is_some() || config.listen.is_some() {
        // One clear line now rather than refused links later.
        proto::munge::encode(&config.munge_socket, b"").context("the TCP transport needs MUNGE")?;
    }
    let leftovers = exec::recover::end_leftover_jobs(&config.spool_dir, &config.tmpdir_base);
    if !leftovers.is_empty() {
        tracing::warn!(jobs = ?leftovers, "ended jobs a previous pbs_mom left running; the server requeues or ends them");
    }
    // After the leftovers were read and ended: the log starts empty.
    let sessions =
        Arc::new(exec::sessions::SessionLog::create(&config.spool_dir).context("cannot open the session log")?);
    let mom_uid = nix::unistd::geteuid().as_raw();
    if mom_uid != 0 {
        tracing::warn!(uid = mom_uid, "not running as root: only jobs of this user can run here");
    }
    let cgroups = cgroup::Cgroups::detect(config.cgroups, &config.cgroup_slice).context("cannot set up job cgroups")?;
    if let Some(cgroups) = &cgroups {
        let left = cgroups.clean_leftovers();
        if !left.is_empty() {
            tracing::warn!(jobs = ?left, "killed and removed the cgroups of jobs a previous pbs_mom left");
        }
    }
    let table = Arc::new(Mutex::new(jobs::JobTable::new()));
    let (inbound_sender, inbound) = mpsc::unbounded_channel();
    let (outbound, outbound_receiver) = mpsc::unbounded_channel();
    let gpus = open_gpus(&config, outbound.clone())?;
    let context = Arc::new(exec::ExecContext {
        node: config.node.clone(),
        spool_dir: config.spool_dir.clone(),
        tmpdir_base: config.tmpdir_base.clone(),
        code_dir: config.code_dir.clone(),
        default_kill_delay: config.kill_delay,
        mom_uid,
        job_defaults: job_defaults(&config),
        munge_socket: (config.server.is_some() || config.listen.is_some()).then(|| config.munge_socket.clone()),
        launcher: exec::launch_env::LauncherEnv {
            task_socket: config.task_socket(),
            tmrsh: config.tmrsh.clone(),
            mpi_env: config.mpi_env,
        },
        cgroups: cgroups.clone(),
        gpu_minors: gpus.infos().iter().map(|gpu| gpu.index).collect(),
        sessions,
    });
    let poller = tokio::spawn(gpus.clone().run_poller(config.gpu_poll));
    let channels = link::LinkChannels { inbound: inbound_sender, outbound: outbound_receiver };
    let munge_socket: Arc<Path> = Arc::from(config.munge_socket.as_path());
    let board = task::TaskBoard::new();
    let peer_settings = task::peer::PeerSettings {
        node: config.node.clone(),
        munge_socket: context.munge_socket.as_ref().map(|_| munge_socket.clone()),
        mom_uid,
    };
    let tasks = task::TaskServer::new(board.clone(), context.clone(), peer_settings, config.task_connections);
    let task_listener = bind_task_socket(&config.task_socket())?;
    let (peer_sender, peer_receiver) = mpsc::unbounded_channel();
    let task_tasks = [
        tokio::spawn(tasks.clone().serve_unix(task_listener)),
        tokio::spawn(tasks.clone().serve_tcp_peers(peer_receiver)),
    ];
    let mut port = 0;
    let port_task = match config.listen {
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on the mom port {addr}"))?;
            port = listener.local_addr()?.port();
            let inbound = channels.inbound.clone();
            let node = config.node.clone();
            let peers = Some(peer_sender);
            Some(tokio::spawn(port::serve(listener, munge_socket.clone(), node, config.server_uid, inbound, peers)))
        }
        None => None,
    };
    let http_task = match config.http {
        Some(addr) => {
            let view = http::MomView { table: table.clone(), gpus: gpus.clone(), cgroups: cgroups.clone() };
            Some(tokio::spawn(http::serve(Arc::new(view), http::bind(addr, &config.spool_dir).await?)))
        }
        None => None,
    };
    let link_span = tracing::info_span!("link", node = %config.node);
    let settings = link_settings(&config, munge_socket, port, &gpus)?;
    let link_task = tokio::spawn(link::run(settings, table.clone(), channels).instrument(link_span));
    match (&config.server, &config.secondary) {
        (Some(server), Some(secondary)) => {
            tracing::info!(node = %config.node, server, secondary, port, "pbs_mom started (failover)")
        }
        (Some(server), None) => tracing::info!(node = %config.node, server, port, "pbs_mom started"),
        (None, _) => tracing::info!(node = %config.node, socket = %config.socket.display(), "pbs_mom started"),
    }
    let patience = config.kill_delay.max(Duration::from_secs(10)) + Duration::from_secs(20);
    let daemon = daemon::Daemon::new(context, table.clone(), outbound, gpus, tasks);
    let span = tracing::info_span!("mom", node = %config.node);
    // The daemon's loop on a worker, not on this thread (the runtime's `block_on`): a message
    // between it and the link then passes within the pool instead of waking this thread, two
    // thread switches fewer per message.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let stopped = async move {
        let _ = stopped.await;
    };
    let mut daemon_task =
        tokio::spawn(daemon.run(inbound, stopped, config.kill_jobs_on_shutdown, patience).instrument(span));
    let killed = tokio::select! {
        joined = &mut daemon_task => joined,
        () = shutdown => {
            let _ = stop.send(());
            daemon_task.await
        }
    }
    .context("the mom's main loop failed")?;
    // The ends of the jobs just killed are queued on the link: give it a few seconds to
    // deliver them and receive their acknowledgements before it goes.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let pending = || lock_table(&table).unacked_obits().iter().any(|obit| killed.contains(&obit.job_id));
    while tokio::time::Instant::now() < deadline && pending() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    link_task.abort();
    poller.abort();
    for task in port_task.into_iter().chain(http_task) {
        task.abort();
    }
    for task in task_tasks {
        task.abort();
    }
    let _ = fs::remove_file(config.task_socket());
    if let Some(cgroups) = &cgroups {
        cgroups.remove_slice();
    }
    tracing::info!(node = %config.node, "pbs_mom stopped");
    Ok(())
}

/// What jobs get unless they bring their own: the node's `module` command, when it has one.
fn job_defaults(config: &MomConfig) -> Vec<(String, String)> {
    let setting = config.modulecmd.as_deref();
    match exec::modules_env::ModulesEnv::find(setting, &config.search_path, config.modulepath.clone()) {
        Some(modules) => {
            tracing::info!(node = %config.node, modulecmd = %modules.cmd.display(), "jobs get the module command");
            modules.defaults()
        }
        None => Vec::new(),
    }
}

/// Opens the inventory `--gpus` names (one log line says which, and why when none) and the
/// board over it.
fn open_gpus(
    config: &MomConfig,
    outbound: mpsc::UnboundedSender<proto::mom::MomToServer>,
) -> anyhow::Result<Arc<gpu::GpuBoard>> {
    let (inventory, line) = gpu::open(&config.gpus).context("cannot open the GPU inventory")?;
    tracing::info!(node = %config.node, "{line}");
    let settings = gpu::board::BoardSettings {
        tracker: gpu::tracker::TrackerSettings {
            foreign_hold: config.gpu_foreign_hold,
            drain_timeout: config.gpu_drain_timeout,
            idle_memory: gpu::tracker::IDLE_MEMORY,
        },
        cuda_uuids: config.cuda_uuids,
        mps_root: config.spool_dir.join("mps"),
    };
    Ok(gpu::GpuBoard::new(inventory, settings, outbound))
}

fn link_settings(
    config: &MomConfig,
    munge_socket: Arc<Path>,
    port: u16,
    gpus: &gpu::GpuBoard,
) -> anyhow::Result<link::LinkSettings> {
    let targets = link_targets(config, munge_socket);
    Ok(link::LinkSettings {
        targets,
        registration: proto::mom::Registration {
            node: config.node.clone(),
            np: config.np,
            mem_bytes: config.mem_bytes,
            ngpus: gpus.infos().len() as u32,
            properties: config.properties.clone(),
            start_id: random_hex(8)?,
            jobs: Vec::new(),
            port,
            gpus: gpus.infos().to_vec(),
            gpu_states: Vec::new(),
            task_socket: Some(config.task_socket().display().to_string()),
            heartbeat_ms: u64::try_from(config.heartbeat_interval.as_millis()).unwrap_or(u64::MAX),
        },
        gpu_reports: gpus.reports(),
        heartbeat_interval: config.heartbeat_interval,
        reconnect_min: config.reconnect_min,
        reconnect_max: config.reconnect_max,
        handshake_timeout: link::HANDSHAKE_TIMEOUT,
    })
}

/// Where the link connects: the Unix socket, or the `--server` head and then the
/// `--secondary` one (failover).
pub(crate) fn link_targets(config: &MomConfig, munge_socket: Arc<Path>) -> Vec<link::LinkTarget> {
    let tcp = |addr: &String| link::LinkTarget::Tcp {
        addr: addr.clone(),
        munge_socket: munge_socket.clone(),
        server_uid: config.server_uid,
    };
    match &config.server {
        Some(primary) => std::iter::once(primary).chain(&config.secondary).map(tcp).collect(),
        None => vec![link::LinkTarget::Unix { path: config.socket.clone(), server_uid: config.server_uid }],
    }
}

/// Binds the task socket (a stale one from a previous mom is replaced), mode 0666: any
/// process may connect; every request is authorized by its caller's uid and the job's cookie.
fn bind_task_socket(path: &Path) -> anyhow::Result<tokio::net::UnixListener> {
    let _ = fs::remove_file(path);
    let listener = tokio::net::UnixListener::bind(path)
        .with_context(|| format!("cannot bind the task socket {}", path.display()))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o666))
        .with_context(|| format!("cannot set the mode of {}", path.display()))?;
    Ok(listener)
}

/// Creates the spool directory, its `aux/` (0755: jobs read their node files there) and the
/// TMPDIR base.
fn prepare_directories(config: &MomConfig) -> anyhow::Result<()> {
    let aux = config.spool_dir.join("aux");
    for dir in [&config.spool_dir, &aux, &config.tmpdir_base] {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    fs::set_permissions(&aux, fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot set the mode of {}", aux.display()))?;
    // Files are created there as the mom (root): nobody else may be able to plant or rename
    // anything in them.
    let parent = config.spool_dir.parent().unwrap_or(Path::new("/"));
    for (dir, sticky_ok) in [
        (parent, true),
        (config.spool_dir.as_path(), false),
        (aux.as_path(), false),
        (config.tmpdir_base.as_path(), true),
    ] {
        check_private(dir, sticky_ok)?;
    }
    Ok(())
}

/// Refuses a directory that someone other than the mom (or root) owns or can write, unless
/// `sticky_ok` and it has the sticky bit (like `/var/tmp`).
fn check_private(dir: &Path, sticky_ok: bool) -> anyhow::Result<()> {
    let meta = fs::metadata(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let me = nix::unistd::geteuid().as_raw();
    let owner_ok = meta.uid() == me || meta.uid() == 0;
    let writable_by_others = meta.mode() & 0o022 != 0;
    let sticky = meta.mode() & 0o1000 != 0;
    if !owner_ok || (writable_by_others && !(sticky_ok && sticky)) {
        anyhow::bail!(
            "{} is owned by uid {} with mode {:o}: the mom creates job files there, so it must belong to uid {me} (or root) and not be writable by others",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        );
    }
    Ok(())
}

/// `bytes` random bytes from the kernel (`getrandom`), as hex; the mom does not start without
/// them rather than make a guessable start id.
pub(crate) fn random_hex(bytes: usize) -> anyhow::Result<String> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).map_err(|error| anyhow::anyhow!("the kernel's random source failed: {error}"))?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}

/// Locks the job table; a panic while it was held (the table may be half-changed) ends the
/// mom: at restart it ends what it left behind and the server reconciles its jobs.
fn lock_table(table: &Mutex<jobs::JobTable>) -> std::sync::MutexGuard<'_, jobs::JobTable> {
    pbslog::fatal::lock_or_exit(table, "job table")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_link_targets_the_primary_then_the_secondary() {
        let munge: std::sync::Arc<std::path::Path> = std::sync::Arc::from(std::path::Path::new("/m"));
        let mut config = super::MomConfig::new("/s", "n1");
        let names = |config: &super::MomConfig| -> Vec<String> {
            super::link_targets(config, munge.clone()).iter().map(ToString::to_string).collect()
        };
        assert_eq!(names(&config), vec!["socket /s"]);
        config.server = Some("h1:15001".into());
        assert_eq!(names(&config), vec!["h1:15001"]);
        config.secondary = Some("h2:15001".into());
        assert_eq!(names(&config), vec!["h1:15001", "h2:15001"]);
    }

    #[test]
    fn random_hex_is_hex_and_varies() {
        let (a, b) = (super::random_hex(8).unwrap(), super::random_hex(8).unwrap());
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
