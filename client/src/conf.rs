//! Finding the server (design.md section 3): `PBS_CONF_FILE`, else `~/.minipbs/pbs.conf`, else
//! `/etc/pbs.conf`. The file holds `KEY=VALUE` lines: `PBS_SERVER` (name), `PBS_HOME` (state
//! directory) and `PBS_SERVER_SOCKET` (the Unix socket; default `$PBS_HOME/server.sock`).
//! `PBS_SERVER` in the environment overrides the file's server name.

use std::path::{Path, PathBuf};

/// Where and what the server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbsConf {
    pub server_name: String,
    pub socket: PathBuf,
    /// `PBS_HOME`: the server's state directory (logs, accounting), if the file names it.
    pub home: Option<PathBuf>,
    /// The file it came from, for messages.
    pub source: PathBuf,
}

/// Parses the text of a pbs.conf file.
pub fn parse(text: &str, source: &Path) -> Result<PbsConf, String> {
    let mut server_name = None;
    let mut home = None;
    let mut socket = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = value.trim().trim_matches('"').to_string();
        match key.trim() {
            "PBS_SERVER" => server_name = Some(value),
            "PBS_HOME" => home = Some(PathBuf::from(value)),
            "PBS_SERVER_SOCKET" => socket = Some(PathBuf::from(value)),
            _ => {}
        }
    }
    let socket = socket
        .or_else(|| home.as_ref().map(|home| home.join("server.sock")))
        .ok_or_else(|| format!("{}: neither PBS_SERVER_SOCKET nor PBS_HOME is set", source.display()))?;
    Ok(PbsConf {
        server_name: server_name.unwrap_or_else(|| "localhost".to_string()),
        socket,
        home,
        source: source.to_path_buf(),
    })
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
    let text = std::fs::read_to_string(&path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let mut conf = parse(&text, &path)?;
    if let Ok(server) = std::env::var("PBS_SERVER") {
        if !server.is_empty() {
            conf.server_name = server;
        }
    }
    Ok(conf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_conf() {
        let conf = parse("# c\nPBS_SERVER=head\nPBS_HOME=/x/state\n", Path::new("f")).unwrap();
        assert_eq!(conf.server_name, "head");
        assert_eq!(conf.socket, PathBuf::from("/x/state/server.sock"));
        assert_eq!(conf.home, Some(PathBuf::from("/x/state")));
        let conf = parse("PBS_SERVER_SOCKET=/s.sock\nPBS_HOME=/x\n", Path::new("f")).unwrap();
        assert_eq!(conf.socket, PathBuf::from("/s.sock"));
        assert!(parse("PBS_SERVER=x\n", Path::new("f")).is_err());
    }
}
