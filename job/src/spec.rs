//! What qsub submits: the job script and its attributes after directives and the command line
//! were merged. The server validates it again (it never trusts the client) and adds what only
//! it may decide: the id, the owner (from the connection's credentials) and the queue.

use serde::{Deserialize, Serialize};

/// `-j`: whether stderr and stdout are joined, and into which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Join {
    #[default]
    No,
    /// `-j oe`: stderr goes into the stdout file.
    OutErr,
    /// `-j eo`: stdout goes into the stderr file.
    ErrOut,
}

impl Join {
    /// PBS text form: `n`, `oe`, `eo`.
    pub fn as_str(self) -> &'static str {
        match self {
            Join::No => "n",
            Join::OutErr => "oe",
            Join::ErrOut => "eo",
        }
    }
}

/// A job as submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// `Job_Name`: `-N`, else the script's base name, else `STDIN`.
    pub name: String,
    /// The script text (for `qsub -- cmd args`, a generated script that runs the command).
    pub script: String,
    /// `-q` destination queue; `None` = the server's default queue.
    pub queue: Option<String>,
    /// Merged `-l` pairs as given; the server parses them with `ResourceRequest::from_list`.
    pub resources: Vec<(String, String)>,
    /// `-o` as `host:/abs/path`; `None` = default `<workdir>/<name>.o<seq>`. A path ending in
    /// `/` (or an existing directory) is a directory: the mom names the file in it.
    pub output_path: Option<String>,
    /// `-e`, like `output_path`.
    pub error_path: Option<String>,
    pub join: Join,
    /// `-k`: `n`, `o`, `e`, `oe`, `eo`.
    pub keep: String,
    /// `-h`: submit with a user hold.
    pub user_hold: bool,
    /// `-r y|n`.
    pub rerunnable: bool,
    /// `-p`, -1024..=1023.
    pub priority: i32,
    /// `Variable_List`: `PBS_O_*` set by qsub, then `-v`/`-V` variables.
    pub variables: crate::PairList,
    /// `-S` shell path.
    pub shell: Option<String>,
    /// `-d` start directory (absolute), TORQUE `PBS_O_INITDIR`.
    pub init_dir: Option<String>,
    /// `-m` mail points (`a`, `abe`, `n`).
    pub mail_points: String,
    /// `-M` recipients.
    pub mail_users: Vec<String>,
    /// `-A` account.
    pub account: Option<String>,
    /// Host qsub ran on (short name).
    pub submit_host: String,
    /// The qsub arguments as typed (`Submit_arguments`).
    pub submit_args: String,
    /// `-W depend=`: the job's dependencies (ids normalised by the server at submit).
    #[serde(default)]
    pub depend: Vec<crate::depend::DependItem>,
    /// `-J`/`-t`: the job is an array of subjobs sharing this spec.
    #[serde(default)]
    pub array: Option<crate::array::ArraySpec>,
    /// `qsub -I`: where the waiting qsub listens for the mother superior. `None` = batch job.
    #[serde(default)]
    pub interactive: Option<Interactive>,
    /// `-P`, `-u`, `-c`, `-a`, stored `-W` attributes, `-F` (`crate::options`).
    #[serde(default)]
    pub options: crate::options::JobOptions,
    /// `-W umask`, `group_list`, `sandbox`, `stagein`, `stageout` (`exec_opts.rs`).
    #[serde(default)]
    pub exec: crate::exec_opts::ExecOptions,
}

/// Where a waiting `qsub -I` listens, and the secret the mother superior must present there.
/// The secret never appears in status listings or logs: `Debug` hides it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interactive {
    /// qsub's host: the name qsub gave, which the mom resolves; for a job submitted over TCP
    /// the server puts the address qsub connected from here instead ([`Interactive::reached_at`]).
    pub host: String,
    /// qsub's TCP port.
    pub port: u16,
    /// Random hex the mom sends first; qsub refuses a connection without it.
    pub secret: String,
}

impl std::fmt::Debug for Interactive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Interactive").field("host", &self.host).field("port", &self.port).finish_non_exhaustive()
    }
}

impl Interactive {
    /// Points the mom at `peer`, the address the submission came from (TCP), instead of the
    /// host name qsub gave: the name may not resolve on the compute nodes, and a user must not
    /// be able to send the mom to a host of their choosing. An IPv4 address in IPv6 form
    /// (`::ffff:10.0.0.2`, from a dual-stack listener) is written as IPv4.
    pub fn reached_at(&mut self, peer: std::net::IpAddr) {
        self.host = peer.to_canonical().to_string();
    }

    /// Checks what the server must not take on trust: a host name, a port, and a secret of
    /// 16 to 128 hex digits.
    pub fn check(&self) -> Result<(), String> {
        if self.host.is_empty() || self.host.len() > 255 || self.host.chars().any(|c| c.is_whitespace() || c == '/') {
            return Err(format!("interactive host {:?} is not a host name", self.host));
        }
        if self.port == 0 {
            return Err("interactive port 0 is not a port".to_string());
        }
        let secret_ok = (16..=128).contains(&self.secret.len()) && self.secret.chars().all(|c| c.is_ascii_hexdigit());
        if !secret_ok {
            return Err("interactive secret must be 16 to 128 hex digits".to_string());
        }
        Ok(())
    }
}

/// What `qsub` submits for an empty script on stdin with no option: the name `STDIN`, keep
/// `n`, rerunnable, priority 0, mail on abort (`a`), and nothing else set. Tests and examples
/// build their specs from it (`JobSpec { script, ..JobSpec::default() }`, or
/// [`JobSpec::new`]) instead of naming every field.
impl Default for JobSpec {
    fn default() -> JobSpec {
        JobSpec {
            name: "STDIN".to_string(),
            script: String::new(),
            queue: None,
            resources: Vec::new(),
            output_path: None,
            error_path: None,
            join: Join::No,
            keep: "n".to_string(),
            user_hold: false,
            rerunnable: true,
            priority: 0,
            variables: crate::PairList::default(),
            shell: None,
            init_dir: None,
            mail_points: "a".to_string(),
            mail_users: Vec::new(),
            account: None,
            submit_host: String::new(),
            submit_args: String::new(),
            depend: Vec::new(),
            array: None,
            interactive: None,
            options: crate::options::JobOptions::default(),
            exec: crate::exec_opts::ExecOptions::default(),
        }
    }
}

impl JobSpec {
    /// The job `name` running `script`, every other attribute as [`JobSpec::default`].
    pub fn new(name: impl Into<String>, script: impl Into<String>) -> JobSpec {
        JobSpec { name: name.into(), script: script.into(), ..JobSpec::default() }
    }

    /// Sets `PBS_O_WORKDIR`, the submit directory (as qsub does from its working directory).
    pub fn with_workdir(mut self, workdir: impl Into<String>) -> JobSpec {
        self.variables.set("PBS_O_WORKDIR", &workdir.into());
        self
    }

    /// Sets the `-l` pairs.
    pub fn with_resources(mut self, resources: &[(&str, &str)]) -> JobSpec {
        self.resources = resources.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect();
        self
    }

    /// The submit directory (`PBS_O_WORKDIR`), from the variable list.
    pub fn workdir(&self) -> Option<&str> {
        self.variables.get("PBS_O_WORKDIR")
    }
}

/// Checks a job name: OpenPBS allows up to 230 characters from `A-Z a-z 0-9 . _ + -`.
pub fn check_job_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("job name is empty".to_string());
    }
    if name.len() > 230 {
        return Err(format!("job name is longer than 230 characters: {name}"));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c))) {
        return Err(format!("job name {name:?} contains {bad:?}; allowed are A-Z a-z 0-9 . _ + -"));
    }
    Ok(())
}

#[cfg(test)]
mod interactive_tests {
    use super::Interactive;

    fn target() -> Interactive {
        Interactive { host: "login1".into(), port: 40000, secret: "0123456789abcdef0123456789abcdef".into() }
    }

    #[test]
    fn debug_hides_the_secret() {
        let text = format!("{:?}", target());
        assert!(text.contains("login1") && text.contains("40000"), "{text}");
        assert!(!text.contains("0123456789abcdef"), "{text}");
    }

    #[test]
    fn the_peer_address_replaces_the_host_name() {
        let mut reached = target();
        reached.reached_at("10.201.0.4".parse().unwrap());
        assert_eq!((reached.host.as_str(), reached.port), ("10.201.0.4", 40000));
        assert_eq!(reached.check(), Ok(()));
        reached.reached_at("::ffff:10.201.0.5".parse().unwrap());
        assert_eq!(reached.host, "10.201.0.5", "a v4-mapped address is written as IPv4");
        reached.reached_at("fd00::7".parse().unwrap());
        assert_eq!(reached.host, "fd00::7");
        assert_eq!(reached.check(), Ok(()), "an IPv6 address passes the host check");
    }

    #[test]
    fn checks_host_port_and_secret() {
        assert_eq!(target().check(), Ok(()));
        let bad = [
            Interactive { host: String::new(), ..target() },
            Interactive { host: "a b".into(), ..target() },
            Interactive { port: 0, ..target() },
            Interactive { secret: "abc".into(), ..target() },
            Interactive { secret: "z".repeat(32), ..target() },
        ];
        for item in bad {
            assert!(item.check().is_err(), "{item:?}");
        }
    }
}
