//! The server dies and comes back: nothing that was acknowledged is lost, and running jobs
//! keep running and are reconciled.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tests::{Cluster, Shape};

fn kill9(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
}

fn wait_server_up(cluster: &Cluster) {
    tests::wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
}

#[test]
fn kill_9_during_concurrent_submits_loses_no_printed_id() {
    let cluster = Arc::new(Cluster::up(Shape { nodes: 2, ppn: 4, gpus: 0 }));
    let script = cluster.script("quick.sh", "true\n");
    let printed = Arc::new(AtomicUsize::new(0));
    let submitters = tests::submit_concurrently(&cluster, &script, 8, 25, &printed);
    tests::wait_for(Duration::from_secs(60), "some submissions", || {
        (printed.load(Ordering::SeqCst) >= 40).then_some(())
    });
    kill9(cluster.server_pid());
    let ids: Vec<String> = submitters.into_iter().flat_map(|handle| handle.join().unwrap()).collect();
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "an id was printed twice: {ids:?}");
    assert!(ids.len() >= 40 && ids.len() < 200, "the kill happened mid-way ({} ids)", ids.len());
    cluster.start_server();
    wait_server_up(&cluster);
    let output = cluster.run("qstat", &["-x"]);
    let listing = String::from_utf8_lossy(&output.stdout);
    let listed: HashSet<&str> = listing.lines().skip(2).filter_map(|line| line.split_whitespace().next()).collect();
    for id in &ids {
        assert!(listed.contains(id.as_str()), "{id} was printed but is gone after the restart\n{listing}");
    }
}

#[test]
fn running_job_survives_a_server_restart() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let flag = cluster.work.path().join("go");
    let script =
        cluster.script("survivor.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\nexit 7\n", flag.display()));
    let id = cluster.qsub(&script, &[]);
    tests::wait_for(Duration::from_secs(20), "the job to run", || {
        (cluster.job_attr(&id, "job_state")? == "R").then_some(())
    });
    kill9(cluster.server_pid());
    cluster.start_server();
    wait_server_up(&cluster);
    // The restarted server knows its nodes from the store, whether or not their moms are back.
    let big = cluster.script("big.sh", "true\n");
    let output = cluster.command("qsub").args(["-l", "nodes=1:ppn=64"]).arg(&big).output().unwrap();
    assert_eq!(output.status.code(), Some(188), "{}", String::from_utf8_lossy(&output.stderr));
    let nodes = cluster.run("pbsnodes", &["-a"]);
    assert!(String::from_utf8_lossy(&nodes.stdout).lines().any(|line| line == "node1"));
    std::fs::write(&flag, "").unwrap();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 7, "{}", cluster.logs());
}

#[test]
fn a_restarted_mom_ends_what_its_predecessor_left_running() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let runs = cluster.work.path().join("runs");
    let flag = cluster.work.path().join("go");
    let script = cluster.script(
        "rerun.sh",
        &format!("echo $$ >> {}\nwhile [ ! -e {} ]; do sleep 0.1; done\n", runs.display(), flag.display()),
    );
    let id = cluster.qsub(&script, &[]);
    let count_runs = || std::fs::read_to_string(&runs).unwrap_or_default().lines().count();
    tests::wait_for(Duration::from_secs(20), "the first run", || (count_runs() == 1).then_some(()));
    let argv = cluster.daemon_argv("node1");
    kill9(cluster.daemon_pid("node1"));
    cluster.spawn_daemon("node1", &argv);
    // The old copy is killed; the server requeues the job (rerunnable) and it runs again.
    tests::wait_for(Duration::from_secs(30), "the second run", || (count_runs() == 2).then_some(()));
    let first_shell = std::fs::read_to_string(&runs).unwrap().lines().next().unwrap().to_string();
    assert!(tests::process_gone(first_shell.parse().unwrap()), "the first run's shell {first_shell} still runs");
    std::fs::write(&flag, "").unwrap();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    assert_eq!(cluster.job_attr(&id, "run_count").as_deref(), Some("2"));
    assert_eq!(count_runs(), 2, "only the second copy ran on");
}

/// The server's resident memory, from `/proc/<pid>/status`, in KiB.
fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Issue 12 item 8: job scripts are kept in the store, not in the server's memory, so a
/// restart with many large queued scripts (here 48 of 4 MiB: 192 MiB) does not load them; the
/// job still runs its script, read from the store when it starts.
#[test]
fn a_restart_with_many_large_scripts_keeps_the_server_small_and_the_scripts_run() {
    const JOBS: usize = 48;
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let done = cluster.work.path().join("done");
    let mut text = format!("#!/bin/sh\necho ran > {}\nexit 0\n", done.display());
    let line = format!("# {}\n", "x".repeat(1021));
    while text.len() + line.len() <= 4 << 20 {
        text.push_str(&line);
    }
    let script = cluster.script("large.sh", &text);
    let ids: Vec<String> = (0..JOBS).map(|_| cluster.qsub(&script, &["-h"])).collect();
    kill9(cluster.server_pid());
    cluster.start_server();
    wait_server_up(&cluster);
    let listing = String::from_utf8_lossy(&cluster.run("qstat", &[]).stdout).into_owned();
    assert_eq!(listing.lines().filter(|line| line.contains(" H ")).count(), JOBS, "{listing}");
    let rss = rss_kib(cluster.server_pid());
    eprintln!("server VmRSS after a restart with {JOBS} scripts of 4 MiB: {rss} KiB");
    assert!(rss < 64 << 10, "the restarted server holds {rss} KiB with {JOBS} scripts of 4 MiB queued");
    let output = cluster.run("qrls", &[&ids[0]]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.wait_finished(&ids[0], Duration::from_secs(60)), 0, "{}", cluster.logs());
    assert_eq!(std::fs::read_to_string(&done).unwrap(), "ran\n", "the script read from the store ran");
}

/// Issue 12 item 8: `max_user_kept_bytes` refuses a submission whose script would take the
/// user's kept scripts (history included) over the quota, with an OpenPBS-style error and a
/// non-zero exit, and stores nothing.
#[test]
fn the_script_quota_refuses_a_submission_over_it() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let output = cluster.run("qmgr", &["-c", "set server max_user_kept_bytes = 1mb"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let script = cluster.script("half.sh", &format!("true\n# {}\n", "x".repeat(600 << 10)));
    let first = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&first, Duration::from_secs(30)), 0);
    let output = cluster.command("qsub").arg(&script).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(38), "{stderr}");
    assert!(stderr.starts_with("qsub: would exceed complex's per-user limit of kept job bytes"), "{stderr}");
    let listing = String::from_utf8_lossy(&cluster.run("qstat", &["-x"]).stdout).into_owned();
    assert_eq!(listing.lines().skip(2).count(), 1, "only the first job is kept: {listing}");
    let output = cluster.run("qmgr", &["-c", "print server"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("set server max_user_kept_bytes = 1048576b"));
}

/// pbs_server maps libpq (and what it pulls in: libssl, Kerberos, LDAP...) only when its store
/// is PostgreSQL (server/src/libpq_at_run_time.rs): on SQLite none of it is resident. `.ci/run`
/// runs this file on both stores, so each side is checked; on PostgreSQL the store's every
/// statement went through the loaded libpq by the time a job is listed.
#[test]
fn the_server_maps_libpq_only_for_a_postgresql_store() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "true\n");
    let id = cluster.qsub(&script, &["-h"]);
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("H"));
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", cluster.server_pid())).unwrap();
    let libpq = maps.lines().any(|line| line.ends_with("/libpq.so.5") || line.contains("/libpq.so.5."));
    let postgresql = tests::store_args().contains(&"--postgres");
    assert_eq!(libpq, postgresql, "libpq mapped: {libpq}, PostgreSQL store: {postgresql}\n{maps}");
}
