//! Job arrays end to end: `%max` bounds how many subjobs run at once (from the subjobs' own
//! start and end times), every subjob sees its index and its array, output files are named
//! per subjob, `qstat` shows arrays as parents (`-t` adds the subjobs), `qdel` of one subjob
//! and of the whole array, and qsub's refusals.

use std::time::Duration;
use tests::{Cluster, Shape};

/// Reads `<prefix>.<index>` files of the work dir as epoch seconds.
fn times(cluster: &Cluster, prefix: &str) -> Vec<(u32, f64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(cluster.work.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(index) = name.strip_prefix(&format!("{prefix}.")).and_then(|index| index.parse::<u32>().ok()) {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            found.push((index, text.trim().parse::<f64>().unwrap_or_else(|_| panic!("{name}: {text:?}"))));
        }
    }
    found.sort_by_key(|(index, _)| *index);
    found
}

#[test]
fn slot_limit_is_never_exceeded_and_every_subjob_sees_its_index() {
    // 4 slots: without %2 four subjobs would run at once.
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 2, gpus: 0 });
    let script = cluster.script(
        "arr.sh",
        "#!/bin/sh\n#PBS -N arr\n#PBS -J 1-10%2\ncd \"$PBS_O_WORKDIR\"\ni=$PBS_ARRAY_INDEX\n\
         date +%s.%N > start.$i\n\
         echo \"$PBS_ARRAY_INDEX $PBS_ARRAYID $PBS_ARRAY_ID $PBS_JOBID\" > vars.$i\n\
         sleep 1\ndate +%s.%N > end.$i\necho out $i\necho err $i >&2\n",
    );
    let id = cluster.qsub(&script, &[]);
    let seq = id.split('[').next().unwrap().to_string();
    assert_eq!(id, format!("{seq}[].{}", cluster.server_name));
    cluster.wait_finished(&id, Duration::from_secs(120));

    let starts = times(&cluster, "start");
    let ends = times(&cluster, "end");
    assert_eq!(starts.iter().map(|(index, _)| *index).collect::<Vec<_>>(), (1..=10).collect::<Vec<_>>());
    assert_eq!(ends.len(), 10, "every subjob ran to its end exactly once");
    let most = starts
        .iter()
        .map(|(_, start)| {
            starts
                .iter()
                .zip(&ends)
                .filter(|((_, other_start), (_, other_end))| other_start <= start && start < other_end)
                .count()
        })
        .max()
        .unwrap();
    assert!(most <= 2, "{most} subjobs overlapped: starts {starts:?} ends {ends:?}");
    assert!(most >= 1);

    for index in 1..=10 {
        let vars = std::fs::read_to_string(cluster.work.path().join(format!("vars.{index}"))).unwrap();
        let sub = format!("{seq}[{index}].{}", cluster.server_name);
        assert_eq!(vars, format!("{index} {index} {id} {sub}\n"), "subjob {index}");
        let out = cluster.work.path().join(format!("arr.o{seq}.{index}"));
        let err = cluster.work.path().join(format!("arr.e{seq}.{index}"));
        let out = tests::wait_for(Duration::from_secs(20), "output delivered", || std::fs::read_to_string(&out).ok());
        assert_eq!(out, format!("out {index}\n"));
        assert_eq!(std::fs::read_to_string(err).unwrap(), format!("err {index}\n"));
        assert_eq!(cluster.job_attr(&sub, "job_state").as_deref(), Some("X"));
        assert_eq!(cluster.job_attr(&sub, "Exit_status").as_deref(), Some("0"));
    }
    let attrs = cluster.job_attrs(&id).unwrap();
    let array_attrs: Vec<String> = attrs
        .iter()
        .filter(|(name, _)| name.starts_with("array") || name == "max_run_subjobs")
        .map(|(name, value)| format!("{name} = {value}"))
        .collect();
    assert_eq!(
        array_attrs,
        [
            "array = True",
            "array_state_count = Queued:0 Running:0 Exiting:0 Expired:10 ",
            "array_indices_submitted = 1-10",
            "array_indices_remaining = -",
            "max_run_subjobs = 2",
        ]
    );
}

fn settings(cluster: &Cluster) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(&format!(r"\.{}\b", cluster.server_name), ".[SERVER]");
    settings.add_filter(r"\d\d:\d\d:\d\d ([A-Z]) workq", "[CPUT] $1 workq");
    let user = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    settings.add_filter(&format!(r"\b{user}\b"), "[USER]");
    settings
}

#[test]
fn qstat_shows_the_parent_t_the_subjobs_and_qdel_ends_one_subjob_or_the_array() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script("long.sh", "#!/bin/sh\nsleep 60\n");
    let id = cluster.qsub(&script, &["-N", "longarr", "-t", "0-3%1"]);
    let seq = id.split('[').next().unwrap().to_string();
    let first = format!("{seq}[0]");
    tests::wait_for(Duration::from_secs(30), "the first subjob to run", || {
        (cluster.job_attr(&first, "job_state")? == "R").then_some(())
    });
    let settings = settings(&cluster);
    let _guard = settings.bind_to_scope();
    let run = |args: &[&str]| {
        let output = cluster.run("qstat", args);
        assert!(output.status.success(), "qstat {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    insta::assert_snapshot!("array_qstat_default", run(&[]));
    insta::assert_snapshot!("array_qstat_t", run(&["-t"]));
    assert_eq!(run(&["-J", "-t"]), run(&["-t", &format!("{seq}[]")]), "-J lists arrays only");

    // One queued subjob: it ends at once, the others stay.
    let output = cluster.run("qdel", &[&format!("{seq}[2]")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.job_attr(&format!("{seq}[2]"), "job_state").as_deref(), Some("X"));
    assert_eq!(cluster.job_attr(&format!("{seq}[3]"), "job_state").as_deref(), Some("Q"));
    assert_eq!(cluster.job_attr(&id, "array_indices_remaining").as_deref(), Some("1,3"));

    // The whole array: the running subjob is killed, the parent ends when it is gone.
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    cluster.wait_finished(&id, Duration::from_secs(30));
    for index in 0..=3 {
        assert_eq!(cluster.job_attr(&format!("{seq}[{index}]"), "job_state").as_deref(), Some("X"), "{index}");
    }
    assert_eq!(cluster.job_attr(&first, "Exit_status").as_deref(), Some("271"), "killed by qdel");
    insta::assert_snapshot!("array_qstat_xt_after_qdel", run(&["-x", "-t"]));
    let output = cluster.run("qstat", &[]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "a finished array leaves plain qstat");
}

#[test]
fn qsub_refuses_bad_ranges_and_arrays_with_i_or_r_n() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("a.sh", "true\n");
    let directive = cluster.script("d.sh", "#PBS -J 5-1\ntrue\n");
    let mut text = String::new();
    for args in [
        vec!["-J", "10-1"],
        vec!["-J", "1-20000"],
        vec!["-J", "1-10:0"],
        vec!["-t", "1-3,x"],
        vec!["-t", "1-3%0"],
        vec!["-J", "1-3", "-t", "1-3"],
        vec!["-I", "-J", "1-3"],
        vec!["-r", "n", "-J", "1-3"],
    ] {
        let output = cluster.command("qsub").args(&args).arg(&script).output().unwrap();
        text.push_str(&format!(
            "{}: exit {:?}: {}",
            args.join(" "),
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        ));
        assert!(output.stdout.is_empty());
    }
    let output = cluster.command("qsub").arg(&directive).output().unwrap();
    text.push_str(&format!(
        "#PBS -J 5-1: exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    ));
    insta::assert_snapshot!("array_qsub_refusals", text);
    let output = cluster.run("qstat", &["-x"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "nothing was submitted");
}

#[test]
fn an_array_survives_a_server_restart_and_keeps_its_slot_limit() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script(
        "slow.sh",
        "#!/bin/sh\ncd \"$PBS_O_WORKDIR\"\ntouch ran.$PBS_ARRAY_INDEX\nwhile [ ! -e go ]; do sleep 0.1; done\n",
    );
    let id = cluster.qsub(&script, &["-J", "1-3%1"]);
    let seq = id.split('[').next().unwrap().to_string();
    let ran = cluster.work.path().join("ran.1");
    tests::wait_for(Duration::from_secs(30), "subjob 1 to run", || ran.exists().then_some(()));
    let pid = cluster.server_pid();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    tests::wait_for(Duration::from_secs(20), "the server to die", || tests::process_gone(pid).then_some(()));
    cluster.start_server();
    tests::wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    // The parent is known as the array again (its key alone cannot tell).
    assert_eq!(cluster.job_attr(&id, "array").as_deref(), Some("True"));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("B"));
    assert_eq!(cluster.job_attr(&format!("{seq}[2]"), "job_state").as_deref(), Some("Q"), "%1 still holds");
    std::fs::write(cluster.work.path().join("go"), "").unwrap();
    cluster.wait_finished(&id, Duration::from_secs(60));
    for index in 1..=3 {
        assert!(cluster.work.path().join(format!("ran.{index}")).exists(), "subjob {index} ran");
        assert_eq!(cluster.job_attr(&format!("{seq}[{index}]"), "Exit_status").as_deref(), Some("0"));
    }
}

#[test]
fn qalter_of_a_queued_array_changes_the_parent_and_its_subjobs_but_not_one_subjob() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("a.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h", "-J", "1-3", "-l", "walltime=00:01:00"]);
    let seq = id.split('[').next().unwrap().to_string();
    let sub = format!("{seq}[2]");
    let output = cluster.run("qalter", &["-l", "walltime=00:05:00", "-N", "renamed", &id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let check = |cluster: &Cluster| {
        for job in [id.as_str(), sub.as_str()] {
            assert_eq!(cluster.job_attr(job, "Job_Name").as_deref(), Some("renamed"), "{job}");
            assert_eq!(cluster.job_attr(job, "Resource_List.walltime").as_deref(), Some("00:05:00"), "{job}");
        }
    };
    check(&cluster);

    let output = cluster.run("qalter", &["-N", "alone", &sub]);
    assert_eq!(output.status.code(), Some(15004 % 256));
    let stderr = String::from_utf8_lossy(&output.stderr).replace(&cluster.server_name, "[SERVER]");
    assert_eq!(stderr, format!("qalter: Invalid request {seq}[2].[SERVER]\n"));
    assert_eq!(cluster.job_attr(&sub, "Job_Name").as_deref(), Some("renamed"), "a refusal changes nothing");

    // The change is stored: after a restart parent and subjobs still have it.
    let pid = cluster.server_pid();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    tests::wait_for(Duration::from_secs(20), "the server to die", || tests::process_gone(pid).then_some(()));
    cluster.start_server();
    tests::wait_for(Duration::from_secs(20), "the server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    check(&cluster);
}

#[test]
fn range_ids_and_torque_t_select_subjobs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    // Released subjobs stay queued: nothing is scheduled.
    let output = cluster.run("qmgr", &["-c", "set server scheduling = False"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let script = cluster.script("a.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h", "-J", "1-6"]);
    let seq = id.split('[').next().unwrap().to_string();
    let state = |index: u32| cluster.job_attr(&format!("{seq}[{index}]"), "job_state").unwrap_or_default();
    let states = || (1..=6).map(state).collect::<String>();
    let ok = |command: &str, args: &[&str]| {
        let output = cluster.run(command, args);
        assert!(output.status.success(), "{command} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    ok("qrls", &["-t", "2-3", &id]);
    assert_eq!(states(), "HQQHHH");
    ok("qhold", &[&format!("{seq}[2-3]")]);
    ok("qrls", &[&format!("{seq}[1-5:2]")]);
    assert_eq!(states(), "QHQHQH");
    ok("qdel", &["-t", "5-6", &format!("{seq}[]")]);
    ok("qdel", &[&format!("{seq}[1,3]")]);
    assert_eq!(states(), "XHXHXX");

    let output = cluster.run("qstat", &[&format!("{seq}[2-4]")]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let listed: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .skip(2)
        .map(|line| line.split_whitespace().next().unwrap().to_string())
        .collect();
    let short = cluster.server_name.split('.').next().unwrap();
    assert_eq!(listed, [2, 3, 4].map(|index| format!("{seq}[{index}].{short}")));

    let output = cluster.run("qdel", &[&format!("{seq}[4-9]")]);
    assert_eq!(output.status.code(), Some(153));
    assert_eq!(String::from_utf8_lossy(&output.stderr), format!("qdel: Unknown Job Id {seq}[4-9]\n"));
    assert_eq!(states(), "XHXHXX", "a bad range changes nothing");
}

#[test]
fn torque_subjobs_see_name_dash_index_as_pbs_jobname() {
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &["--flavor", "torque"]);
    let script =
        cluster.script("named.sh", "#!/bin/sh\ncd \"$PBS_O_WORKDIR\"\necho \"$PBS_JOBNAME\" > name.$PBS_ARRAYID\n");
    cluster.qsub(&script, &["-N", "tq", "-t", "1-2"]);
    for index in 1..=2 {
        let path = cluster.work.path().join(format!("name.{index}"));
        let name = tests::wait_for(Duration::from_secs(60), "the name file", || {
            std::fs::read_to_string(&path).ok().filter(|text| text.ends_with('\n'))
        });
        assert_eq!(name, format!("tq-{index}\n"));
    }
}

#[test]
fn qsig_and_qrerun_of_a_range_or_the_parent_reach_the_running_subjobs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script("s.sh", "#!/bin/sh\nsleep 60\n");
    let id = cluster.qsub(&script, &["-J", "1-3"]);
    let seq = id.split('[').next().unwrap().to_string();
    let state = |index: u32| cluster.job_attr(&format!("{seq}[{index}]"), "job_state").unwrap_or_default();
    let states = || (1..=3).map(state).collect::<String>();
    tests::wait_for(Duration::from_secs(30), "two subjobs to run", || (states() == "RRQ").then_some(()));
    let run = |command: &str, args: &[&str]| {
        let output = cluster.run(command, args);
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    assert_eq!(run("qsig", &["-s", "suspend", &format!("{seq}[1-3]")]), (Some(0), String::new()));
    assert_eq!(states(), "SSQ");
    assert_eq!(run("qsig", &["-s", "resume", &format!("{seq}[]")]), (Some(0), String::new()));
    assert_eq!(states(), "RRQ");
    let (code, stderr) = run("qsig", &["-s", "resume", &format!("{seq}[1-2]")]);
    assert_eq!(code, Some(168), "{stderr}");
    assert_eq!(stderr, format!("qsig: Request invalid for state of job {seq}[1-2]\n"));

    assert_eq!(run("qrerun", &[&format!("{seq}[2-3]")]), (Some(0), String::new()));
    tests::wait_for(Duration::from_secs(30), "2 to run again", || {
        (cluster.job_attr(&format!("{seq}[2]"), "run_count")? == "2").then_some(())
    });
    assert_eq!(run("qdel", &[&format!("{seq}[]")]), (Some(0), String::new()));
}
