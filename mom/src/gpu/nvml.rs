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
                sample.fault = Some(format!("NVML cannot reach it: {err}"));
                return sample;
            }
        };
        match device.memory_info() {
            Ok(memory) => sample.mem_used = memory.used,
            Err(NvmlError::GpuLost) => {
                sample.fault = Some("fallen off the bus (NVML: GPU is lost)".into());
                return sample;
            }
            Err(err) => sample.fault = Some(format!("NVML memory query failed: {err}")),
        }
        sample.utilization = device.utilization_rates().ok().map(|rates| rates.gpu);
        let compute = device.running_compute_processes().unwrap_or_default();
        let graphics = device.running_graphics_processes().unwrap_or_default();
        let mut processes: Vec<GpuProcess> = compute.iter().chain(&graphics).map(process).collect();
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

fn process(info: &ProcessInfo) -> GpuProcess {
    let used_memory = match info.used_gpu_memory {
        UsedGpuMemory::Used(bytes) => Some(bytes),
        UsedGpuMemory::Unavailable => None,
    };
    GpuProcess { pid: info.pid, used_memory }
}

fn nvml_error(err: NvmlError) -> GpuError {
    GpuError::Nvml(err.to_string())
}
