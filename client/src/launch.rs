//! What `pbsdsh` and `pbs_tmrsh` need from the job they run in: its id and cookie, the local
//! mom's task socket and the host list, all from the environment the mom set
//! (`PBS_ENVIRONMENT`, `PBS_JOBID`, `PBS_JOBCOOKIE`, `MINIPBS_TASK_SOCKET`, `PBS_NODEFILE`).
//!
//! Owns: finding and checking those, reading the node file (bounded). Must not know: the task
//! protocol's connection, either command's options.

use crate::nodefile::{Nodefile, NodefileError, MAX_NODEFILE_BYTES};
use std::io::Read;
use std::path::PathBuf;

/// The job a launcher runs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobContext {
    pub job_id: String,
    pub cookie: String,
    /// The local mom's task socket.
    pub socket: PathBuf,
    pub nodefile: Nodefile,
}

/// Why a launcher cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("not executing under PBS")]
    NotInJob,
    #[error("PBS jobid not in environment")]
    NoJobId,
    #[error("PBS_JOBCOOKIE not in environment: not inside a job started by pbs_mom")]
    NoCookie,
    #[error("MINIPBS_TASK_SOCKET not in environment: this job's mom does not start tasks")]
    NoSocket,
    #[error("cannot find PBS_NODEFILE")]
    NoNodefile,
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: {error}")]
    Nodefile { path: String, error: NodefileError },
}

impl JobContext {
    /// Reads the context through `get` (the process environment in the commands).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<JobContext, ContextError> {
        let set = |name: &str| get(name).filter(|value| !value.is_empty());
        set("PBS_ENVIRONMENT").ok_or(ContextError::NotInJob)?;
        let job_id = set("PBS_JOBID").ok_or(ContextError::NoJobId)?;
        let cookie = set("PBS_JOBCOOKIE").ok_or(ContextError::NoCookie)?;
        let socket = PathBuf::from(set("MINIPBS_TASK_SOCKET").ok_or(ContextError::NoSocket)?);
        let path = set("PBS_NODEFILE").ok_or(ContextError::NoNodefile)?;
        let text = read_bounded(&path).map_err(|source| ContextError::Read { path: path.clone(), source })?;
        let nodefile = Nodefile::parse(&text).map_err(|error| ContextError::Nodefile { path, error })?;
        Ok(JobContext { job_id, cookie, socket, nodefile })
    }
}

/// The process's own environment variable `name`, when set and Unicode.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A file's text, at most one byte over [`MAX_NODEFILE_BYTES`] (so the parser refuses it).
fn read_bounded(path: &str) -> std::io::Result<String> {
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_NODEFILE_BYTES as u64 + 1).read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn each_missing_variable_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("1.s");
        std::fs::write(&file, "n1\nn2\n").unwrap();
        let file = file.to_str().unwrap();
        let full = [
            ("PBS_ENVIRONMENT", "PBS_BATCH"),
            ("PBS_JOBID", "1.s"),
            ("PBS_JOBCOOKIE", "c"),
            ("MINIPBS_TASK_SOCKET", "/run/t.sock"),
            ("PBS_NODEFILE", file),
        ];
        let context = JobContext::from_env(env(&full)).unwrap();
        assert_eq!(context.nodefile.vnodes, ["n1", "n2"]);
        assert_eq!(context.socket, PathBuf::from("/run/t.sock"));
        let texts: Vec<String> = (0..full.len())
            .map(|skip| {
                let some: Vec<_> = full.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, p)| *p).collect();
                JobContext::from_env(env(&some)).unwrap_err().to_string()
            })
            .collect();
        insta::assert_snapshot!(texts.join("\n"));
        let missing = [&full[..4], &[("PBS_NODEFILE", "/nonexistent/1.s")]].concat();
        assert!(JobContext::from_env(env(&missing)).unwrap_err().to_string().starts_with("/nonexistent/1.s: "));
    }
}
