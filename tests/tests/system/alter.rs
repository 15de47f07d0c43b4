//! qalter, qrerun and qsig against a real cluster: a changed walltime is what qstat shows and
//! what the mom enforces, a renamed job shows its new name, a rerun job runs again with only
//! the second run's output, a signal reaches a trap in the job script, and bad input gets the
//! reference's message and exit code.

use std::os::unix::process::CommandExt;
use std::process::Output;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Waits until the job is in state `letter`.
fn wait_state(cluster: &Cluster, id: &str, letter: &str) {
    let what = format!("job {id} in state {letter}");
    wait_for(Duration::from_secs(30), &what, || (cluster.job_attr(id, "job_state")? == letter).then_some(()));
}

#[test]
fn qalter_walltime_changes_qstat_and_what_the_mom_enforces() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("long.sh", "sleep 60\n");
    let id = cluster.qsub(&script, &["-h", "-l", "walltime=1:00:00"]);
    let output = cluster.run("qalter", &["-l", "walltime=00:00:03", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(output.stdout, b"", "qalter is silent on success");
    assert_eq!(cluster.job_attr(&id, "Resource_List.walltime").as_deref(), Some("00:00:03"));
    let output = cluster.run("qrls", &[&id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(40)), -29, "{}", cluster.logs());
}

#[test]
fn a_manager_lowers_the_walltime_of_a_running_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("running.sh", "sleep 60\n");
    let id = cluster.qsub(&script, &["-l", "walltime=1:00:00"]);
    wait_state(&cluster, &id, "R");
    let output = cluster.run("qalter", &["-l", "walltime=00:00:02", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.job_attr(&id, "Resource_List.walltime").as_deref(), Some("00:00:02"));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(40)), -29, "{}", cluster.logs());
}

#[test]
fn qalter_name_shows_in_qstat() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("named.sh", "true\n");
    let id = cluster.qsub(&script, &["-h"]);
    let output = cluster.run("qalter", &["-N", "renamed", "-p", "5", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.job_attr(&id, "Job_Name").as_deref(), Some("renamed"));
    assert_eq!(cluster.job_attr(&id, "Priority").as_deref(), Some("5"));
    let listing = String::from_utf8_lossy(&cluster.run("qstat", &[]).stdout).into_owned();
    assert!(listing.contains("renamed"), "{listing}");
}

#[test]
fn qrerun_runs_the_job_again_with_only_the_second_runs_output() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let count = cluster.work.path().join("count");
    let text = format!(
        "n=$(( $(cat {0} 2>/dev/null || echo 0) + 1 ))\necho $n > {0}\necho \"run $n\"\n\
         if [ $n -eq 1 ]; then sleep 60; fi\n",
        count.display()
    );
    let script = cluster.script("again.sh", &text);
    let id = cluster.qsub(&script, &[]);
    wait_for(Duration::from_secs(30), "the first run", || {
        (std::fs::read_to_string(&count).ok()?.trim() == "1").then_some(())
    });
    let output = cluster.run("qrerun", &[&id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(40)), 0, "{}", cluster.logs());
    assert_eq!(cluster.job_attr(&id, "run_count").as_deref(), Some("2"));
    let seq = id.split('.').next().unwrap();
    let out_path = cluster.work.path().join(format!("again.sh.o{seq}"));
    let text = wait_for(Duration::from_secs(10), "output", || std::fs::read_to_string(&out_path).ok());
    assert_eq!(text, "run 2\n", "the aborted run's output is discarded");

    let output = cluster.run("qrerun", &[&id]);
    assert_eq!(output.status.code(), Some(35), "{}", stderr(&output));
    assert_eq!(stderr(&output), format!("qrerun: Job has finished {id}\n"));
}

#[test]
fn qsig_reaches_a_trap_in_the_job_script() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let (ready, got) = (cluster.work.path().join("ready"), cluster.work.path().join("got"));
    // The signal goes to the job's whole session, as in OpenPBS, so the job's top shell gets it
    // too; a login shell dies of SIGUSR1 and the mom then kills what is left, racing the
    // script's trap. This job's top shell (-S) traps it, runs the script by the path the mom
    // gives on stdin, and lives on, so the test sees the script's own trap run, once.
    let shell =
        cluster.script("top.sh", "#!/bin/sh\ntrap 'echo top shell got USR1 >&2' USR1\nread -r script\n\"$script\"\n");
    let text = format!(
        "trap 'echo USR1 >> {got}; done=1' USR1\necho > {ready}\nwhile [ -z \"$done\" ]; do sleep 0.1; done\nexit 0\n",
        got = got.display(),
        ready = ready.display()
    );
    let script = cluster.script("trap.sh", &text);
    let id = cluster.qsub(&script, &["-S", &shell.display().to_string()]);
    wait_for(Duration::from_secs(30), "the trap to be set", || ready.exists().then_some(()));
    let output = cluster.run("qsig", &["-s", "USR1", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    assert_eq!(std::fs::read_to_string(&got).unwrap(), "USR1\n", "the trap ran, once");
}

/// The state letter of process `pid` (`T` when stopped).
fn process_state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[test]
fn suspend_and_resume_stop_and_continue_the_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let pid_file = cluster.work.path().join("pid");
    let script = cluster.script("busy.sh", &format!("echo $$ > {}\nwhile :; do sleep 0.1; done\n", pid_file.display()));
    let id = cluster.qsub(&script, &[]);
    let pid: i32 = wait_for(Duration::from_secs(30), "the job's pid", || {
        std::fs::read_to_string(&pid_file).ok().filter(|text| text.ends_with('\n'))?.trim().parse().ok()
    });
    let output = cluster.run("qsig", &["-s", "suspend", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("S"));
    wait_for(Duration::from_secs(10), "the script to stop", || (process_state(pid)? == 'T').then_some(()));
    let output = cluster.run("qsig", &["-s", "resume", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("R"));
    wait_for(Duration::from_secs(10), "the script to run again", || (process_state(pid)? != 'T').then_some(()));
    cluster.run("qsig", &["-s", "suspend", &id]);
    wait_for(Duration::from_secs(10), "the script to stop again", || (process_state(pid)? == 'T').then_some(()));
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 271, "a suspended job dies of SIGTERM too");
}

/// Issue 12, item 6: only `qsig -s suspend` (operators, managers) pauses the mom's walltime
/// clock. A plain `qsig -s STOP` by the owner, who then continues the processes directly, does
/// not: the job still ends at its walltime.
#[test]
fn a_job_its_owner_stops_and_continues_still_ends_at_its_walltime() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let pid_file = cluster.work.path().join("pid");
    let text = format!("#PBS -l walltime=00:00:04\necho $$ > {}\nwhile :; do sleep 0.1; done\n", pid_file.display());
    let script = cluster.script("stopped.sh", &text);
    let id = cluster.qsub(&script, &[]);
    let pid: i32 = wait_for(Duration::from_secs(30), "the job's pid", || {
        std::fs::read_to_string(&pid_file).ok().filter(|text| text.ends_with('\n'))?.trim().parse().ok()
    });
    let output = cluster.run("qsig", &["-s", "STOP", &id]);
    assert!(output.status.success(), "{}", stderr(&output));
    wait_for(Duration::from_secs(10), "the script to stop", || (process_state(pid)? == 'T').then_some(()));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("R"), "a plain signal is no suspension");
    // The owner continues their processes behind the server's back (the job's shell leads its
    // process group); the job may already be over.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGCONT);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), -29, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let stderr = std::fs::read_to_string(cluster.work.path().join(format!("stopped.sh.e{seq}"))).unwrap_or_default();
    assert!(stderr.contains("=>> PBS: job killed: walltime"), "{stderr}");
}

#[test]
fn bad_input_gets_the_reference_messages() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script("held.sh", "sleep 60\n");
    let held = cluster.qsub(&script, &["-h", "-l", "walltime=1:00:00"]);
    let running = cluster.qsub(&script, &["-r", "n"]);
    wait_state(&cluster, &running, "R");
    let mut report = String::new();
    // Unknown ids, other users' jobs and usage errors of these commands: errors.rs.
    let cases: &[(&str, &[&str])] = &[
        ("qalter", &["-l", "walltime=1:00:00,,mem=1gb", &held]),
        ("qalter", &["-p", "high", &held]),
        ("qalter", &["-l", "ncpus=64", &held]),
        ("qalter", &["-l", "frobs=1", &held]),
        ("qalter", &["-l", "ncpus=1", &running]),
        ("qalter", &["-a", "2460", &held]),
        ("qalter", &[]),
        ("qrerun", &[&held]),
        ("qrerun", &[&running]),
        ("qrerun", &["-W", "nonsense", &running]),
        ("qsig", &["-s", "SIGFOO", &running]),
        ("qsig", &["-s", "USR1", &held]),
        ("qsig", &["-s", "resume", &running]),
    ];
    for (command, args) in cases {
        let output = cluster.run(command, args);
        report.push_str(&format!(
            "$ {command} {}\nexit {:?}\n{}\n",
            args.join(" "),
            output.status.code(),
            stderr(&output)
        ));
    }
    assert_eq!(cluster.job_attr(&held, "Resource_List.walltime").as_deref(), Some("01:00:00"), "nothing changed");
    assert_eq!(cluster.job_attr(&running, "job_state").as_deref(), Some("R"));
    insta::assert_snapshot!(report);
}

#[test]
fn another_users_job_is_refused() {
    if !tests::root_or_skip("another_users_job_is_refused", "to act as another user") {
        return;
    }
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("mine.sh", "sleep 60\n");
    let held = cluster.qsub(&script, &["-h"]);
    let mut report = String::new();
    for (command, args) in [("qalter", vec!["-N", "theirs", held.as_str()]), ("qsig", vec![held.as_str()])] {
        let output = cluster.command(command).args(&args).uid(65534).gid(65534).output().unwrap();
        report.push_str(&format!(
            "$ {command} {}\nexit {:?}\n{}\n",
            args.join(" "),
            output.status.code(),
            stderr(&output)
        ));
    }
    assert_eq!(cluster.job_attr(&held, "Job_Name").as_deref(), Some("mine.sh"));
    insta::assert_snapshot!(report);
}
