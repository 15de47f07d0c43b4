//! pbsnodes as an administrator uses it: take a node offline with a comment, see it in
//! `pbsnodes -l` and `-a`, keep it across a server restart, watch the scheduler avoid it, and
//! put it back.

use std::time::Duration;
use tests::{Cluster, Shape};

fn kill9(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
}

fn stdout(cluster: &Cluster, program: &str, args: &[&str]) -> String {
    let output = cluster.run(program, args);
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.stderr, b"", "{program} {args:?} printed on stderr");
    String::from_utf8(output.stdout).unwrap()
}

fn first_exec_node(cluster: &Cluster, id: &str) -> String {
    let host = tests::wait_for(Duration::from_secs(30), &format!("{id} to run"), || {
        cluster.job_attr(id, "exec_host").filter(|_| cluster.job_attr(id, "job_state").as_deref() == Some("R"))
    });
    host.split('/').next().unwrap().to_string()
}

#[test]
fn an_offline_node_keeps_its_state_and_comment_and_gets_no_new_jobs() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    assert_eq!(stdout(&cluster, "pbsnodes", &["-l"]), "", "no node is down or offline yet");
    assert_eq!(stdout(&cluster, "pbsnodes", &["-o", "-C", "disk swap", "node1"]), "");
    insta::assert_snapshot!(stdout(&cluster, "pbsnodes", &["-l"]), @"node1                offline disk swap");
    let node1 = stdout(&cluster, "pbsnodes", &["node1"]);
    assert!(node1.contains("\n     state = offline\n") && node1.contains("\n     comment = disk swap\n"), "{node1}");

    // The offline flag and the operator's comment survive a server restart, and the mom coming
    // back does not clear them.
    kill9(cluster.server_pid());
    cluster.start_server();
    tests::wait_for(Duration::from_secs(30), "node1 registered again, still offline", || {
        let output = cluster.run("pbsnodes", &["node1"]);
        let text = String::from_utf8_lossy(&output.stdout);
        (text.contains("\n     state = offline\n") && text.contains("\n     comment = disk swap\n")).then_some(())
    });

    // New jobs go elsewhere; a job that fits only on the offline node waits for it.
    let flag = cluster.work.path().join("release");
    let script = cluster.script("wait.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\n", flag.display()));
    let first = cluster.qsub(&script, &[]);
    assert_eq!(first_exec_node(&cluster, &first), "node2", "{}", cluster.logs());
    let second = cluster.qsub(&script, &[]);
    assert_eq!(cluster.job_attr(&second, "job_state").as_deref(), Some("Q"));
    assert_eq!(stdout(&cluster, "pbsnodes", &["-r", "node1"]), "");
    assert_eq!(first_exec_node(&cluster, &second), "node1", "{}", cluster.logs());

    // -r keeps the comment (as OpenPBS does); an empty -N clears it.
    insta::assert_snapshot!(stdout(&cluster, "pbsnodes", &["-l", "all"]), @r"
    node1                job-busy disk swap
    node2                job-busy
    ");
    assert_eq!(stdout(&cluster, "pbsnodes", &["-N", "", "node1"]), "");
    assert!(!stdout(&cluster, "pbsnodes", &["node1"]).contains("comment"));
    std::fs::write(&flag, "").unwrap();
    for id in [&first, &second] {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(30)), 0);
    }
}
