//! A cgroup per job (issue 15): processes that left the job's session die with it, a job over
//! its memory is OOM-killed alone (the node stays up), and `--cgroups required` on a mom that
//! cannot make the cgroup requeues the job instead of running it. Needs root (cgroups); fails
//! under `CI` without it.

use std::time::Duration;
use tests::{Cluster, Shape};

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, tail)| !tail.trim_start().starts_with('Z')))
}

/// The state line of `node` in `pbsnodes -a`.
fn node_state(cluster: &Cluster, node: &str) -> String {
    let text = String::from_utf8(cluster.run("pbsnodes", &[node]).stdout).unwrap();
    text.lines().find_map(|l| l.trim().strip_prefix("state = ")).unwrap_or("").to_string()
}

#[test]
fn qdel_kills_processes_that_left_the_session() {
    if !tests::root_or_skip("qdel_kills_processes_that_left_the_session", "for cgroups") {
        return;
    }
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let pids = cluster.work.path().join("escaped.pids");
    let script = cluster.script(
        "escape.sh",
        &format!(
            "setsid sleep 1000 & echo $! >> {p}\n(sleep 1000 & echo $! >> {p}) &\nsleep 1000\n",
            p = pids.display()
        ),
    );
    let id = cluster.qsub(&script, &[]);
    let escaped: Vec<i32> = tests::wait_for(Duration::from_secs(20), "the job to record its pids", || {
        let text = std::fs::read_to_string(&pids).ok()?;
        let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
        (pids.len() == 2).then_some(pids)
    });
    assert!(escaped.iter().all(|pid| alive(*pid)), "the escaped sleeps run");
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    tests::wait_for(Duration::from_secs(20), "the escaped processes to die", || {
        escaped.iter().all(|pid| !alive(*pid)).then_some(())
    });
    cluster.wait_finished(&id, Duration::from_secs(30));
}

#[test]
fn a_job_over_its_memory_is_killed_alone() {
    if !tests::root_or_skip("a_job_over_its_memory_is_killed_alone", "for cgroups") {
        return;
    }
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster
        .script("hog.sh", "#PBS -l select=1:ncpus=1:mem=64mb\npython3 -c 'b = bytearray(256 << 20); print(len(b))'\n");
    let id = cluster.qsub(&script, &[]);
    let status = cluster.wait_finished(&id, Duration::from_secs(60));
    assert_ne!(status, 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let stderr = std::fs::read_to_string(cluster.work.path().join(format!("hog.sh.e{seq}"))).unwrap_or_default();
    assert!(stderr.contains("Cgroup mem limit exceeded"), "{stderr}");
    let comment = cluster.job_attr(&id, "comment").unwrap_or_default();
    assert_eq!(comment, "Job exceeded its memory limit: Cgroup mem limit exceeded on node1");
    let mem = cluster.job_attr(&id, "resources_used.mem").unwrap_or_default();
    assert!(mem.ends_with("kb") && mem != "0kb", "{mem}");
    assert_eq!(node_state(&cluster, "node1"), "free");
    // The node still runs jobs.
    let after = cluster.qsub(&cluster.script("ok.sh", "exit 0\n"), &[]);
    assert_eq!(cluster.wait_finished(&after, Duration::from_secs(30)), 0);
}

#[test]
fn required_cgroups_that_cannot_be_made_requeue_the_job() {
    if !tests::root_or_skip("required_cgroups_that_cannot_be_made_requeue_the_job", "for cgroups") {
        return;
    }
    // `cgroup.procs` is a file at the top of every hierarchy: no job directory fits under it.
    let cluster = Cluster::up_with(
        Shape { nodes: 1, ppn: 1, gpus: 0 },
        &["--mom-arg=--cgroups=required", "--mom-arg=--cgroup-slice=cgroup.procs"],
    );
    let ran = cluster.work.path().join("ran");
    let script = cluster.script("never.sh", &format!("touch {}\n", ran.display()));
    let id = cluster.qsub(&script, &[]);
    // The comment `requeued: ...` lives only between the requeue and the next try (the job
    // is retried at once), so it is read from the server's log, and the retries from run_count.
    let server_log = cluster.state.path().join("logs/server.log");
    let line = tests::wait_for(Duration::from_secs(60), "the job to be requeued and tried again", || {
        let log = std::fs::read_to_string(&server_log).unwrap_or_default();
        let line = log.lines().find(|line| line.contains(&id) && line.contains("Job Rerun: requeued:"))?.to_string();
        let runs: u32 = cluster.job_attr(&id, "run_count")?.parse().ok()?;
        (runs >= 2).then_some(line)
    });
    assert!(line.contains("could not start the job"), "{line}");
    assert!(!ran.exists(), "the job ran without its cgroup");
    // Tried again at once and then held, as OpenPBS does after 20 failed starts.
    tests::wait_for(Duration::from_secs(60), "the job to be held", || {
        (cluster.job_attr(&id, "job_state")? == "H").then_some(())
    });
    assert_eq!(cluster.job_attr(&id, "comment").as_deref(), Some("job held, too many failed attempts to run"));
    assert_eq!(cluster.job_attr(&id, "Hold_Types").as_deref(), Some("s"));
    assert!(!ran.exists(), "the job ran without its cgroup");
    let _ = cluster.run("qdel", &[&id]);
}
