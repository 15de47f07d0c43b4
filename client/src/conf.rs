//! Finding the server (design.md section 3): `PBS_CONF_FILE`, else `~/.minipbs/pbs.conf`, else
//! `/etc/pbs.conf`. The file holds `KEY=VALUE` lines: `PBS_SERVER` (name, and the host to
//! connect to unless `PBS_SERVER_HOST_NAME` names another), `PBS_HOME` (state directory),
//! `PBS_SERVER_SOCKET` (Unix socket), `PBS_BATCH_SERVICE_PORT` (TCP port) and
//! `PBS_MUNGE_SOCKET` (munged's socket for TCP). The transport: an explicit
//! `PBS_SERVER_SOCKET` -> Unix; else a `PBS_BATCH_SERVICE_PORT` -> TCP to the host on that
//! port; else `PBS_HOME` -> Unix `$PBS_HOME/server.sock`; else TCP to the host on 15001.
//! `PBS_SERVER` in the environment overrides the file's (name and host).

use std::path::{Path, PathBuf};

/// OpenPBS's `PBS_BATCH_SERVICE_PORT` default.
pub const DEFAULT_PORT: u16 = 15001;

/// How to reach the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerAddr {
    /// Its Unix socket (identity from the kernel).
    Unix(PathBuf),
    /// TCP, every frame sealed with MUNGE through munged at `munge_socket`.
    Tcp { host: String, port: u16, munge_socket: PathBuf },
}

impl std::fmt::Display for ServerAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerAddr::Unix(path) => write!(f, "socket {}", path.display()),
            ServerAddr::Tcp { host, port, .. } => write!(f, "{host}:{port}"),
        }
    }
}

/// Where and what the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbsConf {
    pub server_name: String,
    pub server: ServerAddr,
    /// `PBS_HOME`: the server's state directory (logs, accounting), if the file names it.
    pub home: Option<PathBuf>,
    /// The file it came from, for messages.
    pub source: PathBuf,
}

/// Parses the text of a pbs.conf file.
pub fn parse(text: &str, source: &Path) -> Result<PbsConf, String> {
    let mut keys = std::collections::HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        keys.insert(key.trim().to_string(), value.trim().trim_matches('"').to_string());
    }
    let server_name = keys.get("PBS_SERVER").cloned().unwrap_or_else(|| "localhost".to_string());
    let home = keys.get("PBS_HOME").map(PathBuf::from);
    let port = match keys.get("PBS_BATCH_SERVICE_PORT") {
        Some(text) => Some(
            text.parse::<u16>()
                .ok()
                .filter(|port| *port != 0)
                .ok_or_else(|| format!("{}: PBS_BATCH_SERVICE_PORT={text} is not a port number", source.display()))?,
        ),
        None => None,
    };
    let tcp = |port: u16| ServerAddr::Tcp {
        host: keys.get("PBS_SERVER_HOST_NAME").unwrap_or(&server_name).clone(),
        port,
        munge_socket: PathBuf::from(keys.get("PBS_MUNGE_SOCKET").map_or(proto::munge::DEFAULT_SOCKET, String::as_str)),
    };
    let server = match (keys.get("PBS_SERVER_SOCKET"), port, &home) {
        (Some(socket), _, _) => ServerAddr::Unix(PathBuf::from(socket)),
        (None, Some(port), _) => tcp(port),
        (None, None, Some(home)) => ServerAddr::Unix(home.join("server.sock")),
        (None, None, None) => tcp(DEFAULT_PORT),
    };
    Ok(PbsConf { server_name, server, home, source: source.to_path_buf() })
}

/// The configuration file to read, in order of precedence.
pub fn conf_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PBS_CONF_FILE") {
        return Some(PathBuf::from(path));
    }
    let home_conf = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".minipbs/pbs.conf"));
    [home_conf, Some(PathBuf::from("/etc/pbs.conf"))].into_iter().flatten().find(|path| path.exists())
}

/// Loads the configuration, or says why it cannot.
pub fn load() -> Result<PbsConf, String> {
    let path = conf_path().ok_or_else(|| {
        "no pbs.conf found: set PBS_CONF_FILE (minipbs up prints the line to use), or create ~/.minipbs/pbs.conf"
            .to_string()
    })?;
    let mut text =
        std::fs::read_to_string(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    // The environment's PBS_SERVER wins over the file's (a later key overrides an earlier one).
    if let Ok(server) = std::env::var("PBS_SERVER") {
        if !server.is_empty() {
            text.push_str(&format!("\nPBS_SERVER={server}\n"));
        }
    }
    parse(&text, &path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(text: &str) -> ServerAddr {
        parse(text, Path::new("f")).unwrap().server
    }

    fn tcp(host: &str, port: u16, munge: &str) -> ServerAddr {
        ServerAddr::Tcp { host: host.into(), port, munge_socket: munge.into() }
    }

    #[test]
    fn parses_conf() {
        let conf = parse("# c\nPBS_SERVER=head\nPBS_HOME=/x/state\n", Path::new("f")).unwrap();
        assert_eq!(conf.server_name, "head");
        assert_eq!(conf.server, ServerAddr::Unix(PathBuf::from("/x/state/server.sock")));
        assert_eq!(conf.home, Some(PathBuf::from("/x/state")));
        assert_eq!(server("PBS_SERVER_SOCKET=/s.sock\nPBS_HOME=/x\n"), ServerAddr::Unix("/s.sock".into()));
    }

    #[test]
    fn a_later_key_wins() {
        assert_eq!(
            server("PBS_SERVER=a\nPBS_BATCH_SERVICE_PORT=9\nPBS_SERVER=b\n"),
            tcp("b", 9, proto::munge::DEFAULT_SOCKET)
        );
    }

    #[test]
    fn transport_rule() {
        let default_munge = proto::munge::DEFAULT_SOCKET;
        assert_eq!(server("PBS_SERVER=head\n"), tcp("head", 15001, default_munge));
        assert_eq!(server("PBS_SERVER=head\nPBS_HOME=/x\nPBS_BATCH_SERVICE_PORT=9\n"), tcp("head", 9, default_munge));
        assert_eq!(
            server("PBS_SERVER=h\nPBS_SERVER_HOST_NAME=10.0.0.1\nPBS_BATCH_SERVICE_PORT=9\nPBS_MUNGE_SOCKET=/m\n"),
            tcp("10.0.0.1", 9, "/m")
        );
        assert_eq!(server("PBS_SERVER_SOCKET=/s\nPBS_BATCH_SERVICE_PORT=9\n"), ServerAddr::Unix("/s".into()));
        let error = parse("PBS_BATCH_SERVICE_PORT=x\n", Path::new("f")).unwrap_err();
        assert_eq!(error, "f: PBS_BATCH_SERVICE_PORT=x is not a port number");
    }
}
