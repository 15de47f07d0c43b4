//! This node's GPUs: where they come from ([`GpuInventory`]: NVML, a fake, or none), what each
//! is doing (`tracker.rs`, pure), and the glue that polls, claims and releases them for jobs and
//! tells the server (`board.rs`).
//!
//! Layout: `nvml.rs` (real GPUs through nvml-wrapper, `libnvidia-ml.so.1` loaded at run time),
//! `fake.rs` (a count of GPUs, or a JSON file re-read on every poll, for tests and laptops),
//! `tracker.rs` (holders, foreign processes, draining: GPU states as a pure function of
//! samples and time), `board.rs` (the tracker and the inventory behind one lock, the poll
//! loop, MPS daemons, reports to the server).
//!
//! Must not: kill or signal any process found on a GPU (foreign processes are never touched),
//! know the scheduler or the database.

pub mod board;
pub mod fake;
pub mod nvml;
pub mod tracker;

pub use board::GpuBoard;

use proto::gpu::GpuInfo;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The shared library NVML is loaded from.
pub const NVML_LIBRARY: &str = "libnvidia-ml.so.1";

/// Which inventory `pbs_mom --gpus` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuChoice {
    /// NVML when it initialises, none otherwise (the default).
    Auto,
    /// NVML or refuse to start.
    Nvml,
    /// No GPUs (`none` or `0`).
    None,
    /// `N` fake GPUs, always idle.
    Count(u32),
    /// Fake GPUs described by a JSON file (`fake:FILE`, fake.rs), re-read on every poll.
    Fake(PathBuf),
}

impl std::str::FromStr for GpuChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<GpuChoice, String> {
        match text {
            "auto" => Ok(GpuChoice::Auto),
            "nvml" => Ok(GpuChoice::Nvml),
            "none" | "0" => Ok(GpuChoice::None),
            _ => {
                if let Some(path) = text.strip_prefix("fake:") {
                    if path.is_empty() {
                        return Err("fake: needs a file, e.g. fake:/etc/minipbs/gpus.json".into());
                    }
                    return Ok(GpuChoice::Fake(PathBuf::from(path)));
                }
                match text.parse::<u32>() {
                    Ok(count) => Ok(GpuChoice::Count(count)),
                    Err(_) => Err(format!("{text:?} is not auto, nvml, none, a number of GPUs or fake:FILE")),
                }
            }
        }
    }
}

/// Why an inventory could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("NVML: {0}")]
    Nvml(String),
    #[error("fake GPU file {path}: {reason}")]
    Fake { path: PathBuf, reason: String },
    #[error("cannot run {program}: {source}")]
    Command { program: String, source: std::io::Error },
}

/// A process holding a context or memory on a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuProcess {
    pub pid: u32,
    /// Memory it holds, in bytes, when the inventory can tell.
    pub used_memory: Option<u64>,
}

/// One GPU's readings at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSample {
    pub uuid: String,
    /// Memory in use, bytes.
    pub mem_used: u64,
    /// Utilisation in percent, when known.
    pub utilization: Option<u32>,
    /// Processes holding a context or memory on it.
    pub processes: Vec<GpuProcess>,
    /// Set when the GPU cannot be used at all (fallen off the bus, needs a reset), with why.
    pub fault: Option<String>,
}

/// Starting or stopping the MPS control daemon of one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MpsCommand {
    pub start: bool,
    pub uuid: String,
    /// `CUDA_MPS_PIPE_DIRECTORY`.
    pub pipe_dir: PathBuf,
    /// `CUDA_MPS_LOG_DIRECTORY`.
    pub log_dir: PathBuf,
}

impl MpsCommand {
    /// The command as a shell line (what a fake records, and what logs show).
    pub fn shell_line(&self) -> String {
        let env = format!(
            "CUDA_VISIBLE_DEVICES={} CUDA_MPS_PIPE_DIRECTORY={} CUDA_MPS_LOG_DIRECTORY={}",
            self.uuid,
            self.pipe_dir.display(),
            self.log_dir.display()
        );
        if self.start {
            format!("{env} nvidia-cuda-mps-control -d")
        } else {
            format!("echo quit | {env} nvidia-cuda-mps-control")
        }
    }
}

/// Where a node's GPUs come from. Implementations: [`nvml::NvmlInventory`],
/// [`fake::FakeInventory`] and [`NoGpus`]. Sampling may block (NVML calls, a file read): the
/// board calls it off the async threads.
pub trait GpuInventory: Send {
    /// `nvml`, `fake` or `none`, for logs.
    fn kind(&self) -> &'static str;

    /// The GPUs, in NVML index order (`devices()[i].index == i`), fixed for the mom's life.
    fn devices(&self) -> &[GpuInfo];

    /// Current readings, one per device in [`GpuInventory::devices`]' order.
    fn sample(&mut self) -> Result<Vec<GpuSample>, GpuError>;

    /// Carries out an MPS command. The default runs `nvidia-cuda-mps-control` for real; the
    /// fake records the command instead.
    fn run_mps(&mut self, command: &MpsCommand) -> Result<(), GpuError> {
        run_mps_control(command)
    }
}

/// A node without GPUs.
#[derive(Debug, Default)]
pub struct NoGpus;

impl GpuInventory for NoGpus {
    fn kind(&self) -> &'static str {
        "none"
    }

    fn devices(&self) -> &[GpuInfo] {
        &[]
    }

    fn sample(&mut self) -> Result<Vec<GpuSample>, GpuError> {
        Ok(Vec::new())
    }
}

/// Opens the inventory `choice` names. `Auto` never fails: without NVML it is none, and the
/// returned line says why; the caller logs it.
pub fn open(choice: &GpuChoice) -> Result<(Box<dyn GpuInventory>, String), GpuError> {
    match choice {
        GpuChoice::Auto => Ok(match nvml::NvmlInventory::open() {
            Ok(inventory) => {
                let line = format!("GPUs: NVML, {} device(s)", inventory.devices().len());
                (Box::new(inventory), line)
            }
            Err(err) => (Box::new(NoGpus), format!("GPUs: none ({NVML_LIBRARY} not usable: {err})")),
        }),
        GpuChoice::Nvml => {
            let inventory = nvml::NvmlInventory::open()?;
            let line = format!("GPUs: NVML, {} device(s)", inventory.devices().len());
            Ok((Box::new(inventory), line))
        }
        GpuChoice::None => Ok((Box::new(NoGpus), "GPUs: none (--gpus none)".to_string())),
        GpuChoice::Count(0) => Ok((Box::new(NoGpus), "GPUs: none (--gpus 0)".to_string())),
        GpuChoice::Count(count) => {
            Ok((Box::new(fake::FakeInventory::idle(*count)), format!("GPUs: {count} fake, always idle")))
        }
        GpuChoice::Fake(path) => {
            let inventory = fake::FakeInventory::from_file(path)?;
            let line = format!("GPUs: {} fake, from {}", inventory.devices().len(), path.display());
            Ok((Box::new(inventory), line))
        }
    }
}

/// Runs `nvidia-cuda-mps-control` for `command` (start: `-d`; stop: `quit` on its stdin)
/// with the GPU and the pipe and log directories in its environment.
fn run_mps_control(command: &MpsCommand) -> Result<(), GpuError> {
    let program = "nvidia-cuda-mps-control";
    let failed = |source| GpuError::Command { program: program.to_string(), source };
    let mut control = Command::new(program);
    control
        .env("CUDA_VISIBLE_DEVICES", &command.uuid)
        .env("CUDA_MPS_PIPE_DIRECTORY", &command.pipe_dir)
        .env("CUDA_MPS_LOG_DIRECTORY", &command.log_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if command.start {
        let status = control.arg("-d").stdin(Stdio::null()).status().map_err(failed)?;
        return exit_ok(program, status);
    }
    let mut child = control.stdin(Stdio::piped()).spawn().map_err(failed)?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(b"quit\n").map_err(failed)?;
    }
    let status = child.wait().map_err(failed)?;
    exit_ok(program, status)
}

fn exit_ok(program: &str, status: std::process::ExitStatus) -> Result<(), GpuError> {
    if status.success() {
        return Ok(());
    }
    let source = std::io::Error::other(format!("exited with {status}"));
    Err(GpuError::Command { program: program.to_string(), source })
}

/// The command name of `pid` (`/proc/<pid>/comm`), for reasons people read.
pub fn process_name(pid: u32) -> Option<String> {
    let name = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("comm")).ok()?;
    Some(name.trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!("auto".parse(), Ok(GpuChoice::Auto));
        assert_eq!("nvml".parse(), Ok(GpuChoice::Nvml));
        assert_eq!("none".parse(), Ok(GpuChoice::None));
        assert_eq!("0".parse(), Ok(GpuChoice::None));
        assert_eq!("4".parse(), Ok(GpuChoice::Count(4)));
        assert_eq!("fake:/x/g.json".parse(), Ok(GpuChoice::Fake("/x/g.json".into())));
        let err = "many".parse::<GpuChoice>().unwrap_err();
        assert!(err.contains("\"many\" is not auto, nvml, none"), "{err}");
        assert!("fake:".parse::<GpuChoice>().is_err());
    }

    #[test]
    fn auto_without_nvml_is_none_and_says_why() {
        if Path::new("/usr/lib/x86_64-linux-gnu").join(NVML_LIBRARY).exists() {
            return; // A machine with NVML: covered by docs/gpu-checklist.md instead.
        }
        let (inventory, line) = open(&GpuChoice::Auto).unwrap();
        assert_eq!(inventory.kind(), "none");
        assert!(inventory.devices().is_empty());
        assert!(line.starts_with("GPUs: none (libnvidia-ml.so.1 not usable: "), "{line}");
        assert!(open(&GpuChoice::Nvml).is_err(), "--gpus nvml refuses to start without NVML");
    }

    #[test]
    fn mps_lines() {
        let command = MpsCommand { start: true, uuid: "GPU-1".into(), pipe_dir: "/p".into(), log_dir: "/l".into() };
        assert_eq!(
            command.shell_line(),
            "CUDA_VISIBLE_DEVICES=GPU-1 CUDA_MPS_PIPE_DIRECTORY=/p CUDA_MPS_LOG_DIRECTORY=/l nvidia-cuda-mps-control -d"
        );
        let stop = MpsCommand { start: false, ..command };
        assert!(stop.shell_line().starts_with("echo quit | CUDA_VISIBLE_DEVICES=GPU-1 "));
    }
}
