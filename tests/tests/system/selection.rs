//! Choosing jobs: qselect's criteria, qstat's `-i`, `-r` and `-H` listings, and hold types
//! set and released by a manager, on a real cluster with a finished, a running, a queued and a
//! held job.

use std::time::Duration;
use tests::{Cluster, Shape};

fn lines(cluster: &Cluster, program: &str, args: &[&str]) -> Vec<String> {
    let output = cluster.run(program, args);
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(str::to_string).collect()
}

/// The job ids of an alternate `qstat` listing (rows after the headings; not the indented
/// `-n`/`-s` lines).
fn listed(cluster: &Cluster, args: &[&str]) -> Vec<String> {
    let rows = lines(cluster, "qstat", args);
    let short = |id: &str| id.split('.').next().unwrap().to_string();
    let rows = rows.iter().skip_while(|line| !line.starts_with("---")).skip(1);
    rows.filter(|line| !line.starts_with(' ')).map(|line| short(line)).collect()
}

#[test]
fn qselect_qstat_filters_and_hold_types() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let quick = cluster.script("quick.sh", "#PBS -N quick\ntrue\n");
    let finished = cluster.qsub(&quick, &[]);
    assert_eq!(cluster.wait_finished(&finished, Duration::from_secs(30)), 0);
    let flag = cluster.work.path().join("release");
    let waiter = cluster.script("wait.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", flag.display()));
    let running = cluster.qsub(&waiter, &["-N", "runner", "-l", "walltime=01:00:00", "-p", "5"]);
    tests::wait_for(Duration::from_secs(30), "the job to run", || {
        (cluster.job_attr(&running, "job_state")? == "R").then_some(())
    });
    let queued = cluster.qsub(&waiter, &["-N", "waiter", "-l", "walltime=00:05:00", "-A", "proj1", "-r", "n"]);
    let held = cluster.qsub(&waiter, &["-N", "held", "-h", "-l", "mem=1gb"]);
    let seq = |id: &String| id.split('.').next().unwrap().to_string();
    let ids = |list: &[&String]| list.iter().map(|id| id.to_string()).collect::<Vec<_>>();

    assert_eq!(lines(&cluster, "qselect", &[]), ids(&[&running, &queued, &held]));
    assert_eq!(lines(&cluster, "qselect", &["-x"]), ids(&[&finished, &running, &queued, &held]));
    assert_eq!(lines(&cluster, "qselect", &["-H"]), ids(&[&finished]));
    assert_eq!(lines(&cluster, "qselect", &["-s", "R"]), ids(&[&running]));
    assert_eq!(lines(&cluster, "qselect", &["-s", "QH"]), ids(&[&queued, &held]));
    assert_eq!(lines(&cluster, "qselect", &["-h", "u"]), ids(&[&held]));
    assert_eq!(lines(&cluster, "qselect", &["-N", "waiter"]), ids(&[&queued]));
    assert_eq!(lines(&cluster, "qselect", &["-A", "proj1"]), ids(&[&queued]));
    assert_eq!(lines(&cluster, "qselect", &["-r", "n"]), ids(&[&queued]));
    assert_eq!(lines(&cluster, "qselect", &["-p", ".gt.0"]), ids(&[&running]));
    assert_eq!(lines(&cluster, "qselect", &["-l", "walltime.gt.00:10:00"]), ids(&[&running]));
    assert_eq!(lines(&cluster, "qselect", &["-l", "mem.ge.512mb"]), ids(&[&held]));
    assert_eq!(lines(&cluster, "qselect", &["-q", "workq", "-s", "Q"]), ids(&[&queued]));
    let me = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    assert_eq!(lines(&cluster, "qselect", &["-u", &me, "-s", "H"]), ids(&[&held]));
    assert_eq!(lines(&cluster, "qselect", &["-u", "surely-nobody"]), Vec::<String>::new());

    assert_eq!(listed(&cluster, &["-r"]), vec![seq(&running)]);
    assert_eq!(listed(&cluster, &["-i"]), vec![seq(&queued), seq(&held)]);
    assert_eq!(listed(&cluster, &["-H"]), vec![seq(&finished)]);
    assert_eq!(listed(&cluster, &["-s"]).len(), 3, "-s lists live jobs");

    // Hold types: a manager adds an operator hold; the job stays held until the last is gone.
    assert!(cluster.run("qhold", &["-h", "o", &held]).status.success());
    assert_eq!(cluster.job_attr(&held, "Hold_Types").as_deref(), Some("ou"));
    assert!(cluster.run("qrls", &[&held]).status.success());
    assert_eq!(cluster.job_attr(&held, "Hold_Types").as_deref(), Some("o"));
    assert_eq!(cluster.job_attr(&held, "job_state").as_deref(), Some("H"));
    assert!(cluster.run("qrls", &["-h", "o", &held]).status.success());
    assert_eq!(cluster.job_attr(&held, "Hold_Types").as_deref(), Some("n"));
    assert_eq!(cluster.job_attr(&held, "job_state").as_deref(), Some("Q"), "the only cpu is taken");
    // Holding a running job records the hold; it keeps running.
    assert!(cluster.run("qhold", &[&running]).status.success());
    assert_eq!(cluster.job_attr(&running, "Hold_Types").as_deref(), Some("u"));
    assert_eq!(cluster.job_attr(&running, "job_state").as_deref(), Some("R"));

    std::fs::write(&flag, "").unwrap();
    for id in [&running, &queued, &held] {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(60)), 0, "{}", cluster.logs());
    }
}
