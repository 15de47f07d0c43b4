//! What a mom tells the server about its GPUs: each device's identity ([`GpuInfo`], sent once
//! at registration) and its use as the mom sees it ([`GpuReport`], at registration and again,
//! as `MomToServer::GpuStatus`, whenever a GPU's use changes).
//!
//! The server keys GPUs by UUID and hands out only GPUs the mom last reported [`GpuUse::Free`]
//! (or, for an MPS share, [`GpuUse::Shared`] by the same user). Must not know: NVML, the
//! scheduler, or how pbsnodes prints these.

use serde::{Deserialize, Serialize};

/// One GPU's identity. `index` is the NVML index (PCI bus order), which is also the GPU's
/// position in [`crate::mom::Registration::gpus`], `CUDA_VISIBLE_DEVICES`' number under
/// `CUDA_DEVICE_ORDER=PCI_BUS_ID` and the `N` of `PBS_GPUFILE`'s `host-gpuN`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub index: u32,
    /// `GPU-xxxxxxxx-xxxx-...`.
    pub uuid: String,
    /// Product name, e.g. `NVIDIA A100-SXM4-40GB`.
    pub name: String,
    /// PCI bus id, e.g. `00000000:3B:00.0` (TORQUE's `gpu_id`).
    pub pci_bus_id: String,
    /// Memory in bytes.
    pub mem_total: u64,
}

/// What a GPU is doing, as its mom sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GpuUse {
    /// Nothing on it, and clean for the foreign hold time: it may be handed out.
    Free,
    /// Held by one job (exclusive).
    Job,
    /// Held by MPS jobs of one user.
    Shared,
    /// A process minipbs did not start holds memory or a context on it (or did, within the hold
    /// time): not handed out; the process is never touched.
    BusyForeign,
    /// Its job ended but its processes or memory are still there: not handed out until clean.
    Draining,
    /// Lost, needing reset, MIG-enabled, or dirty past the drain timeout.
    Down,
}

impl GpuUse {
    /// The word pbsnodes prints (`gpu_use=`): `free`, `job`, `shared`, `busy-foreign`,
    /// `draining`, `down`.
    pub fn word(self) -> &'static str {
        match self {
            GpuUse::Free => "free",
            GpuUse::Job => "job",
            GpuUse::Shared => "shared",
            GpuUse::BusyForeign => "busy-foreign",
            GpuUse::Draining => "draining",
            GpuUse::Down => "down",
        }
    }
}

/// One GPU's use and readings at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuReport {
    pub uuid: String,
    pub state: GpuUse,
    /// Memory in use, bytes (0 when unknown).
    pub mem_used: u64,
    /// Utilisation in percent, when the inventory can tell.
    pub utilization: Option<u32>,
    /// Why it is busy, draining or down, for people (e.g. `pid 4242 (python) holds 2 GiB`).
    /// Empty otherwise.
    pub reason: String,
}
