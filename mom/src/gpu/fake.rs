//! Fake GPUs, for machines without any (laptops, CI): either `N` idle GPUs, or a JSON file
//! re-read on every sample so a test (or a person) can play processes appearing on a GPU or a
//! GPU falling off the bus. MPS commands are appended to `<file>.commands` instead of being run.
//!
//! The file (docs/gpus.md):
//! `{"gpus": [{"uuid", "name", "pci_bus_id", "memory_total", "memory_used", "utilization",
//! "lost", "processes": [{"pid", "used_memory"}]}]}`; only `uuid` is required. A listed pid
//! that is not alive is left out, as NVML lists only live processes.
//!
//! Owns: the file format. Must not: touch the processes it lists.

use super::{GpuError, GpuInventory, GpuProcess, GpuSample, MpsCommand};
use proto::gpu::GpuInfo;
use serde::Deserialize;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The file's top level.
#[derive(Debug, Deserialize)]
struct FakeFile {
    gpus: Vec<FakeGpu>,
}

#[derive(Debug, Deserialize)]
struct FakeGpu {
    uuid: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    pci_bus_id: String,
    #[serde(default)]
    memory_total: u64,
    #[serde(default)]
    memory_used: u64,
    #[serde(default)]
    utilization: Option<u32>,
    #[serde(default)]
    lost: bool,
    #[serde(default)]
    processes: Vec<FakeProcess>,
}

#[derive(Debug, Deserialize)]
struct FakeProcess {
    pid: u32,
    #[serde(default)]
    used_memory: Option<u64>,
}

/// Fake GPUs.
#[derive(Debug)]
pub struct FakeInventory {
    devices: Vec<GpuInfo>,
    /// The file, when the GPUs come from one (`None`: always idle).
    file: Option<PathBuf>,
}

impl FakeInventory {
    /// `count` idle GPUs named `GPU-00000000-0000-4000-8000-<index>`, 16 GiB each.
    pub fn idle(count: u32) -> FakeInventory {
        let devices = (0..count)
            .map(|index| GpuInfo {
                index,
                uuid: format!("GPU-00000000-0000-4000-8000-{index:012x}"),
                name: "minipbs fake GPU".to_string(),
                pci_bus_id: format!("00000000:{:02X}:00.0", index + 1),
                mem_total: 16 << 30,
            })
            .collect();
        FakeInventory { devices, file: None }
    }

    /// The GPUs `path` lists (their identity is read once; their use on every sample).
    pub fn from_file(path: &Path) -> Result<FakeInventory, GpuError> {
        let file = read(path)?;
        let mut devices = Vec::with_capacity(file.gpus.len());
        for (index, gpu) in file.gpus.iter().enumerate() {
            if gpu.uuid.is_empty() || devices.iter().any(|known: &GpuInfo| known.uuid == gpu.uuid) {
                let reason = format!("GPU {index} needs a uuid of its own");
                return Err(GpuError::Fake { path: path.to_path_buf(), reason });
            }
            devices.push(GpuInfo {
                index: index as u32,
                uuid: gpu.uuid.clone(),
                name: gpu.name.clone(),
                pci_bus_id: gpu.pci_bus_id.clone(),
                mem_total: gpu.memory_total,
            });
        }
        Ok(FakeInventory { devices, file: Some(path.to_path_buf()) })
    }

    fn commands_file(&self) -> Option<PathBuf> {
        let file = self.file.as_ref()?;
        let mut name = file.as_os_str().to_owned();
        name.push(".commands");
        Some(PathBuf::from(name))
    }
}

impl GpuInventory for FakeInventory {
    fn kind(&self) -> &'static str {
        "fake"
    }

    fn devices(&self) -> &[GpuInfo] {
        &self.devices
    }

    fn sample(&mut self) -> Result<Vec<GpuSample>, GpuError> {
        let Some(path) = &self.file else {
            return Ok(self.devices.iter().map(|info| idle_sample(&info.uuid)).collect());
        };
        let file = read(path)?;
        let samples = self
            .devices
            .iter()
            .map(|info| match file.gpus.iter().find(|gpu| gpu.uuid == info.uuid) {
                Some(gpu) => sample_of(gpu),
                None => GpuSample { fault: Some("no longer in the fake GPU file".into()), ..idle_sample(&info.uuid) },
            })
            .collect();
        Ok(samples)
    }

    /// Appends the command line to `<file>.commands` (or only logs it for idle GPUs).
    fn run_mps(&mut self, command: &MpsCommand) -> Result<(), GpuError> {
        let line = command.shell_line();
        tracing::info!(command = %line, "fake GPUs: MPS command recorded, not run");
        let Some(path) = self.commands_file() else { return Ok(()) };
        let append = || -> std::io::Result<()> {
            let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path)?;
            writeln!(file, "{line}")
        };
        append().map_err(|err| GpuError::Fake { path, reason: err.to_string() })
    }
}

fn read(path: &Path) -> Result<FakeFile, GpuError> {
    let fail = |reason: String| GpuError::Fake { path: path.to_path_buf(), reason };
    let text = std::fs::read_to_string(path).map_err(|err| fail(err.to_string()))?;
    serde_json::from_str(&text).map_err(|err| fail(err.to_string()))
}

fn idle_sample(uuid: &str) -> GpuSample {
    GpuSample { uuid: uuid.to_string(), mem_used: 0, utilization: Some(0), processes: Vec::new(), fault: None }
}

fn sample_of(gpu: &FakeGpu) -> GpuSample {
    let processes = gpu
        .processes
        .iter()
        .filter(|process| Path::new("/proc").join(process.pid.to_string()).exists())
        .map(|process| GpuProcess { pid: process.pid, used_memory: process.used_memory })
        .collect();
    GpuSample {
        uuid: gpu.uuid.clone(),
        mem_used: gpu.memory_used,
        utilization: gpu.utilization,
        processes,
        fault: gpu.lost.then(|| "fallen off the bus (fake: lost)".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let path = dir.join("gpus.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_file_is_read_again_on_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let me = std::process::id();
        let path = write(dir.path(), r#"{"gpus": [{"uuid": "GPU-a", "memory_total": 8}, {"uuid": "GPU-b"}]}"#);
        let mut fake = FakeInventory::from_file(&path).unwrap();
        assert_eq!(
            fake.devices().iter().map(|d| (d.index, d.uuid.as_str())).collect::<Vec<_>>(),
            [(0, "GPU-a"), (1, "GPU-b")]
        );
        assert!(fake.sample().unwrap().iter().all(|s| s.processes.is_empty() && s.fault.is_none()));
        let text = format!(
            r#"{{"gpus": [{{"uuid": "GPU-a", "processes": [{{"pid": {me}, "used_memory": 5}}, {{"pid": 999999999}}]}}, {{"uuid": "GPU-b", "lost": true}}]}}"#
        );
        write(dir.path(), &text);
        let samples = fake.sample().unwrap();
        assert_eq!(samples[0].processes, [GpuProcess { pid: me, used_memory: Some(5) }], "dead pids are left out");
        assert!(samples[1].fault.as_deref().unwrap().contains("lost"));
        write(dir.path(), r#"{"gpus": [{"uuid": "GPU-b"}]}"#);
        let samples = fake.sample().unwrap();
        assert!(samples[0].fault.as_deref().unwrap().contains("no longer"), "a GPU gone from the file is faulty");
        write(dir.path(), "{not json");
        assert!(fake.sample().is_err());
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let err = FakeInventory::from_file(&dir.path().join("missing.json")).unwrap_err().to_string();
        assert!(err.contains("missing.json"), "{err}");
        let path = write(dir.path(), r#"{"gpus": [{"uuid": "GPU-a"}, {"uuid": "GPU-a"}]}"#);
        let err = FakeInventory::from_file(&path).unwrap_err().to_string();
        assert!(err.contains("GPU 1 needs a uuid of its own"), "{err}");
    }

    #[test]
    fn mps_commands_are_recorded_beside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), r#"{"gpus": [{"uuid": "GPU-a"}]}"#);
        let mut fake = FakeInventory::from_file(&path).unwrap();
        let start = MpsCommand { start: true, uuid: "GPU-a".into(), pipe_dir: "/p".into(), log_dir: "/l".into() };
        fake.run_mps(&start).unwrap();
        fake.run_mps(&MpsCommand { start: false, ..start.clone() }).unwrap();
        let text = std::fs::read_to_string(dir.path().join("gpus.json.commands")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].ends_with("nvidia-cuda-mps-control -d") && lines[1].starts_with("echo quit |"), "{text}");
    }
}
