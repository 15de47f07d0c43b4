//! Backfill with reservations and estimated start times end to end (issue 16): the issue's
//! 4-slot scenario, a 4-GPU job behind a stream of 1-GPU jobs, and a default walltime that
//! the mom enforces (plans hold only if jobs end at their walltime). Jobs overlap on purpose:
//! they sleep past their walltime and are ended at it, so their ends are the plan's.
//!
//! The first two need the backfill scheduler (`sched`); with the greedy policy of old the
//! big jobs wait forever and these tests fail.

use std::process::Stdio;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(120);

/// Epoch seconds of a `ctime(3)` text in UTC (`Tue Nov 21 22:26:00 2023`).
fn ctime_epoch(text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let words: Vec<&str> = text.split_whitespace().collect();
    let [_, month, day, clock, year] = words.as_slice() else { return None };
    let month = MONTHS.iter().position(|name| name == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let mut parts = clock.split(':').map(|part| part.parse::<i64>().ok());
    let (hour, minute, second) = (parts.next()??, parts.next()??, parts.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
}

/// A job's attributes from `qstat -f` with time stamps in UTC.
fn attrs_utc(cluster: &Cluster, id: &str) -> Vec<(String, String)> {
    let output = cluster.command("qstat").env("TZ", "UTC").args(["-x", "-f", "-1", id]).stdin(Stdio::null()).output();
    let text = String::from_utf8_lossy(&output.expect("qstat runs").stdout).into_owned();
    text.lines()
        .filter_map(|line| line.trim_start().split_once(" = "))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

fn attr(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs.iter().find(|(shown, _)| shown == name).map(|(_, value)| value.clone())
}

/// A time stamp attribute of a job, epoch seconds.
fn stamp(cluster: &Cluster, id: &str, name: &str) -> Option<i64> {
    ctime_epoch(&attr(&attrs_utc(cluster, id), name)?)
}

fn state(cluster: &Cluster, id: &str) -> String {
    cluster.job_attr(id, "job_state").unwrap_or_default()
}

fn wait_state(cluster: &Cluster, id: &str, wanted: &str) {
    wait_for(LIMIT, &format!("{id} in state {wanted}"), || (state(cluster, id) == wanted).then_some(()));
}

fn qmgr(cluster: &Cluster, command: &str) {
    let output = cluster.run("qmgr", &["-c", command]);
    assert!(output.status.success(), "{command}: {}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn the_parser_reads_ctime_text() {
    assert_eq!(ctime_epoch("Tue Nov 21 22:26:00 2023"), Some(1_700_605_560));
    assert_eq!(ctime_epoch("Thu Jan  1 00:00:00 1970"), Some(0));
    assert_eq!(ctime_epoch("soon"), None);
}

#[test]
fn a_short_job_backfills_a_long_one_waits_and_the_big_job_starts_at_its_estimate() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let sleeper = cluster.script("sleeper.sh", "sleep 1000\n");
    let first = cluster.qsub(&sleeper, &["-l", "select=1:ncpus=2", "-l", "walltime=00:00:30"]);
    wait_state(&cluster, &first, "R");
    let big = cluster.qsub(&sleeper, &["-l", "select=1:ncpus=4", "-l", "walltime=00:00:10"]);
    let estimate = wait_for(LIMIT, "the big job's estimate", || stamp(&cluster, &big, "estimated.start_time"));
    let first_start = stamp(&cluster, &first, "stime").expect("the first job has started");
    let first_end = first_start + 30;
    assert!((estimate - first_end).abs() <= 3, "estimated {estimate}, the first job ends at {first_end}");
    let exec_vnode = attr(&attrs_utc(&cluster, &big), "estimated.exec_vnode").unwrap_or_default();
    assert!(exec_vnode.contains("ncpus=4"), "{exec_vnode}");

    // 1 slot for 5 s fits before the big job's reservation: it starts at once.
    let short = cluster.qsub(&sleeper, &["-l", "select=1:ncpus=1", "-l", "walltime=00:00:05"]);
    wait_for(LIMIT, "the short job to start", || (state(&cluster, &short) != "Q").then_some(()));
    // 1 slot for 120 s would delay the reservation: it waits, and says why.
    let long = cluster.qsub(&sleeper, &["-l", "select=1:ncpus=1", "-l", "walltime=00:02:00"]);
    let comment = wait_for(LIMIT, "the long job's comment", || {
        cluster.job_attr(&long, "comment").filter(|comment| comment.starts_with("Not Running"))
    });
    assert_eq!(comment, "Not Running: Job would conflict with reservation or top job");
    assert_eq!(state(&cluster, &long), "Q");
    let table = String::from_utf8_lossy(&cluster.run("qstat", &["-T"]).stdout).into_owned();
    let rows: Vec<&str> = table.lines().filter(|line| line.contains(".testsrv")).collect();
    assert!(rows[0].starts_with(&first), "started jobs first: {table}");
    let big_row = rows.iter().find(|row| row.starts_with(&big)).expect("the big job is listed");
    assert!(!big_row.ends_with("--"), "the big job shows its estimated start: {table}");

    wait_state(&cluster, &big, "R");
    let started = stamp(&cluster, &big, "stime").expect("started");
    assert!(started <= estimate + 10, "started at {started}, estimated {estimate}: {}", cluster.logs());
    assert_eq!(state(&cluster, &long), "Q", "the long job still waits behind the big one");
    assert!(cluster.job_attr(&big, "estimated.start_time").is_none(), "a running job has no estimate");
}

#[test]
fn a_four_gpu_job_behind_a_stream_of_one_gpu_jobs_starts_by_its_reservation() {
    let fast = ["--mom-arg=--gpu-poll=200", "--mom-arg=--gpu-foreign-hold=1"];
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 4, gpus: 4 }, &fast);
    let sleeper = cluster.script("sleeper.sh", "sleep 1000\n");
    let small =
        |cluster: &Cluster| cluster.qsub(&sleeper, &["-l", "select=1:ncpus=1:ngpus=1", "-l", "walltime=00:00:08"]);
    let mut smalls: Vec<String> = (0..4).map(|_| small(&cluster)).collect();
    for id in &smalls {
        wait_state(&cluster, id, "R");
    }
    let big = cluster.qsub(&sleeper, &["-l", "select=1:ncpus=4:ngpus=4", "-l", "walltime=00:00:05"]);
    let estimate = wait_for(LIMIT, "the 4-GPU job's estimate", || stamp(&cluster, &big, "estimated.start_time"));
    // The stream: keep two 1-GPU jobs queued until the big one starts.
    wait_for(LIMIT, "the 4-GPU job to start", || {
        let queued = smalls.iter().filter(|id| state(&cluster, id) == "Q").count();
        for _ in queued..2 {
            smalls.push(small(&cluster));
        }
        (state(&cluster, &big) != "Q").then_some(())
    });
    let started = stamp(&cluster, &big, "stime").expect("started");
    assert!(started <= estimate + 5, "started at {started}, reserved for {estimate}: {}", cluster.logs());
}

#[test]
fn a_job_without_walltime_gets_the_servers_default_and_is_ended_at_it() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    qmgr(&cluster, "set server resources_default.walltime = 00:00:02");
    let sleeper = cluster.script("sleeper.sh", "sleep 1000\n");
    let id = cluster.qsub(&sleeper, &[]);
    assert_eq!(cluster.job_attr(&id, "Resource_List.walltime").as_deref(), Some("00:00:02"));
    assert_eq!(cluster.wait_finished(&id, LIMIT), -29, "ended by its walltime: {}", cluster.logs());
}
