//! A panic in a server handler ends the server (as a failed commit does) instead of leaving it
//! serving half-changed state; a restart serves every job committed before. The panic comes
//! from the debug-only fault injection `MINIPBS_DEBUG_PANIC_ON_SUBMIT` (`server/src/shared.rs`,
//! compiled out of release builds).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

/// The job name that makes the faulty server panic while storing it.
const BOOM: &str = "boom";

/// Restarts the cluster's server with the fault injection on; returns its process.
fn restart_faulty_server(cluster: &Cluster) -> std::process::Child {
    let old = cluster.server_pid();
    // The harness's own command line for it (over TCP, with the port it listens on now).
    let argv = cluster.server_argv();
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(old), nix::sys::signal::Signal::SIGKILL);
    tests::wait_for(Duration::from_secs(10), "the old server to exit", || tests::process_gone(old).then_some(()));
    let log = std::fs::OpenOptions::new().append(true).open(cluster.state.path().join("logs/server.log")).unwrap();
    let child = Command::new(&argv[0])
        .args(&argv[1..])
        .env("MINIPBS_DEBUG_PANIC_ON_SUBMIT", BOOM)
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("pbs_server starts");
    // `minipbs down` stops it if the test fails before it exits.
    std::fs::write(cluster.state.path().join("pids/server.pid"), child.id().to_string()).unwrap();
    child
}

/// Waits for `child` to exit and returns its exit code.
fn wait_exit(child: &mut std::process::Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the server") {
            return status.code();
        }
        assert!(Instant::now() < deadline, "the server did not exit within {limit:?} after its handler panicked");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_panicking_handler_ends_the_server_and_a_restart_serves_the_committed_jobs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "true\n");
    let before = cluster.qsub(&script, &["-h"]);
    let mut server = restart_faulty_server(&cluster);
    tests::wait_for(Duration::from_secs(20), "the faulty server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    let committed = cluster.qsub(&script, &["-h", "-N", "kept"]);

    let output = cluster.run("qsub", &["-h", "-N", BOOM, script.to_str().unwrap()]);
    assert!(!output.status.success(), "the submission whose handler panicked was acknowledged");
    assert_eq!(wait_exit(&mut server, Duration::from_secs(20)), Some(70), "{}", cluster.logs());
    let log = std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap();
    let logged = log.lines().find(|line| line.contains("pbs_server panicked")).expect("the panic is logged");
    assert!(logged.contains("MINIPBS_DEBUG_PANIC_ON_SUBMIT: job"), "{logged}");

    cluster.start_server();
    tests::wait_for(Duration::from_secs(20), "the restarted server to answer", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    for id in [&before, &committed] {
        assert_eq!(cluster.job_attr(id, "job_state").as_deref(), Some("H"), "{id} after the restart");
    }
    let listing = cluster.run("qstat", &["-x"]);
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(!listing.contains(BOOM), "the job whose handler panicked was stored:\n{listing}");
}
