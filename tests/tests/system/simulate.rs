//! `minipbs simulate` against the real thing: one small scenario (6 jobs, 4 slots, one
//! backfill) replayed by the simulator and run on a local cluster, submitted at the trace's
//! times; the order in which jobs start must be the same. Orders are compared, never times.
//! Also the command's own contract: its output keys and its errors.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

/// `(job, submit s, processors, run s, requested s)`. Every arrival and end is at a distinct
/// even second (under EASY and greedy alike), so a second of jitter on a busy machine cannot
/// swap two events. Job 1 holds 3 slots until 8, then job 2 until 14; jobs 3 to 5 queue
/// behind; job 6 (1 slot) arrives at 12 and backfills on the free slot: at job 2's planned end
/// (18) job 3, the oldest waiting, still has its 2 slots. Starts: 1, 2, 6, 3, 4, 5.
const JOBS: [(u32, u64, u32, u64, u64); 6] =
    [(1, 0, 3, 8, 16), (2, 2, 3, 6, 10), (3, 4, 2, 2, 22), (4, 6, 3, 4, 12), (5, 10, 3, 6, 12), (6, 12, 1, 6, 12)];

fn swf() -> String {
    let mut text = String::from("; Version: 2.2\n; MaxNodes: 1\n; MaxProcs: 4\n");
    for (id, submit, procs, run, requested) in JOBS {
        text += &format!("{id} {submit} -1 {run} {procs} -1 -1 {procs} {requested} -1 1 1 1 -1 -1 -1 -1 -1\n");
    }
    text
}

fn simulate(cluster: &Cluster, args: &[&str]) -> Output {
    cluster.command("minipbs").arg("simulate").args(args).output().expect("minipbs runs")
}

/// The job numbers of `start` lines, in order.
fn simulated_order(stdout: &str) -> Vec<u32> {
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix("start "))
        .map(|rest| rest.split_whitespace().next().and_then(|id| id.parse().ok()).expect("job number"))
        .collect()
}

#[test]
fn simulate_starts_jobs_in_the_order_the_server_does() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let trace = cluster.work.path().join("scenario.swf");
    std::fs::write(&trace, swf()).unwrap();
    let trace_arg = trace.display().to_string();
    let output = simulate(&cluster, &[&trace_arg, "--nodes", "1", "--ppn", "4", "--policy", "easy", "--starts"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let simulated = simulated_order(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(simulated, [1, 2, 6, 3, 4, 5], "the scenario's own expectation");

    // Each job appends its number to one file when it starts (O_APPEND: one line each).
    let log = cluster.work.path().join("starts");
    let script = cluster.script("job.sh", &format!("#!/bin/sh\necho \"$1\" >> {}\nsleep \"$2\"\n", log.display()));
    let zero = Instant::now();
    let mut late = Vec::new();
    let mut ids = Vec::new();
    for (job, submit, procs, run, requested) in JOBS {
        let due = zero + Duration::from_secs(submit);
        // Submissions follow the trace's clock: this waits for a time, not for a condition.
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        late.push(Instant::now().saturating_duration_since(due));
        let select = format!("select={procs}:ncpus=1");
        let walltime = format!("walltime={requested}");
        let output = cluster
            .command("qsub")
            .args(["-N", &format!("j{job}"), "-l", &select, "-l", &walltime, "--"])
            .arg(&script)
            .args([job.to_string(), run.to_string()])
            .output()
            .unwrap();
        assert!(output.status.success(), "qsub: {}", String::from_utf8_lossy(&output.stderr));
        ids.push(String::from_utf8_lossy(&output.stdout).trim().to_string());
    }
    for id in &ids {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(120)), 0, "job {id}\n{}", cluster.logs());
    }
    let real: Vec<u32> = read_order(&log);
    assert_eq!(real, simulated, "submissions were late by {late:?}");
}

fn read_order(path: &Path) -> Vec<u32> {
    std::fs::read_to_string(path).unwrap().lines().map(|line| line.trim().parse().unwrap()).collect()
}

#[test]
fn simulate_prints_the_metrics_and_names_bad_lines() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let trace = cluster.work.path().join("scenario.swf");
    std::fs::write(&trace, swf()).unwrap();
    let trace_arg = trace.display().to_string();
    let output = simulate(&cluster, &[&trace_arg, "--policy", "fifo"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let keys: Vec<&str> = stdout.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert_eq!(
        keys,
        ["jobs", "utilization", "mean_wait_s", "mean_bounded_slowdown", "max_wait_s", "makespan_s", "skipped"]
    );
    assert!(stdout.starts_with("jobs 6\n"), "{stdout}");

    let output = simulate(&cluster, &[&trace_arg, "--json", "--first", "2"]);
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!((value["jobs"].as_u64(), value["skipped"].as_u64()), (Some(2), Some(0)));

    let bad = cluster.work.path().join("bad.swf");
    std::fs::write(&bad, "; MaxProcs: 4\n1 0 -1 5\n").unwrap();
    let output = simulate(&cluster, &[&bad.display().to_string()]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr, format!("minipbs: {}: line 2: 4 fields, a job record has 18\n", bad.display()));
    let output = simulate(&cluster, &[&trace_arg, "--policy", "sjf"]);
    assert_eq!(output.status.code(), Some(2), "a usage error");
}
