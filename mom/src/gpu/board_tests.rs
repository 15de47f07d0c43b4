//! The board over a fake GPU file: claims re-check the file, changes reach the server as
//! `GpuStatus`, MPS daemons are started and stopped through the inventory.

use super::*;
use crate::gpu::fake::FakeInventory;
use crate::test_support::{gpu_host, launch};
use proto::gpu::GpuUse;

struct Setup {
    _dir: tempfile::TempDir,
    file: PathBuf,
    board: Arc<GpuBoard>,
    sent: mpsc::UnboundedReceiver<MomToServer>,
}

fn setup(cuda_uuids: bool) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gpus.json");
    write_processes(&file, None);
    let inventory = Box::new(FakeInventory::from_file(&file).unwrap());
    let tracker = TrackerSettings {
        foreign_hold: Duration::from_secs(3600),
        drain_timeout: Duration::from_secs(3600),
        idle_memory: 0,
    };
    let settings = BoardSettings { tracker, cuda_uuids, mps_root: dir.path().join("mps") };
    let (outbound, sent) = mpsc::unbounded_channel();
    let board = GpuBoard::new(inventory, settings, outbound);
    Setup { _dir: dir, file, board, sent }
}

/// Two GPUs with 16 GiB each; `pid` (if any) on GPU 1.
fn write_processes(file: &std::path::Path, pid: Option<u32>) {
    let processes = pid.map(|pid| format!(r#"{{"pid": {pid}}}"#)).unwrap_or_default();
    let text = format!(
        r#"{{"gpus": [{{"uuid": "GPU-a", "memory_total": 17179869184}}, {{"uuid": "GPU-b", "processes": [{processes}]}}]}}"#
    );
    std::fs::write(file, text).unwrap();
}

/// The states of the last `GpuStatus` sent since the previous call.
fn last_status(setup: &mut Setup) -> Option<Vec<GpuUse>> {
    let mut last = None;
    while let Ok(message) = setup.sent.try_recv() {
        if let MomToServer::GpuStatus(reports) = message {
            last = Some(reports.into_iter().map(|report| report.state).collect());
        }
    }
    last
}

#[test]
fn claims_are_checked_against_a_fresh_sample_and_reported() {
    let mut setup = setup(false);
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Free, GpuUse::Free]), "the first sample is sent");
    assert_eq!(setup.board.reports().get().len(), 2, "and kept for the registration");
    write_processes(&setup.file, Some(std::process::id()));
    let job = launch("1.s", vec![gpu_host("n1", &[1], &["GPU-b"], None)]);
    let err = setup.board.claim(&job, "n1").unwrap_err();
    assert!(err.starts_with("GPU 1 (GPU-b) is busy-foreign: used outside the queue: pid "), "{err}");
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Free, GpuUse::BusyForeign]));
    let job = launch("2.s", vec![gpu_host("n1", &[0], &["GPU-a"], None), gpu_host("n2", &[1], &[], None)]);
    assert_eq!(setup.board.claim(&job, "n1"), Ok(vec![]), "indices are env.rs's default");
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Job, GpuUse::BusyForeign]));
    setup.board.poll();
    assert_eq!(last_status(&mut setup), None, "nothing changed, nothing sent");
    setup.board.release("2.s");
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Free, GpuUse::BusyForeign]), "clean at release: free");
    let elsewhere = launch("3.s", vec![gpu_host("n2", &[0], &[], None)]);
    assert_eq!(setup.board.claim(&elsewhere, "n1"), Ok(vec![]), "another node's GPUs are not this node's");
    assert_eq!(last_status(&mut setup), None);
}

#[test]
fn uuids_on_request() {
    let setup = setup(true);
    let job = launch("1.s", vec![gpu_host("n1", &[0, 1], &[], None)]);
    let variables = setup.board.claim(&job, "n1").unwrap();
    assert_eq!(variables, [("CUDA_VISIBLE_DEVICES".to_string(), "GPU-a,GPU-b".to_string())]);
}

#[test]
fn mps_daemon_starts_with_the_first_share_and_stops_after_the_last() {
    let mut setup = setup(false);
    let share = |id: &str| launch(id, vec![gpu_host("n1", &[0], &["GPU-a"], Some(25))]);
    let variables: std::collections::BTreeMap<String, String> =
        setup.board.claim(&share("1.s"), "n1").unwrap().into_iter().collect();
    let pipe = setup.file.parent().unwrap().join("mps/0/pipe");
    assert_eq!(variables["CUDA_VISIBLE_DEVICES"], "GPU-a");
    assert_eq!(variables["CUDA_MPS_PIPE_DIRECTORY"], pipe.display().to_string());
    assert_eq!(variables["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
    assert_eq!(variables["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=4096M");
    assert!(pipe.is_dir());
    setup.board.claim(&share("2.s"), "n1").unwrap();
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Shared, GpuUse::Free]));
    setup.board.release("1.s");
    setup.board.release("2.s");
    let commands = std::fs::read_to_string(setup.file.with_extension("json.commands")).unwrap();
    let lines: Vec<&str> = commands.lines().collect();
    assert_eq!(lines.len(), 2, "{commands}");
    assert!(lines[0].ends_with(" -d") && lines[1].starts_with("echo quit"), "{commands}");
    assert_eq!(last_status(&mut setup), Some(vec![GpuUse::Free, GpuUse::Free]));
}
