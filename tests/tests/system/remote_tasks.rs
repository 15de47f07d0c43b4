//! Tasks on a job's other node through the moms, with no sshd anywhere (two namespace hosts,
//! the [`TwoHosts`] fixture of `mpi.rs`): `pbs_tmrsh <other node> hostname` inside a job prints
//! that node's name, passes the task's exit status on and refuses a host outside the job;
//! outside a job it is refused. `pbsdsh` in a `nodes=2:ppn=2` job starts one task per slot
//! (4 distinct `PBS_NODENUM PBS_TASKNUM` lines); `resources_used.cput` of a job that burns CPU
//! on both nodes through pbsdsh counts both. And `examples/ddp.sh` (PyTorch gloo all-reduce over
//! two nodes, `pbsdsh -u torchrun`) when a torch is at hand (see [`torch_venv`]).
//!
//! Owns: these checks. Must not know the moms' internals: only what a user sees.

use crate::mpi::{TwoHosts, HOSTS};
use std::path::{Path, PathBuf};
use std::process::Stdio;

#[test]
fn pbs_tmrsh_runs_on_the_other_node_inside_a_job_and_is_refused_outside() {
    let Some(hosts) = TwoHosts::up("tr") else { return };
    let script = hosts.script(
        "tmrsh.sh",
        &["-l nodes=2:ppn=1"],
        "other=$(sort -u \"$PBS_NODEFILE\" | grep -vx \"$(hostname)\")\n\
         echo \"here=$(hostname) other=$other\"\n\
         echo \"remote=$(pbs_tmrsh \"$other\" hostname)\"\n\
         pbs_tmrsh \"$other\" exit 3; echo \"status=$?\"\n\
         pbs_tmrsh -n -l \"$(id -un)\" \"$other\" echo with options; echo \"options=$?\"\n\
         pbs_tmrsh testsrv hostname; echo \"foreign=$?\"",
    );
    let id = hosts.submit(&script);
    let (attrs, output) = hosts.finished(&id);
    let report = format!("job output:\n{output}\n{attrs:?}\n{}", hosts.cluster.logs());
    let value = |name: &str| output.lines().find_map(|line| line.strip_prefix(&format!("{name}="))).map(str::to_string);
    let here_line = output.lines().find(|line| line.starts_with("here=")).unwrap_or_default();
    let other = here_line.split("other=").nth(1).unwrap_or_default().to_string();
    assert!(HOSTS.contains(&other.as_str()) && !here_line.starts_with(&format!("here={other} ")), "{report}");
    assert_eq!(value("remote"), Some(other.clone()), "pbs_tmrsh {other} hostname\n{report}");
    assert_eq!(value("status").as_deref(), Some("3"), "the task's exit status\n{report}");
    assert!(output.contains("with options\n"), "ssh-style options -n -l <self>\n{report}");
    assert_eq!(value("options").as_deref(), Some("0"), "{report}");
    let foreign = value("foreign").and_then(|status| status.parse::<i32>().ok());
    assert!(foreign.is_some_and(|status| status != 0), "a host outside the job was not refused\n{report}");

    // Outside any job: refused, with a message, and nothing runs.
    let output = hosts.as_user("pbs_tmrsh").args(["hostb", "hostname"]).stdin(Stdio::null()).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "pbs_tmrsh outside a job succeeded: {output:?}");
    assert!(stderr.contains("pbs_tmrsh"), "no message naming pbs_tmrsh: {stderr:?}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("hostb"), "it ran: {output:?}");
}

#[test]
fn pbsdsh_starts_one_task_per_slot_on_both_nodes() {
    let Some(hosts) = TwoHosts::up("ds") else { return };
    let script = hosts.script(
        "dsh.sh",
        &["-l nodes=2:ppn=2"],
        "pbsdsh -- sh -c 'echo \"task $PBS_NODENUM $PBS_TASKNUM $(hostname)\"; \
         echo \"cgroup $PBS_NODENUM $(grep :memory: /proc/self/cgroup)\"'\necho \"pbsdsh=$?\"",
    );
    let id = hosts.submit(&script);
    let (attrs, output) = hosts.finished(&id);
    let report = format!("job output:\n{output}\n{attrs:?}\n{}", hosts.cluster.logs());
    let mother = attrs.get("exec_host").and_then(|hosts| hosts.split('/').next()).unwrap_or_default().to_string();
    let mut tasks: Vec<&str> = output.lines().filter(|line| line.starts_with("task ")).collect();
    tasks.sort();
    tasks.dedup();
    assert_eq!(tasks.len(), 4, "4 distinct task lines\n{report}");
    let on = |node_num: &str| tasks.iter().filter(|line| line.split(' ').nth(1) == Some(node_num)).count();
    assert_eq!((on("0"), on("1")), (2, 2), "two tasks on each node\n{report}");
    for line in &tasks {
        let words: Vec<&str> = line.split(' ').collect();
        let host_is_mother = words.get(3) == Some(&mother.as_str());
        assert_eq!(words.get(1) == Some(&"0"), host_is_mother, "PBS_NODENUM 0 is the mother superior\n{report}");
    }
    assert!(output.contains("pbsdsh=0\n"), "{report}");
    // Every task, on the sister too, runs inside the job's cgroup on its node (v1 here).
    let cgroups: Vec<&str> = output.lines().filter(|line| line.starts_with("cgroup ")).collect();
    assert_eq!(cgroups.len(), 4, "{report}");
    for line in cgroups {
        assert!(line.ends_with(&format!("/{id}")), "a task outside the job's cgroup: {line}\n{report}");
    }
}

/// Parses `HH:MM:SS` (as `resources_used.cput` shows it) into seconds.
fn seconds(duration: &str) -> Option<u64> {
    let parts: Vec<u64> = duration.split(':').map(|part| part.parse().ok()).collect::<Option<_>>()?;
    match parts.as_slice() {
        [hours, minutes, seconds] => Some(hours * 3600 + minutes * 60 + seconds),
        _ => None,
    }
}

#[test]
fn cput_of_a_two_node_job_counts_both_nodes() {
    let Some(hosts) = TwoHosts::up("cp") else { return };
    // Each task burns 3 s of CPU (not of wall time: the limit holds on a loaded machine too)
    // and is killed by SIGXCPU; the script itself burns nothing.
    let script = hosts.script(
        "burn.sh",
        &["-l nodes=2:ppn=1"],
        "pbsdsh -- sh -c 'ulimit -t 3; while :; do :; done'\necho \"pbsdsh=$?\"",
    );
    let id = hosts.submit(&script);
    let (attrs, output) = hosts.finished(&id);
    let report = format!("job output:\n{output}\n{attrs:?}\n{}", hosts.cluster.logs());
    assert!(output.lines().any(|line| line.starts_with("pbsdsh=")), "{report}");
    let cput = attrs.get("resources_used.cput").and_then(|value| seconds(value));
    assert!(cput.is_some_and(|cput| cput >= 5), "cput {cput:?} is not the sum of two nodes' 3 s\n{report}");
}

#[test]
fn cput_durations_parse() {
    assert_eq!(seconds("01:02:03"), Some(3723));
    assert_eq!(seconds("00:00:06"), Some(6));
    assert_eq!(seconds("6"), None);
    assert_eq!(seconds("a:b:c"), None);
}

/// A virtualenv (or prefix) whose `bin/` has `torchrun` and a `python3` that imports
/// `torch.distributed`: `MINIPBS_TORCH_VENV`, else the one of the `torchrun` on `PATH`.
/// `None` when there is none. `.ci/run` installs PyPI's torch (the CUDA build, which runs on CPU
/// with gloo: about 5 GB and 2-3 minutes, kept in the target directory; docs/testbed.md) and
/// names it in `MINIPBS_TORCH_VENV`.
fn torch_venv() -> Option<PathBuf> {
    let venv = std::env::var_os("MINIPBS_TORCH_VENV").map(PathBuf::from).or_else(|| {
        let path = std::env::var_os("PATH")?;
        let bin = std::env::split_paths(&path).find(|dir| dir.join("torchrun").is_file())?;
        bin.parent().map(Path::to_path_buf)
    })?;
    let python = venv.join("bin/python3");
    let imports = std::process::Command::new(&python).args(["-c", "import torch.distributed"]).output();
    (imports.is_ok_and(|output| output.status.success()) && venv.join("bin/torchrun").is_file()).then_some(venv)
}

/// `examples/ddp.sh` as written for users: 2 nodes, `pbsdsh -u torchrun`, 2 processes each,
/// gloo on CPU: every rank of 4 prints the all-reduced sum 1+2+3+4.
#[test]
fn pytorch_ddp_example_all_reduces_over_two_nodes_when_torch_is_at_hand() {
    let Some(venv) = torch_venv() else {
        // A failure under CI, which installs torch (.ci/run); elsewhere a skip that says so.
        tests::skip("no torch (set MINIPBS_TORCH_VENV to a virtualenv with torch to run it)");
        return;
    };
    let Some(hosts) = TwoHosts::up("dd") else { return };
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for file in ["ddp.py", "ddp.sh"] {
        std::fs::copy(examples.join(file), hosts.cluster.work.join(file)).unwrap();
    }
    let example = std::fs::read_to_string(examples.join("ddp.sh")).unwrap();
    // The example as is, its commands after the line that puts the minipbs commands in PATH.
    let directives: Vec<&str> = example.lines().filter_map(|line| line.strip_prefix("#PBS ")).collect();
    let body: Vec<&str> = example.lines().filter(|line| !line.starts_with("#!") && !line.starts_with("#PBS")).collect();
    let script = hosts.script("ddp-job.sh", &directives, &body.join("\n"));
    let output = hosts
        .as_user("qsub")
        .args(["-j", "oe", "-v", &format!("TORCH_VENV={}", venv.display())])
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "qsub: {}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let (attrs, output) = hosts.finished(&id);
    let report = format!("job output:\n{output}\n{attrs:?}\n{}", hosts.cluster.logs());
    let mut ranks: Vec<&str> = output.lines().filter(|line| line.starts_with("ddp rank ")).collect();
    ranks.sort();
    assert_eq!(ranks.len(), 4, "{report}");
    for (rank, line) in ranks.iter().enumerate() {
        assert!(line.starts_with(&format!("ddp rank {rank} of 4 on ")), "{line}\n{report}");
        assert!(line.ends_with(" all_reduce 10 ok"), "{line}\n{report}");
    }
    let hosts_seen: std::collections::BTreeSet<&str> = ranks.iter().filter_map(|line| line.split(' ').nth(6)).collect();
    assert_eq!(hosts_seen.len(), 2, "ranks on two hosts\n{report}");
}
