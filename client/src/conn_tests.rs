//! Tests of finding the active head: a head that accepts and never answers, one that refuses,
//! the memory of the last head, and the errors naming every head tried.

use super::*;
use std::os::unix::net::UnixListener;
use std::path::Path;

/// A server that answers every `Hello` with `Welcome` from `name`, on a Unix socket at `path`.
fn answering(path: &Path, name: &str) {
    let listener = UnixListener::bind(path).unwrap();
    let name = name.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let Ok(_) = frame::read::<Hello>(&mut stream) else { continue };
            let welcome =
                HelloReply::Welcome { protocol: proto::PROTOCOL_VERSION, server_name: name.clone(), nonce: None };
            let _ = frame::write(&mut stream, &welcome);
        }
    });
}

/// A server that accepts (the kernel queues the connection) and never answers: stopped.
fn stopped(path: &Path) -> UnixListener {
    UnixListener::bind(path).unwrap()
}

/// A TCP address nothing listens on: connecting is refused at once.
fn refusing() -> ServerAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    ServerAddr::Tcp { host: "127.0.0.1".into(), port, munge_socket: "/nonexistent/munge".into() }
}

fn heads(primary: ServerAddr, secondary: ServerAddr) -> PbsConf {
    PbsConf {
        server_name: "head".into(),
        server: primary,
        secondary: Some(secondary),
        home: None,
        source: "f".into(),
        server_uid: None,
    }
}

const BOUND: Duration = Duration::from_millis(500);

#[test]
fn a_silent_primary_is_left_after_the_bound_and_then_tried_last() {
    let dir = tempfile::tempdir().unwrap();
    let (primary, secondary) = (dir.path().join("primary.sock"), dir.path().join("secondary.sock"));
    let _stopped = stopped(&primary);
    answering(&secondary, "second");
    let conf = heads(ServerAddr::Unix(primary.clone()), ServerAddr::Unix(secondary.clone()));
    let memory = Memory::at(dir.path().join("last-server"));

    let started = Instant::now();
    let connection = Connection::open_heads_within(&conf, Some(&memory), BOUND).unwrap();
    assert_eq!(connection.server_name, "second");
    assert!(started.elapsed() >= BOUND, "the primary had its {BOUND:?}: {:?}", started.elapsed());
    assert!(started.elapsed() < BOUND * 4, "and no more: {:?}", started.elapsed());
    assert_eq!(memory.recall(), Some(format!("socket {}", secondary.display())));

    // The next command goes to the secondary first and pays nothing.
    let started = Instant::now();
    let connection = Connection::open_heads_within(&conf, Some(&memory), BOUND).unwrap();
    assert_eq!(connection.server_name, "second");
    assert!(started.elapsed() < BOUND, "the silent primary was not tried first: {:?}", started.elapsed());
}

#[test]
fn a_refusing_primary_costs_no_wait() {
    let dir = tempfile::tempdir().unwrap();
    let secondary = dir.path().join("secondary.sock");
    answering(&secondary, "second");
    for primary in [refusing(), ServerAddr::Unix(dir.path().join("absent.sock"))] {
        let conf = heads(primary, ServerAddr::Unix(secondary.clone()));
        let started = Instant::now();
        // The real bound: a refused connection must not cost it.
        let connection = Connection::open_heads(&conf, None).unwrap();
        assert_eq!(connection.server_name, "second");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    }
}

#[test]
fn the_primary_back_is_used_again_and_the_memory_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let (primary, secondary) = (dir.path().join("primary.sock"), dir.path().join("secondary.sock"));
    answering(&primary, "first");
    let memory = Memory::at(dir.path().join("last-server"));
    // The secondary answered last, and is gone now (standing by, not listening).
    let conf = heads(ServerAddr::Unix(primary), ServerAddr::Unix(secondary.clone()));
    std::fs::write(dir.path().join("last-server"), format!("socket {}\n", secondary.display())).unwrap();
    let connection = Connection::open_heads_within(&conf, Some(&memory), BOUND).unwrap();
    assert_eq!(connection.server_name, "first");
    assert_eq!(memory.recall(), None);
}

#[test]
fn neither_head_answering_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let secondary = dir.path().join("secondary.sock");
    let _stopped = stopped(&secondary);
    let primary = refusing();
    let conf = heads(primary.clone(), ServerAddr::Unix(secondary.clone()));
    let Err(error) = Connection::open_heads_within(&conf, None, BOUND) else { panic!("connected") };
    assert_eq!(error.exit_code(), crate::exit::NO_SERVER);
    assert_eq!(
        error.to_string(),
        format!(
            "cannot connect to server head ({primary}: Connection refused (os error 111); socket {}: no answer within 500 ms; from f)",
            secondary.display()
        )
    );
}

#[test]
fn one_server_reports_as_before() {
    let server = refusing();
    let conf = PbsConf {
        server_name: "head".into(),
        server: server.clone(),
        secondary: None,
        home: None,
        source: "f".into(),
        server_uid: None,
    };
    let Err(error) = Connection::open_conf(&conf) else { panic!("connected") };
    assert_eq!(
        error.to_string(),
        format!("cannot connect to server head (Connection refused (os error 111); {server}, from f)")
    );
}

/// One server on a Unix socket at `path` that reads `Hello` and the request before it answers
/// anything (a command that waited for `Welcome` first would get no answer), then answers
/// `answer` to the hello and a `StatusServer`-like reply to the request.
fn reading_both_first(path: &Path, answer: HelloReply) -> std::thread::JoinHandle<Option<ClientRequest>> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        frame::read::<Hello>(&mut stream).unwrap();
        let request = frame::read::<ClientRequest>(&mut stream).ok();
        frame::write(&mut stream, &answer).unwrap();
        let reply = ServerReply::Error(proto::error::RequestError::new(proto::ErrorCode::System, "served"));
        let _ = frame::write(&mut stream, &reply);
        request
    })
}

fn single(path: &Path) -> PbsConf {
    PbsConf {
        server_name: "head".into(),
        server: ServerAddr::Unix(path.to_path_buf()),
        secondary: None,
        home: None,
        source: "f".into(),
        server_uid: None,
    }
}

#[test]
fn a_command_sends_its_request_with_its_hello_one_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.sock");
    let welcome = HelloReply::Welcome { protocol: proto::PROTOCOL_VERSION, server_name: "s".into(), nonce: None };
    let server = reading_both_first(&path, welcome);
    let mut connection = Connection::open_pipelined(&single(&path)).unwrap();
    let reply = connection.request(&ClientRequest::StatusServer).unwrap();
    assert!(matches!(reply, ServerReply::Error(ref error) if error.message == "served"), "{reply:?}");
    assert_eq!(connection.server_name, "s", "known once the first reply is read");
    assert_eq!(server.join().unwrap(), Some(ClientRequest::StatusServer), "the request came before any answer");
}

#[test]
fn a_refused_hello_is_reported_at_the_first_request_as_the_connections() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.sock");
    let refused = HelloReply::Refused { code: proto::ErrorCode::System, message: "too many connections".into() };
    let _server = reading_both_first(&path, refused);
    let mut connection = Connection::open_pipelined(&single(&path)).unwrap();
    let Err(error) = connection.request(&ClientRequest::StatusServer) else { panic!("served") };
    assert_eq!(error.exit_code(), crate::exit::NO_SERVER);
    let expected = format!("cannot connect to server head (too many connections; socket {}, from f)", path.display());
    assert_eq!(error.to_string(), expected);
}

#[test]
fn a_listing_is_joined_frame_by_frame_in_either_shape_and_never_mixed() {
    use proto::{JobRow, JobStatus};
    let jobs = |ids: &[&str], more| ServerReply::Jobs {
        server: "head".into(),
        jobs: ids.iter().map(|id| JobStatus { id: id.to_string(), attrs: vec![] }).collect(),
        errors: vec![],
        more,
        flavor: Default::default(),
    };
    let rows = |ids: &[&str], more| ServerReply::Rows {
        server: "head".into(),
        rows: ids.iter().map(|id| JobRow { id: (*id).into(), values: vec![None] }).collect(),
        errors: vec![],
        more,
        flavor: Default::default(),
    };
    let mut reply = jobs(&["1.head"], true);
    assert!(append(&mut reply, jobs(&["2.head"], false)));
    assert_eq!(reply, jobs(&["1.head", "2.head"], false), "an older server's reply, as before");
    let mut reply = rows(&["1.head"], true);
    assert!(append(&mut reply, rows(&["2.head"], false)));
    assert_eq!(reply, rows(&["1.head", "2.head"], false));
    assert!(!append(&mut rows(&["1.head"], true), jobs(&["2.head"], false)), "garbled");
    assert!(!append(&mut jobs(&["1.head"], true), rows(&["2.head"], false)), "garbled");
}
