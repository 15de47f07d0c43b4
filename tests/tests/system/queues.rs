//! Several queues end to end: qmgr creates and configures them, qsub and qmove honour their
//! checks, qstat -Q/-B shows them, queue priority and per-user run limits decide what starts,
//! and the configuration survives a server restart.

use crate::users::{as_user, TestUser};
use std::process::Output;
use std::time::Duration;
use tests::{Cluster, Shape};

fn qmgr(cluster: &Cluster, command: &str) -> Output {
    cluster.run("qmgr", &["-c", command])
}

fn qmgr_ok(cluster: &Cluster, command: &str) {
    let output = qmgr(cluster, command);
    assert!(output.status.success(), "qmgr -c {command:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// "exit N" and stderr, for snapshots of refusals.
fn refusal(output: &Output) -> String {
    format!("exit {}\n{}", output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr))
}

fn job_state(cluster: &Cluster, id: &str) -> String {
    cluster.job_attr(id, "job_state").unwrap_or_default()
}

/// A script that waits for `flag` to exist.
fn waiting_script(cluster: &Cluster, name: &str, flag: &std::path::Path) -> std::path::PathBuf {
    cluster.script(name, &format!("while [ ! -e {} ]; do sleep 0.1; done\n", flag.display()))
}

#[test]
fn second_queue_checks_and_displays() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    qmgr_ok(&cluster, "create queue short queue_type=execution,enabled=true,started=true,Priority=10");
    qmgr_ok(&cluster, "set queue short resources_max.walltime = 1:00:00, resources_default.walltime = 10:00");
    let script = cluster.script("q.sh", "true\n");
    let held = cluster.qsub(&script, &["-q", "short", "-h"]);
    assert_eq!(cluster.job_attr(&held, "queue").as_deref(), Some("short"));
    assert_eq!(cluster.job_attr(&held, "Resource_List.walltime").as_deref(), Some("00:10:00"), "queue default");

    let submit = |extra: &[&str]| cluster.command("qsub").args(extra).arg(&script).output().unwrap();
    let unknown = submit(&["-q", "nosuch"]);
    let too_long = submit(&["-q", "short", "-l", "walltime=2:00:00"]);
    qmgr_ok(&cluster, "s q short enabled = false");
    let disabled = submit(&["-q", "short"]);
    insta::assert_snapshot!(
        "qsub_refusals",
        format!("{}{}{}", refusal(&unknown), refusal(&too_long), refusal(&disabled))
    );
    assert_eq!(disabled.status.code(), Some(173));

    let qstat_q = cluster.run("qstat", &["-Q"]);
    insta::assert_snapshot!("qstat_Q", String::from_utf8_lossy(&qstat_q.stdout));
    let print = qmgr(&cluster, "print server");
    insta::assert_snapshot!("print_server", String::from_utf8_lossy(&print.stdout));
    let list = qmgr(&cluster, "list queue short");
    insta::assert_snapshot!("list_queue", String::from_utf8_lossy(&list.stdout));

    // qmgr's errors: unknown queue, unknown attribute, bad value, syntax.
    let errors: String = [
        "set queue nosuch enabled=true",
        "set queue short bogus = 1",
        "set queue short max_run = lots",
        "set queue short enabled true",
    ]
    .iter()
    .map(|command| format!("$ qmgr -c {command:?}\n{}", refusal(&qmgr(&cluster, command))))
    .collect();
    insta::assert_snapshot!("qmgr_errors", errors);

    // Commands on stdin, one per line (with a comment and two commands on one line).
    let mut child = cluster
        .command("qmgr")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let commands = "# raise it\nset queue short Priority = 20; set queue short acl_users = alice\nlist queue short Priority,acl_users\n";
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), commands.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Max open servers: 49\nQueue short\n    Priority = 20\n    acl_users = alice\n\n"
    );

    // qmove: into the re-enabled queue within its limits, refused beyond them.
    qmgr_ok(&cluster, "set queue short enabled = true");
    let long = cluster.qsub(&script, &["-h", "-l", "walltime=5:00:00"]);
    let output = cluster.run("qmove", &["short", &long]);
    assert_eq!(output.status.code(), Some(188), "{}", String::from_utf8_lossy(&output.stderr));
    let quick = cluster.qsub(&script, &["-h", "-l", "walltime=5:00"]);
    let output = cluster.run("qmove", &["short", &quick]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.job_attr(&quick, "queue").as_deref(), Some("short"));
}

#[test]
fn queue_priority_decides_which_job_runs_first_on_a_full_cluster() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    qmgr_ok(&cluster, "create queue high queue_type=execution,enabled=true,started=true,Priority=100");
    let go = cluster.work.path().join("go");
    let hold = cluster.work.path().join("hold");
    let blocker = cluster.qsub(&waiting_script(&cluster, "blocker.sh", &go), &[]);
    tests::wait_for(Duration::from_secs(30), "the blocker to run", || {
        (job_state(&cluster, &blocker) == "R").then_some(())
    });
    let waiting = waiting_script(&cluster, "later.sh", &hold);
    let low = cluster.qsub(&waiting, &[]);
    let high = cluster.qsub(&waiting, &["-q", "high"]);
    std::fs::write(&go, "").unwrap();
    tests::wait_for(Duration::from_secs(30), "the next job to start", || {
        (job_state(&cluster, &high) == "R" || job_state(&cluster, &low) == "R").then_some(())
    });
    assert_eq!(job_state(&cluster, &high), "R", "the later job of the higher-priority queue runs first");
    assert_eq!(job_state(&cluster, &low), "Q");
    std::fs::write(&hold, "").unwrap();
    assert_eq!(cluster.wait_finished(&low, Duration::from_secs(30)), 0);
}

#[test]
fn a_sweep_under_a_per_user_run_limit_does_not_starve_another_user() {
    if !tests::root_or_skip("a_sweep_under_a_per_user_run_limit_does_not_starve_another_user", "to create users") {
        return;
    }
    let other = TestUser::create("q");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    // A non-manager cannot change the configuration.
    let output = as_user(&cluster, &other, "qmgr").args(["-c", "create queue shared"]).output().unwrap();
    insta::assert_snapshot!("not_a_manager", refusal(&output));
    qmgr_ok(&cluster, "create queue shared queue_type=execution,enabled=true,started=true");
    qmgr_ok(&cluster, "set queue shared max_run = [u:PBS_GENERIC=2]");
    let done = cluster.work.path().join("done");
    let script = waiting_script(&cluster, "sweep.sh", &done);
    let sweep: Vec<String> = (0..20).map(|_| cluster.qsub(&script, &["-q", "shared"])).collect();
    let output = as_user(&cluster, &other, "qsub").args(["-q", "shared"]).arg(&script).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let theirs = String::from_utf8(output.stdout).unwrap().trim().to_string();
    tests::wait_for(Duration::from_secs(30), "the other user's job to start", || {
        (job_state(&cluster, &theirs) == "R").then_some(())
    });
    let states: Vec<String> = sweep.iter().map(|id| job_state(&cluster, id)).collect();
    assert_eq!(states.iter().filter(|state| *state == "R").count(), 2, "{states:?}");
    assert_eq!(states.iter().filter(|state| *state == "Q").count(), 18, "the sweep is still queued: {states:?}");
    // With query_other_jobs = False the other user sees only their own job.
    qmgr_ok(&cluster, "set server query_other_jobs = false");
    let output = as_user(&cluster, &other, "qstat").output().unwrap();
    let listed: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .skip(2)
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect();
    assert_eq!(listed, std::slice::from_ref(&theirs));
    let output = as_user(&cluster, &other, "qstat").arg(&sweep[0]).output().unwrap();
    assert_eq!(output.status.code(), Some(159), "{}", String::from_utf8_lossy(&output.stderr));
    std::fs::write(&done, "").unwrap();
    assert_eq!(cluster.wait_finished(&theirs, Duration::from_secs(30)), 0);
}

#[test]
fn settings_survive_a_server_restart() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    qmgr_ok(&cluster, "create queue batch queue_type=execution,enabled=true,started=true,max_run=[u:PBS_GENERIC=3]");
    qmgr_ok(&cluster, "set server default_queue = batch, query_other_jobs = false, managers += admin@*");
    qmgr_ok(&cluster, "set queue workq enabled = false");
    qmgr_ok(&cluster, "delete queue workq");
    let before = String::from_utf8(qmgr(&cluster, "print server").stdout).unwrap();
    assert!(before.contains("create queue batch") && !before.contains("create queue workq"), "{before}");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL);
    cluster.start_server();
    tests::wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    let after = String::from_utf8(qmgr(&cluster, "print server").stdout).unwrap();
    assert_eq!(after, before);
    let id = cluster.qsub(&cluster.script("d.sh", "true\n"), &[]);
    assert_eq!(cluster.job_attr(&id, "queue").as_deref(), Some("batch"), "the stored default queue");
}
