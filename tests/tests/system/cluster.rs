//! The cluster transport on one host (loopback): TCP + MUNGE between the commands, the server
//! and the moms (`minipbs up --transport tcp`). A job runs; a credential of another MUNGE key
//! is refused and logged with the peer address; a mom registering under a live node's name
//! from another address is refused. Skipped (loudly) when MUNGE is not installed.

use proto::seal::{self, Binding, Direction, Nonce};
use proto::session::{self, FrameKey, SessionKey, Side};
use proto::{Hello, HelloReply, MomToServer, Role, ServerToMom};
use std::time::Duration;
use tests::{wait_for, Cluster, Munged, Shape};

fn tcp_cluster(nodes: u32) -> Cluster {
    Cluster::up_with(Shape { nodes, ppn: 1, gpus: 0 }, &["--transport", "tcp"])
}

fn server_log(cluster: &Cluster) -> String {
    std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap_or_default()
}

#[test]
fn a_job_runs_over_tcp_and_munge() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(2);
    let conf = std::fs::read_to_string(&cluster.conf).unwrap();
    let port = cluster.server_port().expect("server.port written");
    assert!(conf.contains(&format!("PBS_BATCH_SERVICE_PORT={port}\n")), "{conf}");
    assert!(conf.contains("PBS_MUNGE_SOCKET="), "{conf}");
    assert!(!conf.contains("PBS_SERVER_SOCKET"), "the commands must use TCP: {conf}");
    let script = cluster.script("hello.sh", "#!/bin/sh\necho hello over tcp\n");
    let id = cluster.qsub(&script, &["-l", "nodes=2:ppn=1"]);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let output = std::fs::read_to_string(cluster.work.path().join(format!("hello.sh.o{seq}"))).unwrap();
    assert_eq!(output, "hello over tcp\n");
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["-a"]).stdout).unwrap();
    assert_eq!(nodes.matches("     Mom = 127.0.0.1\n").count(), 2, "{nodes}");
    assert_eq!(nodes.matches("     Port = ").count(), 2, "{nodes}");
}

#[test]
fn a_credential_of_another_munge_key_is_refused_and_logged() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(1);
    let other = Munged::start();
    let conf = std::fs::read_to_string(&cluster.conf).unwrap();
    let (ours, _) = conf.split_once("PBS_MUNGE_SOCKET=").unwrap();
    let forged_conf = cluster.work.path().join("other-key.conf");
    std::fs::write(&forged_conf, format!("{ours}PBS_MUNGE_SOCKET={}\n", other.socket().display())).unwrap();
    let output = cluster.command("qstat").env("PBS_CONF_FILE", &forged_conf).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.starts_with("qstat: cannot connect to server testsrv ("), "{stderr}");
    assert!(stderr.contains("made with another MUNGE key"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let logged = wait_for(Duration::from_secs(10), "the refusal in the server log", || {
        server_log(&cluster).lines().find(|line| line.contains("refused a message from 127.0.0.1:")).map(String::from)
    });
    assert!(logged.contains("another MUNGE key"), "{logged}");
    // The server keeps serving the right key.
    assert!(cluster.run("qstat", &[]).status.success());
}

#[test]
fn a_missing_munged_is_one_clear_line_for_a_command_and_a_mom() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(1);
    let missing = cluster.work.path().join("no-munged.socket");
    let conf = std::fs::read_to_string(&cluster.conf).unwrap();
    let (ours, _) = conf.split_once("PBS_MUNGE_SOCKET=").unwrap();
    let broken_conf = cluster.work.path().join("no-munged.conf");
    std::fs::write(&broken_conf, format!("{ours}PBS_MUNGE_SOCKET={}\n", missing.display())).unwrap();
    let output = cluster.command("qstat").env("PBS_CONF_FILE", &broken_conf).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("cannot reach munged at {}", missing.display())), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A mom pointed at no munged stops at once with the reason, instead of retrying for ever.
    let mut argv = cluster.daemon_argv("node1");
    let at = argv.iter().position(|arg| arg == "--munge-socket").unwrap();
    argv[at + 1] = missing.display().to_string();
    let at = argv.iter().position(|arg| arg == "--name").unwrap();
    argv[at + 1] = "node7".to_string();
    let at = argv.iter().position(|arg| arg == "--spool").unwrap();
    argv[at + 1] = cluster.state.path().join("mom/node7").display().to_string();
    let output = std::process::Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let reason: Vec<&str> = stderr.lines().filter(|line| line.contains("munged")).collect();
    assert_eq!(reason.len(), 1, "{stderr}");
    assert!(reason[0].starts_with("pbs_mom: the TCP transport needs MUNGE: cannot reach munged at "), "{stderr}");
}

#[test]
fn a_second_mom_under_a_live_nodes_name_from_another_address_is_refused() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(1);
    let port = cluster.server_port().unwrap();
    let munge = cluster.state.path().join("munge/socket");
    let mut stream = connect_from("127.0.0.2", port);
    let nonce = Nonce::fresh().unwrap();
    // As a mom of release 0.1.0 (protocol 2) says it: every frame credentialed, bound to nonces.
    let hello = Hello { role: Role::Mom, protocol: 2, nonce: Some(nonce) };
    seal::write(&mut stream, &munge, &Direction::ToServer, &Binding::Opening, &hello).unwrap();
    let handshake = Direction::ServerToMom(String::new());
    let to_me = |sequence| [Binding::Bound { nonce, sequence }];
    let (_, _, reply): (_, _, HelloReply) = seal::read(&mut stream, &munge, &handshake, &to_me(0)).unwrap();
    let HelloReply::Welcome { nonce: Some(server_nonce), .. } = reply else { panic!("{reply:?}") };
    let registration = proto::mom::Registration {
        node: "node1".into(),
        np: 8,
        mem_bytes: 1 << 30,
        ngpus: 0,
        properties: Vec::new(),
        start_id: "impostor".into(),
        jobs: Vec::new(),
        port: 0,
        gpus: Vec::new(),
        gpu_states: Vec::new(),
        task_socket: None,
        heartbeat_ms: 0,
    };
    let to_server = Binding::Bound { nonce: server_nonce, sequence: 1 };
    seal::write(&mut stream, &munge, &Direction::ToServer, &to_server, &MomToServer::Register(registration)).unwrap();
    let to_node1 = Direction::ServerToMom("node1".into());
    let (_, _, answer): (_, _, ServerToMom) = seal::read(&mut stream, &munge, &to_node1, &to_me(1)).unwrap();
    let ServerToMom::Refused { message } = answer else { panic!("expected Refused, got {answer:?}") };
    assert!(message.starts_with("node node1 is connected from 127.0.0.1:"), "{message}");
    let log = server_log(&cluster);
    assert!(log.contains("refused the registration of node node1 from 127.0.0.2:"), "{log}");
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["node1"]).stdout).unwrap();
    assert!(nodes.contains("     Mom = 127.0.0.1\n") && nodes.contains("     state = free\n"), "{nodes}");
    assert!(nodes.contains("     pcpus = 1\n"), "the impostor's size was not taken: {nodes}");
}

/// A blocking TCP connection to 127.0.0.1:`port` from the local address `source`.
fn connect_from(source: &str, port: u16) -> std::net::TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
        socket.connect(([127, 0, 0, 1], port).into()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream
}

#[test]
fn a_silent_node_goes_down_with_its_reason_is_deleted_and_a_declared_node_comes_up() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(2);
    let node2 = cluster.daemon_pid("node2");
    signal(node2, nix::sys::signal::Signal::SIGSTOP);
    // node_timeout is 30 s: the link is open but silent.
    wait_for(Duration::from_secs(45), "node2 down for want of heartbeats", || {
        let text = String::from_utf8(cluster.run("pbsnodes", &["node2"]).stdout).ok()?;
        (text.contains("     state = down\n") && text.contains("     comment = node down: no heartbeat for 30 s\n"))
            .then_some(())
    });
    signal(node2, nix::sys::signal::Signal::SIGKILL);
    let delete = cluster.run("qmgr", &["-c", "delete node node2"]);
    assert!(delete.status.success(), "{}", String::from_utf8_lossy(&delete.stderr));
    let create = cluster.run("qmgr", &["-c", "create node node3"]);
    assert!(create.status.success(), "{}", String::from_utf8_lossy(&create.stderr));
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["-a"]).stdout).unwrap();
    assert!(!nodes.contains("node2"), "{nodes}");
    assert!(nodes.contains("node3\n     Mom = node3\n"), "a declared node has no address yet: {nodes}");
    start_mom_like(&cluster, "node1", "node3");
    wait_for(Duration::from_secs(20), "node3 up over TCP", || {
        let text = String::from_utf8(cluster.run("pbsnodes", &["node3"]).stdout).ok()?;
        (text.contains("     Mom = 127.0.0.1\n") && text.contains("     state = free\n")).then_some(())
    });
}

fn signal(pid: i32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
}

/// Starts another pbs_mom with `model`'s command line under the name `node` (own spool),
/// recorded in `pids/` so `minipbs down` stops it.
fn start_mom_like(cluster: &Cluster, model: &str, node: &str) {
    let mut argv: Vec<String> = cluster
        .daemon_argv(model)
        .into_iter()
        .map(|arg| arg.replace(&format!("mom/{model}"), &format!("mom/{node}")))
        .collect();
    let name = argv.iter().position(|arg| arg == "--name").unwrap() + 1;
    argv[name] = node.to_string();
    cluster.spawn_daemon(node, &argv);
}

#[test]
fn the_mom_port_refuses_what_the_server_did_not_seal_for_this_node() {
    if !tests::munge_installed() {
        return;
    }
    use std::io::{Read, Write};
    let cluster = tcp_cluster(2);
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["node1"]).stdout).unwrap();
    let port: u16 = nodes.lines().find_map(|line| line.trim().strip_prefix("Port = ")).unwrap().parse().unwrap();
    let munge = cluster.state.path().join("munge/socket");
    let kill = ServerToMom::KillJob { job_id: "1.testsrv".into() };
    // Unsealed, then sealed by the server's uid for this connection but for another node.
    let unsealed = |_| proto::frame::encode(&kill).unwrap();
    let for_node2 = |nonce| {
        let mut bytes = Vec::new();
        let binding = Binding::Bound { nonce, sequence: 0 };
        seal::write(&mut bytes, &munge, &Direction::ServerToMom("node2".into()), &binding, &kill).unwrap();
        bytes
    };
    type Make<'a> = &'a dyn Fn(Nonce) -> Vec<u8>;
    let attempts: [(&str, Make); 2] = [("unsealed", &unsealed), ("for node2", &for_node2)];
    for (attempt, make) in attempts {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let nonce: Nonce = proto::frame::read(&mut stream).expect("the connection's nonce first");
        stream.write_all(&make(nonce)).unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{attempt}: the mom port answers nothing but its nonce");
    }
    let refusals = wait_for(Duration::from_secs(10), "two refusals in node1's log", || {
        let log = std::fs::read_to_string(cluster.state.path().join("logs/node1.log")).unwrap();
        let refusals: Vec<String> = log
            .lines()
            .filter(|line| line.contains("mom port: refused a message from 127.0.0.1:"))
            .map(String::from)
            .collect();
        (refusals.len() == 2).then_some(refusals)
    });
    assert!(refusals[0].contains("unsealed or malformed message"), "{}", refusals[0]);
    assert!(refusals[1].contains("does not match the message"), "{}", refusals[1]);
}

/// One length-prefixed frame off `stream`, prefix included.
fn read_raw_frame(stream: &mut std::net::TcpStream) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut frame = vec![0u8; 4];
    stream.read_exact(&mut frame)?;
    let len = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) as usize;
    frame.resize(4 + len, 0);
    stream.read_exact(&mut frame[4..])?;
    Ok(frame)
}

/// A proxy in front of the server that lifts a request from one connection into another (what
/// anyone on the path can do): on its first connection it passes the command's `Hello` and
/// the server's answer, keeps the next frame (the request, never delivered) and hangs up; on
/// its second it passes the `Hello` and answer, then sends the kept request in place of that
/// command's own. Returns its port.
fn splicing_proxy(server_port: u16) -> u16 {
    use std::io::Write;
    use std::net::{Shutdown, TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut kept: Option<Vec<u8>> = None;
        for client in listener.incoming().take(2) {
            let Ok(mut client) = client else { return };
            let mut server = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
            let (mut from_server, mut to_client) = (server.try_clone().unwrap(), client.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_server, &mut to_client);
                let _ = to_client.shutdown(Shutdown::Both);
            });
            let Ok(hello) = read_raw_frame(&mut client) else { return };
            server.write_all(&hello).unwrap();
            let Ok(request) = read_raw_frame(&mut client) else { return };
            match kept.take() {
                None => {
                    kept = Some(request);
                    let _ = server.shutdown(Shutdown::Both);
                }
                Some(lifted) => {
                    let _ = server.write_all(&lifted);
                    let _ = std::io::copy(&mut client, &mut server);
                }
            }
        }
    });
    port
}

/// A request lifted from one command's connection before it arrived (qdel, by the same user)
/// and spliced into another's (a qstat) is refused: it was keyed for the first connection.
#[test]
fn a_request_spliced_into_another_connection_is_refused() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(1);
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h"]);
    let port = cluster.server_port().unwrap();
    let proxy = splicing_proxy(port);
    let conf = std::fs::read_to_string(&cluster.conf).unwrap();
    let spliced_conf = cluster.work.path().join("spliced.conf");
    let text = conf.replace(&format!("PBS_BATCH_SERVICE_PORT={port}\n"), &format!("PBS_BATCH_SERVICE_PORT={proxy}\n"));
    std::fs::write(&spliced_conf, text).unwrap();
    let qdel = cluster.command("qdel").arg(&id).env("PBS_CONF_FILE", &spliced_conf).output().unwrap();
    assert!(!qdel.status.success(), "the proxy kept qdel's request: {qdel:?}");
    let before = server_log(&cluster).lines().count();
    let qstat = cluster.command("qstat").env("PBS_CONF_FILE", &spliced_conf).output().unwrap();
    let refusal = wait_for(Duration::from_secs(10), "the spliced request refused in the server log", || {
        let log = server_log(&cluster);
        let mut refusals = log.lines().skip(before).filter(|line| line.contains("refused a message from 127.0.0.1:"));
        refusals.next().map(String::from)
    });
    assert!(refusal.contains("not authenticated by this connection's key"), "{refusal}");
    assert!(!qstat.status.success(), "qstat got an answer to the spliced request: {qstat:?}");
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("H"), "the spliced qdel ran");
}

/// A command of the previous protocol (1: frames not bound to the connection) is still served
/// over TCP, the old way; a hello that claims protocol 2 but is not sealed for a bound
/// connection is refused, so a protocol-2 peer's connection is bound or nothing.
#[test]
fn a_protocol_1_command_is_served_unbound_and_an_unbound_protocol_2_hello_refused() {
    if !tests::munge_installed() {
        return;
    }
    use proto::{ClientRequest, ServerReply};
    let cluster = tcp_cluster(1);
    let port = cluster.server_port().unwrap();
    let munge = cluster.state.path().join("munge/socket");
    let (legacy, to_client) = ([Binding::Legacy], Direction::ServerToClient);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let old = Hello { role: Role::Client, protocol: 1, nonce: None };
    seal::write(&mut stream, &munge, &Direction::ToServer, &Binding::Legacy, &old).unwrap();
    let (_, _, reply): (_, _, HelloReply) = seal::read(&mut stream, &munge, &to_client, &legacy).unwrap();
    assert!(matches!(reply, HelloReply::Welcome { nonce: None, .. }), "{reply:?}");
    let request = ClientRequest::StatusNode { names: Vec::new() };
    seal::write(&mut stream, &munge, &Direction::ToServer, &Binding::Legacy, &request).unwrap();
    let (_, _, answer): (_, _, ServerReply) = seal::read(&mut stream, &munge, &to_client, &legacy).unwrap();
    assert!(matches!(answer, ServerReply::Nodes { ref nodes, .. } if nodes.len() == 1), "{answer:?}");

    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let unbound = Hello::new(Role::Client, Some(Nonce::fresh().unwrap()));
    seal::write(&mut stream, &munge, &Direction::ToServer, &Binding::Legacy, &unbound).unwrap();
    let (_, _, reply): (_, _, HelloReply) = seal::read(&mut stream, &munge, &to_client, &legacy).unwrap();
    let HelloReply::Refused { message, .. } = reply else { panic!("{reply:?}") };
    let expected = format!("a protocol {} hello sealed Legacy with a nonce is not accepted", proto::PROTOCOL_VERSION);
    assert_eq!(message, expected);
}

/// One protocol-3 connection made by hand: the opening's bytes, and the keys of both ways.
struct Session {
    stream: std::net::TcpStream,
    opening: Vec<u8>,
    send: FrameKey,
    receive: FrameKey,
}

impl Session {
    /// Connects and sends `Hello`, its credential carrying a fresh key for the server's uid
    /// (this user's: the test cluster's server runs as whoever runs the tests).
    fn open(port: u16, munge: &std::path::Path) -> Session {
        use std::io::Write;
        let key = SessionKey::fresh().unwrap();
        let hello = serde_json::to_vec(&Hello::new(Role::Client, None)).unwrap();
        let uid = nix::unistd::geteuid().as_raw();
        let envelope = seal::seal_opening(munge, &Direction::ToServer, uid, &key, &hello).unwrap();
        let opening = proto::frame::prefixed(&envelope).unwrap();
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        stream.write_all(&opening).unwrap();
        let (send, receive) = key.keys(Side::Opener);
        Session { stream, opening, send, receive }
    }

    /// `StatusServer` keyed as frame `sequence`.
    fn request(&self, sequence: u64) -> Vec<u8> {
        let body = serde_json::to_vec(&proto::ClientRequest::StatusServer).unwrap();
        session::framed(&self.send, sequence, &body).unwrap()
    }

    fn send(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stream.write_all(bytes).unwrap();
    }

    /// The server's frame `sequence`, keyed: `None` once the server closed the connection.
    fn answer(&mut self, sequence: u64) -> Option<String> {
        let frame = read_raw_frame(&mut self.stream).ok()?;
        let body = self.receive.open(sequence, frame[4..].to_vec()).expect("keyed by the server");
        Some(String::from_utf8(body).unwrap())
    }
}

/// Over a real server: a keyed session is served; a frame of it replayed within it, one sent
/// out of its place, one altered, one keyed for another connection, and the whole connection
/// replayed on a new one are each refused (the connection closed, a warning logged); every
/// refusal happens before the frame is acted on.
#[test]
fn a_keyed_session_refuses_forged_replayed_and_reordered_frames() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = tcp_cluster(1);
    let port = cluster.server_port().unwrap();
    let munge = cluster.state.path().join("munge/socket");
    let mut first = Session::open(port, &munge);
    let request = first.request(1);
    first.send(&request);
    assert!(first.answer(0).unwrap().contains("Welcome"));
    let served = first.answer(1).unwrap();
    assert!(served.starts_with("{\"Objects\""), "served: {served}");
    first.send(&request);
    assert_eq!(first.answer(2), None, "a request replayed within its connection");

    let mut reordered = Session::open(port, &munge);
    let out_of_place = reordered.request(2);
    reordered.send(&out_of_place);
    assert!(reordered.answer(0).unwrap().contains("Welcome"));
    assert_eq!(reordered.answer(1), None, "a request sent out of its place");

    let mut altered = Session::open(port, &munge);
    let mut frame = altered.request(1);
    *frame.last_mut().unwrap() = b' ';
    altered.send(&frame);
    assert!(altered.answer(0).unwrap().contains("Welcome"));
    assert_eq!(altered.answer(1), None, "an altered request");

    let mut foreign = Session::open(port, &munge);
    let lifted = Session::open(port, &munge).request(1);
    foreign.send(&lifted);
    assert!(foreign.answer(0).unwrap().contains("Welcome"));
    assert_eq!(foreign.answer(1), None, "a request keyed for another connection");

    let mut again = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    again.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    std::io::Write::write_all(&mut again, &[first.opening.clone(), request].concat()).unwrap();
    let refused = read_raw_frame(&mut again).unwrap();
    let (_, body) = seal::split(&refused[4..]).unwrap();
    let reply: HelloReply = serde_json::from_slice(body).unwrap();
    assert!(matches!(&reply, HelloReply::Refused { message, .. } if message.contains("replayed")), "{reply:?}");
    let refusals = wait_for(Duration::from_secs(10), "five refusals in the server log", || {
        let log = server_log(&cluster);
        let refusals: Vec<String> =
            log.lines().filter(|line| line.contains("refused a message from 127.0.0.1:")).map(String::from).collect();
        (refusals.len() >= 5).then_some(refusals)
    });
    let keyed = refusals.iter().filter(|line| line.contains("not authenticated by this connection's key")).count();
    assert_eq!(keyed, 4, "{refusals:#?}");
    assert!(refusals.iter().any(|line| line.contains("replayed")), "{refusals:#?}");
}
