//! How long one request or one scheduling pass holds the server state (issue 12, item 3): the
//! handlers and `schedule_pass` run under the state lock, so their time is the lock hold time.
//! A `ServerState` with 4 nodes of 16 slots, filled by running jobs, and 10,000 queued jobs
//! that cannot start; then, timed: a scheduling pass (the queued jobs in one request class,
//! then in 10,000 distinct classes), a submit and a qalter of `select=1000000000:ncpus=0`
//! (refused as never runnable), and an ordinary submit for comparison; and keeping one pass's
//! notes on the 10,000 waiting jobs (issue 16: `state/sched_notes.rs`), all new or all the
//! same as the last pass's. Prints figures only.
//! `cargo run --release -p server --example lock_hold` (or `bench/lock_hold`).

use std::time::{Duration, Instant};

use proto::alter::JobAlteration;
use proto::mom::Registration;
use proto::ServerReply;
use server::handlers::{alter_job, register_mom, status_job, submit_job};
use server::sched_loop::schedule_pass;
use server::state::outbox::Outbox;
use server::state::sched_notes::{PlannedStart, SchedNote, WaitWhy};
use server::state::{Requester, ServerState};

const QUEUED: usize = 10_000;
const HOSTILE: &str = "1000000000:ncpus=0";
const REPEATS: usize = 21;

fn spec(select: &str, hold: bool) -> job::JobSpec {
    job::JobSpec {
        user_hold: hold,
        submit_host: "login".into(),
        submit_args: "job.sh".into(),
        ..job::JobSpec::new("job.sh", "#!/bin/sh\necho hello\n")
            .with_workdir("/home/alice")
            .with_resources(&[("select", select)])
    }
}

fn alice() -> Requester {
    Requester { uid: 1000, gid: 1000, user: "alice".into() }
}

fn submit(state: &mut ServerState, select: &str, hold: bool) -> ServerReply {
    submit_job::submit_job(state, &mut Outbox::default(), &alice(), 10, spec(select, hold))
}

/// 4 nodes of 16 slots and 64 GiB, each filled by one running job, and `QUEUED` queued jobs
/// asking for `select(i)` (none can start while the running jobs hold the slots).
fn full_cluster(select: impl Fn(usize) -> String) -> ServerState {
    let mut state = ServerState::new("head", "workq", 10, 0);
    for index in 1..=4 {
        let registration = Registration {
            node: format!("node{index}"),
            np: 16,
            mem_bytes: 64 << 30,
            ngpus: 0,
            properties: vec![],
            start_id: "a".into(),
            jobs: vec![],
            port: 0,
            gpus: Vec::new(),
            gpu_states: Vec::new(),
            task_socket: None,
            heartbeat_ms: 0,
        };
        register_mom::register_mom(&mut state, &mut Outbox::default(), registration, 0);
    }
    for _ in 0..4 {
        submit(&mut state, "1:ncpus=16", false);
    }
    assert_eq!(schedule_pass(&mut state, &mut Outbox::default(), 10), 4, "the filling jobs start");
    for index in 0..QUEUED {
        let reply = submit(&mut state, &select(index), false);
        assert!(matches!(reply, ServerReply::JobSubmitted { .. }), "{reply:?}");
    }
    state
}

/// Runs `work` `REPEATS` times; returns the median and the slowest.
fn time(mut work: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..REPEATS)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[REPEATS / 2], times[REPEATS - 1])
}

fn report(what: &str, (median, slowest): (Duration, Duration)) {
    let ms = |duration: Duration| duration.as_secs_f64() * 1000.0;
    println!("{what:<64} {:>8.3} ms median, {:>8.3} ms slowest of {REPEATS}", ms(median), ms(slowest));
}

fn main() {
    println!("== lock_hold: 4 nodes x 16 slots, all busy, {QUEUED} queued jobs that cannot start");
    let mut same = full_cluster(|_| "1:ncpus=2".into());
    report(
        "scheduling pass, 10,000 queued jobs of one request class",
        time(|| {
            assert_eq!(schedule_pass(&mut same, &mut Outbox::default(), 20), 0);
        }),
    );
    let mut distinct = full_cluster(|index| format!("1:ncpus=1:mem={}kb", index + 1));
    report(
        "scheduling pass, 10,000 queued jobs in 10,000 request classes",
        time(|| {
            assert_eq!(schedule_pass(&mut distinct, &mut Outbox::default(), 20), 0);
        }),
    );

    let keys: Vec<job::JobKey> = same.queued_jobs().map(|job| job.id.key()).collect();
    let notes = |shift: i64| {
        let why = WaitWhy::Resource(std::sync::Arc::from("ncpus"));
        keys.iter().enumerate().map(move |(at, key)| {
            let estimate = PlannedStart { start: 1000 + shift + at as i64, exec_vnode: "(node1:ncpus=2)".into() };
            (*key, SchedNote { why: why.clone(), estimate: Some(estimate) })
        })
    };
    let mut shift = 0;
    report(
        "notes of 10,000 waiting jobs, every one changed",
        time(|| {
            shift += 1;
            assert_eq!(same.replace_sched_notes(notes(shift)), QUEUED);
        }),
    );
    report(
        "notes of 10,000 waiting jobs, none changed",
        time(|| {
            assert_eq!(same.replace_sched_notes(notes(shift)), 0);
        }),
    );

    report(
        &format!("qsub -l select={HOSTILE} (refused)"),
        time(|| {
            let reply = submit(&mut same, HOSTILE, false);
            assert!(matches!(reply, ServerReply::Error(_)), "{reply:?}");
        }),
    );
    let held = match submit(&mut same, "1:ncpus=1", true) {
        ServerReply::JobSubmitted { id } => id,
        other => panic!("{other:?}"),
    };
    let alteration = JobAlteration { resources: vec![("select".into(), HOSTILE.into())], ..Default::default() };
    report(
        &format!("qalter -l select={HOSTILE} (refused)"),
        time(|| {
            let reply = alter_job::alter_job(
                &mut same,
                &mut Outbox::default(),
                &alice(),
                20,
                std::slice::from_ref(&held),
                &alteration,
            );
            assert!(!matches!(reply, ServerReply::Done { ref errors } if errors.is_empty()), "{reply:?}");
        }),
    );
    let columns: Vec<String> =
        ["Job_Name", "Job_Owner", "resources_used.cput", "job_state", "queue"].map(String::from).to_vec();
    let query = status_job::Query {
        selectors: &[],
        history: false,
        users: &[],
        wanted: Some(&columns),
        arrays: status_job::ArrayListing::default(),
        reader: status_job::Reader::User(1000),
    };
    let table = server::status::Columns::new(&columns);
    report(
        "qstat of 10,000 jobs in rows (select, rows, the frames' JSON)",
        time(|| {
            let selection = status_job::select(&same, same.flavor, 20, &query);
            let mut bytes = 0;
            for keys in selection.keys.chunks(500) {
                let rows = status_job::rows(&same, same.flavor, 20, &query, &table, keys);
                bytes += serde_json::to_vec(&rows).unwrap().len();
            }
            assert!(bytes > QUEUED * 20, "{bytes}");
        }),
    );
    report(
        "qsub -l select=1:ncpus=1 (accepted, for comparison)",
        time(|| {
            submit(&mut same, "1:ncpus=1", true);
        }),
    );
}
