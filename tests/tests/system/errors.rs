//! The error contract of every command, end to end, in one place: for an unknown job id (also
//! malformed ids), a job of another user, and a malformed argument, each command prints the
//! reference's message on stderr and exits with the reference's code, and changes nothing.
//! Commands without job ids cover their equivalents (qmgr: unknown object or attribute, not a
//! manager; tracejob: unknown id, unreadable logs; pbsnodes and qselect: unknown node, queue or
//! resource). Each case is one entry of a table; the transcript (`$ command args`, stderr,
//! stdout if any, `[exit N]`) is snapshot-tested. Cases other tests pin down in context
//! (`qalter -l` limits, qsig signal names, qmgr attribute values, bad `#PBS` lines) stay there.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use tests::{Cluster, Shape};

/// The `nobody` account: a second user that needs no setup.
const NOBODY: u32 = 65534;

/// Who runs a case: root (a manager, and the owner of `{ROOT}`) or `nobody` (the owner of
/// `{NOBODY}`, not a manager).
#[derive(Clone, Copy)]
enum Who {
    Root,
    Nobody,
}
use Who::{Nobody, Root};

/// One case: who runs which command with which arguments. In the arguments `{ROOT}` and
/// `{NOBODY}` stand for the two users' held jobs, `{SCRIPT}` for a job script, `{WORK}` for the
/// cluster's directory.
type Case<'a> = (Who, &'a str, &'a [&'a str]);

struct Transcript<'a> {
    cluster: &'a Cluster,
    /// Placeholders and what they stand for, in arguments and (reversed) in the transcript.
    names: Vec<(&'static str, String)>,
}

impl Transcript<'_> {
    /// Runs every case and returns the transcript, with ids and paths replaced by names.
    fn run(&self, cases: &[Case]) -> String {
        let mut text = String::new();
        for (who, program, args) in cases {
            let args: Vec<String> = args.iter().map(|arg| self.fill(arg)).collect();
            let mut command = self.cluster.command(program);
            command.args(&args).stdin(Stdio::null());
            if let Nobody = who {
                as_user(&mut command);
            }
            let output = command.output().expect("command runs");
            let prompt = if let Nobody = who { "nobody$" } else { "#" };
            text.push_str(&format!("{prompt} {program} {}\n", args.join(" ")));
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            let stdout = String::from_utf8_lossy(&output.stdout);
            if !stdout.is_empty() {
                text.push_str("[stdout]\n");
                text.push_str(&stdout);
            }
            text.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
        }
        let mut names = self.names.clone();
        names.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        for (name, value) in names {
            text = text.replace(&value, &format!("[{}]", name.trim_matches(['{', '}'])));
        }
        text
    }

    fn fill(&self, arg: &str) -> String {
        self.names.iter().fold(arg.to_string(), |arg, (name, value)| arg.replace(name, value))
    }
}

fn as_user(command: &mut Command) {
    command.uid(NOBODY).gid(NOBODY).env("HOME", "/").env("USER", "nobody");
}

/// Unknown and malformed job ids, unknown nodes, queues and resources.
const UNKNOWN: &[Case] = &[
    (Root, "qstat", &["999"]),
    (Root, "qstat", &["abc"]),
    (Root, "qstat", &["12[x]"]),
    (Root, "qstat", &["999", "{ROOT}"]),
    (Root, "qdel", &["999"]),
    (Root, "qdel", &["abc"]),
    (Root, "qdel", &["12[x]"]),
    (Root, "qhold", &["999"]),
    (Root, "qhold", &["abc"]),
    (Root, "qhold", &["999", "{ROOT}"]),
    (Root, "qdel", &["999", "abc"]),
    (Root, "qhold", &["abc", "999", "{ROOT}"]),
    (Root, "qrls", &["999.testsrv"]),
    (Root, "qrls", &["12[x]"]),
    (Root, "qalter", &["-N", "x", "999"]),
    (Root, "qalter", &["-N", "x", "abc"]),
    (Root, "qalter", &["-N", "x", "12[x]"]),
    (Root, "qrerun", &["999"]),
    (Root, "qrerun", &["abc"]),
    (Root, "qsig", &["999"]),
    (Root, "qsig", &["12[x]"]),
    (Root, "qmove", &["workq", "999"]),
    (Root, "qmove", &["workq", "abc"]),
    (Root, "qmove", &["nosuch", "{ROOT}"]),
    (Root, "qsub", &["-q", "nosuch", "{SCRIPT}"]),
    (Root, "qsub", &["-W", "depend=afterok:999", "{SCRIPT}"]),
    (Root, "qsub", &["-W", "depend=afterok:abc", "{SCRIPT}"]),
    (Root, "qselect", &["-q", "nosuch"]),
    (Root, "qselect", &["-l", "frobs.eq.1"]),
    (Root, "pbsnodes", &["nosuch"]),
    (Root, "pbsnodes", &["-o", "nosuch"]),
    (Root, "pbsnodes", &["-C", "note", "node1", "nosuch"]),
    (Root, "qmgr", &["-c", "list queue nosuch"]),
    (Root, "qmgr", &["-c", "list node nosuch"]),
    (Root, "qmgr", &["-c", "set server bogus = 1"]),
    (Root, "qmgr", &["-c", "set server bogus=1"]),
    (Root, "qmgr", &["-c", "unset queue workq bogus"]),
    (Root, "tracejob", &["999"]),
    (Root, "tracejob", &["abc"]),
    (Root, "tracejob", &["-p", "{WORK}/nosuch", "999"]),
];

/// Another user's job, holds a user may not set, and manager-only requests.
const ANOTHER_USER: &[Case] = &[
    (Nobody, "qdel", &["{ROOT}"]),
    (Nobody, "qhold", &["{ROOT}"]),
    (Nobody, "qrls", &["{ROOT}"]),
    (Nobody, "qrls", &["-h", "o", "{NOBODY}"]),
    (Nobody, "qhold", &["-h", "s", "{NOBODY}"]),
    (Nobody, "qalter", &["-N", "theirs", "{ROOT}"]),
    (Nobody, "qrerun", &["{ROOT}"]),
    (Nobody, "qsig", &["{ROOT}"]),
    (Nobody, "qmove", &["workq", "{ROOT}"]),
    (Nobody, "qsub", &["-W", "depend=beforeok:{ROOT}", "{SCRIPT}"]),
    (Nobody, "pbsnodes", &["-o", "node1"]),
    (Nobody, "pbsnodes", &["-C", "mine now", "node1"]),
    (Nobody, "qmgr", &["-c", "set server scheduling = false"]),
    (Nobody, "qmgr", &["-c", "create queue mine"]),
];

/// Malformed arguments: usage errors exit 2; value errors the server finds, the PBS code.
const MALFORMED: &[Case] = &[
    (Root, "qstat", &["-Z"]),
    (Root, "qstat", &["-u"]),
    (Root, "qstat", &["-a", "-r"]),
    (Root, "qstat", &["-F", "xml", "-f"]),
    (Root, "qdel", &[]),
    (Root, "qdel", &["-Z", "{ROOT}"]),
    (Root, "qdel", &["-W", "bogus", "{ROOT}"]),
    (Root, "qhold", &["-h", "x", "{ROOT}"]),
    (Root, "qhold", &["-Z", "{ROOT}"]),
    (Root, "qrls", &["-h", "", "{ROOT}"]),
    (Root, "qrls", &[]),
    (Root, "qalter", &["-Z", "{ROOT}"]),
    (Root, "qalter", &["{ROOT}", "-N"]),
    (Root, "qalter", &["-r", "x", "{ROOT}"]),
    (Root, "qrerun", &[]),
    (Root, "qrerun", &["-Z", "{ROOT}"]),
    (Root, "qsig", &[]),
    (Root, "qsig", &["-Z", "{ROOT}"]),
    (Root, "qsig", &["{ROOT}", "-s"]),
    (Root, "qmove", &[]),
    (Root, "qmove", &["workq"]),
    (Root, "qmove", &["-Z", "workq", "{ROOT}"]),
    (Root, "qselect", &["-l", "ncpus=4"]),
    (Root, "qselect", &["-l", "walltime.gt.soon"]),
    (Root, "qselect", &["-s", "Z"]),
    (Root, "qselect", &["-p", "high"]),
    (Root, "qselect", &["-Z"]),
    (Root, "qselect", &["-q"]),
    (Root, "qselect", &["extra"]),
    (Root, "pbsnodes", &["-o"]),
    (Root, "pbsnodes", &["-o", "-r", "node1"]),
    (Root, "pbsnodes", &["-Z"]),
    (Root, "pbsnodes", &["-C"]),
    (Root, "qsub", &["-l", "walltime=abc", "{SCRIPT}"]),
    (Root, "qsub", &["-l", "ncpus=", "{SCRIPT}"]),
    (Root, "qsub", &["-W", "bogus=1", "{SCRIPT}"]),
    (Root, "qsub", &["-W", "bogus", "{SCRIPT}"]),
    (Root, "qsub", &["-Z", "{SCRIPT}"]),
    (Root, "qsub", &["{SCRIPT}", "-N"]),
    (Root, "qsub", &["-l"]),
    (Root, "qsub", &["-r", "x", "{SCRIPT}"]),
    (Root, "qmgr", &["-Z"]),
    (Root, "qmgr", &["-c"]),
    (Root, "qmgr", &["-c", "frob server"]),
    (Root, "qmgr", &["-c", "set server scheduling = maybe"]),
    (Root, "tracejob", &[]),
    (Root, "tracejob", &["-Z", "1"]),
    (Root, "tracejob", &["-n", "x", "1"]),
    (Root, "tracejob", &["1", "-n"]),
    // Not a PBS command: clap's own texts, exit 2.
    (Root, "minipbs", &["bogus"]),
    (Root, "minipbs", &["up", "--bogus"]),
];

#[test]
fn unknown_foreign_and_malformed_input() {
    if !tests::root_or_skip("unknown_foreign_and_malformed_input", "to act as another user") {
        return;
    }
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    let roots = cluster.qsub(&script, &["-h"]);
    let mut qsub_as_nobody = cluster.command("qsub");
    qsub_as_nobody.args(["-h"]).arg(&script).stdin(Stdio::null());
    as_user(&mut qsub_as_nobody);
    let output = qsub_as_nobody.output().unwrap();
    assert!(output.status.success(), "qsub as nobody: {}", String::from_utf8_lossy(&output.stderr));
    let nobodys = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let t = Transcript {
        cluster: &cluster,
        names: vec![
            ("{ROOT}", roots.clone()),
            ("{NOBODY}", nobodys.clone()),
            ("{SCRIPT}", script.display().to_string()),
            ("{WORK}", cluster.work.path().display().to_string()),
        ],
    };

    insta::assert_snapshot!("unknown_ids_nodes_queues", t.run(UNKNOWN));
    // `pbsnodes -C note node1 nosuch` commented node1 (OpenPBS marks the nodes it knows).
    assert!(cluster.run("pbsnodes", &["-C", "", "node1"]).status.success());
    insta::assert_snapshot!("another_users_job", t.run(ANOTHER_USER));
    insta::assert_snapshot!("malformed_arguments", t.run(MALFORMED));

    // Others' jobs are listed and selected (OpenPBS's default query_other_jobs).
    let listed = t.run(&[(Nobody, "qstat", &["{ROOT}"])]);
    assert!(listed.starts_with("nobody$ qstat [ROOT]\n[stdout]\nJob id"), "{listed}");
    assert!(listed.contains(" root ") && listed.ends_with("[exit 0]\n"), "others' jobs are listed: {listed}");
    let selected = t.run(&[(Nobody, "qselect", &[])]);
    assert_eq!(selected, "nobody$ qselect \n[stdout]\n[ROOT]\n[NOBODY]\n[exit 0]\n", "qselect sees every job");

    // Nothing changed: both jobs are still held by their user hold only, in workq, the node is
    // free and has no comment, no job was added and no queue created.
    for id in [&roots, &nobodys] {
        assert_eq!(cluster.job_attr(id, "job_state").as_deref(), Some("H"), "{id}");
        assert_eq!(cluster.job_attr(id, "Hold_Types").as_deref(), Some("u"), "{id}");
        assert_eq!(cluster.job_attr(id, "queue").as_deref(), Some("workq"), "{id}");
        assert_eq!(cluster.job_attr(id, "Job_Name").as_deref(), Some("held.sh"), "{id}");
    }
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["-a"]).stdout).unwrap();
    assert!(nodes.contains("     state = free\n"), "{nodes}");
    assert!(!nodes.contains("comment"), "{nodes}");
    let all = String::from_utf8(cluster.run("qselect", &["-x"]).stdout).unwrap();
    assert_eq!(all.lines().count(), 2, "{all}");
    let queues = String::from_utf8(cluster.run("qstat", &["-Q"]).stdout).unwrap();
    assert!(!queues.contains("mine"), "{queues}");
}
