//! The node's GPUs at run time: the inventory and the tracker behind one lock; polled every
//! `--gpu-poll`, claimed when a job starts (the mom's re-check of the server's allocation),
//! released when it ends; the MPS control daemon of a GPU started with its first share and
//! stopped with its last; every change of a GPU's use sent to the server as `GpuStatus`, and
//! the latest reports kept for the link's next registration.
//!
//! Owns: the MPS pipe and log directories (`<spool>/mps/<index>/{pipe,log}`) and the variables
//! a job's GPUs add to its environment. Must not: decide anything the tracker decides, or kill
//! any process. Inventory calls can block (NVML, a file): `poll` runs off the async threads;
//! claims and releases are short and run where the daemon is.

use super::tracker::{GpuClaim, GpuTracker, TrackerSettings};
use super::{GpuInventory, MpsCommand};
use proto::gpu::{GpuInfo, GpuReport};
use proto::mom::{JobLaunch, MomToServer};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How the board is set up (`pbs_mom` flags).
#[derive(Debug, Clone)]
pub struct BoardSettings {
    pub tracker: TrackerSettings,
    /// `CUDA_VISIBLE_DEVICES` as UUIDs (OpenPBS's form) rather than indices (TORQUE's).
    pub cuda_uuids: bool,
    /// `<spool>/mps`.
    pub mps_root: PathBuf,
}

/// The latest GPU reports, read by the link for each registration.
#[derive(Clone, Default)]
pub struct ReportCell(Arc<Mutex<Vec<GpuReport>>>);

impl ReportCell {
    /// The reports last published.
    pub fn get(&self) -> Vec<GpuReport> {
        // Recovered, not fatal: the reports are replaced whole (`set`), never half-changed.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    fn set(&self, reports: Vec<GpuReport>) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = reports;
    }
}

impl std::fmt::Debug for ReportCell {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "ReportCell({} reports)", self.get().len())
    }
}

struct Inner {
    inventory: Box<dyn GpuInventory>,
    tracker: GpuTracker,
    /// `(state, reason)` of each GPU as last sent; readings alone are not worth a message.
    sent: Vec<(proto::gpu::GpuUse, String)>,
}

/// The node's GPUs.
pub struct GpuBoard {
    inner: Mutex<Inner>,
    infos: Vec<GpuInfo>,
    settings: BoardSettings,
    outbound: mpsc::UnboundedSender<MomToServer>,
    cell: ReportCell,
}

impl GpuBoard {
    /// A board over `inventory`, with a first sample taken (so the registration reports
    /// every GPU as it is).
    pub fn new(
        inventory: Box<dyn GpuInventory>,
        settings: BoardSettings,
        outbound: mpsc::UnboundedSender<MomToServer>,
    ) -> Arc<GpuBoard> {
        let infos = inventory.devices().to_vec();
        let tracker = GpuTracker::new(&infos, settings.tracker);
        let inner = Mutex::new(Inner { inventory, tracker, sent: Vec::new() });
        let board = Arc::new(GpuBoard { inner, infos, settings, outbound, cell: ReportCell::default() });
        board.poll();
        board
    }

    /// The GPUs' identities, for the registration.
    pub fn infos(&self) -> &[GpuInfo] {
        &self.infos
    }

    /// Where the link reads the latest reports.
    pub fn reports(&self) -> ReportCell {
        self.cell.clone()
    }

    /// Samples the inventory and publishes any change.
    pub fn poll(&self) {
        if self.infos.is_empty() {
            return;
        }
        let mut inner = self.lock();
        sample(&mut inner);
        self.publish(&mut inner);
    }

    /// Polls every `interval` for ever (the caller aborts the task).
    pub async fn run_poller(self: Arc<Self>, interval: Duration) {
        if self.infos.is_empty() {
            return;
        }
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let board = self.clone();
            if tokio::task::spawn_blocking(move || board.poll()).await.is_err() {
                tracing::error!("GPU poll crashed");
            }
        }
    }

    /// Claims the GPUs `launch` gives this node (`node`), after a fresh sample. Returns the
    /// variables they add to the job's environment, or why a GPU is not usable (nothing is
    /// then held).
    pub fn claim(&self, launch: &JobLaunch, node: &str) -> Result<Vec<(String, String)>, String> {
        let claim = claim_of(launch, node);
        if claim.gpus.is_empty() {
            return Ok(Vec::new());
        }
        let mut inner = self.lock();
        sample(&mut inner);
        let result = inner.tracker.claim(&claim, Instant::now());
        let first_shares = match result {
            Ok(first_shares) => first_shares,
            Err(reason) => {
                self.publish(&mut inner);
                return Err(reason);
            }
        };
        for index in first_shares {
            if let Err(err) = self.mps(&mut inner, index, true) {
                inner.tracker.release(&claim.job_id, Instant::now());
                self.publish(&mut inner);
                return Err(format!("cannot start MPS on GPU {index}: {err}"));
            }
        }
        self.publish(&mut inner);
        Ok(self.variables(&inner.tracker, &claim))
    }

    /// Releases `job_id`'s GPUs (they drain until clean; the MPS daemon of a GPU whose last
    /// share this was is stopped) and publishes the change.
    pub fn release(&self, job_id: &str) {
        if self.infos.is_empty() {
            return;
        }
        let mut inner = self.lock();
        if !inner.tracker.holds(job_id) {
            return;
        }
        for index in inner.tracker.release(job_id, Instant::now()) {
            if let Err(err) = self.mps(&mut inner, index, false) {
                tracing::error!(gpu = index, "cannot stop MPS: {err}");
            }
        }
        sample(&mut inner);
        self.publish(&mut inner);
    }

    fn mps(&self, inner: &mut Inner, index: u32, start: bool) -> Result<(), String> {
        let uuid = inner.tracker.info(index).map(|info| info.uuid.clone()).unwrap_or_default();
        let (pipe_dir, log_dir) = self.mps_dirs(index);
        if start {
            for dir in [&pipe_dir, &log_dir] {
                std::fs::create_dir_all(dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
            }
        }
        let command = MpsCommand { start, uuid, pipe_dir, log_dir };
        tracing::info!(gpu = index, start, "MPS control daemon");
        inner.inventory.run_mps(&command).map_err(|err| err.to_string())
    }

    fn mps_dirs(&self, index: u32) -> (PathBuf, PathBuf) {
        let root = self.settings.mps_root.join(index.to_string());
        (root.join("pipe"), root.join("log"))
    }

    /// The job's CUDA variables that differ from env.rs's defaults (indices): UUIDs when
    /// configured, and an MPS share's device, directories and limits.
    fn variables(&self, tracker: &GpuTracker, claim: &GpuClaim) -> Vec<(String, String)> {
        let uuids: Vec<String> =
            claim.gpus.iter().filter_map(|(index, _)| tracker.info(*index)).map(|info| info.uuid.clone()).collect();
        let mut variables = Vec::new();
        if self.settings.cuda_uuids || claim.mps.is_some() {
            variables.push(("CUDA_VISIBLE_DEVICES".to_string(), uuids.join(",")));
        }
        let (Some(percent), Some(&(index, _))) = (claim.mps, claim.gpus.first()) else { return variables };
        let (pipe_dir, log_dir) = self.mps_dirs(index);
        let mem_total = tracker.info(index).map_or(0, |info| info.mem_total);
        let limit_mb = (mem_total >> 20) * u64::from(percent) / 100;
        variables.extend([
            ("CUDA_MPS_PIPE_DIRECTORY".to_string(), pipe_dir.display().to_string()),
            ("CUDA_MPS_LOG_DIRECTORY".to_string(), log_dir.display().to_string()),
            ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".to_string(), percent.to_string()),
            ("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".to_string(), format!("0={limit_mb}M")),
        ]);
        variables
    }

    /// Updates the cell and, when a GPU's state or reason changed, tells the server.
    fn publish(&self, inner: &mut Inner) {
        let reports = inner.tracker.reports(Instant::now());
        let states: Vec<_> = reports.iter().map(|report| (report.state, report.reason.clone())).collect();
        self.cell.set(reports.clone());
        if states != inner.sent {
            for (index, (state, reason)) in states.iter().enumerate() {
                if inner.sent.get(index) != Some(&(*state, reason.clone())) {
                    tracing::info!(gpu = index, state = state.word(), reason = %reason, "GPU use");
                }
            }
            inner.sent = states;
            let _ = self.outbound.send(MomToServer::GpuStatus(reports));
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        pbslog::fatal::lock_or_exit(&self.inner, "GPU board")
    }
}

/// Samples the inventory into the tracker; a failed sample keeps the last one (logged).
fn sample(inner: &mut Inner) {
    match inner.inventory.sample() {
        Ok(samples) => inner.tracker.observe(samples, Instant::now()),
        Err(err) => tracing::warn!("GPU sample failed, keeping the last one: {err}"),
    }
}

/// The GPUs `launch` gives node `node`, with their UUIDs when the server sent them.
pub fn claim_of(launch: &JobLaunch, node: &str) -> GpuClaim {
    let hosts = launch.hosts.iter().filter(|host| host.node == node);
    let mut gpus = Vec::new();
    let mut mps = None;
    for host in hosts {
        mps = mps.or(host.mps);
        for (position, index) in host.gpus.iter().enumerate() {
            gpus.push((*index, host.gpu_uuids.get(position).cloned()));
        }
    }
    GpuClaim { job_id: launch.job_id.clone(), user: launch.user.clone(), gpus, mps }
}

#[cfg(test)]
#[path = "board_tests.rs"]
mod tests;
