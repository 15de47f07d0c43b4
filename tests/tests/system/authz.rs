//! Authorization end to end: operators and managers given to `minipbs up` (`--operators`,
//! `--managers`, passed to pbs_server) and by qmgr; what an operator may do and a manager
//! alone may; and that a job's environment and arguments are shown to its owner, operators
//! and managers only, in every qstat format. Needs root (creates users).

use crate::users::{as_user, TestUser};
use std::process::Stdio;
use std::time::Duration;
use tests::{Cluster, Shape};

/// Who runs a command: a created user, or `nobody` (a plain user who owns no job).
enum Who<'a> {
    User(&'static str, &'a TestUser),
    Nobody,
}

fn command(cluster: &Cluster, who: &Who, program: &str) -> std::process::Command {
    match who {
        Who::User(_, user) => as_user(cluster, user, program),
        Who::Nobody => {
            let mut command = cluster.command(program);
            std::os::unix::process::CommandExt::uid(&mut command, 65534);
            std::os::unix::process::CommandExt::gid(&mut command, 65534);
            command.env("HOME", "/").env("USER", "nobody");
            command
        }
    }
}

fn label(who: &Who) -> &'static str {
    match who {
        Who::User(label, _) => label,
        Who::Nobody => "nobody",
    }
}

/// Runs each command and returns `who$ program args`, stderr and `[exit N]` per command, with
/// `names` (value -> placeholder) replaced.
fn transcript(cluster: &Cluster, names: &[(String, &str)], cases: &[(&Who, &str, &[&str])]) -> String {
    let mut text = String::new();
    for (who, program, args) in cases {
        let args: Vec<String> = args
            .iter()
            .map(|arg| names.iter().fold(arg.to_string(), |arg, (value, name)| arg.replace(name, value)))
            .collect();
        let output = command(cluster, who, program).args(&args).stdin(Stdio::null()).output().unwrap();
        text.push_str(&format!("{}$ {program} {}\n", label(who), args.join(" ")));
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        text.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
    }
    names.iter().fold(text, |text, (value, name)| text.replace(value.as_str(), name))
}

/// What `who` sees of `qstat <args>` (stdout and stderr).
fn qstat(cluster: &Cluster, who: &Who, args: &[&str]) -> String {
    let output = command(cluster, who, "qstat").args(args).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "qstat {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Whether `who` sees the environment and arguments of `id` in any of qstat's full formats.
fn sees_private(cluster: &Cluster, who: &Who, id: &str) -> bool {
    let formats: [&[&str]; 3] = [&["-f"], &["-f", "-F", "json"], &["-x", "-f"]];
    let seen: Vec<bool> = formats
        .iter()
        .map(|format| {
            let text = qstat(cluster, who, &[format, &[id][..]].concat());
            assert!(text.contains("Job_Name"), "{text}");
            let private = text.contains("MY_TOKEN") || text.contains("Variable_List") || text.contains("Submit_arg");
            assert_eq!(private, text.contains("Variable_List"), "{format:?} shows part of it: {text}");
            private
        })
        .collect();
    assert!(seen.iter().all(|each| *each == seen[0]), "formats disagree: {seen:?}");
    seen[0]
}

#[test]
fn operators_and_managers_and_what_others_see_of_a_job() {
    if !tests::root_or_skip("operators_and_managers_and_what_others_see_of_a_job", "to create users") {
        return;
    }
    let (alice_user, oper_user, mgr_user) = (TestUser::create("al"), TestUser::create("op"), TestUser::create("mg"));
    let (oper_entry, mgr_entry) = (format!("{}@*", oper_user.name), format!("{}@*", mgr_user.name));
    let cluster =
        Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--operators", &oper_entry, "--managers", &mgr_entry]);
    let (alice, oper, mgr) =
        (Who::User("alice", &alice_user), Who::User("operator", &oper_user), Who::User("manager", &mgr_user));
    let flag = cluster.work.path().join("release");
    let waits = cluster.script("waits.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", flag.display()));
    let submit = |extra: &[&str]| {
        let output = as_user(&cluster, &alice_user, "qsub")
            .args(["-v", "MY_TOKEN=hunter2"])
            .args(extra)
            .arg(&waits)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    };
    let running = submit(&[]);
    tests::wait_for(Duration::from_secs(20), "the job to run", || {
        (cluster.job_attr(&running, "job_state")? == "R").then_some(())
    });
    let held = submit(&["-h"]);

    // The configured lists are qmgr's server attributes.
    let server = String::from_utf8(cluster.run("qmgr", &["-c", "list server"]).stdout).unwrap();
    assert!(server.contains(&format!("managers = {mgr_entry}")), "{server}");
    assert!(server.contains(&format!("operators = {oper_entry}")), "{server}");

    // Only the owner, operators and managers see the environment and the arguments.
    assert!(sees_private(&cluster, &alice, &held), "the owner sees them");
    assert!(sees_private(&cluster, &oper, &held) && sees_private(&cluster, &mgr, &held));
    assert!(!sees_private(&cluster, &Who::Nobody, &held), "another user does not");
    let selected = command(&cluster, &Who::Nobody, "qselect").stdin(Stdio::null()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&selected.stdout).lines().count(), 2, "others' jobs are still listed");

    let names = [
        (running.clone(), "[RUNNING]"),
        (held.clone(), "[HELD]"),
        (oper_user.name.clone(), "[operator]"),
        (mgr_user.name.clone(), "[manager]"),
        (alice_user.name.clone(), "[alice]"),
    ];
    let operator_cases: &[(&Who, &str, &[&str])] = &[
        (&alice, "qhold", &["-h", "o", "[HELD]"]),
        (&oper, "qhold", &["-h", "o", "[HELD]"]),
        (&alice, "qrls", &["-h", "o", "[HELD]"]),
        (&oper, "qrls", &["-h", "o", "[HELD]"]),
        (&oper, "qhold", &["-h", "s", "[HELD]"]),
        (&oper, "qalter", &["-N", "renamed", "[HELD]"]),
        (&oper, "qmove", &["workq", "[HELD]"]),
        (&alice, "qsig", &["-s", "suspend", "[RUNNING]"]),
        (&oper, "qsig", &["-s", "suspend", "[RUNNING]"]),
        (&oper, "qsig", &["-s", "resume", "[RUNNING]"]),
        (&oper, "pbsnodes", &["-o", "node1"]),
        (&oper, "pbsnodes", &["-r", "node1"]),
        (&oper, "qmgr", &["-c", "set node node1 comment = checked"]),
        (&oper, "qmgr", &["-c", "set server scheduling = true"]),
        (&oper, "qmgr", &["-c", "create queue mine"]),
        (&oper, "qdel", &["-W", "force", "[HELD]"]),
    ];
    insta::assert_snapshot!("operator", transcript(&cluster, &names, operator_cases));
    let manager_cases: &[(&Who, &str, &[&str])] = &[
        (&mgr, "qhold", &["-h", "s", "[HELD]"]),
        (&mgr, "qrls", &["-h", "s", "[HELD]"]),
        (&mgr, "qmgr", &["-c", "set server scheduling = true"]),
        (&mgr, "qmgr", &["-c", "set server operators += nobody@*"]),
        (&mgr, "qmgr", &["-c", "set server managers = *@*"]),
        (&mgr, "qdel", &["[HELD]"]),
    ];
    insta::assert_snapshot!("manager", transcript(&cluster, &names, manager_cases));
    assert_eq!(cluster.job_attr(&held, "Job_Name").as_deref(), Some("renamed"));
    assert_eq!(cluster.job_attr(&running, "job_state").as_deref(), Some("R"), "suspended and resumed");
    // nobody, an operator now (qmgr), sees them.
    assert!(sees_private(&cluster, &Who::Nobody, &running));

    std::fs::write(&flag, "").unwrap();
    assert_eq!(cluster.wait_finished(&running, Duration::from_secs(30)), 0, "{}", cluster.logs());
    // The logs anyone can read carry neither the environment nor the script.
    for entry in std::fs::read_dir(cluster.state.path().join("logs")).unwrap().flatten() {
        let log = std::fs::read_to_string(entry.path()).unwrap();
        assert!(!log.contains("hunter2") && !log.contains("while [ ! -e"), "{}: {log}", entry.path().display());
    }
}
