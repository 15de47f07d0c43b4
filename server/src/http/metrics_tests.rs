//! `/metrics`: the counts taken from a state, the counters a job's life moves, and the text
//! (snapshot-tested, escaping included).

use super::*;
use crate::handlers::tests::{cluster, requester, spec, ALICE};
use crate::handlers::{job_ended, submit_job};
use crate::sched_loop::schedule_pass;
use crate::shared::run_handler;
use proto::mom::JobObit;
use proto::ServerReply;

fn metrics() -> ServerMetrics {
    let opts =
        prometheus::HistogramOpts::new("minipbs_store_commit_seconds", "Commit latency.").buckets(vec![0.01, 0.1]);
    ServerMetrics::new(prometheus::Histogram::with_opts(opts).unwrap())
}

/// Submits as ALICE through the server's handler path, counting its notices.
fn submit(state: &mut ServerState, metrics: &ServerMetrics, resources: &[(&str, &str)]) -> String {
    let (reply, out) =
        run_handler(state, 10, |state, out| submit_job::submit_job(state, out, &requester(ALICE), 10, spec(resources)));
    metrics.count(&out.notices);
    match reply {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("submit refused: {other:?}"),
    }
}

fn count(snapshot: &Snapshot, state: &'static str) -> i64 {
    snapshot.jobs[&("workq".to_string(), state)]
}

#[test]
fn counters_and_gauges_follow_jobs_from_submission_to_end() {
    let (mut state, metrics) = (cluster(2), metrics());
    let first = submit(&mut state, &metrics, &[("nodes", "1:ppn=2:gpus=1")]);
    submit(&mut state, &metrics, &[("nodes", "2:ppn=4")]);
    assert_eq!(metrics.submissions(), 2);
    let (_, out) = run_handler(&mut state, 20, |state, out| schedule_pass(state, out, 20));
    metrics.count(&out.notices);

    let snapshot = Snapshot::take(&state, 2);
    assert_eq!((count(&snapshot, "running"), count(&snapshot, "queued")), (1, 1));
    assert_eq!(snapshot.user_slots, BTreeMap::from([("user1000".to_string(), 2)]));
    assert_eq!(snapshot.user_gpus, BTreeMap::from([("user1000".to_string(), 1)]));
    assert_eq!((snapshot.gpus["job"], snapshot.gpus["free"]), (1, 3));
    assert_eq!((snapshot.nodes["free"], snapshot.moms), (2, 2));

    let obit = JobObit { job_id: first, exit_status: 0, session_id: 7, ..Default::default() };
    let (_, out) = run_handler(&mut state, 30, |state, out| job_ended::job_ended(state, out, "node1", obit, 30));
    metrics.count(&out.notices);
    assert_eq!((metrics.job_ends("ended"), metrics.job_ends("deleted")), (1, 0));
    let snapshot = Snapshot::take(&state, 2);
    assert_eq!((count(&snapshot, "running"), count(&snapshot, "finished")), (0, 1));
    assert!(snapshot.user_slots.is_empty(), "no per-user series without active jobs");
}

#[test]
fn the_text_of_a_small_state() {
    let metrics = metrics();
    metrics.observe_pass(0.002);
    let snapshot = Snapshot {
        jobs: JOB_STATES
            .iter()
            .map(|&(_, word)| (("workq".to_string(), word), i64::from(word == "queued") * 3))
            .collect(),
        nodes: NODE_STATES.iter().map(|&word| (word, i64::from(word == "free"))).collect(),
        gpus: GPU_USES.iter().map(|&word| (word, i64::from(word == "job") * 2)).collect(),
        user_slots: BTreeMap::from([("alice".to_string(), 4)]),
        user_gpus: BTreeMap::from([("alice".to_string(), 2)]),
        moms: 1,
    };
    insta::assert_snapshot!(render(&snapshot, &metrics).unwrap());
}

#[test]
fn user_names_are_escaped_in_label_values() {
    let snapshot = Snapshot { user_slots: BTreeMap::from([("a\"b\\c\nd".to_string(), 1)]), ..Snapshot::default() };
    let text = render(&snapshot, &metrics()).unwrap();
    assert!(text.contains(r#"minipbs_user_slots_in_use{user="a\"b\\c\nd"} 1"#), "{text}");
}

#[test]
fn a_gpu_held_by_a_job_counts_as_job_whatever_its_mom_said() {
    assert_eq!(gpu_use(true, false, Some(GpuUse::Free)), "job");
    assert_eq!(gpu_use(false, true, Some(GpuUse::Free)), "shared");
    assert_eq!(gpu_use(false, false, Some(GpuUse::BusyForeign)), "busy-foreign");
    assert_eq!(gpu_use(false, false, None), "unknown");
}
