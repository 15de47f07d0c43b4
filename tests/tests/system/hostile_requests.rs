//! Hostile requests and connections (issue 12, items 2 and 7): one request repeating a name
//! 20,000 times (a queue, a subjob range) must not make the server allocate per repetition; a
//! client that stops reading its reply is dropped; thousands of idle connections, before and
//! after the handshake, must not keep `qstat` or a mom out.
//!
//! Raw requests go over the server's Unix socket whatever the transport (unsealed frames); the
//! idle connections also go to the TCP port when the cluster runs over TCP.

use proto::{ClientRequest, ServerReply};
use std::os::unix::net::UnixStream;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

/// How much one hostile request may raise the server's peak resident size (the bound).
const PEAK_SLACK_KIB: u64 = 64 * 1024;

/// The server's peak resident size (`VmHWM`), KiB.
fn peak_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("server alive");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A client connection on the server's Unix socket, past the handshake.
fn connect(cluster: &Cluster) -> UnixStream {
    let mut stream = UnixStream::connect(cluster.state.path().join("server.sock")).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let hello = proto::Hello { role: proto::Role::Client, protocol: proto::PROTOCOL_VERSION };
    proto::frame::write(&mut stream, &hello).unwrap();
    match proto::frame::read(&mut stream).unwrap() {
        proto::HelloReply::Welcome { .. } => stream,
        other => panic!("{other:?}"),
    }
}

/// Sends one request and reads its whole reply (every frame of a long job list).
fn request(cluster: &Cluster, request: &ClientRequest) -> Vec<ServerReply> {
    let mut stream = connect(cluster);
    proto::frame::write(&mut stream, request).unwrap();
    let mut replies = Vec::new();
    loop {
        let reply: ServerReply = proto::frame::read(&mut stream).unwrap();
        let more = matches!(reply, ServerReply::Jobs { more: true, .. });
        replies.push(reply);
        if !more {
            return replies;
        }
    }
}

fn status(selectors: Vec<String>, subjobs: bool) -> ClientRequest {
    ClientRequest::StatusJob { selectors, history: false, users: Vec::new(), attrs: None, subjobs, arrays_only: false }
}

/// The job ids of a (multi-frame) status reply, and its errors' messages.
fn listed(replies: &[ServerReply]) -> (Vec<String>, Vec<String>) {
    let (mut ids, mut errors) = (Vec::new(), Vec::new());
    for reply in replies {
        match reply {
            ServerReply::Jobs { jobs, errors: failed, .. } => {
                ids.extend(jobs.iter().map(|job| job.id.clone()));
                errors.extend(failed.iter().map(|error| error.message.clone()));
            }
            ServerReply::Done { errors: failed } => errors.extend(failed.iter().map(|error| error.message.clone())),
            other => panic!("{:.300}", format!("{other:?}")),
        }
    }
    (ids, errors)
}

#[test]
fn repeated_selectors_and_ranges_do_not_grow_the_server() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    for _ in 0..5 {
        cluster.qsub(&script, &["-h"]);
    }
    let array = cluster.qsub(&script, &["-h", "-J", "0-9"]);
    let range = array.replace("[]", "[0-9]");
    let pid = cluster.server_pid();
    let before = peak_kib(pid);

    // The command itself, as a user would type it.
    let workq = vec!["workq"; 20_000];
    let output = cluster.run("qstat", &workq);
    let lines = String::from_utf8_lossy(&output.stdout).lines().count();
    let by_queue = listed(&request(&cluster, &status(vec!["workq".into(); 20_000], false)));
    let by_range = listed(&request(&cluster, &status(vec![range.clone(); 20_000], true)));
    let ids = vec![range.clone(); 20_000];
    let held = listed(&request(&cluster, &ClientRequest::HoldJob { ids: ids.clone(), hold_types: "u".into() }));
    let deleted = listed(&request(&cluster, &ClientRequest::DeleteJob { ids, force: false, history: false }));
    let after = peak_kib(pid);

    assert!(
        after < before + PEAK_SLACK_KIB,
        "the server's peak RSS went from {before} KiB to {after} KiB for requests repeating one name 20,000 times"
    );
    assert!(output.status.success() && lines == 2 + 6, "qstat lists each job once: {lines} lines\n{output:?}");
    assert_eq!((by_queue.0.len(), by_queue.1.len()), (6, 0), "each job of workq once");
    assert_eq!((by_range.0.len(), by_range.1.len()), (10, 0), "each subjob of the range once");
    assert_eq!(held.1, Vec::<String>::new());
    assert_eq!(deleted.1, Vec::<String>::new());
}

#[test]
fn too_many_names_in_one_request_are_refused_whole() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h"]);
    let mut ids: Vec<String> = (0..100_000).map(|seq| format!("{}.testsrv", seq + 1000)).collect();
    ids.push(id.clone());
    let replies = request(&cluster, &ClientRequest::DeleteJob { ids, force: false, history: false });
    match &replies[..] {
        [ServerReply::Error(error)] => {
            assert_eq!(error.code, proto::error::ErrorCode::InvalidRequest);
            assert_eq!(error.message, "Invalid request: more than 100000 distinct job ids");
        }
        other => panic!("{:.300}", format!("{other:?}")),
    }
    assert!(cluster.job_attr(&id, "job_state").is_some_and(|state| state == "H"), "nothing was deleted");

    // Ranges are counted before they are expanded: together they may name at most
    // MAX_ARRAY_SIZE plus the jobs there are.
    let array = cluster.qsub(&script, &["-h", "-J", "0-9999"]);
    let ranges: Vec<String> = (0..100).map(|start| array.replace("[]", &format!("[{start}-9999]"))).collect();
    let (ids, errors) = listed(&request(&cluster, &status(ranges, true)));
    assert_eq!(ids.len(), 10_000, "every subjob once");
    assert!(!errors.is_empty() && errors.iter().all(|error| error.contains("the subjob ranges name more than")));
}

#[test]
fn a_client_that_stops_reading_is_dropped() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    cluster.qsub(&script, &["-h", "-J", "0-1999"]);
    let mut stream = connect(&cluster);
    // Thousands of full listings, far more than the socket buffers hold; never read.
    proto::frame::write(&mut stream, &status(Vec::new(), true)).unwrap();
    wait_for(Duration::from_secs(90), "the server to drop the client that does not read", || {
        server_log(&cluster).contains("client not reading its reply").then_some(())
    });
    // What the server had written is still there, then the end of the stream.
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let read = std::io::Read::read_to_end(&mut stream, &mut rest);
    assert!(read.is_ok(), "connection not closed: {read:?} after {} bytes", rest.len());
    let output = cluster.run("qstat", &[]);
    assert!(output.status.success(), "{output:?}");
}

fn server_log(cluster: &Cluster) -> String {
    std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap_or_default()
}
