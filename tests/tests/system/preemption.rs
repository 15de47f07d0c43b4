//! Preemption on a real cluster (issue 16): a job of a queue whose priority is at least the
//! server's `preempt_queue_prio` takes the place of a lower job on a full node, by suspending
//! it (`preempt_order` `S`, the first letter of the default `SCR`) or requeueing it (`R`); the
//! victim's comment and accounting records say so, and it resumes (or runs again) once the
//! preemptor ends, then finishes.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn qmgr_ok(cluster: &Cluster, command: &str) {
    let output = cluster.run("qmgr", &["-c", command]);
    assert!(output.status.success(), "qmgr -c {command:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn state_of(cluster: &Cluster, id: &str) -> String {
    cluster.job_attr(id, "job_state").unwrap_or_default()
}

fn wait_state(cluster: &Cluster, id: &str, state: &str) {
    wait_for(LIMIT, &format!("{id} in state {state}"), || (state_of(cluster, id) == state).then_some(()));
}

/// A script that waits for `flag` to exist.
fn waiting_script(cluster: &Cluster, name: &str, flag: &Path) -> PathBuf {
    cluster.script(name, &format!("while [ ! -e {} ]; do sleep 0.1; done\n", flag.display()))
}

/// Waits for a record of type `kind` of job `id`.
fn wait_record(cluster: &Cluster, kind: char, id: &str) {
    let needle = format!(";{kind};{id};");
    wait_for(LIMIT, &format!("the {kind} record of {id}"), || {
        cluster.accounting().iter().any(|line| line.contains(&needle)).then_some(())
    });
}

/// One node of one slot, queue `high` (priority 200) above `preempt_queue_prio` 150 and
/// `workq`; a long job of `workq` runs on the node.
fn full_node(order: &str) -> (Cluster, String, PathBuf) {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    qmgr_ok(&cluster, "create queue high queue_type=execution,enabled=true,started=true,Priority=200");
    qmgr_ok(&cluster, "set server preempt_queue_prio = 150");
    qmgr_ok(&cluster, &format!("set server preempt_order = {order}"));
    let low_done = cluster.work.path().join("low_done");
    let low = cluster.qsub(&waiting_script(&cluster, "low.sh", &low_done), &["-l", "walltime=1:00:00"]);
    wait_state(&cluster, &low, "R");
    (cluster, low, low_done)
}

#[test]
fn a_high_queue_job_suspends_a_low_one_which_resumes_after_it_and_finishes() {
    let (cluster, low, low_done) = full_node("SCR");
    let high_done = cluster.work.path().join("high_done");
    let high = cluster.qsub(&waiting_script(&cluster, "high.sh", &high_done), &["-q", "high"]);
    wait_state(&cluster, &high, "R");
    assert_eq!(state_of(&cluster, &low), "S", "the low job is suspended");
    assert_eq!(cluster.job_attr(&low, "comment").as_deref(), Some("Job preempted by suspension"));
    wait_record(&cluster, 'z', &low);

    std::fs::write(&high_done, "").unwrap();
    assert_eq!(cluster.wait_finished(&high, LIMIT), 0);
    wait_state(&cluster, &low, "R");
    wait_record(&cluster, 'r', &low);
    let comment = cluster.job_attr(&low, "comment").unwrap_or_default();
    assert!(comment.starts_with("Job run at "), "the resumed job's comment: {comment}");
    std::fs::write(&low_done, "").unwrap();
    assert_eq!(cluster.wait_finished(&low, LIMIT), 0, "the resumed job finishes");
}

#[test]
fn with_preempt_order_r_the_low_job_is_requeued_and_runs_again_after() {
    let (cluster, low, low_done) = full_node("R");
    let high_done = cluster.work.path().join("high_done");
    let high = cluster.qsub(&waiting_script(&cluster, "high.sh", &high_done), &["-q", "high"]);
    wait_state(&cluster, &high, "R");
    wait_record(&cluster, 'R', &low);
    assert_eq!(state_of(&cluster, &low), "Q", "requeued, waiting for the node");

    std::fs::write(&high_done, "").unwrap();
    assert_eq!(cluster.wait_finished(&high, LIMIT), 0);
    std::fs::write(&low_done, "").unwrap();
    assert_eq!(cluster.wait_finished(&low, LIMIT), 0, "the requeued job runs again and finishes");
    assert_eq!(cluster.job_attr(&low, "run_count").as_deref(), Some("2"));
}
