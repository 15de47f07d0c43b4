//! The server link: an absent server at start, heartbeats, reconnects with re-registration,
//! obit resend until ObitAck, and stale jobs.

use crate::support::{launch, live_session_members, Harness};
use proto::mom::{MomToServer, ServerToMom};
use std::fs;
use tokio::io::AsyncReadExt;

/// A script that runs until `go` exists, then exits 7.
fn wait_for_go(go: &std::path::Path) -> String {
    format!("while [ ! -e {} ]; do sleep 0.05; done\nexit 7\n", go.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_reregisters_and_resends_obits_until_acked() {
    // The server is absent when the mom starts.
    let mut harness = Harness::without_server();
    harness.start_mom();
    harness.listen();
    let mut server = harness.accept().await;
    assert!(server.registration.jobs.is_empty());
    let first_start_id = server.registration.start_id.clone();
    assert!(!first_start_id.is_empty());

    let go = harness.out().join("go");
    server.run(launch("20.testserver", &wait_for_go(&go), &harness.out())).await;
    let sid = server.started("20.testserver").await;

    // Server restart while the job runs: the job keeps running and is listed again.
    drop(server);
    let mut server = harness.accept().await;
    assert_eq!(server.registration.jobs, vec!["20.testserver"]);
    assert_eq!(server.registration.start_id, first_start_id, "same mom process");
    assert!(!live_session_members(sid).is_empty(), "job should survive the disconnect");

    fs::write(&go, "").unwrap();
    let obit = server.ended("20.testserver").await;
    assert_eq!(obit.exit_status, 7);

    // Not acknowledged: still listed (so the server does not take it for lost) and resent
    // after the next registration.
    drop(server);
    let mut server = harness.accept().await;
    assert_eq!(server.registration.jobs, vec!["20.testserver"]);
    match server.recv().await {
        MomToServer::JobEnded(resent) => assert_eq!(resent, obit),
        other => panic!("expected the obit first, got {other:?}"),
    }
    server.send(ServerToMom::ObitAck { job_id: "20.testserver".into() }).await;
    // Once a later job ends, the ack was processed (messages are handled in order).
    server.run(launch("21.testserver", "exit 0\n", &harness.out())).await;
    server.ended("21.testserver").await;
    server.send(ServerToMom::ObitAck { job_id: "21.testserver".into() }).await;
    server.run(launch("22.testserver", "exit 0\n", &harness.out())).await;
    server.ended("22.testserver").await;

    // Acknowledged obits are not resent: the first job-related message after this
    // registration is the start of the marker job.
    drop(server);
    let mut server = harness.accept().await;
    let mut seen = Vec::new();
    server.run(launch("23.testserver", "exit 0\n", &harness.out())).await;
    loop {
        match server.recv().await {
            MomToServer::JobStarted { job_id, .. } if job_id == "23.testserver" => break,
            other => seen.push(other),
        }
    }
    let resent: Vec<String> = seen
        .iter()
        .filter_map(|m| match m {
            MomToServer::JobEnded(obit) => Some(obit.job_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(resent, vec!["22.testserver"], "only the unacknowledged obit is resent");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_flow() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let mut stream_heartbeats = 0;
    while stream_heartbeats < 3 {
        if server.recv_any().await == MomToServer::Heartbeat {
            stream_heartbeats += 1;
        }
    }
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_jobs_are_killed_after_registration() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    server.run(launch("24.testserver", "sleep 1000\n", &harness.out())).await;
    let sid = server.started("24.testserver").await;
    drop(server);
    // The restarted server does not know the job: it reports it stale.
    let mut server = harness.accept_with_stale(vec!["24.testserver".into()]).await;
    assert_eq!(server.registration.jobs, vec!["24.testserver"]);
    let obit = server.ended("24.testserver").await;
    assert_eq!(obit.exit_status, 271);
    assert_eq!(live_session_members(sid), Vec::<i32>::new());
    harness.stop().await;
}

/// Anyone can bind a socket where the server's should be (a stale one removed, a wrong
/// `--socket`): the mom checks who serves it (`SO_PEERCRED`) and sends such a socket nothing,
/// not even its `Hello` or its job list, so it cannot be told to run anything either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_socket_served_by_another_uid_gets_nothing() {
    if !nix::unistd::geteuid().is_root() {
        assert!(std::env::var_os("CI").is_none(), "a_server_socket_served_by_another_uid_gets_nothing needs root");
        println!("SKIPPED: a_server_socket_served_by_another_uid_gets_nothing needs root (another uid's socket)");
        return;
    }
    let nobody = nix::unistd::User::from_name("nobody").unwrap().expect("user nobody");
    let mut harness = Harness::without_server();
    harness.listen_as(nobody.uid.as_raw(), nobody.gid.as_raw());
    harness.start_mom();
    // Twice: the mom hangs up at once, and again when it retries.
    for attempt in 0..2 {
        let mut stream = harness.accept_raw().await;
        let mut received = Vec::new();
        crate::support::within(stream.read_to_end(&mut received)).await.expect("read");
        assert!(received.is_empty(), "attempt {attempt}: the mom sent {} bytes to uid nobody", received.len());
    }
    harness.stop().await;
}
