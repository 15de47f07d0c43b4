//! Job dependencies (`qsub -W depend=`) end to end: an `afterok` chain runs in order, a failure
//! deletes the chain below it (state F, OpenPBS's comment), dependents show as `H`, the
//! waiting job's `depend` survives a server restart, and bad values are refused with a clear
//! message and nothing created.

use std::time::Duration;
use tests::{Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

/// A script that waits for `flag` to exist, then exits with `status`.
fn gated(cluster: &Cluster, name: &str, flag: &str, status: i32) -> std::path::PathBuf {
    let flag = cluster.work.path().join(flag);
    cluster.script(name, &format!("#!/bin/sh\nwhile [ ! -e {} ]; do sleep 0.1; done\nexit {status}\n", flag.display()))
}

fn open_gate(cluster: &Cluster, flag: &str) {
    std::fs::write(cluster.work.path().join(flag), "").unwrap();
}

fn wait_state(cluster: &Cluster, id: &str, state: &str) {
    tests::wait_for(LIMIT, &format!("{id} to be {state}"), || {
        (cluster.job_attr(id, "job_state")? == state).then_some(())
    });
}

/// The state letter `qstat` (default display) shows for `id`.
fn listed_state(cluster: &Cluster, id: &str) -> String {
    let output = cluster.run("qstat", &[]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let line = text.lines().find(|line| line.starts_with(id)).unwrap_or_else(|| panic!("{id} not listed:\n{text}"));
    line.split_whitespace().nth(4).unwrap().to_string()
}

/// A `ctime(3)` time stamp (`Tue Nov 21 22:26:00 2023`) as a sortable tuple.
fn stamp(text: &str) -> (u32, u32, u32, String) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let month = months.iter().position(|name| *name == words[1]).unwrap() as u32;
    (words[4].parse().unwrap(), month, words[2].parse().unwrap(), words[3].to_string())
}

fn time_attr(cluster: &Cluster, id: &str, name: &str) -> (u32, u32, u32, String) {
    stamp(&cluster.job_attr(id, name).unwrap_or_else(|| panic!("{id} has no {name}")))
}

#[test]
fn afterok_chain_runs_in_order() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let a = cluster.qsub(&gated(&cluster, "a.sh", "go-a", 0), &[]);
    let b = cluster.qsub(
        &gated(&cluster, "b.sh", "go-b", 0),
        &["-W", &format!("depend=afterok:{}", a.trim_end_matches(".testsrv"))],
    );
    let c_script = cluster.script("c.sh", &format!("#!/bin/sh\n#PBS -W depend=afterok:{b}\ntrue\n"));
    let c = cluster.qsub(&c_script, &[]);
    wait_state(&cluster, &a, "R");
    assert_eq!(listed_state(&cluster, &b), "H", "B waits while A runs, though a slot is free");
    assert_eq!(listed_state(&cluster, &c), "H");
    assert_eq!(cluster.job_attr(&b, "Hold_Types").as_deref(), Some("s"));
    assert_eq!(cluster.job_attr(&b, "depend").as_deref(), Some("afterok:1.testsrv@testsrv,beforeok:3.testsrv@testsrv"));
    assert_eq!(cluster.job_attr(&a, "depend").as_deref(), Some("beforeok:2.testsrv@testsrv"));

    open_gate(&cluster, "go-a");
    assert_eq!(cluster.wait_finished(&a, LIMIT), 0);
    wait_state(&cluster, &b, "R");
    assert_eq!(listed_state(&cluster, &c), "H", "C still waits for B");
    open_gate(&cluster, "go-b");
    assert_eq!(cluster.wait_finished(&b, LIMIT), 0);
    assert_eq!(cluster.wait_finished(&c, LIMIT), 0);
    assert!(time_attr(&cluster, &b, "stime") >= time_attr(&cluster, &a, "obittime"), "B started before A ended");
    assert!(time_attr(&cluster, &c, "stime") >= time_attr(&cluster, &b, "obittime"), "C started before B ended");
    assert_eq!(cluster.job_attr(&b, "Hold_Types").as_deref(), Some("n"));
}

#[test]
fn failure_deletes_the_chain_below() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let a = cluster.qsub(&gated(&cluster, "a.sh", "go", 1), &[]);
    let never =
        cluster.script("never.sh", &format!("#!/bin/sh\ntouch {}/ran-$PBS_JOBID\n", cluster.work.path().display()));
    let b = cluster.qsub(&never, &["-W", &format!("depend=afterok:{a}")]);
    let c = cluster.qsub(&never, &["-W", &format!("depend=afterok:{b}")]);
    wait_state(&cluster, &a, "R");
    assert_eq!(listed_state(&cluster, &b), "H");
    open_gate(&cluster, "go");
    assert_eq!(cluster.wait_finished(&a, LIMIT), 1);
    for (id, parent) in [(&b, &a), (&c, &b)] {
        wait_state(&cluster, id, "F");
        let attrs = cluster.job_attrs(id).unwrap();
        let get = |name: &str| attrs.iter().find(|(attr, _)| attr == name).map(|(_, value)| value.as_str());
        assert_eq!(get("comment"), Some(format!("Job deleted as result of dependency on job {parent}").as_str()));
        assert_eq!(get("stime"), None, "{id} never started");
        assert_eq!(get("Exit_status"), None);
        assert!(!cluster.work.path().join(format!("ran-{id}")).exists());
    }
    // Deleted jobs are history: plain qstat no longer lists them.
    let listing = String::from_utf8_lossy(&cluster.run("qstat", &[]).stdout).into_owned();
    assert!(!listing.contains(&b) && !listing.contains(&c), "{listing}");
}

#[test]
fn waiting_dependent_survives_a_server_restart() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let a = cluster.qsub(&gated(&cluster, "a.sh", "go", 0), &[]);
    let b = cluster.qsub(&cluster.script("b.sh", "true\n"), &["-W", &format!("depend=afterok:{a}")]);
    wait_state(&cluster, &a, "R");
    let pid = cluster.server_pid();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    tests::wait_for(LIMIT, "the server to die", || tests::process_gone(pid).then_some(()));
    cluster.start_server();
    tests::wait_for(LIMIT, "the server to answer", || cluster.run("qstat", &[]).status.success().then_some(()));
    assert_eq!(cluster.job_attr(&b, "depend").as_deref(), Some("afterok:1.testsrv@testsrv"));
    assert_eq!(listed_state(&cluster, &b), "H");
    open_gate(&cluster, "go");
    assert_eq!(cluster.wait_finished(&a, LIMIT), 0, "{}", cluster.logs());
    assert_eq!(cluster.wait_finished(&b, LIMIT), 0, "{}", cluster.logs());
}

#[test]
fn bad_dependencies_are_refused_and_create_nothing() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("x.sh", "true\n");
    let output = cluster.command("qsub").args(["-W", "depend=afterok:abc"]).arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(output.stdout, b"");
    let malformed = String::from_utf8_lossy(&output.stderr).into_owned();

    let output = cluster.command("qsub").args(["-W", "depend=afterok:99"]).arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(153));
    let unknown = String::from_utf8_lossy(&output.stderr).into_owned();

    let directive = cluster.script("d.sh", "#!/bin/sh\n#PBS -W depend=aftrok:1\ntrue\n");
    let output = cluster.command("qsub").arg(&directive).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let in_directive = String::from_utf8_lossy(&output.stderr).into_owned();

    insta::assert_snapshot!(format!("{malformed}---\n{unknown}---\n{in_directive}"));
    let listing = cluster.run("qstat", &["-x"]);
    assert_eq!(String::from_utf8_lossy(&listing.stdout), "", "a refused submit created a job");
}

#[test]
fn beforeok_releases_a_job_submitted_with_on() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let b = cluster.qsub(&cluster.script("b.sh", "true\n"), &["-W", "depend=on:1"]);
    assert_eq!(listed_state(&cluster, &b), "H");
    assert_eq!(cluster.job_attr(&b, "depend").as_deref(), Some("on:1"));
    let a = cluster.qsub(&gated(&cluster, "a.sh", "go", 0), &["-W", &format!("depend=beforeok:{b}")]);
    wait_state(&cluster, &a, "R");
    assert_eq!(listed_state(&cluster, &b), "H");
    assert_eq!(cluster.job_attr(&b, "depend").as_deref(), Some("afterok:2.testsrv@testsrv"));
    open_gate(&cluster, "go");
    assert_eq!(cluster.wait_finished(&a, LIMIT), 0);
    assert_eq!(cluster.wait_finished(&b, LIMIT), 0);
    assert!(time_attr(&cluster, &b, "stime") >= time_attr(&cluster, &a, "obittime"));
}
