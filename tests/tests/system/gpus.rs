//! GPUs end to end with the fake inventory (`minipbs up --gpus N` writes one JSON file per
//! node, which the moms re-read on every poll): exclusive allocation, a process outside the
//! queue keeping a GPU out of use, a two-node GPU job, MPS shares, and `--gpus auto` on a
//! machine without NVML. Jobs that must overlap wait for a file the test creates, never for a
//! fixed time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tests::{wait_for, Cluster, Shape};

/// Fast GPU polling and a one-second foreign hold, for every mom.
const FAST: [&str; 2] = ["--mom-arg=--gpu-poll=200", "--mom-arg=--gpu-foreign-hold=1"];

fn gpu_cluster(nodes: u32, ppn: u32, gpus: u32) -> Cluster {
    Cluster::up_with(Shape { nodes, ppn, gpus }, &FAST)
}

fn fake_file(cluster: &Cluster, node: &str) -> PathBuf {
    cluster.state.path().join(format!("gpus/{node}.json"))
}

/// Lists `pid` (or nobody) as a process on GPU `index` of `node`'s fake inventory.
fn set_foreign(cluster: &Cluster, node: &str, index: usize, pid: Option<u32>) {
    let path = fake_file(cluster, node);
    let mut inventory: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let processes = match pid {
        Some(pid) => serde_json::json!([{ "pid": pid, "used_memory": 1u64 << 30 }]),
        None => serde_json::json!([]),
    };
    inventory["gpus"][index]["processes"] = processes;
    // Renamed into place: the mom never reads half a file.
    let partial = path.with_extension("json.new");
    std::fs::write(&partial, serde_json::to_string_pretty(&inventory).unwrap()).unwrap();
    std::fs::rename(&partial, &path).unwrap();
}

/// `gpu_use` of GPU `index` of `node` in `pbsnodes`' `gpu_status`.
fn gpu_field(cluster: &Cluster, node: &str, index: u32, field: &str) -> Option<String> {
    let output = cluster.run("pbsnodes", &[node]);
    let text = String::from_utf8_lossy(&output.stdout);
    let status = text.lines().find_map(|line| line.trim_start().strip_prefix("gpu_status = "))?;
    let entry = status.split(&format!("gpu[{index}]=")).nth(1)?.split(";gpu[").next()?;
    let prefix = format!("{field}=");
    entry.split(';').find_map(|pair| pair.strip_prefix(&prefix)).map(str::to_string)
}

fn wait_gpu(cluster: &Cluster, node: &str, index: u32, field: &str, wanted: &str) {
    let what = format!("{node} gpu[{index}] {field}={wanted}");
    wait_for(Duration::from_secs(15), &what, || (gpu_field(cluster, node, index, field)? == wanted).then_some(()));
}

/// A process outside the queue (stands for someone's python on the GPU); killed on drop.
struct Foreign(Child);

impl Foreign {
    fn start() -> Foreign {
        Foreign(Command::new("sleep").arg("600").spawn().expect("sleep runs"))
    }

    fn alive(&mut self) -> bool {
        self.0.try_wait().unwrap().is_none()
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// A job script that records `start device` in `record`, waits for `gate` to exist, then
/// records `end device`.
fn gated_script(cluster: &Cluster, name: &str, resources: &str, record: &Path, gate: &Path) -> PathBuf {
    cluster.script(
        name,
        &format!(
            "#PBS -l {resources}\n\
             echo \"start $(date +%s.%N) $CUDA_VISIBLE_DEVICES $CUDA_MPS_ACTIVE_THREAD_PERCENTAGE\" >> {record}\n\
             while [ ! -e {gate} ]; do sleep 0.1; done\n\
             echo \"end $(date +%s.%N) $CUDA_VISIBLE_DEVICES\" >> {record}\n",
            record = record.display(),
            gate = gate.display()
        ),
    )
}

/// `(kind, time, device)` lines of a record.
fn records(path: &Path) -> Vec<(String, f64, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            Some((fields.next()?.to_string(), fields.next()?.parse().ok()?, fields.next().unwrap_or("").to_string()))
        })
        .collect()
}

fn job_state(cluster: &Cluster, id: &str) -> String {
    cluster.job_attr(id, "job_state").unwrap_or_default()
}

fn wait_state(cluster: &Cluster, id: &str, wanted: &str) {
    wait_for(Duration::from_secs(30), &format!("{id} in state {wanted}"), || {
        (job_state(cluster, id) == wanted).then_some(())
    });
}

#[test]
fn eight_single_gpu_jobs_share_four_gpus_one_job_per_gpu() {
    let cluster = gpu_cluster(1, 8, 4);
    let record = cluster.work.path().join("intervals");
    let script = cluster.script(
        "one_gpu.sh",
        &format!(
            "#PBS -l nodes=1:ppn=1:gpus=1\nstart=$(date +%s.%N)\nsleep 2\n\
             echo \"$start $(date +%s.%N) $CUDA_VISIBLE_DEVICES $CUDA_DEVICE_ORDER\" >> {}\n",
            record.display()
        ),
    );
    let ids: Vec<String> = (0..8).map(|_| cluster.qsub(&script, &[])).collect();
    for id in &ids {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(60)), 0, "{}", cluster.logs());
    }
    let text = std::fs::read_to_string(&record).unwrap();
    let spans: Vec<(f64, f64, String)> = text
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields.len(), 4, "one device and PCI_BUS_ID per job: {line:?}");
            assert_eq!(fields[3], "PCI_BUS_ID");
            (fields[0].parse().unwrap(), fields[1].parse().unwrap(), fields[2].to_string())
        })
        .collect();
    assert_eq!(spans.len(), 8, "{text}");
    let devices: std::collections::BTreeSet<&str> = spans.iter().map(|span| span.2.as_str()).collect();
    assert_eq!(devices.into_iter().collect::<Vec<_>>(), ["0", "1", "2", "3"], "{text}");
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            let overlap = a.0 < b.1 && b.0 < a.1;
            assert!(!(overlap && a.2 == b.2), "two running jobs shared GPU {}: {text}", a.2);
        }
        let running_at_start = spans.iter().filter(|b| b.0 <= a.0 && a.0 < b.1).count();
        assert!(running_at_start <= 4, "more than four GPU jobs at once: {text}");
    }
    let first = spans.iter().map(|span| span.0).fold(f64::MAX, f64::min);
    let together = spans.iter().filter(|span| span.0 < first + 1.5).count();
    assert_eq!(together, 4, "four jobs started at once, the others as GPUs freed up: {text}");
}

#[test]
fn a_gpu_used_outside_the_queue_is_skipped_until_free_for_the_hold_time() {
    let cluster = gpu_cluster(1, 8, 4);
    let (record, gate) = (cluster.work.path().join("record"), cluster.work.path().join("gate"));
    let script = gated_script(&cluster, "gated.sh", "nodes=1:ppn=1:gpus=1", &record, &gate);
    let first = cluster.qsub(&script, &[]);
    wait_state(&cluster, &first, "R");
    wait_gpu(&cluster, "node1", 0, "gpu_use", "job");
    let mut foreign = Foreign::start();
    set_foreign(&cluster, "node1", 2, Some(foreign.0.id()));
    wait_gpu(&cluster, "node1", 2, "gpu_use", "busy-foreign");
    let later: Vec<String> = (0..3).map(|_| cluster.qsub(&script, &[])).collect();
    wait_state(&cluster, &later[0], "R");
    wait_state(&cluster, &later[1], "R");
    assert_eq!(job_state(&cluster, &later[2]), "Q", "GPU 2 is busy: the third waits\n{}", cluster.logs());
    assert_eq!(job_state(&cluster, &first), "R", "the running job is untouched");
    assert!(foreign.alive(), "minipbs never kills a foreign process");
    // The foreign process lets go of the GPU: after the hold time the waiting job gets it.
    set_foreign(&cluster, "node1", 2, None);
    let released = now();
    wait_state(&cluster, &later[2], "R");
    std::fs::write(&gate, "").unwrap();
    for id in std::iter::once(&first).chain(&later) {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(30)), 0);
    }
    let starts: Vec<(f64, String)> =
        records(&record).into_iter().filter(|r| r.0 == "start").map(|r| (r.1, r.2)).collect();
    assert_eq!(starts.len(), 4);
    let on_gpu2: Vec<f64> = starts.iter().filter(|(_, device)| device == "2").map(|(time, _)| *time).collect();
    assert_eq!(on_gpu2.len(), 1, "only the last job ran on GPU 2: {starts:?}");
    assert!(
        on_gpu2[0] >= released + 0.9,
        "GPU 2 was handed out before the hold time passed: {starts:?} released {released}"
    );
    assert!(foreign.alive(), "minipbs never kills a foreign process");
}

#[test]
fn a_two_node_gpu_job_gets_two_gpus_on_each_node_listed_in_the_gpufile() {
    let cluster = gpu_cluster(2, 4, 4);
    // GPU 0 of node2 is in use outside the queue: node2's share must be GPUs 1 and 2.
    let foreign = Foreign::start();
    set_foreign(&cluster, "node2", 0, Some(foreign.0.id()));
    wait_gpu(&cluster, "node2", 0, "gpu_use", "busy-foreign");
    let gate = cluster.work.path().join("gate");
    let script = cluster.script(
        "two_nodes.sh",
        &format!(
            "#PBS -l nodes=2:ppn=2:gpus=2\n\
             echo \"GPUFILE $(cat $PBS_GPUFILE | tr '\\n' ' ')\"\n\
             echo \"CUDA [$CUDA_VISIBLE_DEVICES] $CUDA_DEVICE_ORDER\"\n\
             while [ ! -e {} ]; do sleep 0.1; done\n",
            gate.display()
        ),
    );
    let id = cluster.qsub(&script, &[]);
    wait_state(&cluster, &id, "R");
    // pbsnodes shows which GPUs the job holds on each node.
    for (node, gpus) in [("node1", [0, 1]), ("node2", [1, 2])] {
        for index in gpus {
            wait_gpu(&cluster, node, index, "gpu_jobs", &id);
            wait_gpu(&cluster, node, index, "gpu_use", "job");
        }
    }
    assert_eq!(gpu_field(&cluster, "node2", 3, "gpu_use").as_deref(), Some("free"));
    let exec_gpus = cluster.job_attr(&id, "exec_gpus");
    assert_eq!(exec_gpus.as_deref(), Some("node1-gpu/0+node1-gpu/1+node2-gpu/1+node2-gpu/2"));
    std::fs::write(&gate, "").unwrap();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let output_path = cluster.work.path().join(format!("two_nodes.sh.o{seq}"));
    let output = wait_for(Duration::from_secs(10), "output", || std::fs::read_to_string(&output_path).ok());
    assert!(output.contains("GPUFILE node1-gpu0 node1-gpu1 node2-gpu1 node2-gpu2 \n"), "{output}");
    assert!(output.contains("CUDA [0,1] PCI_BUS_ID\n"), "the mother superior sees its own two GPUs: {output}");
    // Released GPUs come back free.
    wait_gpu(&cluster, "node2", 1, "gpu_use", "free");
}

#[test]
fn four_quarter_mps_shares_run_together_and_another_user_waits() {
    if !tests::root_or_skip("four_quarter_mps_shares_run_together_and_another_user_waits", "to create a user") {
        return;
    }
    let cluster = gpu_cluster(1, 8, 1);
    let (record, gate) = (cluster.work.path().join("record"), cluster.work.path().join("gate"));
    let script = gated_script(&cluster, "mps.sh", "nodes=1:ppn=1:gpus=1:mps=25", &record, &gate);
    let mine: Vec<String> = (0..5).map(|_| cluster.qsub(&script, &[])).collect();
    for id in &mine[..4] {
        wait_state(&cluster, id, "R");
    }
    wait_gpu(&cluster, "node1", 0, "gpu_use", "shared");
    let other = crate::users::TestUser::create("mps");
    let other_record = cluster.work.path().join("other_record");
    let other_script = gated_script(&cluster, "other.sh", "select=1:ncpus=1:ngpus=1:mps=25", &other_record, &gate);
    let output = crate::users::as_user(&cluster, &other, "qsub").arg(&other_script).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let theirs = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert_eq!(job_state(&cluster, &mine[4]), "Q", "a fifth share would pass 100 %");
    assert_eq!(job_state(&cluster, &theirs), "Q", "another user's share never joins");
    assert_eq!(gpu_field(&cluster, "node1", 0, "gpu_mps").as_deref(), Some("root:100%"));
    std::fs::write(&gate, "").unwrap();
    for id in mine.iter().chain(std::iter::once(&theirs)) {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(60)), 0, "{}", cluster.logs());
    }
    let starts: Vec<String> = records(&record).into_iter().filter(|r| r.0 == "start").map(|r| r.2).collect();
    assert_eq!(starts.len(), 5);
    let mine_end = records(&record).into_iter().filter(|r| r.0 == "end").map(|r| r.1).fold(0.0, f64::max);
    let theirs_start = records(&other_record).into_iter().find(|r| r.0 == "start").map(|r| r.1).unwrap();
    assert!(theirs_start >= mine_end, "the other user's share started while the first user's ran");
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.lines().filter(|line| line.starts_with("start")).all(|line| line.ends_with(" 25")), "{text}");
    // The MPS daemon was started for a GPU's first share and stopped after its last: starts
    // and stops alternate, and the other user's share (which never ran beside the first
    // user's) needed a start of its own. The first user's fifth share may or may not have
    // joined the first four before they all ended, so there are two or three pairs.
    let commands = std::fs::read_to_string(fake_file(&cluster, "node1").with_extension("json.commands")).unwrap();
    let kinds: Vec<&str> = commands
        .lines()
        .map(|line| {
            if line.contains("echo quit |") {
                "stop"
            } else if line.ends_with("nvidia-cuda-mps-control -d") {
                "start"
            } else {
                "other"
            }
        })
        .collect();
    let pairs = kinds.len() / 2;
    assert!(kinds.len().is_multiple_of(2) && (2..=3).contains(&pairs), "{commands}");
    assert!(kinds.chunks(2).all(|pair| pair == ["start", "stop"]), "{commands}");
}

#[test]
fn gpus_auto_without_nvml_starts_the_mom_with_no_gpus_and_says_why() {
    let nvml_present = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
        .iter()
        .any(|dir| Path::new(dir).join("libnvidia-ml.so.1").exists());
    if nvml_present {
        tests::skip("gpus_auto_without_nvml...: this machine has libnvidia-ml.so.1");
        return;
    }
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let spool = cluster.state.path().join("mom/node9");
    let mut argv = cluster.daemon_argv("node1");
    for (flag, value) in
        [("--name", "node9".to_string()), ("--gpus", "auto".into()), ("--spool", spool.display().to_string())]
    {
        let at = argv.iter().position(|arg| arg == flag).unwrap();
        argv[at + 1] = value;
    }
    cluster.spawn_daemon("node9", &argv);
    wait_for(Duration::from_secs(20), "node9 free", || {
        let output = cluster.run("pbsnodes", &["node9"]);
        String::from_utf8_lossy(&output.stdout).contains("     state = free").then_some(())
    });
    let output = cluster.run("pbsnodes", &["node9"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("     resources_available.ngpus = 0\n"), "{text}");
    assert!(!text.contains("gpu_status"), "{text}");
    let log = std::fs::read_to_string(cluster.state.path().join("logs/node9.log")).unwrap();
    let line = log.lines().find(|line| line.contains("libnvidia-ml.so.1")).unwrap_or_else(|| panic!("{log}"));
    assert!(line.contains("none"), "the log says no GPUs are used: {line}");
}
