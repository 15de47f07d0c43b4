//! Which vnodes a `pbsdsh` launch runs on and what each task's environment adds: the pure half
//! of pbsdsh, a function of the node file, the options and pbsdsh's own environment.
//!
//! Per task (docs/gpu-mpi.md 4.5, 4.6, 5.5): `RANK` (index in this launch), `LOCAL_RANK` (index
//! among this launch's tasks on its host), `WORLD_SIZE`, `LOCAL_WORLD_SIZE`, `NODE_RANK` (the
//! host's index among the job's unique hosts), `MASTER_ADDR`/`MASTER_PORT` when pbsdsh has
//! them; with `-u` also torchrun's `PET_NODE_RANK`, `PET_NNODES`, `PET_MASTER_ADDR` (pbsdsh's
//! `MASTER_ADDR`, else the first task's host) and `PET_MASTER_PORT`. The mom adds
//! `PBS_VNODENUM`, `PBS_TASKNUM` and `PBS_NODENUM` itself.
//!
//! Must not know: sockets, threads, output.

use crate::nodefile::Nodefile;
use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

/// Most tasks one launch may ask for with `-c`.
pub const MAX_COPIES: usize = 65536;

/// Where to run, as the options say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `-c`: this many tasks, wrapping around the vnodes (OpenPBS).
    pub copies: Option<usize>,
    /// `-n`: only this vnode (index into the vnodes, or the unique hosts with `-u`).
    pub node: Option<usize>,
    /// `-h`: only the first vnode of this host.
    pub host: Option<String>,
    /// `-u`: one task per unique host.
    pub unique: bool,
}

/// Why a launch cannot be planned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("-c {0}: at most {MAX_COPIES} copies may be started")]
    TooManyCopies(usize),
    #[error("-n {node}: only {available} nodes available")]
    NoSuchNode { node: usize, available: usize },
    #[error("host \"{host}\" is not a node in job <{job}>")]
    UnknownHost { host: String, job: String },
    #[error("variable {0:?} is not a valid environment name")]
    BadName(String),
}

/// The vnodes (nodefile line indexes) of the tasks, in launch order.
pub fn targets(
    nodes: &Nodefile,
    selection: &Selection,
    job: &str,
    resolve: impl Fn(&str) -> Vec<IpAddr>,
) -> Result<Vec<usize>, PlanError> {
    if let Some(host) = &selection.host {
        let vnode = nodes
            .find(host, resolve)
            .ok_or_else(|| PlanError::UnknownHost { host: host.clone(), job: job.to_string() })?;
        return Ok(vec![vnode]);
    }
    let base: Vec<usize> = if selection.unique {
        let mut seen = BTreeSet::new();
        (0..nodes.vnodes.len()).filter(|&vnode| seen.insert(&nodes.vnodes[vnode])).collect()
    } else {
        (0..nodes.vnodes.len()).collect()
    };
    if let Some(node) = selection.node {
        let vnode = base.get(node).ok_or(PlanError::NoSuchNode { node, available: base.len() })?;
        return Ok(vec![*vnode]);
    }
    match selection.copies {
        Some(copies) if copies > MAX_COPIES => Err(PlanError::TooManyCopies(copies)),
        Some(copies) => Ok((0..copies).map(|index| base[index % base.len()]).collect()),
        None => Ok(base),
    }
}

/// The variables each task of `vnodes` gets from pbsdsh, in task order; `own` reads pbsdsh's
/// own environment.
pub fn task_env(
    nodes: &Nodefile,
    vnodes: &[usize],
    unique: bool,
    own: impl Fn(&str) -> Option<String>,
) -> Vec<Vec<(String, String)>> {
    let node_rank: BTreeMap<&str, usize> =
        nodes.unique_hosts().into_iter().enumerate().map(|(rank, host)| (host, rank)).collect();
    let host_of = |vnode: usize| nodes.vnodes[vnode].as_str();
    let mut per_host: BTreeMap<&str, usize> = BTreeMap::new();
    for &vnode in vnodes {
        *per_host.entry(host_of(vnode)).or_default() += 1;
    }
    let master_addr = own("MASTER_ADDR").filter(|value| !value.is_empty());
    let master_port = own("MASTER_PORT").filter(|value| !value.is_empty());
    let first_host = vnodes.first().map(|&vnode| host_of(vnode).to_string()).unwrap_or_default();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut all = Vec::with_capacity(vnodes.len());
    for (rank, &vnode) in vnodes.iter().enumerate() {
        let host = host_of(vnode);
        let local = seen.entry(host).or_default();
        let mut env = vec![
            ("RANK".to_string(), rank.to_string()),
            ("LOCAL_RANK".to_string(), local.to_string()),
            ("WORLD_SIZE".to_string(), vnodes.len().to_string()),
            ("LOCAL_WORLD_SIZE".to_string(), per_host[host].to_string()),
            ("NODE_RANK".to_string(), node_rank[host].to_string()),
        ];
        *local += 1;
        env.extend(master_addr.clone().map(|value| ("MASTER_ADDR".to_string(), value)));
        env.extend(master_port.clone().map(|value| ("MASTER_PORT".to_string(), value)));
        if unique {
            env.push(("PET_NODE_RANK".to_string(), rank.to_string()));
            env.push(("PET_NNODES".to_string(), vnodes.len().to_string()));
            env.push(("PET_MASTER_ADDR".to_string(), master_addr.clone().unwrap_or_else(|| first_host.clone())));
            env.extend(master_port.clone().map(|value| ("PET_MASTER_PORT".to_string(), value)));
        }
        all.push(env);
    }
    all
}

/// Variables that describe one node or one task, never copied from pbsdsh's environment by
/// `-E` (each task gets its own node's).
fn node_specific(name: &str) -> bool {
    name.starts_with("PBS_") || name.starts_with("MINIPBS_") || matches!(name, "CUDA_VISIBLE_DEVICES" | "HOSTNAME")
}

/// The variables `-e name[=value],...` (each list, in order) and `-E` (all of `vars`, pbsdsh's
/// environment, but the node-specific ones) pass; a bare name takes pbsdsh's value and is
/// left out when pbsdsh has none.
pub fn user_env(
    lists: &[String],
    all: bool,
    vars: &[(String, String)],
    own: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, PlanError> {
    let mut env: Vec<(String, String)> = Vec::new();
    if all {
        env.extend(vars.iter().filter(|(name, _)| valid_name(name) && !node_specific(name)).cloned());
    }
    for item in lists.iter().flat_map(|list| list.split(',')).filter(|item| !item.is_empty()) {
        let (name, value) = match item.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (item, own(item)),
        };
        if !valid_name(name) {
            return Err(PlanError::BadName(name.to_string()));
        }
        if let Some(value) = value {
            env.retain(|(have, _)| have != name);
            env.push((name.to_string(), value));
        }
    }
    Ok(env)
}

/// The user's variables and pbsdsh's own for one task; pbsdsh's win a name both set.
pub fn merge(user: &[(String, String)], ours: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> =
        user.iter().filter(|(name, _)| !ours.iter().any(|(mine, _)| mine == name)).cloned().collect();
    env.extend(ours);
    env
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
#[path = "pbsdsh_plan_tests.rs"]
mod tests;
