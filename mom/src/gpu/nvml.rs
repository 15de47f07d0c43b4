//! Real GPUs through NVML (nvml-wrapper; `libnvidia-ml.so.1` is loaded at run time, so the
//! mom builds and runs where the library is absent, and then this inventory refuses to open).
//!
//! Owns: turning NVML's answers into [`GpuInfo`] and [`GpuSample`]. Must not: change any GPU
//! setting or touch the processes it lists. docs/gpu-checklist.md says how to validate it on a
//! machine with GPUs.

use super::{GpuError, GpuInventory, GpuProcess, GpuSample};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::struct_wrappers::device::ProcessInfo;
use nvml_wrapper::Nvml;
use proto::gpu::GpuInfo;

/// The GPUs NVML sees.
pub struct NvmlInventory {
    nvml: Nvml,
    devices: Vec<GpuInfo>,
}

impl NvmlInventory {
    /// Loads the library, initialises NVML and reads every device's identity.
    pub fn open() -> Result<NvmlInventory, GpuError> {
        let nvml = Nvml::init().map_err(nvml_error)?;
        let count = nvml.device_count().map_err(nvml_error)?;
        let mut devices = Vec::with_capacity(count as usize);
        for index in 0..count {
            let device = nvml.device_by_index(index).map_err(nvml_error)?;
            devices.push(GpuInfo {
                index,
                uuid: device.uuid().map_err(nvml_error)?,
                name: device.name().unwrap_or_default(),
                pci_bus_id: device.pci_info().map(|pci| pci.bus_id).unwrap_or_default(),
                mem_total: device.memory_info().map(|memory| memory.total).unwrap_or(0),
            });
        }
        Ok(NvmlInventory { nvml, devices })
    }

    fn sample_one(&self, info: &GpuInfo) -> GpuSample {
        let mut sample =
            GpuSample { uuid: info.uuid.clone(), mem_used: 0, utilization: None, processes: Vec::new(), fault: None };
        let device = match self.nvml.device_by_uuid(info.uuid.as_str()) {
            Ok(device) => device,
            Err(err) => {
                sample.fault = Some(fault_text(&err));
                return sample;
            }
        };
        if device.mig_mode().is_ok_and(|mode| mode.current == 1) {
            sample.fault = Some("MIG is enabled on it; minipbs hands out whole GPUs only".into());
            return sample;
        }
        match device.memory_info() {
            Ok(memory) => sample.mem_used = memory.used,
            Err(err) => {
                sample.fault = Some(fault_text(&err));
                return sample;
            }
        }
        sample.utilization = device.utilization_rates().ok().map(|rates| rates.gpu);
        let mut processes = Vec::new();
        let lists = [
            fallback(device.running_compute_processes(), || device.running_compute_processes_v2()),
            fallback(device.running_graphics_processes(), || device.running_graphics_processes_v2()),
        ];
        for list in lists {
            match list {
                Ok(list) => processes.extend(list.iter().filter_map(process)),
                // Unknown processes: the memory in use still tells (tracker.rs).
                Err(err) => tracing::debug!(uuid = %info.uuid, "NVML cannot list processes: {err}"),
            }
        }
        processes.sort_by_key(|process| process.pid);
        processes.dedup_by_key(|process| process.pid);
        sample.processes = processes;
        sample
    }
}

impl GpuInventory for NvmlInventory {
    fn kind(&self) -> &'static str {
        "nvml"
    }

    fn devices(&self) -> &[GpuInfo] {
        &self.devices
    }

    fn sample(&mut self) -> Result<Vec<GpuSample>, GpuError> {
        Ok(self.devices.iter().map(|info| self.sample_one(info)).collect())
    }
}

/// The `_v3` process lists are missing from older drivers (`FailedToLoadSymbol`): then `_v2`.
fn fallback(
    newest: Result<Vec<ProcessInfo>, NvmlError>,
    older: impl FnOnce() -> Result<Vec<ProcessInfo>, NvmlError>,
) -> Result<Vec<ProcessInfo>, NvmlError> {
    match newest {
        Err(NvmlError::FailedToLoadSymbol(_)) => older(),
        other => other,
    }
}

/// A listed process, unless its pid cannot be real: bindings that do not match the driver's
/// struct layout give pids of 0 or `u32::MAX`, or pids of nothing (docs: gpu-mpi.md 1.3).
fn process(info: &ProcessInfo) -> Option<GpuProcess> {
    let sane =
        info.pid != 0 && info.pid != u32::MAX && std::path::Path::new("/proc").join(info.pid.to_string()).exists();
    if !sane {
        tracing::warn!(pid = info.pid, "NVML listed a process that does not exist; ignored");
        return None;
    }
    let used_memory = match info.used_gpu_memory {
        UsedGpuMemory::Used(bytes) if bytes != u64::MAX => Some(bytes),
        _ => None,
    };
    Some(GpuProcess { pid: info.pid, used_memory })
}

/// Why a GPU NVML cannot use is down.
fn fault_text(err: &NvmlError) -> String {
    match err {
        NvmlError::GpuLost => "fallen off the bus (NVML: GPU is lost)".to_string(),
        NvmlError::ResetRequired => "needs a reset (NVML: GPU requires reset)".to_string(),
        other => format!("NVML cannot read it: {other}"),
    }
}

fn nvml_error(err: NvmlError) -> GpuError {
    GpuError::Nvml(err.to_string())
}
