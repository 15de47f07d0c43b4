//! `pbs_server`: flags -> `ServerConfig` -> logging -> `server::run`. No logic here; libpq,
//! for a PostgreSQL store only, is loaded by `libpq_at_run_time.rs`, a module of this binary.

mod libpq_at_run_time;

use clap::Parser;
use server::config::{short_hostname, Flavor, ServerConfig};
use std::path::PathBuf;
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

/// The minipbs head server.
#[derive(Parser, Debug)]
#[command(name = "pbs_server", version)]
struct Args {
    /// Directory for the socket, the database and logs.
    #[arg(long)]
    state_dir: PathBuf,
    /// Server name used in job ids (default: the short host name).
    #[arg(long)]
    name: Option<String>,
    /// Seconds between SIGTERM and SIGKILL when killing a job.
    #[arg(long, default_value_t = 10)]
    kill_delay: u64,
    /// Mark a mom down after this many seconds without a heartbeat.
    #[arg(long, default_value_t = 30)]
    node_timeout: u64,
    /// Seconds finished jobs stay in history (qstat -x); OpenPBS job_history_duration.
    #[arg(long, default_value_t = 14 * 24 * 3600)]
    job_history_duration: u64,
    /// Output flavor for conflicting displays: openpbs or torque.
    #[arg(long, default_value = "openpbs")]
    flavor: String,
    /// TORQUE keep_completed: seconds finished jobs stay in plain qstat listings as C
    /// (torque flavor).
    #[arg(long, default_value_t = server::flavor::DEFAULT_KEEP_COMPLETED)]
    keep_completed: u64,
    /// Mailer for job mail (qsub -m/-M), run as `sendmail -f adm <recipients>` with the
    /// message on stdin (default: /usr/sbin/sendmail if it exists; '' = none).
    #[arg(long)]
    sendmail: Option<String>,
    /// Managers beside root and the server's own user: comma-separated `user@host` entries
    /// (`*` wildcards in the host part), shown in qmgr's `managers` (OpenPBS managers).
    #[arg(long, value_delimiter = ',')]
    managers: Vec<String>,
    /// Operators: comma-separated `user@host` entries, shown in qmgr's `operators`.
    #[arg(long, value_delimiter = ',')]
    operators: Vec<String>,
    /// Owners (`user` or `user@host`, comma-separated) whose jobs may run as root: the
    /// initial `acl_roots` (default none: a job as root is refused with "Bad UID for job
    /// execution"). `minipbs up` passes `root`.
    #[arg(long, value_delimiter = ',')]
    acl_roots: Vec<String>,
    /// Also listen on TCP (cluster mode, every frame MUNGE-sealed): `--listen` alone is
    /// 0.0.0.0:15001 (OpenPBS's port); port 0 picks one and writes it to <state-dir>/server.port.
    #[arg(long, num_args = 0..=1, default_missing_value = "0.0.0.0:15001")]
    listen: Option<std::net::SocketAddr>,
    /// munged's socket (TCP transport).
    #[arg(long, default_value = proto::munge::DEFAULT_SOCKET)]
    munge_socket: PathBuf,
    /// The fair-share tree, OpenPBS's `resource_group` format (`name id parent shares` lines;
    /// default <state-dir>/sched_priv/resource_group if it exists).
    #[arg(long)]
    resource_group: Option<PathBuf>,
    /// The job store: `sqlite:PATH` (default <state-dir>/server.db) or
    /// `postgresql://USER@HOST/DATABASE` (a password goes in ~/.pgpass, never here: it would
    /// show in ps). Two servers on one PostgreSQL store are a primary and a standby.
    #[arg(long, value_parser = server::store::StoreLocation::parse)]
    store: Option<server::store::StoreLocation>,
    /// Seconds the active server's lease on a PostgreSQL store lasts without renewal (it
    /// renews every fifth of it): a standby takes over at most this long after the active
    /// server dies or is cut off.
    #[arg(long, default_value_t = 5.0)]
    lease_time: f64,
    /// Serve Prometheus metrics (/metrics) and the read-only web view over HTTP on this
    /// address (off by default). Keep it on loopback and put a reverse proxy with
    /// authentication in front (docs/web.md); port 0 picks one and writes it to
    /// <state-dir>/server.http.
    #[arg(long)]
    http: Option<std::net::SocketAddr>,
    /// More logging (-v info, -vv debug).
    #[arg(short, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// The heap's shape, set before any thread starts; a tunable set by the site (`GLIBC_TUNABLES`,
/// `MALLOC_MMAP_THRESHOLD_`, `MALLOC_ARENA_MAX`) wins.
/// - Allocations of 128 KiB and more get their own mappings, given back on free, for good: glibc
///   otherwise raises the threshold after the first such free, and the big per-pass temporaries
///   of the start bursts (views, frames, store batches) then fragment the heap (bench/scale:
///   peak RSS 234 -> 217 MiB with `glibc.malloc.mmap_threshold=131072`).
/// - One arena: glibc gives each new thread an arena of its own (up to 8 per core), and a
///   job's memory, made on one worker and freed on another or on the store thread, then leaves
///   holes in several heaps that `malloc_trim` cannot give back (bench/scale: peak RSS 192-197
///   -> 155-156 MiB, three runs each). Small blocks still come from each thread's cache without
///   the arena's lock.
fn heap_shape() {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    let set_by_site = |var: &str, tunable: &str| std::env::var_os(var).is_some() || tunables.contains(tunable);
    // SAFETY: mallopt only sets an allocator parameter; it is thread-safe in glibc.
    unsafe {
        if !set_by_site("MALLOC_MMAP_THRESHOLD_", "mmap_threshold") {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        }
        if !set_by_site("MALLOC_ARENA_MAX", "arena_max") {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
    }
}

/// How often the heap's free pages are handed back to the kernel.
const HEAP_TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Every [`HEAP_TRIM_EVERY`], hands the pages of freed heap memory back to the kernel
/// (`malloc_trim`): glibc keeps free memory inside the heap (it gives back only the top), so the
/// temporaries of a burst of starts or ends stayed resident for good (bench/scale: RSS climbs
/// through the second wave; 35 MiB of its end state was free heap). A thread of its own: the
/// trim walks every arena, off the runtime's workers. It costs milliseconds at 100,000 jobs.
fn heap_trimmer() {
    let spawned = std::thread::Builder::new().name("heap-trim".to_string()).spawn(|| loop {
        std::thread::sleep(HEAP_TRIM_EVERY);
        // SAFETY: malloc_trim only returns free memory of glibc's arenas; it is thread-safe.
        unsafe { libc::malloc_trim(0) };
    });
    if let Err(err) = spawned {
        tracing::warn!("cannot start the heap trimmer: {err}");
    }
}

/// A failure to start is one line on stderr, `pbs_server: <what>: <why>`, and exit status 1.
/// The heap is shaped before the runtime starts its threads (each would take an arena).
fn main() -> std::process::ExitCode {
    heap_shape();
    let outcome = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(anyhow::Error::from)
        .and_then(|runtime| runtime.block_on(run()));
    match outcome {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("pbs_server: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let args = Args::parse();
    // A panic anywhere (a handler under the state lock, any task) ends the server, as a failed
    // commit does: the store is the truth and a restart recovers from it.
    pbslog::fatal::install_panic_hook("pbs_server");
    let level = ["warn", "info", "debug"][args.verbose.min(2) as usize];
    let mut config = ServerConfig::new(args.state_dir, args.name.unwrap_or_else(short_hostname));
    // OpenPBS-style log lines (`tracejob` reads them): `date;event;Server@name;type;name;message`.
    let object = format!("Server@{}", config.server_name);
    tracing_subscriber::registry()
        .with(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level)))
        .with(pbslog::layer::PbsLogLayer::new(&object, std::io::stderr()))
        .init();
    // After the log is set up: a failure to start the thread is logged, not lost.
    heap_trimmer();
    if let Some(sendmail) = args.sendmail {
        // `--sendmail ''`: no mailer (each mail is logged as not sent).
        config.sendmail = Some(PathBuf::from(sendmail)).filter(|path| !path.as_os_str().is_empty());
    }
    config.kill_delay = args.kill_delay;
    config.node_timeout = std::time::Duration::from_secs(args.node_timeout);
    config.history_duration = std::time::Duration::from_secs(args.job_history_duration);
    config.flavor = args.flavor.parse::<Flavor>()?;
    config.keep_completed = args.keep_completed;
    config.managers = args.managers;
    config.operators = args.operators;
    config.acl_roots = args.acl_roots.into_iter().filter(|entry| !entry.is_empty()).collect();
    config.listen = args.listen;
    config.munge_socket = args.munge_socket;
    config.resource_group = args.resource_group;
    config.http = args.http;
    if !(args.lease_time.is_finite() && (0.5..=3600.0).contains(&args.lease_time)) {
        anyhow::bail!("--lease-time {}: give seconds from 0.5 to 3600", args.lease_time);
    }
    config.lease_ttl = std::time::Duration::from_secs_f64(args.lease_time);
    if let Some(store) = args.store {
        if let server::store::StoreLocation::Postgresql(_) = store {
            libpq_at_run_time::load().map_err(anyhow::Error::msg)?;
        }
        config.store = store;
    }
    let shutdown = async {
        let mut term =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    };
    server::run(config, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_alone_is_the_pbs_port_on_every_interface() {
        let parse = |extra: &[&str]| Args::try_parse_from([&["pbs_server", "--state-dir", "/s"], extra].concat());
        assert_eq!(parse(&[]).unwrap().listen, None, "TCP only when asked for");
        assert_eq!(parse(&["--listen"]).unwrap().listen, Some(([0, 0, 0, 0], 15001).into()));
        assert_eq!(parse(&["--listen", "127.0.0.1:0"]).unwrap().listen, Some(([127, 0, 0, 1], 0).into()));
        assert!(parse(&["--listen", "nowhere"]).is_err());
    }
}
