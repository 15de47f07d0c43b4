//! `pbs_mom --http ADDR`: this node's `/metrics` in the Prometheus text format (docs/metrics.md):
//! its GPUs from the inventory (use, memory, utilisation when the inventory gives them), its
//! jobs by share, and each running job's cgroup usage. Read-only: nothing here changes the
//! job table or the GPUs. The bound port goes to `<spool>/mom.http` so tests and scrapers
//! started with port 0 find it.
//!
//! Bounds (docs/security.md): those of the server's listener, [`MAX_CONNECTIONS`] at once and a
//! request head within [`HEADER_TIMEOUT`]; only GET and HEAD of `/metrics` are routed. The
//! accept loop repeats `server/src/http/mod.rs`'s on purpose: the mom may not depend on the
//! server, the crates both use (`job`, `proto`, `pbslog`) are the job model, the wire protocol
//! and logging, none a home for an HTTP listener, and a crate for twenty lines of hyper-util
//! set-up would cost more than it saves. Change both together.

use crate::cgroup::{Cgroups, Usage};
use crate::gpu::GpuBoard;
use crate::jobs::{JobTable, Share};
use anyhow::Context;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use prometheus::{IntCounterVec, IntGaugeVec, Opts, Registry};
use proto::gpu::{GpuInfo, GpuReport};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Connections served at once; the rest wait to be accepted (as the server's listener).
pub const MAX_CONNECTIONS: usize = 256;
/// How long a client may take to send a request's head (as the server's listener).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The `use` label of `minipbs_mom_gpus`: the words pbsnodes prints, and `unknown`.
pub const GPU_USES: [&str; 7] = ["free", "job", "shared", "busy-foreign", "draining", "down", "unknown"];

/// What `/metrics` reads.
pub struct MomView {
    pub table: Arc<Mutex<JobTable>>,
    pub gpus: Arc<GpuBoard>,
    pub cgroups: Option<Arc<Cgroups>>,
}

/// Binds `addr` and writes the bound port to `<spool>/mom.http`.
pub async fn bind(addr: std::net::SocketAddr, spool: &Path) -> anyhow::Result<tokio::net::TcpListener> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr} (--http)"))?;
    let port = listener.local_addr()?.port();
    let port_file = spool.join("mom.http");
    std::fs::write(&port_file, format!("{port}\n")).with_context(|| format!("cannot write {}", port_file.display()))?;
    tracing::info!(address = %addr, port, "serving metrics over HTTP");
    Ok(listener)
}

/// Accepts connections until aborted, each served by hyper with the bounds above.
pub async fn serve(view: Arc<MomView>, listener: tokio::net::TcpListener) {
    let router = axum::Router::new().route("/metrics", axum::routing::get(scrape)).with_state(view);
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok(permit) = slots.clone().acquire_owned().await else { return };
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!("http accept: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            // HTTP/1 only, without sniffing for HTTP/2: the sniff reads the first bytes with no
            // timeout, so a client sending nothing would hold its slot for ever. hyper's own
            // HTTP/1 server, not hyper-util's `auto` one: that one brings HTTP/2's code (h2) into
            // the binary even when unused (issue 19: the daemons' text is most of their RSS).
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(HEADER_TIMEOUT);
            let io = hyper_util::rt::TokioIo::new(stream);
            // A client that goes away mid-response is not an error worth a log line.
            let _ = builder.serve_connection(io, service).await;
            drop(permit);
        });
    }
}

async fn scrape(State(view): State<Arc<MomView>>) -> axum::response::Response {
    // The cgroup files are read on a blocking thread, not on the runtime's.
    let text = tokio::task::spawn_blocking(move || render(&Snapshot::take(&view))).await;
    match text {
        Ok(Ok(text)) => ([(CONTENT_TYPE, prometheus::TEXT_FORMAT)], text).into_response(),
        Ok(Err(error)) => {
            tracing::error!(%error, "cannot encode /metrics");
            axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        Err(_) => axum::http::StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// What the metrics show, copied out of the table, the board and the cgroups.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Snapshot {
    pub mothers: i64,
    pub sisters: i64,
    pub unacked: i64,
    /// Each GPU with its latest report (`None` before the first sample).
    pub gpus: Vec<(GpuInfo, Option<GpuReport>)>,
    /// Each running job's cgroup usage (empty without cgroups).
    pub usage: Vec<(String, Usage)>,
}

impl Snapshot {
    /// Copies the table (lock held only to copy), then reads the reports and cgroups.
    pub fn take(view: &MomView) -> Snapshot {
        let (running, unacked) = {
            let table = pbslog::fatal::lock_or_exit(&view.table, "job table");
            (table.running_jobs(), table.unacked_count())
        };
        let reports = view.gpus.reports().get();
        let gpus = view
            .gpus
            .infos()
            .iter()
            .map(|info| (info.clone(), reports.iter().find(|report| report.uuid == info.uuid).cloned()))
            .collect();
        let usage = match &view.cgroups {
            Some(cgroups) => {
                running.iter().filter_map(|(id, _)| Some((id.clone(), cgroups.job(id).ok()?.usage()))).collect()
            }
            None => Vec::new(),
        };
        let count = |share: Share| running.iter().filter(|(_, held)| *held == share).count() as i64;
        Snapshot { mothers: count(Share::Mother), sisters: count(Share::Sister), unacked: unacked as i64, gpus, usage }
    }
}

/// The exposition text of `snapshot`.
pub fn render(snapshot: &Snapshot) -> prometheus::Result<String> {
    let registry = Registry::new();
    let help = "Jobs on this node: mother (its top shell runs here), sister (a share of a job \
                whose top shell runs elsewhere), ended (the server has not acknowledged the end yet).";
    let jobs = gauge_vec(&registry, "minipbs_mom_jobs", help, &["state"])?;
    jobs.with_label_values(&["mother"]).set(snapshot.mothers);
    jobs.with_label_values(&["sister"]).set(snapshot.sisters);
    jobs.with_label_values(&["ended"]).set(snapshot.unacked);
    render_gpus(&registry, &snapshot.gpus)?;
    render_usage(&registry, &snapshot.usage)?;
    prometheus::TextEncoder::new().encode_to_string(&registry.gather())
}

fn render_gpus(registry: &Registry, gpus: &[(GpuInfo, Option<GpuReport>)]) -> prometheus::Result<()> {
    let uses = gauge_vec(registry, "minipbs_mom_gpus", "This node's GPUs by use (as pbsnodes' gpu_use).", &["use"])?;
    for word in GPU_USES {
        uses.with_label_values(&[word]);
    }
    let labels = ["gpu", "uuid"];
    let total = gauge_vec(registry, "minipbs_mom_gpu_memory_total_bytes", "Memory of each GPU.", &labels)?;
    let used = gauge_vec(registry, "minipbs_mom_gpu_memory_used_bytes", "Memory in use on each GPU.", &labels)?;
    let help = "Utilisation of each GPU, 0 to 1 (GPUs whose inventory tells only).";
    let utilization = prometheus::GaugeVec::new(Opts::new("minipbs_mom_gpu_utilization_ratio", help), &labels)?;
    registry.register(Box::new(utilization.clone()))?;
    for (info, report) in gpus {
        let index = info.index.to_string();
        let gpu = [index.as_str(), info.uuid.as_str()];
        total.with_label_values(&gpu).set(i64::try_from(info.mem_total).unwrap_or(i64::MAX));
        uses.with_label_values(&[report.as_ref().map_or("unknown", |report| report.state.word())]).inc();
        let Some(report) = report else { continue };
        used.with_label_values(&gpu).set(i64::try_from(report.mem_used).unwrap_or(i64::MAX));
        if let Some(percent) = report.utilization {
            utilization.with_label_values(&gpu).set(f64::from(percent) / 100.0);
        }
    }
    Ok(())
}

fn render_usage(registry: &Registry, usage: &[(String, Usage)]) -> prometheus::Result<()> {
    let help = "Cpu time used by everything in the job's cgroup on this node.";
    let cpu = IntCounterVec::new(Opts::new("minipbs_mom_job_cpu_seconds_total", help), &["job"])?;
    registry.register(Box::new(cpu.clone()))?;
    let help = "Peak memory of the job's cgroup on this node.";
    let memory = gauge_vec(registry, "minipbs_mom_job_memory_peak_bytes", help, &["job"])?;
    let help = "Cores the job's cgroup is confined to on this node (0: not confined).";
    let cpus = gauge_vec(registry, "minipbs_mom_job_cpus", help, &["job"])?;
    for (job, used) in usage {
        cpu.with_label_values(&[job.as_str()]).inc_by(used.cput_secs);
        memory
            .with_label_values(&[job.as_str()])
            .set(i64::try_from(used.mem_kb.saturating_mul(1024)).unwrap_or(i64::MAX));
        cpus.with_label_values(&[job.as_str()]).set(i64::from(used.ncpus));
    }
    Ok(())
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> prometheus::Result<IntGaugeVec> {
    let gauge = IntGaugeVec::new(Opts::new(name, help), labels)?;
    registry.register(Box::new(gauge.clone()))?;
    Ok(gauge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::gpu::GpuUse;

    fn info(index: u32) -> GpuInfo {
        GpuInfo {
            index,
            uuid: format!("GPU-{index}"),
            name: "Fake".into(),
            pci_bus_id: "b".into(),
            mem_total: 16 << 30,
        }
    }

    #[test]
    fn the_text_of_a_node_with_two_gpus_and_a_job() {
        let report = GpuReport {
            uuid: "GPU-0".into(),
            state: GpuUse::Job,
            mem_used: 1 << 30,
            utilization: Some(42),
            reason: String::new(),
        };
        let snapshot = Snapshot {
            mothers: 1,
            sisters: 0,
            unacked: 1,
            gpus: vec![(info(0), Some(report)), (info(1), None)],
            usage: vec![("7.head".into(), Usage { cput_secs: 12, mem_kb: 2048, vmem_kb: 4096, ncpus: 2 })],
        };
        insta::assert_snapshot!(render(&snapshot).unwrap());
    }

    #[test]
    fn a_node_without_gpus_or_jobs_still_shows_every_series_name() {
        let text = render(&Snapshot::default()).unwrap();
        assert!(text.contains("minipbs_mom_jobs{state=\"mother\"} 0"), "{text}");
        assert!(text.contains("minipbs_mom_gpus{use=\"free\"} 0"), "{text}");
    }
}
