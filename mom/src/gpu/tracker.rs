//! What each GPU of this node is doing, as a pure function of who holds it, the inventory's
//! samples and the time: free, held by a job, shared by MPS jobs of one user, busy with a
//! process outside the queue (and for how long it must stay clean), draining after its job, or
//! down (docs/gpus.md, "The rules").
//!
//! Owns: the holders of each GPU on this node and the claim check a job passes at start (the
//! server allocated the GPU; the mom checks again). Pure: no I/O, no clock (time is an
//! argument), no processes. Invariant: a GPU has at most one exclusive holder, and MPS shares
//! of one user adding up to at most 100 %.

use super::{process_name, GpuSample};
use proto::gpu::{GpuInfo, GpuReport, GpuUse};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Memory a GPU without processes may show in use and still count as clean: drivers and
/// persistence daemons keep a few hundred MiB on an idle GPU.
pub const IDLE_MEMORY: u64 = 512 << 20;

/// The tracker's knobs (`pbs_mom --gpu-foreign-hold`, `--gpu-drain-timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrackerSettings {
    /// How long a GPU must stay clean after a foreign process left it before it is free.
    pub foreign_hold: Duration,
    /// How long a GPU may stay dirty after its job before it is reported down.
    pub drain_timeout: Duration,
    /// Memory in use at or under which a GPU without processes counts as clean (drivers keep
    /// a little for themselves).
    pub idle_memory: u64,
}

/// Who holds a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Holder {
    Nobody,
    /// One job, exclusively.
    Job(String),
    /// MPS jobs of one user, each with its percentage.
    Mps {
        user: String,
        shares: BTreeMap<String, u8>,
    },
}

/// What is known of foreign use of a GPU nobody holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Foreign {
    Never,
    /// A process outside the queue holds it now.
    Busy,
    /// It was seen clean at this time after foreign use; free once the hold has passed.
    CleanSince(Instant),
}

#[derive(Debug, Clone)]
struct Tracked {
    info: GpuInfo,
    holder: Holder,
    sample: Option<GpuSample>,
    /// When its job released it; cleared once it is seen clean.
    draining_since: Option<Instant>,
    foreign: Foreign,
}

/// A job's GPUs on this node as the server allocated them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuClaim {
    pub job_id: String,
    pub user: String,
    /// `(index, uuid)`; the uuid is `None` from a server that sends none.
    pub gpus: Vec<(u32, Option<String>)>,
    /// An MPS share of each GPU (percent), or `None` for exclusive use.
    pub mps: Option<u8>,
}

/// Every GPU of the node.
#[derive(Debug, Clone)]
pub struct GpuTracker {
    gpus: Vec<Tracked>,
    settings: TrackerSettings,
}

impl GpuTracker {
    /// GPUs nobody holds and nothing is known of yet.
    pub fn new(devices: &[GpuInfo], settings: TrackerSettings) -> GpuTracker {
        let gpus = devices
            .iter()
            .map(|info| Tracked {
                info: info.clone(),
                holder: Holder::Nobody,
                sample: None,
                draining_since: None,
                foreign: Foreign::Never,
            })
            .collect();
        GpuTracker { gpus, settings }
    }

    /// The GPUs' identities, in index order.
    pub fn infos(&self) -> Vec<GpuInfo> {
        self.gpus.iter().map(|gpu| gpu.info.clone()).collect()
    }

    /// Takes in a sample of every GPU (matched by UUID) taken at `now`.
    pub fn observe(&mut self, samples: Vec<GpuSample>, now: Instant) {
        let hold = self.settings.foreign_hold;
        let idle_memory = self.settings.idle_memory;
        for sample in samples {
            let Some(gpu) = self.gpus.iter_mut().find(|gpu| gpu.info.uuid == sample.uuid) else { continue };
            let busy = !sample.processes.is_empty() || sample.mem_used > idle_memory;
            if gpu.holder != Holder::Nobody {
                // Whatever runs on a held GPU is its job's.
                gpu.foreign = Foreign::Never;
            } else if gpu.draining_since.is_some() {
                if !busy {
                    gpu.draining_since = None;
                }
            } else if busy {
                gpu.foreign = Foreign::Busy;
            } else {
                gpu.foreign = match gpu.foreign {
                    Foreign::Busy => Foreign::CleanSince(now),
                    Foreign::CleanSince(since) if now.saturating_duration_since(since) >= hold => Foreign::Never,
                    other => other,
                };
            }
            gpu.sample = Some(sample);
        }
    }

    /// GPU `index`'s use at `now`, and the reason people read for a busy, draining or down one.
    pub fn state(&self, index: usize, now: Instant) -> (GpuUse, String) {
        let gpu = &self.gpus[index];
        if let Some(fault) = gpu.sample.as_ref().and_then(|sample| sample.fault.clone()) {
            return (GpuUse::Down, fault);
        }
        match &gpu.holder {
            Holder::Job(_) => return (GpuUse::Job, String::new()),
            Holder::Mps { .. } => return (GpuUse::Shared, String::new()),
            Holder::Nobody => {}
        }
        let in_use = gpu.sample.as_ref().map(describe_use).unwrap_or_default();
        if let Some(since) = gpu.draining_since {
            let timeout = self.settings.drain_timeout;
            if now.saturating_duration_since(since) > timeout {
                return (GpuUse::Down, format!("still in use {} s after its job ended: {in_use}", timeout.as_secs()));
            }
            return (GpuUse::Draining, format!("its job ended; waiting until it is clean: {in_use}"));
        }
        let hold = self.settings.foreign_hold.as_secs();
        match gpu.foreign {
            Foreign::Busy => (GpuUse::BusyForeign, format!("used outside the queue: {in_use}")),
            Foreign::CleanSince(since) if now.saturating_duration_since(since) < self.settings.foreign_hold => {
                (GpuUse::BusyForeign, format!("used outside the queue; free once clean for {hold} s"))
            }
            _ => (GpuUse::Free, String::new()),
        }
    }

    /// Every GPU's report at `now`.
    pub fn reports(&self, now: Instant) -> Vec<GpuReport> {
        (0..self.gpus.len())
            .map(|index| {
                let (state, reason) = self.state(index, now);
                let sample = self.gpus[index].sample.as_ref();
                GpuReport {
                    uuid: self.gpus[index].info.uuid.clone(),
                    state,
                    mem_used: sample.map_or(0, |sample| sample.mem_used),
                    utilization: sample.and_then(|sample| sample.utilization),
                    reason,
                }
            })
            .collect()
    }

    /// Gives the job its GPUs if each is still what the server thought: there, the same UUID,
    /// and free (or, for an MPS share, shared by the same user with room left). All or
    /// nothing. Returns the GPUs whose MPS daemon must be started (their first share).
    pub fn claim(&mut self, claim: &GpuClaim, now: Instant) -> Result<Vec<u32>, String> {
        for (index, uuid) in &claim.gpus {
            self.check(claim, *index, uuid.as_deref(), now)?;
        }
        let mut first_shares = Vec::new();
        for (index, _) in &claim.gpus {
            let gpu = &mut self.gpus[*index as usize];
            match (claim.mps, &mut gpu.holder) {
                (None, holder) => *holder = Holder::Job(claim.job_id.clone()),
                (Some(percent), Holder::Mps { shares, .. }) => {
                    shares.insert(claim.job_id.clone(), percent);
                }
                (Some(percent), holder) => {
                    let shares = BTreeMap::from([(claim.job_id.clone(), percent)]);
                    *holder = Holder::Mps { user: claim.user.clone(), shares };
                    first_shares.push(*index);
                }
            }
            gpu.draining_since = None;
            gpu.foreign = Foreign::Never;
        }
        Ok(first_shares)
    }

    fn check(&self, claim: &GpuClaim, index: u32, uuid: Option<&str>, now: Instant) -> Result<(), String> {
        let Some(gpu) = self.gpus.get(index as usize) else {
            return Err(format!("GPU {index} does not exist on this node ({} GPUs)", self.gpus.len()));
        };
        if let Some(uuid) = uuid.filter(|uuid| !uuid.is_empty() && *uuid != gpu.info.uuid) {
            return Err(format!("GPU {index} is {}, not {uuid}", gpu.info.uuid));
        }
        let (state, reason) = self.state(index as usize, now);
        let refused = |what: &str| Err(format!("GPU {index} ({}) {what}", gpu.info.uuid));
        match (&gpu.holder, claim.mps) {
            (Holder::Job(holder), _) if *holder == claim.job_id => Ok(()),
            (Holder::Job(holder), _) => refused(&format!("is held by job {holder}")),
            (Holder::Mps { user, shares }, Some(percent)) => {
                let used: u32 = shares.values().map(|&share| u32::from(share)).sum();
                if *user != claim.user {
                    refused(&format!("is shared by {user}'s MPS jobs"))
                } else if shares.contains_key(&claim.job_id) || used + u32::from(percent) <= 100 {
                    Ok(())
                } else {
                    refused(&format!("has {}% left for MPS, not {percent}%", 100 - used.min(100)))
                }
            }
            (Holder::Mps { user, .. }, None) => refused(&format!("is shared by {user}'s MPS jobs")),
            (Holder::Nobody, _) if state == GpuUse::Free => Ok(()),
            (Holder::Nobody, _) => refused(&format!("is {}: {reason}", state.word())),
        }
    }

    /// Takes `job_id`'s holds away; its GPUs drain until seen clean. Returns the GPUs whose
    /// last MPS share this was (their MPS daemon is to be stopped).
    pub fn release(&mut self, job_id: &str, now: Instant) -> Vec<u32> {
        let mut last_shares = Vec::new();
        for gpu in &mut self.gpus {
            let emptied = match &mut gpu.holder {
                Holder::Job(holder) => holder == job_id,
                Holder::Mps { shares, .. } => {
                    let had = shares.remove(job_id).is_some();
                    if had && shares.is_empty() {
                        last_shares.push(gpu.info.index);
                    }
                    had && shares.is_empty()
                }
                Holder::Nobody => false,
            };
            if emptied {
                gpu.holder = Holder::Nobody;
                gpu.draining_since = Some(now);
            }
        }
        last_shares
    }

    /// Whether `job_id` holds a GPU here.
    pub fn holds(&self, job_id: &str) -> bool {
        self.gpus.iter().any(|gpu| match &gpu.holder {
            Holder::Job(holder) => holder == job_id,
            Holder::Mps { shares, .. } => shares.contains_key(job_id),
            Holder::Nobody => false,
        })
    }

    /// GPU `index`'s identity.
    pub fn info(&self, index: u32) -> Option<&GpuInfo> {
        self.gpus.get(index as usize).map(|gpu| &gpu.info)
    }
}

/// `pid 4242 (python) holds 2.0 GiB, ...` or the memory in use, for reasons.
fn describe_use(sample: &GpuSample) -> String {
    if sample.processes.is_empty() {
        return format!("{} in use", gib(sample.mem_used));
    }
    let described: Vec<String> = sample
        .processes
        .iter()
        .map(|process| {
            let name = process_name(process.pid).map(|name| format!(" ({name})")).unwrap_or_default();
            match process.used_memory {
                Some(bytes) => format!("pid {}{name} holds {}", process.pid, gib(bytes)),
                None => format!("pid {}{name}", process.pid),
            }
        })
        .collect();
    described.join(", ")
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tests;
