//! The error contract of the commands, end to end: for an unknown job id (or node, queue,
//! resource), a job of another user, and a malformed argument, every command prints the
//! reference's message on stderr and exits with the reference's code, and changes nothing.
//! Each case is one line of a transcript (`$ command args`, its stderr, `[exit N]`) that is
//! snapshot-tested. Cases other tests already pin down (`qstat 999`, `qdel 999`, qdel of
//! another user's job, bad `#PBS` lines, `-l frobs=2` at submit) are not repeated here.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use tests::{Cluster, Shape};

/// The `nobody` account: a second user that needs no setup.
const NOBODY: u32 = 65534;

struct Transcript<'a> {
    cluster: &'a Cluster,
    /// Job ids to replace by names in the transcript, so it does not depend on numbering.
    ids: Vec<(String, &'static str)>,
    text: String,
}

impl Transcript<'_> {
    /// Runs `program args` (as `nobody` when `as_nobody`), records stderr and the exit code,
    /// and returns stdout.
    fn run(&mut self, as_nobody: bool, program: &str, args: &[&str]) -> String {
        let mut command = self.cluster.command(program);
        command.args(args).stdin(Stdio::null());
        if as_nobody {
            as_user(&mut command);
        }
        let output = command.output().expect("command runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let who = if as_nobody { "nobody$" } else { "#" };
        self.text.push_str(&format!("{who} {program} {}\n", args.join(" ")));
        self.text.push_str(&stderr);
        self.text.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// The transcript so far (ids replaced), and a fresh start.
    fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.text);
        for (id, name) in &self.ids {
            text = text.replace(id.as_str(), name);
        }
        text.replace(&self.cluster.work.path().display().to_string(), "[WORK]")
    }
}

fn as_user(command: &mut Command) {
    command.uid(NOBODY).gid(NOBODY).env("HOME", "/").env("USER", "nobody");
}

#[test]
fn unknown_foreign_and_malformed_input() {
    if !nix::unistd::getuid().is_root() {
        eprintln!("SKIPPED: unknown_foreign_and_malformed_input needs root to act as another user");
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
    let mut t = Transcript {
        cluster: &cluster,
        ids: vec![(roots.clone(), "[ROOTS_JOB]"), (nobodys.clone(), "[NOBODYS_JOB]")],
        text: String::new(),
    };

    // Unknown ids, nodes, queues and resources.
    t.run(false, "qhold", &["999"]);
    t.run(false, "qrls", &["999.testsrv"]);
    t.run(false, "qhold", &["999", &roots]);
    t.run(false, "qselect", &["-q", "nosuch"]);
    t.run(false, "qselect", &["-l", "frobs.eq.1"]);
    t.run(false, "pbsnodes", &["nosuch"]);
    t.run(false, "pbsnodes", &["-o", "nosuch"]);
    t.run(false, "pbsnodes", &["-C", "note", "node1", "nosuch"]);
    insta::assert_snapshot!("unknown_ids_nodes_queues", t.take());
    t.run(false, "pbsnodes", &["-C", "", "node1"]);
    t.take();

    // Another user's job, and holds a user may not set.
    t.run(true, "qhold", &[&roots]);
    t.run(true, "qrls", &[&roots]);
    t.run(true, "qrls", &["-h", "o", &nobodys]);
    t.run(true, "qhold", &["-h", "s", &nobodys]);
    t.run(true, "pbsnodes", &["-o", "node1"]);
    t.run(true, "pbsnodes", &["-C", "mine now", "node1"]);
    let listed = t.run(true, "qstat", &[&roots]);
    assert!(listed.contains(&roots[..roots.find('.').unwrap()]), "others' jobs are listed: {listed}");
    let selected = t.run(true, "qselect", &[]);
    assert_eq!(selected, format!("{roots}\n{nobodys}\n"), "qselect sees every job");
    insta::assert_snapshot!("another_users_job", t.take());

    // Malformed arguments: usage errors, exit 2 (qsub's value errors: the PBS error's code).
    let script_path = script.display().to_string();
    t.run(false, "qstat", &["-Z"]);
    t.run(false, "qstat", &["-a", "-r"]);
    t.run(false, "qstat", &["-F", "xml", "-f"]);
    t.run(false, "qdel", &[]);
    t.run(false, "qdel", &["-W", "bogus", &roots]);
    t.run(false, "qhold", &["-h", "x", &roots]);
    t.run(false, "qrls", &["-h", "", &roots]);
    t.run(false, "qrls", &[]);
    t.run(false, "qselect", &["-l", "ncpus=4"]);
    t.run(false, "qselect", &["-l", "walltime.gt.soon"]);
    t.run(false, "qselect", &["-s", "Z"]);
    t.run(false, "qselect", &["-p", "high"]);
    t.run(false, "qselect", &["extra"]);
    t.run(false, "pbsnodes", &["-o"]);
    t.run(false, "pbsnodes", &["-o", "-r", "node1"]);
    t.run(false, "pbsnodes", &["-Z"]);
    t.run(false, "qsub", &["-l", "walltime=abc", &script_path]);
    t.run(false, "qsub", &["-l", "ncpus=", &script_path]);
    t.run(false, "qsub", &["-W", "bogus=1", &script_path]);
    t.run(false, "qsub", &["-W", "bogus", &script_path]);
    t.run(false, "qsub", &["-Z", &script_path]);
    insta::assert_snapshot!("malformed_arguments", t.take());

    // Nothing changed: both jobs are still held by their user hold only, the node is free and
    // has no comment, and no job was added.
    for id in [&roots, &nobodys] {
        assert_eq!(cluster.job_attr(id, "job_state").as_deref(), Some("H"), "{id}");
        assert_eq!(cluster.job_attr(id, "Hold_Types").as_deref(), Some("u"), "{id}");
    }
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["-a"]).stdout).unwrap();
    assert!(nodes.contains("     state = free\n"), "{nodes}");
    assert!(!nodes.contains("comment"), "{nodes}");
    let all = String::from_utf8(cluster.run("qselect", &["-x"]).stdout).unwrap();
    assert_eq!(all.lines().count(), 2, "{all}");
}
