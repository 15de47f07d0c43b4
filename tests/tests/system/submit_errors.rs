//! Bad input at submit: clear message, non-zero exit, and nothing left behind.

use std::time::Duration;
use tests::{Cluster, Shape};

fn no_jobs(cluster: &Cluster) {
    let output = cluster.run("qstat", &["-x"]);
    assert!(output.status.success());
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "a job exists after a refused submit");
}

#[test]
fn bad_ppn_in_directive_names_line_and_value() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let script = cluster.script("bad.sh", "#!/bin/sh\n#PBS -N fine\n#PBS -l nodes=2:ppn=x\necho never\n");
    let output = cluster.command("qsub").arg(&script).output().unwrap();
    assert!(!output.status.success());
    assert_eq!(output.stdout, b"", "nothing on stdout");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 3"), "names the line: {stderr}");
    assert!(stderr.contains("ppn=x") || stderr.contains("'x'"), "names the bad value: {stderr}");
    insta::assert_snapshot!(stderr);
    no_jobs(&cluster);
}

#[test]
fn request_larger_than_any_node_is_refused_at_submit() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 4, gpus: 0 });
    let script = cluster.script("big.sh", "#PBS -l nodes=1:ppn=64\necho never\n");
    let output = cluster.command("qsub").arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(188), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("qsub: Job violates queue and/or server resource limits"), "{stderr}");
    insta::assert_snapshot!(stderr);
    no_jobs(&cluster);
}

#[test]
fn unknown_ids_and_queues() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let output = cluster.run("qstat", &["999"]);
    assert_eq!(output.status.code(), Some(153));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "qstat: Unknown Job Id 999.testsrv\n");
    let output = cluster.run("qdel", &["999.testsrv"]);
    assert_eq!(output.status.code(), Some(153));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "qdel: Unknown Job Id 999.testsrv\n");
    let script = cluster.script("q.sh", "true\n");
    let output = cluster.command("qsub").args(["-q", "nosuch"]).arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(170));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "qsub: Unknown queue\n");
    let output = cluster.command("qsub").args(["-l", "frobs=2"]).arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(187), "{}", String::from_utf8_lossy(&output.stderr));
    no_jobs(&cluster);
}

#[test]
fn crlf_script_is_refused() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("dos.sh", "#!/bin/sh\r\n#PBS -N x\r\necho hi\r\n");
    let output = cluster.command("qsub").arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cr, lf"), "{stderr}");
    no_jobs(&cluster);
}

#[test]
fn long_listings_arrive_whole() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "true\n");
    // Submitted through one shell loop to keep it quick; more than one reply frame's worth.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in $(seq 1100); do {} -h {} >/dev/null || exit 1; done",
            cluster.bin.join("qsub").display(),
            script.display()
        ))
        .env("PBS_CONF_FILE", &cluster.conf)
        .status()
        .unwrap();
    assert!(status.success());
    for args in [&["-x"][..], &["-a"][..], &["-f"][..]] {
        let output = cluster.run("qstat", args);
        assert!(output.status.success(), "qstat {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        let text = String::from_utf8_lossy(&output.stdout);
        let ids = text.lines().filter(|line| line.contains(".testsrv")).count();
        assert_eq!(ids, 1100, "qstat {args:?} listed {ids} jobs");
    }
}

#[test]
fn garbled_and_oversized_messages_do_not_hurt_the_server() {
    use std::io::{Read, Write};
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let socket = cluster.state.path().join("server.sock");
    let attempts: Vec<Vec<u8>> = vec![
        b"\x00\x00\x00\x05{{{{{".to_vec(),
        vec![0xff, 0xff, 0xff, 0xff, b'x'],
        b"\x00\x00\x00\x2a{\"role\":\"Client\",\"protocol\":1}".to_vec(),
        b"\x00\x00\x00\x1f{\"role\":\"Client\",\"protocol\":999}".to_vec(),
        (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect(),
    ];
    for bytes in attempts {
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let _ = stream.write_all(&bytes);
        // End of input: a truncated frame must end the connection, not hang the server.
        let _ = stream.shutdown(std::net::Shutdown::Write);
        let mut sink = Vec::new();
        let _ = stream.read_to_end(&mut sink);
    }
    // A valid client that then sends a garbled request gets a typed error, and the server
    // keeps serving everyone else.
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    let hello = br#"{"role":"Client","protocol":1}"#;
    stream.write_all(&(hello.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(hello).unwrap();
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).unwrap();
    let mut welcome = vec![0u8; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut welcome).unwrap();
    assert!(String::from_utf8_lossy(&welcome).contains("Welcome"));
    let garbage = br#"{"DeleteJob":{"idz":7}}"#;
    stream.write_all(&(garbage.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(garbage).unwrap();
    stream.read_exact(&mut prefix).unwrap();
    let mut reply = vec![0u8; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut reply).unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.contains("InvalidRequest"), "{reply}");
    let script = cluster.script("after.sh", "exit 4\n");
    let id = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 4);
}

/// The server's answer to a `Hello` of `protocol` on its Unix socket, as text.
fn hello_reply(cluster: &Cluster, protocol: u32) -> String {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(cluster.state.path().join("server.sock")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let hello = format!(r#"{{"role":"Mom","protocol":{protocol}}}"#);
    stream.write_all(&(hello.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(hello.as_bytes()).unwrap();
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).unwrap();
    let mut reply = vec![0u8; u32::from_be_bytes(prefix) as usize];
    stream.read_exact(&mut reply).unwrap();
    String::from_utf8_lossy(&reply).into_owned()
}

/// Versions 1 (the first release), 2 (0.1.0) and 3 (this one) exist; 0 never did.
#[test]
fn the_server_accepts_this_and_the_previous_protocol_versions_only() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    assert_eq!(proto::PROTOCOL_VERSION, 3, "a new version: add the previous release's fixtures (proto/tests)");
    assert!(hello_reply(&cluster, 3).contains("Welcome"));
    assert!(hello_reply(&cluster, 2).contains("Welcome"), "a mom one version behind is upgraded later");
    assert!(hello_reply(&cluster, 1).contains("Welcome"), "and one two versions behind");
    let newer = hello_reply(&cluster, 4);
    assert!(newer.contains("ProtocolMismatch"), "{newer}");
    assert!(newer.contains("protocol version 4 not supported (server speaks 3)"), "{newer}");
    for version in [0, 9, u32::MAX] {
        let reply = hello_reply(&cluster, version);
        assert!(reply.contains(&format!("protocol version {version} not supported")), "{version}: {reply}");
    }
}
