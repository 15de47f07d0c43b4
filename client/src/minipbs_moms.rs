//! The moms of a `minipbs up` cluster: one `pbs_mom` per node, `node1` to `nodeN`, each with
//! its spool, fake GPUs (`--gpus`) and cgroup slice under the state directory; or, with
//! `--simulate` (for benchmarks only), one `pbs_mom --simulate N` serving every node through a
//! connection of its own, whose jobs run nowhere (`mom/src/simulate/`).
//!
//! Owns: the moms' command lines. Must not: wait for the nodes (`minipbs.rs` does).

use crate::conf::ServerAddr;
use std::path::Path;
use std::process::Command;

/// What the moms of the cluster are.
#[derive(Debug, Clone)]
pub struct Moms {
    /// How many nodes.
    pub nodes: u32,
    /// One simulating mom for all of them (`--simulate`).
    pub simulate: bool,
    pub ppn: u32,
    pub mem_bytes: u64,
    /// Fake GPUs per node (real moms only).
    pub gpus: u32,
    pub kill_delay: u64,
    /// Each real mom serves its /metrics.
    pub http: bool,
    /// `--mom-arg`s, last (a later flag wins).
    pub extra: Vec<String>,
}

/// Starts the moms of the cluster in `dir`, linked to `server`.
pub fn spawn(moms: &Moms, server: &ServerAddr, dir: &Path, bin_dir: &Path) -> Result<(), String> {
    let program = bin_dir.join("pbs_mom");
    if moms.simulate {
        let args = [
            link_args(server),
            vec!["--name".to_string(), "node".to_string(), "--simulate".to_string(), moms.nodes.to_string()],
            vec!["--np".to_string(), moms.ppn.to_string(), "--mem".to_string(), moms.mem_bytes.to_string()],
            moms.extra.clone(),
        ]
        .concat();
        return spawn_logged(&program, &args, dir, "nodes-simulated");
    }
    for index in 1..=moms.nodes {
        let name = format!("node{index}");
        let mom_args = [
            link_args(server),
            vec![
                "--name".to_string(),
                name.clone(),
                "--np".to_string(),
                moms.ppn.to_string(),
                "--mem".to_string(),
                moms.mem_bytes.to_string(),
                "--gpus".to_string(),
                gpu_backend(dir, &name, moms.gpus)?,
                "--spool".to_string(),
                dir.join("mom").join(&name).display().to_string(),
                "--tmpdir".to_string(),
                dir.join("tmp").display().to_string(),
                "--kill-delay".to_string(),
                moms.kill_delay.to_string(),
                "--kill-jobs-on-shutdown".to_string(),
                "--cgroup-slice".to_string(),
                cgroup_slice(dir, &name),
                "-v".to_string(),
            ],
            // Each mom's /metrics too; its port lands in <spool>/mom.http.
            if moms.http { vec!["--http".to_string(), "127.0.0.1:0".to_string()] } else { Vec::new() },
            moms.extra.clone(),
        ]
        .concat();
        spawn_logged(&program, &mom_args, dir, &name)?;
    }
    Ok(())
}

/// How a mom reaches the server: its socket, or its TCP port with MUNGE (and a mom port of
/// its own).
fn link_args(server: &ServerAddr) -> Vec<String> {
    match server {
        ServerAddr::Unix(socket) => vec!["--socket".to_string(), socket.display().to_string()],
        ServerAddr::Tcp { host, port, munge_socket } => vec![
            "--server".to_string(),
            format!("{host}:{port}"),
            "--listen".to_string(),
            "127.0.0.1:0".to_string(),
            "--munge-socket".to_string(),
            munge_socket.display().to_string(),
        ],
    }
}

fn spawn_logged(program: &Path, args: &[String], dir: &Path, name: &str) -> Result<(), String> {
    let mut command = Command::new(program);
    command.args(args);
    crate::minipbs_daemon::spawn_logged(command, dir, name)
}

/// The `--gpus` of node `name`'s mom: `0`, or a fake inventory of `count` GPUs written to
/// `<dir>/gpus/<name>.json` (the format of `mom/src/gpu/fake.rs`; UUIDs from the node name).
fn gpu_backend(dir: &Path, name: &str, count: u32) -> Result<String, String> {
    if count == 0 {
        return Ok("0".to_string());
    }
    let gpus_dir = dir.join("gpus");
    std::fs::create_dir_all(&gpus_dir).map_err(|error| format!("cannot create {}: {error}", gpus_dir.display()))?;
    let tag: u32 = name.bytes().fold(0x811c_9dc5, |hash, byte| (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193));
    let gpus: Vec<serde_json::Value> = (0..count)
        .map(|index| {
            serde_json::json!({
                "uuid": format!("GPU-{tag:08x}-0000-4000-8000-{index:012x}"),
                "name": "minipbs fake GPU",
                "pci_bus_id": format!("00000000:{:02X}:00.0", index + 1),
                "memory_total": 16u64 << 30,
                "memory_used": 0,
                "utilization": 0,
                "lost": false,
                "processes": [],
            })
        })
        .collect();
    let path = gpus_dir.join(format!("{name}.json"));
    let text = serde_json::to_string_pretty(&serde_json::json!({ "gpus": gpus })).expect("JSON of plain values");
    std::fs::write(&path, text + "\n").map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    Ok(format!("fake:{}", path.display()))
}

/// The cgroup slice of one mom of the cluster in `dir`: its own, so that clusters running side
/// by side on one host (tests) never limit or clean up each other's jobs. The directory's
/// device and inode make it unique while the directory exists.
pub fn cgroup_slice(dir: &Path, node: &str) -> String {
    use std::os::unix::fs::MetadataExt;
    let (dev, ino) = std::fs::metadata(dir).map_or((0, 0), |meta| (meta.dev(), meta.ino()));
    format!("minipbs-{dev:x}-{ino:x}-{node}.slice")
}
