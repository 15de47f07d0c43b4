//! `/metrics`: the server's figures in the Prometheus text format (docs/metrics.md lists each).
//! Gauges (jobs by queue and state, nodes by state, GPUs by use, slots and GPUs per user with
//! active jobs, connected moms) are counted from a [`Snapshot`] taken under the state lock,
//! which is held only to count; the text is made after, with the counters and histograms of
//! `crate::metrics`. The `prometheus` crate escapes label values (user names are users').
//!
//! Cardinality is bounded: queues and nodes are the admin's, states and uses fixed lists, and
//! per-user series exist only for users with active jobs (at most one per busy slot).

use crate::metrics::ServerMetrics;
use crate::shared::Shared;
use crate::state::{Node, ServerState};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use job::JobState;
use prometheus::{IntGauge, IntGaugeVec, Opts, Registry};
use proto::gpu::GpuUse;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Every job state, with the word of its `state` label.
pub const JOB_STATES: [(JobState, &str); 9] = [
    (JobState::Queued, "queued"),
    (JobState::Held, "held"),
    (JobState::Waiting, "waiting"),
    (JobState::Running, "running"),
    (JobState::Exiting, "exiting"),
    (JobState::Suspended, "suspended"),
    (JobState::Finished, "finished"),
    (JobState::Begun, "begun"),
    (JobState::Expired, "expired"),
];
/// The `state` label of `minipbs_nodes` (one per node: see [`node_state`]).
pub const NODE_STATES: [&str; 5] = ["free", "job-busy", "job-exclusive", "down", "offline"];
/// The `use` label of `minipbs_gpus` (one per GPU: see [`gpu_use`]): pbsnodes' `gpu_use`
/// words, and `unknown`.
pub const GPU_USES: [&str; 7] = ["free", "job", "shared", "busy-foreign", "draining", "down", "unknown"];

pub fn routes() -> axum::Router<Arc<Shared>> {
    axum::Router::new().route("/metrics", axum::routing::get(scrape))
}

async fn scrape(State(shared): State<Arc<Shared>>) -> axum::response::Response {
    let moms = crate::shared::lock_moms(&shared.moms).len();
    let snapshot = Snapshot::take(&shared.state(), moms);
    match render(&snapshot, &shared.metrics) {
        Ok(text) => ([(CONTENT_TYPE, prometheus::TEXT_FORMAT)], text).into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot encode /metrics");
            axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// The counts behind the gauges, copied out of the state.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Snapshot {
    /// Jobs by (queue, state label); every queue of the state appears with every state.
    pub jobs: BTreeMap<(String, &'static str), i64>,
    pub nodes: BTreeMap<&'static str, i64>,
    pub gpus: BTreeMap<&'static str, i64>,
    /// Slots and GPUs held by each user's active jobs (users with none are left out).
    pub user_slots: BTreeMap<String, i64>,
    pub user_gpus: BTreeMap<String, i64>,
    pub moms: i64,
}

impl Snapshot {
    /// Counts what the gauges show (call with the lock held; only counting happens here).
    pub fn take(state: &ServerState, moms: usize) -> Snapshot {
        let mut by_queue: HashMap<(&str, JobState), i64> = HashMap::new();
        let mut slots: HashMap<&str, i64> = HashMap::new();
        let mut gpus: HashMap<&str, i64> = HashMap::new();
        for job in state.jobs().values() {
            *by_queue.entry((job.queue.as_str(), job.state())).or_default() += 1;
            if job.state().is_active() {
                *slots.entry(&job.owner).or_default() +=
                    job.exec.iter().map(|share| share.slots.len() as i64).sum::<i64>();
                *gpus.entry(&job.owner).or_default() +=
                    job.exec.iter().map(|share| share.gpus.len() as i64).sum::<i64>();
            }
        }
        let mut snapshot = Snapshot { moms: moms as i64, ..Snapshot::default() };
        for queue in state.queues().keys().map(String::as_str).chain(by_queue.keys().map(|(queue, _)| *queue)) {
            for (job_state, word) in JOB_STATES {
                let count = by_queue.get(&(queue, job_state)).copied().unwrap_or(0);
                snapshot.jobs.insert((queue.to_string(), word), count);
            }
        }
        snapshot.nodes = NODE_STATES.iter().map(|&word| (word, 0)).collect();
        snapshot.gpus = GPU_USES.iter().map(|&word| (word, 0)).collect();
        for node in state.nodes().values() {
            *snapshot.nodes.entry(node_state(node)).or_default() += 1;
            for (index, gpu) in node.gpus.iter().enumerate() {
                let owned = node.gpu_owner.get(index).copied().flatten().is_some();
                *snapshot.gpus.entry(gpu_use(owned, gpu.mps.is_some(), gpu.reported())).or_default() += 1;
            }
        }
        snapshot.user_slots = slots.into_iter().map(|(user, count)| (user.to_string(), count)).collect();
        snapshot.user_gpus =
            gpus.into_iter().filter(|&(_, count)| count > 0).map(|(u, c)| (u.to_string(), c)).collect();
        snapshot
    }
}

/// One word per node: `offline` (the admin's) before `down`, then what its jobs make it.
pub fn node_state(node: &Node) -> &'static str {
    if node.offline {
        return "offline";
    }
    match node.state_text().split(',').next() {
        Some("down") => "down",
        Some("job-exclusive") => "job-exclusive",
        Some("job-busy") => "job-busy",
        _ => "free",
    }
}

/// One word per GPU: held by a job (`job`) or MPS shares (`shared`) first, else what its mom
/// last reported (`GpuUse::word`); `unknown` before its mom registers.
pub fn gpu_use(owned: bool, mps: bool, reported: Option<GpuUse>) -> &'static str {
    match reported {
        _ if owned => "job",
        _ if mps => "shared",
        Some(state) => state.word(),
        None => "unknown",
    }
}

/// The exposition text of `snapshot` and `metrics`.
pub fn render(snapshot: &Snapshot, metrics: &ServerMetrics) -> prometheus::Result<String> {
    let registry = Registry::new();
    metrics.register(&registry)?;
    let jobs = gauge_vec(&registry, "minipbs_jobs", "Jobs the server keeps, by queue and state.", &["queue", "state"])?;
    for ((queue, state), count) in &snapshot.jobs {
        jobs.with_label_values(&[queue.as_str(), state]).set(*count);
    }
    let nodes = gauge_vec(&registry, "minipbs_nodes", "Nodes by state.", &["state"])?;
    for (state, count) in &snapshot.nodes {
        nodes.with_label_values(&[*state]).set(*count);
    }
    let gpus = gauge_vec(&registry, "minipbs_gpus", "GPUs of all nodes, by use.", &["use"])?;
    for (gpu_use, count) in &snapshot.gpus {
        gpus.with_label_values(&[*gpu_use]).set(*count);
    }
    let help = "Slots held by the user's active jobs (users with active jobs only).";
    let slots = gauge_vec(&registry, "minipbs_user_slots_in_use", help, &["user"])?;
    for (user, count) in &snapshot.user_slots {
        slots.with_label_values(&[user.as_str()]).set(*count);
    }
    let help = "GPUs held by the user's active jobs, whole or MPS shares (users holding GPUs only).";
    let user_gpus = gauge_vec(&registry, "minipbs_user_gpus_in_use", help, &["user"])?;
    for (user, count) in &snapshot.user_gpus {
        user_gpus.with_label_values(&[user.as_str()]).set(*count);
    }
    let moms = IntGauge::new("minipbs_moms_connected", "Moms connected to the server now.")?;
    moms.set(snapshot.moms);
    registry.register(Box::new(moms))?;
    prometheus::TextEncoder::new().encode_to_string(&registry.gather())
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<IntGaugeVec> {
    let gauge = IntGaugeVec::new(Opts::new(name, help), labels)?;
    registry.register(Box::new(gauge.clone()))?;
    Ok(gauge)
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
