//! qdel of running jobs and walltime enforcement: the whole process tree goes, and the exit
//! status is the reference's.

use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

/// Pids of processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            pids.push(pid);
        }
    }
    pids
}

#[test]
fn qdel_kills_the_whole_tree() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let marker = format!("1000.{}", std::process::id());
    let script =
        cluster.script("sleeper.sh", &format!("#!/bin/bash\nsleep {marker}5 &\nsleep {marker}6 &\nsleep {marker}7\n"));
    let _ = &script;
    let id = cluster.qsub(&script, &[]);
    tests::wait_for(Duration::from_secs(20), "the sleeps to start", || {
        (processes_with(&marker).len() == 3).then_some(())
    });
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let started = Instant::now();
    tests::wait_for(Duration::from_secs(10), "the process tree to end", || {
        processes_with(&marker).is_empty().then_some(())
    });
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 271, "{}", cluster.logs());
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("F"));
}

#[test]
fn walltime_ends_the_job_with_minus_29() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("long.sh", "#PBS -l walltime=00:00:02\nsleep 100\n");
    let started = Instant::now();
    let id = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), -29, "{}", cluster.logs());
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(8), "ended after {elapsed:?}");
    let seq = id.split('.').next().unwrap();
    let stderr = std::fs::read_to_string(cluster.work.path().join(format!("long.sh.e{seq}"))).unwrap_or_default();
    assert!(stderr.contains("=>> PBS: job killed: walltime"), "{stderr}");
}

#[test]
fn exit_code_and_held_jobs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("three.sh", "exit 3\n");
    let id = cluster.qsub(&script, &["-h"]);
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("H"));
    assert_eq!(cluster.job_attr(&id, "Hold_Types").as_deref(), Some("u"));
    let output = cluster.run("qrls", &[&id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 3);
    let output = cluster.run("qstat", &[&id]);
    assert_eq!(output.status.code(), Some(35), "finished job without -x");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr, format!("qstat: {id} Job has finished, use -x or -H to obtain historical job information\n"));
}
