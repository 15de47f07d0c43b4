//! Server configuration: one struct, defaults in one function, read once in `main` and passed
//! down. Nothing else in the server reads the environment.

use std::path::PathBuf;
use std::time::Duration;

/// Which PBS dialect conflicting displays follow (pbs-reference section 0); `crate::flavor`
/// holds what differs.
pub use proto::Flavor;

/// Everything `pbs_server` needs to run.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Holds the socket, the database and the logs.
    pub state_dir: PathBuf,
    /// The server part of job ids (`12.<server_name>`).
    pub server_name: String,
    /// Unix socket for commands and moms; default `<state_dir>/server.sock`.
    pub socket_path: PathBuf,
    /// The job store (`--store`): SQLite, default `<state_dir>/server.db`, or PostgreSQL.
    pub store: crate::store::StoreLocation,
    /// How long the active server's lease on a PostgreSQL store lasts without renewal: a
    /// standby takes over at most this long after the active one stops renewing.
    pub lease_ttl: Duration,
    pub default_queue: String,
    pub flavor: Flavor,
    /// TORQUE `keep_completed`: seconds a finished job stays in plain listings as `C` (torque
    /// flavor only).
    pub keep_completed: u64,
    /// Seconds between SIGTERM and SIGKILL when a job is killed (OpenPBS default 10).
    pub kill_delay: u64,
    /// How long finished jobs stay in history.
    pub history_duration: Duration,
    /// A mom silent for this long is marked down.
    pub node_timeout: Duration,
    /// Coalescing delay of the scheduler after an event.
    pub sched_delay: Duration,
    /// Safety-net scheduling interval.
    pub sched_interval: Duration,
    /// The mailer run as `sendmail -f adm <recipients>` (qsub -m/-M); `None` = mail is logged
    /// as not sent. Default `/usr/sbin/sendmail` if it exists.
    pub sendmail: Option<PathBuf>,
    /// `user@host` entries that are managers beside root, the server's own user and qmgr's
    /// `managers` (OpenPBS `managers`); shown with qmgr's, never stored.
    pub managers: Vec<String>,
    /// `user@host` entries that are operators beside qmgr's `operators`.
    pub operators: Vec<String>,
    /// Initial `acl_roots`: whose jobs may run as root (empty: nobody's, as in OpenPBS).
    pub acl_roots: Vec<String>,
    /// TCP address of the cluster transport (`--listen`; OpenPBS port 15001, port 0 = any,
    /// written to `<state_dir>/server.port`); `None` = Unix socket only.
    pub listen: Option<std::net::SocketAddr>,
    /// munged's socket, for the credentials of the TCP transport.
    pub munge_socket: PathBuf,
    /// The fair-share tree (OpenPBS's `resource_group`, `sched::fairshare`): `--resource-group`,
    /// default `<state_dir>/sched_priv/resource_group` when it exists; `None`: no file.
    pub resource_group: Option<PathBuf>,
    /// Where `/metrics` and the web view are served (`--http`; `crate::http`); `None`: not served.
    pub http: Option<std::net::SocketAddr>,
}

impl ServerConfig {
    /// Defaults for a server keeping its state in `state_dir`.
    pub fn new(state_dir: PathBuf, server_name: String) -> ServerConfig {
        ServerConfig {
            socket_path: state_dir.join("server.sock"),
            store: crate::store::StoreLocation::Sqlite(state_dir.join("server.db")),
            lease_ttl: Duration::from_secs(5),
            state_dir,
            server_name,
            default_queue: "workq".to_string(),
            flavor: Flavor::OpenPbs,
            keep_completed: crate::flavor::DEFAULT_KEEP_COMPLETED,
            kill_delay: 10,
            history_duration: Duration::from_secs(14 * 24 * 3600),
            node_timeout: Duration::from_secs(30),
            sched_delay: Duration::from_millis(1),
            sched_interval: Duration::from_secs(10),
            sendmail: Some(PathBuf::from("/usr/sbin/sendmail")).filter(|path| path.exists()),
            managers: Vec::new(),
            operators: Vec::new(),
            acl_roots: Vec::new(),
            listen: None,
            munge_socket: PathBuf::from(proto::munge::DEFAULT_SOCKET),
            resource_group: None,
            http: None,
        }
    }
}

impl ServerConfig {
    /// The `resource_group` file to read: the one given, else the default if it exists.
    pub fn resource_group_path(&self) -> Option<PathBuf> {
        self.resource_group
            .clone()
            .or_else(|| Some(self.state_dir.join("sched_priv").join("resource_group")).filter(|path| path.exists()))
    }
}

/// The short host name of this machine (the default server name).
pub fn short_hostname() -> String {
    let name = nix::unistd::gethostname().ok().and_then(|name| name.into_string().ok()).unwrap_or_default();
    let short = name.split('.').next().unwrap_or_default().to_string();
    if short.is_empty() {
        "localhost".to_string()
    } else {
        short
    }
}
