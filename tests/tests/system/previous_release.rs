//! A mom of the previous release keeps working with this server: the frames release 0.1.0's
//! mom sent (`proto/tests/fixtures/0.1.0/`, byte for byte, only the node's name and its job
//! list changed) register a node that this server then schedules on. (The decoding of every
//! fixture is `proto/tests/previous_release.rs`; the store of the previous release is
//! `server/src/store/tests/previous_release.rs`.)

use std::io::{Read, Write};
use std::time::Duration;
use tests::{Cluster, Shape};

/// A fixture of release 0.1.0, as its bytes.
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../proto/tests/fixtures/0.1.0").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// One frame as every release writes it: a 4-byte big-endian length, then the JSON body.
fn send(stream: &mut impl Write, body: &str) {
    stream.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
}

fn receive(stream: &mut impl Read) -> String {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(length) as usize];
    stream.read_exact(&mut body).unwrap();
    String::from_utf8(body).unwrap()
}

#[test]
fn a_mom_of_release_0_1_0_registers_and_is_given_work() {
    if !tests::root_or_skip("a_mom_of_release_0_1_0_registers_and_is_given_work", "a mom's connection is root's") {
        return;
    }
    // The Unix transport: the old mom's frames as they are (over TCP they are MUNGE-sealed).
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--transport", "unix"]);
    let mut stream = std::os::unix::net::UnixStream::connect(cluster.state.path().join("server.sock")).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let hello: serde_json::Value = serde_json::from_str(&fixture("hello_mom_sealed.json")).unwrap();
    // Over the Unix socket a hello carries no nonce (nothing to bind: identity is the kernel's).
    let hello = serde_json::json!({ "role": hello["role"], "protocol": hello["protocol"], "nonce": null });
    send(&mut stream, &hello.to_string());
    let welcome = receive(&mut stream);
    assert!(welcome.starts_with("{\"Welcome\""), "{welcome}");
    let register = fixture("register.json").replace("\"node1\"", "\"oldmom\"").replace("[\"10.head\"]", "[]");
    send(&mut stream, &register);
    tests::wait_for(Duration::from_secs(20), "the old mom's node to be free", || {
        let output = cluster.run("pbsnodes", &["oldmom"]);
        String::from_utf8_lossy(&output.stdout).contains("state = free").then_some(())
    });
    // The server gives it work in the shape that release understood.
    let script = cluster.script("old.sh", "true\n");
    let id = cluster.qsub(&script, &["-l", "select=1:host=oldmom"]);
    let run = loop {
        let frame = receive(&mut stream);
        if frame.contains("RunJob") {
            break frame;
        }
    };
    assert!(run.contains(&id), "{run}");
    let fields: serde_json::Value = serde_json::from_str(&run).unwrap();
    let old: serde_json::Value = serde_json::from_str(&fixture("run_job.json")).unwrap();
    let keys = |value: &serde_json::Value| -> Vec<String> {
        let launch = &value["RunJob"];
        let object = launch.get("launch").unwrap_or(launch);
        object.as_object().map(|map| map.keys().cloned().collect()).unwrap_or_default()
    };
    let (new_keys, old_keys) = (keys(&fields), keys(&old));
    for key in &old_keys {
        assert!(new_keys.contains(key), "the 0.1.0 mom needs {key:?} in RunJob: {run}");
    }
}
