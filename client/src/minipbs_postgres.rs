//! `minipbs up --postgres`: the local cluster's own PostgreSQL, for a store two servers can
//! share (`--standby`). A cluster directory `<state_dir>/postgres/data` made by `initdb` the
//! first time, a server on a Unix socket in `<state_dir>/postgres` only (no TCP port; trust
//! authentication, so that directory is 0700: its owner's and root's only), recorded with the daemons
//! (`pids/postgres.pid`) so `minipbs down` stops it last. As root it runs as the `postgres`
//! user (PostgreSQL refuses root), which must be able to reach the state directory.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The database URL of the cluster's PostgreSQL in `dir`.
pub fn url(dir: &Path) -> String {
    format!("postgresql://postgres@/postgres?host={}", dir.join("postgres").display())
}

/// Starts the cluster's PostgreSQL (creating it the first time) and waits until it accepts
/// connections; returns its URL.
pub fn start(dir: &Path) -> Result<String, String> {
    let bin = server_bin()?;
    let pg_dir = dir.join("postgres");
    let data = pg_dir.join("data");
    std::fs::create_dir_all(&pg_dir).map_err(|error| format!("cannot create {}: {error}", pg_dir.display()))?;
    // Trust authentication on a socket in here: only the owner (and root, whose server connects)
    // may enter, or any local user could read every job's script and environment.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pg_dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|error| format!("cannot restrict {}: {error}", pg_dir.display()))?;
    let owner = owner()?;
    if let Some((uid, gid)) = owner {
        nix::unistd::chown(&pg_dir, Some(uid), Some(gid))
            .map_err(|error| format!("chown {}: {error}", pg_dir.display()))?;
    }
    if !data.join("PG_VERSION").exists() {
        let status = as_owner(Command::new(bin.join("initdb")), owner)
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "-D"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|error| format!("cannot run initdb: {error}"))?;
        if !status.success() {
            return Err(format!(
                "initdb could not create {} (as root, the postgres user must be able to enter {})",
                data.display(),
                dir.display()
            ));
        }
    }
    let mut command = as_owner(Command::new(bin.join("postgres")), owner);
    command
        .arg("-D")
        .arg(&data)
        .args(["-c", "listen_addresses=", "-c"])
        .arg(format!("unix_socket_directories={}", pg_dir.display()));
    crate::minipbs_daemon::spawn_logged(command, dir, "postgres")?;
    let log_path = dir.join("logs").join("postgres.log");
    let ready = || {
        Command::new(client_program("pg_isready", &bin))
            .arg("-q")
            .arg("-h")
            .arg(&pg_dir)
            .status()
            .is_ok_and(|status| status.success())
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !ready() {
        if std::time::Instant::now() > deadline {
            return Err(format!("PostgreSQL did not start; see {}", log_path.display()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(url(dir))
}

/// As root: the `postgres` user's uid and gid (PostgreSQL refuses to run as root).
fn owner() -> Result<Option<(nix::unistd::Uid, nix::unistd::Gid)>, String> {
    if !nix::unistd::geteuid().is_root() {
        return Ok(None);
    }
    let user = nix::unistd::User::from_name("postgres")
        .map_err(|error| error.to_string())?
        .ok_or("as root, --postgres runs PostgreSQL as the postgres user, which does not exist")?;
    Ok(Some((user.uid, user.gid)))
}

/// `command`, run as `owner` when given.
fn as_owner(mut command: Command, owner: Option<(nix::unistd::Uid, nix::unistd::Gid)>) -> Command {
    if let Some((uid, gid)) = owner {
        command.uid(uid.as_raw()).gid(gid.as_raw()).env("HOME", "/var/lib/postgresql");
    }
    command
}

/// The newest installed PostgreSQL server's `bin` (Debian: /usr/lib/postgresql/<version>/bin).
fn server_bin() -> Result<PathBuf, String> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|entry| {
                    let version = entry.file_name().to_string_lossy().parse::<u32>().ok()?;
                    let bin = entry.path().join("bin");
                    bin.join("postgres").is_file().then_some((version, bin))
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "--postgres needs a PostgreSQL server (Debian: apt-get install postgresql)".to_string())
}

/// A client program: beside the server, else on PATH.
fn client_program(name: &str, bin: &Path) -> PathBuf {
    let beside = bin.join(name);
    if beside.is_file() {
        beside
    } else {
        PathBuf::from(name)
    }
}
