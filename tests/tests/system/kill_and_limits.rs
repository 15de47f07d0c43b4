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

#[test]
fn an_enormous_walltime_is_no_limit_and_qdel_still_works() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let marker = format!("600.{}", std::process::id());
    let output = cluster.run("qsub", &["-l", "walltime=9300000000000000000", "--", "/bin/sleep", &marker]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    tests::wait_for(Duration::from_secs(20), "the sleep to start", || {
        (processes_with(&marker).len() == 1).then_some(())
    });
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("R"));
    assert!(cluster.run("qdel", &[&id]).status.success());
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 271, "{}", cluster.logs());
    assert!(processes_with(&marker).is_empty());
}

#[test]
fn users_cannot_set_what_the_mom_owns() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 1 });
    let script =
        cluster.script("owned.sh", "echo \"[$CUDA_VISIBLE_DEVICES] [$PBS_GPUFILE] [$PBS_WALLTIME] [$NCPUS]\"\n");
    let id = cluster.qsub(&script, &["-v", "CUDA_VISIBLE_DEVICES=0,PBS_GPUFILE=/x,PBS_WALLTIME=5,NCPUS=99"]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 0);
    let seq = id.split('.').next().unwrap();
    let path = cluster.work.path().join(format!("owned.sh.o{seq}"));
    let text = tests::wait_for(Duration::from_secs(10), "output", || std::fs::read_to_string(&path).ok());
    assert_eq!(text, "[] [] [] [1]\n", "a job without GPUs sees none, whatever -v says");
}

#[test]
fn a_forced_qdel_ends_a_job_whose_mom_is_gone() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let marker = format!("700.{}", std::process::id());
    let output = cluster.run("qsub", &["--", "/bin/sleep", &marker]);
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    tests::wait_for(Duration::from_secs(20), "the sleep to start", || {
        (processes_with(&marker).len() == 1).then_some(())
    });
    let mom = cluster.daemon_pid("node1");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(mom), nix::sys::signal::Signal::SIGKILL);
    assert!(cluster.run("qdel", &[&id]).status.success());
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("E"), "waits for a mom that is gone");
    let output = cluster.run("qdel", &["-W", "force", &id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(10)), 265);
    for pid in processes_with(&marker) {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
}
