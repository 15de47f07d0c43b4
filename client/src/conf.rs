//! Finding the server (design.md section 3): `PBS_CONF_FILE`, else `~/.minipbs/pbs.conf`, else
//! `/etc/pbs.conf`. The file holds `KEY=VALUE` lines: `PBS_SERVER` (name, and the host to
//! connect to unless `PBS_SERVER_HOST_NAME` names another), `PBS_HOME` (state directory),
//! `PBS_SERVER_SOCKET` (Unix socket), `PBS_BATCH_SERVICE_PORT` (TCP port) and
//! `PBS_MUNGE_SOCKET` (munged's socket for TCP), `PBS_SERVER_UID` (the uid the server runs as,
//! root when not given: only it may read a TCP connection's key). The transport: an explicit
//! `PBS_SERVER_SOCKET` -> Unix; else a `PBS_BATCH_SERVICE_PORT` -> TCP to the host on that
//! port; else `PBS_HOME` -> Unix `$PBS_HOME/server.sock`; else TCP to the host on 15001.
//! `PBS_SERVER` in the environment overrides the file's (name and host).
//!
//! Failover (OpenPBS's pbs.conf, pbs-reference section 13): `PBS_PRIMARY` and `PBS_SECONDARY`
//! name the two heads, `HOST` or `HOST:PORT` (`[V6ADDR]:PORT`); both or neither. With them
//! the connection is TCP to the primary, then the secondary (`PbsConf::addresses`), each on its
//! own port or `PBS_BATCH_SERVICE_PORT` (else 15001); `PBS_SERVER` is still the server's name
//! and `PBS_SERVER_HOST_NAME` is not used to connect. They cannot be combined with
//! `PBS_SERVER_SOCKET` (one local socket serves whichever head is active).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// OpenPBS's `PBS_BATCH_SERVICE_PORT` default.
pub const DEFAULT_PORT: u16 = 15001;

/// The longest host name `PBS_PRIMARY` and `PBS_SECONDARY` may give (DNS's limit).
pub const MAX_HOST_CHARS: usize = 253;

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
            ServerAddr::Tcp { host, port, .. } if host.contains(':') => write!(f, "[{host}]:{port}"),
            ServerAddr::Tcp { host, port, .. } => write!(f, "{host}:{port}"),
        }
    }
}

/// Where and what the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbsConf {
    pub server_name: String,
    /// The server, or with failover the primary head (`PBS_PRIMARY`).
    pub server: ServerAddr,
    /// The secondary head (`PBS_SECONDARY`), when failover is configured.
    pub secondary: Option<ServerAddr>,
    /// `PBS_HOME`: the server's state directory (logs, accounting), if the file names it.
    pub home: Option<PathBuf>,
    /// The file it came from, for messages.
    pub source: PathBuf,
    /// `PBS_SERVER_UID`: the uid the server runs as, the only one that may read a TCP
    /// connection's opening credential (`conn.rs`); root when not given (a personal cluster's
    /// `minipbs up` writes its user's).
    pub server_uid: Option<u32>,
}

impl PbsConf {
    /// The addresses to try, in order: the server (the primary), then the secondary.
    pub fn addresses(&self) -> Vec<&ServerAddr> {
        std::iter::once(&self.server).chain(&self.secondary).collect()
    }
}

/// Why a pbs.conf cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfError {
    #[error("no pbs.conf found: set PBS_CONF_FILE (minipbs up prints the line to use), or create ~/.minipbs/pbs.conf")]
    NotFound,
    #[error("cannot read {}: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("{}: {key}={value} is not a port number", file.display())]
    BadPort { file: PathBuf, key: &'static str, value: String },
    #[error("{}: {key}={value} is not HOST or HOST:PORT", file.display())]
    BadHost { file: PathBuf, key: &'static str, value: String },
    #[error("{}: {given} is set without {missing} (failover needs both heads)", file.display())]
    HalfFailover { file: PathBuf, given: &'static str, missing: &'static str },
    #[error("{}: PBS_PRIMARY and PBS_SECONDARY name the same server ({value})", file.display())]
    SameHeads { file: PathBuf, value: String },
    #[error("{}: PBS_SERVER_SOCKET (one local server) cannot be combined with PBS_PRIMARY and PBS_SECONDARY (two hosts)", file.display())]
    SocketWithFailover { file: PathBuf },
}

/// Parses the text of a pbs.conf file.
pub fn parse(text: &str, source: &Path) -> Result<PbsConf, ConfError> {
    let mut keys = HashMap::new();
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
        Some(text) => Some(parse_port(text).ok_or_else(|| ConfError::BadPort {
            file: source.to_path_buf(),
            key: "PBS_BATCH_SERVICE_PORT",
            value: text.clone(),
        })?),
        None => None,
    };
    let server_uid = keys.get("PBS_SERVER_UID").and_then(|text| text.trim().parse().ok());
    let munge_socket = PathBuf::from(keys.get("PBS_MUNGE_SOCKET").map_or(proto::munge::DEFAULT_SOCKET, String::as_str));
    if let Some((primary, secondary)) = failover_heads(&keys, source)? {
        let head = |key, value: &str| {
            let (host, own_port) = parse_head(value).ok_or_else(|| ConfError::BadHost {
                file: source.to_path_buf(),
                key,
                value: value.to_string(),
            })?;
            let port = own_port.or(port).unwrap_or(DEFAULT_PORT);
            Ok::<_, ConfError>(ServerAddr::Tcp { host, port, munge_socket: munge_socket.clone() })
        };
        let (server, secondary) = (head("PBS_PRIMARY", primary)?, head("PBS_SECONDARY", secondary)?);
        if server == secondary {
            return Err(ConfError::SameHeads { file: source.to_path_buf(), value: server.to_string() });
        }
        let secondary = Some(secondary);
        return Ok(PbsConf { server_name, server, secondary, home, source: source.to_path_buf(), server_uid });
    }
    let tcp = |port: u16| ServerAddr::Tcp {
        host: keys.get("PBS_SERVER_HOST_NAME").unwrap_or(&server_name).clone(),
        port,
        munge_socket: munge_socket.clone(),
    };
    let server = match (keys.get("PBS_SERVER_SOCKET"), port, &home) {
        (Some(socket), _, _) => ServerAddr::Unix(PathBuf::from(socket)),
        (None, Some(port), _) => tcp(port),
        (None, None, Some(home)) => ServerAddr::Unix(home.join("server.sock")),
        (None, None, None) => tcp(DEFAULT_PORT),
    };
    Ok(PbsConf { server_name, server, secondary: None, home, source: source.to_path_buf(), server_uid })
}

/// `PBS_PRIMARY` and `PBS_SECONDARY` when both are set; an error when only one is, or when
/// a Unix socket is named too.
fn failover_heads<'a>(
    keys: &'a HashMap<String, String>,
    source: &Path,
) -> Result<Option<(&'a str, &'a str)>, ConfError> {
    let file = source.to_path_buf();
    match (keys.get("PBS_PRIMARY"), keys.get("PBS_SECONDARY")) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(ConfError::HalfFailover { file, given: "PBS_PRIMARY", missing: "PBS_SECONDARY" }),
        (None, Some(_)) => Err(ConfError::HalfFailover { file, given: "PBS_SECONDARY", missing: "PBS_PRIMARY" }),
        (Some(_), Some(_)) if keys.contains_key("PBS_SERVER_SOCKET") => Err(ConfError::SocketWithFailover { file }),
        (Some(primary), Some(secondary)) => Ok(Some((primary.as_str(), secondary.as_str()))),
    }
}

/// A port number, 1 to 65535.
fn parse_port(text: &str) -> Option<u16> {
    text.parse::<u16>().ok().filter(|port| *port != 0)
}

/// `HOST`, `HOST:PORT`, `[V6ADDR]` or `[V6ADDR]:PORT` (a bare IPv6 address has no port): the
/// host and its own port, if it has one. Host names hold letters, digits, `.`, `-` and `_`,
/// at most [`MAX_HOST_CHARS`] of them.
pub fn parse_head(value: &str) -> Option<(String, Option<u16>)> {
    let (host, port) = if let Some(rest) = value.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            _ => Some(parse_port(after.strip_prefix(':')?)?),
        };
        address.parse::<std::net::Ipv6Addr>().ok()?;
        return Some((address.to_string(), port));
    } else if value.parse::<std::net::Ipv6Addr>().is_ok() {
        return Some((value.to_string(), None));
    } else {
        match value.split_once(':') {
            Some((host, port)) => (host, Some(parse_port(port)?)),
            None => (value, None),
        }
    };
    let name_chars = host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    (!host.is_empty() && host.len() <= MAX_HOST_CHARS && name_chars && !host.starts_with('-'))
        .then(|| (host.to_string(), port))
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
pub fn load() -> Result<PbsConf, ConfError> {
    let path = conf_path().ok_or(ConfError::NotFound)?;
    let mut text = std::fs::read_to_string(&path)
        .map_err(|error| ConfError::Unreadable { path: path.clone(), reason: error.to_string() })?;
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
    fn the_server_uid_is_root_unless_given() {
        let uid = |text: &str| parse(text, Path::new("f")).unwrap().server_uid;
        assert_eq!(uid("PBS_SERVER=head\n"), None);
        assert_eq!(uid("PBS_SERVER=head\nPBS_SERVER_UID=1001\n"), Some(1001));
        assert_eq!(uid("PBS_SERVER=head\nPBS_SERVER_UID=x\n"), None, "not a number: root");
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
        assert_eq!(error.to_string(), "f: PBS_BATCH_SERVICE_PORT=x is not a port number");
    }

    fn failover(text: &str) -> Vec<ServerAddr> {
        parse(text, Path::new("f")).unwrap().addresses().into_iter().cloned().collect()
    }

    fn error(text: &str) -> String {
        parse(text, Path::new("f")).unwrap_err().to_string()
    }

    #[test]
    fn without_failover_one_address() {
        let conf = parse("PBS_SERVER=head\nPBS_BATCH_SERVICE_PORT=9\n", Path::new("f")).unwrap();
        assert_eq!(conf.secondary, None);
        assert_eq!(conf.addresses(), vec![&tcp("head", 9, proto::munge::DEFAULT_SOCKET)]);
    }

    #[test]
    fn failover_tries_primary_then_secondary() {
        let munge = proto::munge::DEFAULT_SOCKET;
        // PBS_SERVER stays the name; the heads are where to connect (not PBS_SERVER_HOST_NAME).
        let text = "PBS_SERVER=head\nPBS_SERVER_HOST_NAME=other\nPBS_PRIMARY=h1.example\nPBS_SECONDARY=h2\n";
        let conf = parse(text, Path::new("f")).unwrap();
        assert_eq!(conf.server_name, "head");
        assert_eq!(failover(text), vec![tcp("h1.example", 15001, munge), tcp("h2", 15001, munge)]);
        // The service port and munged's socket apply to both; a head's own port wins.
        let text = "PBS_PRIMARY=h1\nPBS_SECONDARY=h2:7\nPBS_BATCH_SERVICE_PORT=9\nPBS_MUNGE_SOCKET=/m\n";
        assert_eq!(failover(text), vec![tcp("h1", 9, "/m"), tcp("h2", 7, "/m")]);
        // PBS_HOME alone would mean the local socket: the heads mean TCP.
        assert_eq!(failover("PBS_HOME=/x\nPBS_PRIMARY=h1\nPBS_SECONDARY=h2\n")[1], tcp("h2", 15001, munge));
        // One host, two ports (a test bed on one machine).
        let both = failover("PBS_PRIMARY=127.0.0.1:1\nPBS_SECONDARY=127.0.0.1:2\n");
        assert_eq!(both, vec![tcp("127.0.0.1", 1, munge), tcp("127.0.0.1", 2, munge)]);
        let v6 = failover("PBS_PRIMARY=[::1]:5\nPBS_SECONDARY=fe80::2\n");
        assert_eq!(v6, vec![tcp("::1", 5, munge), tcp("fe80::2", 15001, munge)]);
        assert_eq!(v6[0].to_string(), "[::1]:5");
    }

    #[test]
    fn failover_needs_both_heads() {
        assert_eq!(
            error("PBS_PRIMARY=h1\n"),
            "f: PBS_PRIMARY is set without PBS_SECONDARY (failover needs both heads)"
        );
        assert_eq!(
            error("PBS_SECONDARY=h2\n"),
            "f: PBS_SECONDARY is set without PBS_PRIMARY (failover needs both heads)"
        );
        assert_eq!(
            error("PBS_PRIMARY=h1\nPBS_SECONDARY=h2\nPBS_SERVER_SOCKET=/s\n"),
            "f: PBS_SERVER_SOCKET (one local server) cannot be combined with PBS_PRIMARY and PBS_SECONDARY (two hosts)"
        );
        assert_eq!(
            error("PBS_PRIMARY=h1\nPBS_SECONDARY=h1:15001\n"),
            "f: PBS_PRIMARY and PBS_SECONDARY name the same server (h1:15001)"
        );
    }

    #[test]
    fn bad_heads_are_refused() {
        let long = "a".repeat(MAX_HOST_CHARS + 1);
        let bad =
            ["", "h1:", "h1:0", "h1:70000", "h1:x", "h 1", "h1/x", "-h", "h1:2:3x", "[::1", "[x]:1", "[::1]5", &long];
        for value in bad {
            assert_eq!(
                error(&format!("PBS_PRIMARY={value}\nPBS_SECONDARY=h2\n")),
                format!("f: PBS_PRIMARY={value} is not HOST or HOST:PORT"),
            );
            assert_eq!(
                error(&format!("PBS_PRIMARY=h1\nPBS_SECONDARY={value}\n")),
                format!("f: PBS_SECONDARY={value} is not HOST or HOST:PORT"),
            );
        }
        assert!(parse_head(&"a".repeat(MAX_HOST_CHARS)).is_some(), "the longest name is accepted");
        assert_eq!(
            error("PBS_PRIMARY=h1\nPBS_SECONDARY=h2\nPBS_BATCH_SERVICE_PORT=0\n"),
            "f: PBS_BATCH_SERVICE_PORT=0 is not a port number"
        );
    }
}
