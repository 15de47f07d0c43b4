//! Where features built apart meet, on a real cluster: a node taken offline with a comment
//! through qmgr keeps both across a server restart as a pbsnodes one does (and the server
//! restarts at all after a first qmgr command that is not about a queue), and the
//! accounting log follows a flavor set with qmgr at once (records as the displays); what
//! holds other users' jobs (the store, `server_priv`) is not readable by them.

use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn ok(cluster: &Cluster, program: &str, args: &[&str]) -> String {
    let output = cluster.run(program, args);
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_qmgr_node_comment_and_offline_state_survive_a_server_restart() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    ok(&cluster, "qmgr", &["-c", "set node node1 state = offline"]);
    ok(&cluster, "qmgr", &["-c", "set node node1 comment = \"bad fan\""]);
    let listed = ok(&cluster, "pbsnodes", &["-l"]);
    assert_eq!(listed, "node1                offline bad fan\n");
    let pid = cluster.server_pid();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    cluster.start_server();
    wait_for(LIMIT, "node1 back, still offline with its comment", || {
        let text = String::from_utf8_lossy(&cluster.run("pbsnodes", &["node1"]).stdout).into_owned();
        (text.contains("\n     state = offline\n") && text.contains("\n     comment = bad fan\n")).then_some(())
    });
    // pbsnodes clears what qmgr set.
    ok(&cluster, "pbsnodes", &["-r", "node1"]);
    ok(&cluster, "pbsnodes", &["-N", "", "node1"]);
    assert_eq!(ok(&cluster, "pbsnodes", &["-l"]), "");
}

#[test]
fn accounting_records_follow_a_flavor_set_with_qmgr() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    ok(&cluster, "qmgr", &["-c", "set server flavor = torque"]);
    let script = cluster.script("held.sh", "true\n");
    let id = cluster.qsub(&script, &["-h"]);
    let dir = cluster.state.path().join("server_priv/accounting");
    let prefix = format!(";Q;{id};");
    let message = wait_for(LIMIT, "the Q record", || {
        let entries = std::fs::read_dir(&dir).ok()?;
        entries.flatten().find_map(|entry| {
            let text = std::fs::read_to_string(entry.path()).ok()?;
            text.lines().find_map(|line| line.split_once(&prefix).map(|(_, message)| message.to_string()))
        })
    });
    assert_eq!(message, "queue=workq", "TORQUE's Q record carries only the queue");
}

#[test]
fn the_job_store_and_the_accounting_records_are_not_for_other_users() {
    use std::os::unix::fs::PermissionsExt;
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("secret.sh", "true\n");
    let id = cluster.qsub(&script, &["-h", "-v", "TOKEN=s3cret"]);
    assert!(!id.is_empty());
    let mode = |name: &str| {
        let path = cluster.state.path().join(name);
        std::fs::metadata(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display())).permissions().mode()
            & 0o777
    };
    // The database holds every job's script and environment (query_other_jobs or not).
    assert_eq!(mode("server.db"), 0o600);
    assert_eq!(mode("server_priv"), 0o750);
    for suffix in ["-wal", "-shm"] {
        if cluster.state.path().join(format!("server.db{suffix}")).exists() {
            assert_eq!(mode(&format!("server.db{suffix}")) & 0o077, 0, "server.db{suffix}");
        }
    }
}
