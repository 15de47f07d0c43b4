//! A mom's report about a job counts only for the run it is about: a node cut off past
//! `node_fail_requeue` whose job was requeued and runs elsewhere comes back, kills its copy of
//! the old run and reports that end; the job keeps running on its new node.

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

#[test]
fn a_node_back_after_node_fail_requeue_does_not_end_the_job_running_elsewhere() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    let set = cluster.run("qmgr", &["-c", "set server node_fail_requeue = 1"]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let script = cluster.script("long.sh", "sleep 600\n");
    let id = cluster.qsub(&script, &[]);
    // Started by the mom (its session known), not only placed: a mom stopped before it reads
    // the RunJob never runs the job and has no stale run to report.
    let first = wait_for(Duration::from_secs(20), "the job to run", || {
        cluster.job_attr(&id, "session_id")?;
        let host = cluster.job_attr(&id, "exec_host")?;
        Some(host.split('/').next()?.to_string())
    });
    let other = if first == "node1" { "node2" } else { "node1" };
    let mom = Pid::from_raw(cluster.daemon_pid(&first));
    // Silent but alive: down after node_timeout (30 s), then the job is requeued and runs on
    // the other node.
    kill(mom, Signal::SIGSTOP).unwrap();
    let resumed = std::panic::catch_unwind(|| {
        wait_for(Duration::from_secs(90), "the job to run again on the other node", || {
            let host = cluster.job_attr(&id, "exec_host")?;
            (host.starts_with(&format!("{other}/")) && cluster.job_attr(&id, "run_count")? == "2").then_some(())
        })
    });
    kill(mom, Signal::SIGCONT).unwrap();
    resumed.unwrap_or_else(|_| panic!("not requeued: {}", cluster.logs()));
    // The mom reconnects, is told its run is stale, kills it and reports its end.
    let ignored = "end report of a run that is not the job's current one";
    let reported = std::panic::catch_unwind(|| {
        wait_for(Duration::from_secs(60), "the stale end report", || {
            let state = cluster.job_attr(&id, "job_state")?;
            (state != "R" || all_logs(&cluster).contains(ignored)).then_some(())
        })
    });
    reported.unwrap_or_else(|_| panic!("no stale end report: {}", all_logs(&cluster)));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("R"), "{}", cluster.logs());
    assert!(cluster.job_attr(&id, "exec_host").unwrap().starts_with(&format!("{other}/")));
    assert!(cluster.run("qdel", &[&id]).status.success());
}

/// Every log line of the cluster (`Cluster::logs` keeps only the last lines of each file).
fn all_logs(cluster: &Cluster) -> String {
    let entries = std::fs::read_dir(cluster.state.path().join("logs")).unwrap();
    entries.flatten().map(|entry| std::fs::read_to_string(entry.path()).unwrap_or_default()).collect()
}
