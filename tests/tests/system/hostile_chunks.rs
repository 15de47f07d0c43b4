//! Hostile chunk counts (issue 12, item 3): `select=1000000000:ncpus=0` asks for a billion
//! chunks that each need nothing, so they "fit" any node any number of times. Placed one chunk
//! at a time under the state lock, it held the server for 13 s at submit, at qalter and in
//! every scheduling pass. It must be refused at once as never runnable (more chunks than the
//! nodes hold), and a `qstat` sent meanwhile must be answered at once.
//!
//! The bounds are the "Must hold", generous for a loaded machine: the hostile command
//! answered in under 2 s, every `qstat` meanwhile in under 1 s.

use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

const HOSTILE: &str = "select=1000000000:ncpus=0";
const ANSWER_LIMIT: Duration = Duration::from_secs(2);
const QSTAT_LIMIT: Duration = Duration::from_secs(1);
/// `PBSE_EXCQRESC` (15036) as an exit status.
const EXCEEDS_LIMITS_EXIT: i32 = 188;

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `name args` in a thread and `qstat` over and over (at least three times) until it has
/// answered. Returns its output, how long it took, and the slowest `qstat`.
fn with_qstat_meanwhile(cluster: &Cluster, name: &str, args: &[&str]) -> (Output, Duration, Duration) {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let hostile = scope.spawn(|| {
            let started = Instant::now();
            let output = cluster.run(name, args);
            let took = started.elapsed();
            done.store(true, Ordering::SeqCst);
            (output, took)
        });
        let mut slowest = Duration::ZERO;
        let mut count = 0;
        while count < 3 || !done.load(Ordering::SeqCst) {
            let started = Instant::now();
            let output = cluster.run("qstat", &[]);
            slowest = slowest.max(started.elapsed());
            assert!(output.status.success(), "qstat: {}", stderr(&output));
            count += 1;
        }
        let (output, took) = hostile.join().expect("hostile command thread");
        (output, took, slowest)
    })
}

/// The refusal: OpenPBS's limits text and exit status, with the reason.
fn assert_refused_as_never_runnable(command: &str, output: &Output) {
    let text = stderr(output);
    assert_eq!(output.status.code(), Some(EXCEEDS_LIMITS_EXIT), "{command}: {text}");
    assert!(text.contains("Job violates queue and/or server resource limits"), "{command}: {text}");
    assert!(text.contains("asks for 1000000000 chunks"), "{command}: {text}");
}

#[test]
fn a_billion_empty_chunks_are_refused_at_once_at_qsub_and_qalter() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 2, gpus: 0 });
    let script = cluster.script("chunks.sh", "true\n");
    let script_arg = script.to_str().unwrap();

    let (output, took, slowest) = with_qstat_meanwhile(&cluster, "qsub", &["-l", HOSTILE, script_arg]);
    assert_refused_as_never_runnable("qsub", &output);
    assert!(took < ANSWER_LIMIT, "qsub -l {HOSTILE} took {took:?}");
    assert!(slowest < QSTAT_LIMIT, "a qstat during qsub took {slowest:?}");
    assert_eq!(cluster.run("qstat", &[]).stdout, b"", "nothing was stored");

    // As many empty chunks as the nodes have slots is a real request, and is accepted.
    let held = cluster.qsub(&script, &["-h", "-l", "select=4:ncpus=0"]);
    let (output, took, slowest) = with_qstat_meanwhile(&cluster, "qalter", &["-l", HOSTILE, &held]);
    assert_refused_as_never_runnable("qalter", &output);
    assert!(took < ANSWER_LIMIT, "qalter -l {HOSTILE} took {took:?}");
    assert!(slowest < QSTAT_LIMIT, "a qstat during qalter took {slowest:?}");
    let select = cluster.job_attr(&held, "Resource_List.select").unwrap_or_default();
    assert!(select.starts_with("4:ncpus=0"), "the job keeps its request: {select}");
}
