//! Site-defined resources end to end (issue 13 item 8): an undefined resource is refused with
//! OpenPBS's `Unknown resource`; once a manager defines `gpu_type` and sets it on one node,
//! `select=1:ngpus=1:gpu_type=a100` runs only there (GPUs from the fake inventory), the
//! resource shows in `qstat -f`, `pbsnodes` and `qmgr list/print resource`, cannot be deleted
//! while a job names it, and survives a server restart.

use std::process::Output;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

fn qmgr(cluster: &Cluster, command: &str) -> Output {
    cluster.run("qmgr", &["-c", command])
}

fn qmgr_ok(cluster: &Cluster, command: &str) {
    let output = qmgr(cluster, command);
    assert!(output.status.success(), "qmgr -c {command:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// "exit N" and stderr.
fn refusal(output: &Output) -> String {
    format!("exit {}\n{}", output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr))
}

fn node_of(cluster: &Cluster, id: &str) -> String {
    let exec = wait_for(Duration::from_secs(20), &format!("{id} to start"), || cluster.job_attr(id, "exec_host"));
    exec.split('/').next().unwrap_or_default().to_string()
}

#[test]
fn a_defined_string_resource_selects_its_node() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 2, gpus: 1 });
    let gate = cluster.work.path().join("gate");
    let script = cluster.script("gpu.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", gate.display()));
    let qsub = |args: &[&str]| cluster.command("qsub").args(args).arg(&script).output().unwrap();

    let chunk = qsub(&["-l", "select=1:ngpus=1:gpu_type=a100"]);
    let job_wide = qsub(&["-l", "gpu_type=a100"]);
    insta::assert_snapshot!("undefined", format!("{}{}", refusal(&chunk), refusal(&job_wide)));
    assert_eq!(chunk.status.code(), Some(187), "PBSE_UNKRESC 15035 % 256");

    qmgr_ok(&cluster, "create resource gpu_type type=string,flag=h");
    qmgr_ok(&cluster, "create resource qos type=string");
    qmgr_ok(&cluster, "set node node2 resources_available.gpu_type = a100");
    qmgr_ok(&cluster, "set node node1 resources_available.gpu_type = v100");
    let shown = format!(
        "$ qmgr -c 'list resource'\n{}$ qmgr -c 'print resource gpu_type'\n{}$ qmgr -c 'create resource gpu_type'\n{}",
        String::from_utf8_lossy(&qmgr(&cluster, "list resource").stdout),
        String::from_utf8_lossy(&qmgr(&cluster, "print resource gpu_type").stdout),
        refusal(&qmgr(&cluster, "create resource gpu_type")),
    );
    insta::assert_snapshot!("qmgr", shown);
    let pbsnodes = String::from_utf8(cluster.run("pbsnodes", &["node2"]).stdout).unwrap();
    assert!(pbsnodes.contains("     resources_available.gpu_type = a100\n"), "{pbsnodes}");

    // Both want the one a100 GPU: the second waits although node1's GPU is free.
    let first = cluster.qsub(&script, &["-l", "select=1:ngpus=1:gpu_type=a100", "-l", "qos=high"]);
    let second = cluster.qsub(&script, &["-l", "select=1:ngpus=1:gpu_type=a100"]);
    assert_eq!(node_of(&cluster, &first), "node2");
    assert_eq!(cluster.job_attr(&first, "Resource_List.qos").as_deref(), Some("high"));
    let select = cluster.job_attr(&first, "Resource_List.select").unwrap_or_default();
    assert!(select.contains("gpu_type=a100"), "{select}");
    let other = cluster.qsub(&script, &["-l", "select=1:ngpus=1"]);
    assert_eq!(node_of(&cluster, &other), "node1", "a plain GPU job takes the v100");
    assert_eq!(cluster.job_attr(&second, "job_state").as_deref(), Some("Q"));
    let nowhere = cluster.command("qsub").args(["-l", "select=1:gpu_type=h100"]).arg(&script).output().unwrap();
    assert_eq!(nowhere.status.code(), Some(188), "{}", refusal(&nowhere));

    let busy = qmgr(&cluster, "delete resource gpu_type");
    insta::assert_snapshot!("busy", refusal(&busy));

    std::fs::write(&gate, "").unwrap();
    assert_eq!(node_of(&cluster, &second), "node2");
    for id in [&first, &second, &other] {
        cluster.wait_finished(id, Duration::from_secs(30));
    }

    // Definitions and node values are stored.
    let before = String::from_utf8(qmgr(&cluster, "print server").stdout).unwrap();
    assert!(before.starts_with("#\n# Create resources and set their properties.\n#\n"), "{before}");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL);
    cluster.start_server();
    wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    assert_eq!(String::from_utf8(qmgr(&cluster, "print server").stdout).unwrap(), before);
    let pbsnodes = String::from_utf8(cluster.run("pbsnodes", &["node2"]).stdout).unwrap();
    assert!(pbsnodes.contains("     resources_available.gpu_type = a100\n"), "{pbsnodes}");
    assert_eq!(cluster.job_attr(&first, "Resource_List.qos").as_deref(), Some("high"), "history jobs parse");
}

/// Host-level consumable (flag `nh`): two jobs of 60gb on a node of 100gb run one after the
/// other, the node shows what is held, and the hold survives a server restart.
#[test]
fn a_consumable_amount_is_held_until_the_job_ends() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let gate = cluster.work.path().join("gate");
    let script = cluster.script("hold.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", gate.display()));
    let quick = cluster.script("quick.sh", "true\n");
    qmgr_ok(&cluster, "create resource scratch type=size,flag=nh");
    qmgr_ok(&cluster, "set node node1 resources_available.scratch = 100gb");
    let assigned = || {
        let pbsnodes = String::from_utf8(cluster.run("pbsnodes", &["node1"]).stdout).unwrap();
        let line = pbsnodes.lines().find(|line| line.trim_start().starts_with("resources_assigned.scratch = "));
        line.map(|line| line.trim().to_string()).unwrap_or_else(|| format!("none in {pbsnodes}"))
    };
    assert_eq!(assigned(), "resources_assigned.scratch = 0kb");
    let too_much =
        cluster.command("qsub").args(["-l", "select=1:ncpus=1:scratch=101gb"]).arg(&script).output().unwrap();
    assert_eq!(too_much.status.code(), Some(188), "{}", refusal(&too_much));

    let first = cluster.qsub(&script, &["-l", "select=1:ncpus=1:scratch=60gb"]);
    node_of(&cluster, &first);
    let second = cluster.qsub(&script, &["-l", "select=1:ncpus=1:scratch=60gb"]);
    // A later job without scratch starts: the pass saw the second and left it queued.
    let plain = cluster.qsub(&quick, &["-l", "select=1:ncpus=1"]);
    cluster.wait_finished(&plain, Duration::from_secs(30));
    assert_eq!(cluster.job_attr(&second, "job_state").as_deref(), Some("Q"), "60gb + 60gb > 100gb");
    assert_eq!(assigned(), "resources_assigned.scratch = 62914560kb");

    // The server forgets everything but the store: the hold comes back from it.
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL);
    cluster.start_server();
    wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    let plain = cluster.qsub(&quick, &["-l", "select=1:ncpus=1"]);
    cluster.wait_finished(&plain, Duration::from_secs(30));
    assert_eq!(cluster.job_attr(&second, "job_state").as_deref(), Some("Q"), "still held after the restart");
    assert_eq!(assigned(), "resources_assigned.scratch = 62914560kb");

    std::fs::write(&gate, "").unwrap();
    cluster.wait_finished(&first, Duration::from_secs(30));
    node_of(&cluster, &second);
    cluster.wait_finished(&second, Duration::from_secs(30));
    wait_for(Duration::from_secs(10), "scratch to be given back", || {
        (assigned() == "resources_assigned.scratch = 0kb").then_some(())
    });
}

/// Server-level consumable (flag `q`): two jobs asking 3 of 4 licences run one after the other;
/// `qstat -Bf` shows what is held.
#[test]
fn server_licences_are_held_until_the_job_ends() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let gate = cluster.work.path().join("gate");
    let script = cluster.script("hold.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", gate.display()));
    let quick = cluster.script("quick.sh", "true\n");
    qmgr_ok(&cluster, "create resource lic type=long,flag=q");
    qmgr_ok(&cluster, "set server resources_available.lic = 4");
    let server = || String::from_utf8(cluster.run("qstat", &["-Bf"]).stdout).unwrap();
    assert!(server().contains("    resources_available.lic = 4\n"), "{}", server());
    let printed = String::from_utf8(qmgr(&cluster, "print server").stdout).unwrap();
    assert!(printed.contains("set server resources_available.lic = 4\n"), "{printed}");

    let first = cluster.qsub(&script, &["-l", "lic=3"]);
    node_of(&cluster, &first);
    let second = cluster.qsub(&script, &["-l", "lic=3"]);
    let plain = cluster.qsub(&quick, &[]);
    cluster.wait_finished(&plain, Duration::from_secs(30));
    assert_eq!(cluster.job_attr(&second, "job_state").as_deref(), Some("Q"), "3 + 3 > 4 licences");
    assert!(server().contains("    resources_assigned.lic = 3\n"), "{}", server());

    std::fs::write(&gate, "").unwrap();
    cluster.wait_finished(&first, Duration::from_secs(30));
    node_of(&cluster, &second);
    cluster.wait_finished(&second, Duration::from_secs(30));
}
