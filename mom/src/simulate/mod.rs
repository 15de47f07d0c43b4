//! `pbs_mom --simulate N`, FOR BENCHMARKS ONLY: N nodes in one process, `<name>1` to
//! `<name>N`, each its own connection to the server through the real link (`link.rs`: Unix
//! socket, or TCP with every frame sealed by MUNGE; handshake, registration, heartbeats,
//! reconnects, obit resends), registering as its own node with `--np` slots and `--mem`.
//! Their jobs run nowhere: a job "runs" for the `sleep N` of its script, else its walltime
//! (`script.rs`), then ends with exit 0; qdel, qsig, qrerun and qalter act on it as on a real
//! job (`job.rs`). Nothing is forked, no user is looked up, no file is written.
//!
//! Layout: `script.rs` (how long a job works, pure), `job.rs` (one job's clock), `node.rs`
//! (one node's daemon, deciding with the real `jobs.rs`).
//!
//! Owns: starting the nodes. Must not: be used for real work (no job output exists).

pub mod job;
pub mod node;
pub mod script;

use crate::config::MomConfig;
use crate::jobs::JobTable;
use crate::link;
use anyhow::Context;
use proto::mom::Registration;
use std::future::Future;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tracing::Instrument;

pub use crate::config::MAX_SIMULATED_NODES as MAX_NODES;

/// Between two nodes' first connections, so the server's cap on handshakes in progress from
/// one peer (`PENDING_PER_PEER`) is not hit all at once.
const STAGGER: Duration = Duration::from_millis(2);

/// The name of simulated node `index` (from 1) of a mom named `prefix`.
pub fn node_name(prefix: &str, index: u32) -> String {
    format!("{prefix}{index}")
}

/// Runs `count` simulated nodes until `shutdown` completes; their jobs vanish with them (the
/// server sees the nodes go down).
pub async fn run(config: MomConfig, count: u32, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    anyhow::ensure!((1..=MAX_NODES).contains(&count), "--simulate takes 1 to {MAX_NODES} nodes");
    if config.server.is_some() {
        proto::munge::encode(&config.munge_socket, b"").context("the TCP transport needs MUNGE")?;
    }
    raise_descriptor_limit(u64::from(count) + 64);
    let munge_socket: Arc<Path> = Arc::from(config.munge_socket.as_path());
    let targets = crate::link_targets(&config, munge_socket);
    tracing::warn!(nodes = count, first = %node_name(&config.node, 1), "pbs_mom --simulate: benchmark nodes, jobs run nowhere");
    let mut tasks = JoinSet::new();
    let started = async {
        for index in 1..=count {
            let name = node_name(&config.node, index);
            let settings = settings(&config, &name, targets.clone())?;
            let table = Arc::new(Mutex::new(JobTable::new()));
            let (inbound_sender, inbound) = mpsc::unbounded_channel();
            let (outbound, outbound_receiver) = mpsc::unbounded_channel();
            let channels = link::LinkChannels { inbound: inbound_sender, outbound: outbound_receiver };
            let span = tracing::info_span!("link", node = %name);
            tasks.spawn(link::run(settings, table.clone(), channels).instrument(span));
            tasks.spawn(node::SimNode::new(table, outbound).serve(inbound));
            tokio::time::sleep(STAGGER).await;
        }
        std::future::pending::<anyhow::Result<()>>().await
    };
    tokio::select! {
        () = shutdown => {}
        failed = started => failed?,
    }
    tasks.abort_all();
    tracing::info!(nodes = count, "pbs_mom --simulate stopped");
    Ok(())
}

/// The link settings of simulated node `name`: no GPUs, no mom port, no task socket.
fn settings(config: &MomConfig, name: &str, targets: Vec<link::LinkTarget>) -> anyhow::Result<link::LinkSettings> {
    Ok(link::LinkSettings {
        targets,
        registration: Registration {
            node: name.to_string(),
            np: config.np,
            mem_bytes: config.mem_bytes,
            ngpus: 0,
            properties: config.properties.clone(),
            start_id: crate::random_hex(8)?,
            jobs: Vec::new(),
            port: 0,
            gpus: Vec::new(),
            gpu_states: Vec::new(),
            task_socket: None,
            heartbeat_ms: u64::try_from(config.heartbeat_interval.as_millis()).unwrap_or(u64::MAX),
        },
        gpu_reports: crate::gpu::board::ReportCell::default(),
        heartbeat_interval: config.heartbeat_interval,
        reconnect_min: config.reconnect_min,
        reconnect_max: config.reconnect_max,
        handshake_timeout: link::HANDSHAKE_TIMEOUT,
    })
}

/// One descriptor per node link: raises the soft limit towards `wanted` (at most the hard
/// limit), and says so when that is not enough.
fn raise_descriptor_limit(wanted: u64) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    if limit.current.is_some_and(|current| current < wanted) {
        limit.current = Some(wanted.min(hard));
        if let Err(error) = setrlimit(Resource::Nofile, limit) {
            tracing::warn!("cannot raise the descriptor limit: {error}");
        }
    }
    if hard < wanted {
        tracing::warn!(hard, wanted, "the descriptor limit is too low for every simulated node");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn nodes_are_named_by_prefix_and_number() {
        assert_eq!(super::node_name("node", 1), "node1");
        assert_eq!(super::node_name("sim", 1000), "sim1000");
    }
}
