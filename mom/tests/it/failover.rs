//! The link with two heads (failover): each reconnect goes to the other head, a head that
//! accepts and never answers is left after the handshake timeout, and whichever head the mom
//! reaches learns the same: every job held here and every end not yet acknowledged, whose
//! obit is resent until a head acknowledges it.

use crate::support::{launch, within, DEADLINE};
use mom::jobs::JobTable;
use mom::link::{self, LinkChannels, LinkSettings, LinkTarget};
use proto::frame::nonblocking::{read, write};
use proto::mom::{JobObit, MomToServer, Registration, ServerToMom};
use proto::{Hello, HelloReply, PROTOCOL_VERSION};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

const HANDSHAKE: Duration = Duration::from_millis(300);

fn settings(primary: &Path, secondary: &Path) -> LinkSettings {
    let uid = nix::unistd::geteuid().as_raw();
    let target = |path: &Path| LinkTarget::Unix { path: path.to_path_buf(), server_uid: uid };
    LinkSettings {
        targets: vec![target(primary), target(secondary)],
        registration: Registration {
            node: "node1".into(),
            np: 1,
            mem_bytes: 1 << 30,
            ngpus: 0,
            properties: Vec::new(),
            start_id: "feed".into(),
            jobs: Vec::new(),
            port: 0,
            gpus: Vec::new(),
            gpu_states: Vec::new(),
            task_socket: None,
            heartbeat_ms: 0,
        },
        gpu_reports: Default::default(),
        heartbeat_interval: Duration::from_millis(100),
        reconnect_min: Duration::from_millis(20),
        reconnect_max: Duration::from_millis(200),
        handshake_timeout: HANDSHAKE,
    }
}

/// Accepts the mom on `listener` as head `name`: handshake and registration answered.
async fn accept(listener: &UnixListener, name: &str) -> (UnixStream, Registration) {
    let (mut stream, _) = within(listener.accept()).await.expect("accept");
    let _: Hello = within(read(&mut stream)).await.expect("hello");
    let welcome = HelloReply::Welcome { protocol: PROTOCOL_VERSION, server_name: name.into(), nonce: None };
    write(&mut stream, &welcome).await.unwrap();
    let registration = match within(read::<MomToServer>(&mut stream)).await.expect("register") {
        MomToServer::Register(registration) => registration,
        other => panic!("expected Register, got {other:?}"),
    };
    let registered = ServerToMom::Registered { server_name: name.into(), stale_jobs: Vec::new() };
    write(&mut stream, &registered).await.unwrap();
    (stream, registration)
}

/// The next message that is not a heartbeat.
async fn next(stream: &mut UnixStream) -> MomToServer {
    loop {
        match within(read::<MomToServer>(stream)).await.expect("message from the mom") {
            MomToServer::Heartbeat => continue,
            other => return other,
        }
    }
}

fn obit(job_id: &str) -> JobObit {
    JobObit { job_id: job_id.into(), exit_status: 3, session_id: 77, run_count: 1, ..Default::default() }
}

/// A table running `1.s` whose `2.s` ended without acknowledgement.
fn table(out: &Path) -> Arc<Mutex<JobTable>> {
    let mut table = JobTable::new();
    for job_id in ["1.s", "2.s"] {
        table.on_message(ServerToMom::RunJob(Box::new(launch(job_id, "exit 0\n", out))));
    }
    table.on_job_started("1.s", 42, 1);
    table.on_job_ended(obit("2.s"));
    Arc::new(Mutex::new(table))
}

struct Heads {
    _dir: tempfile::TempDir,
    primary: PathBuf,
    secondary: PathBuf,
}

fn heads() -> Heads {
    let dir = tempfile::tempdir().unwrap();
    let (primary, secondary) = (dir.path().join("primary.sock"), dir.path().join("secondary.sock"));
    Heads { _dir: dir, primary, secondary }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mom_follows_the_active_head_and_keeps_ends_until_one_acknowledges_them() {
    crate::support::init_logs();
    let heads = heads();
    let table = table(&heads.primary.with_file_name("out"));
    let (inbound, mut from_server) = mpsc::unbounded_channel();
    let (_to_server, outbound) = mpsc::unbounded_channel();
    let channels = LinkChannels { inbound, outbound };
    let primary = UnixListener::bind(&heads.primary).unwrap();
    let link = tokio::spawn(link::run(settings(&heads.primary, &heads.secondary), table.clone(), channels));

    // The primary is active: it hears of the running job and of the end, and gets the obit.
    let (mut stream, registration) = accept(&primary, "head").await;
    assert_eq!(registration.jobs, vec!["1.s", "2.s"]);
    assert_eq!(next(&mut stream).await, MomToServer::JobEnded(obit("2.s")));
    // It dies before acknowledging: its port closes, the secondary takes over.
    drop((stream, primary));
    let secondary = UnixListener::bind(&heads.secondary).unwrap();
    let (mut stream, registration) = accept(&secondary, "head").await;
    assert_eq!(registration.jobs, vec!["1.s", "2.s"], "the new head learns the same");
    assert_eq!(next(&mut stream).await, MomToServer::JobEnded(obit("2.s")), "the end is not lost");
    let started = MomToServer::JobStarted { job_id: "1.s".into(), session_id: 42, run_count: 1 };
    assert_eq!(next(&mut stream).await, started, "nor the running job's session");
    write(&mut stream, &ServerToMom::ObitAck { job_id: "2.s".into() }).await.unwrap();
    // The daemon's part: apply what the link forwards.
    loop {
        let message = within(from_server.recv()).await.expect("forwarded");
        let acked = matches!(message, ServerToMom::ObitAck { .. });
        table.lock().unwrap().on_message(message);
        if acked {
            break;
        }
    }

    // The old primary comes back stopped (it accepts, never answers), the secondary dies: the
    // mom leaves the stopped one after the handshake timeout and returns to the secondary.
    let _stopped = {
        let _ = std::fs::remove_file(&heads.primary);
        UnixListener::bind(&heads.primary).unwrap()
    };
    drop(stream);
    let started = tokio::time::Instant::now();
    let (_stream, registration) = accept(&secondary, "head").await;
    assert_eq!(registration.jobs, vec!["1.s"], "an acknowledged end is not listed again");
    assert!(started.elapsed() >= HANDSHAKE, "the stopped head was tried: {:?}", started.elapsed());
    assert!(started.elapsed() < DEADLINE);
    link.abort();
}

/// A head that sent a heartbeat and then went silent with its connection open (stopped with
/// SIGSTOP, its host hung) is left after three heartbeats for the other head; one that never
/// sent any (an older server) is not timed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_silent_after_its_heartbeats_is_left_for_the_other() {
    crate::support::init_logs();
    let heads = heads();
    let mut settings = settings(&heads.primary, &heads.secondary);
    settings.registration.heartbeat_ms = 1;
    let (inbound, _from_server) = mpsc::unbounded_channel();
    let (_to_server, outbound) = mpsc::unbounded_channel();
    let channels = LinkChannels { inbound, outbound };
    let primary = UnixListener::bind(&heads.primary).unwrap();
    let secondary = UnixListener::bind(&heads.secondary).unwrap();
    let link = tokio::spawn(link::run(settings, table(&heads.primary.with_file_name("out")), channels));

    let (mut stream, registration) = accept(&primary, "head").await;
    assert_eq!(registration.heartbeat_ms, 1, "the mom asks for server heartbeats");
    let every = proto::mom::server_heartbeat(registration.heartbeat_ms).unwrap();
    assert_eq!(every, Duration::from_secs(1), "kept within the bounds");
    write(&mut stream, &ServerToMom::Heartbeat).await.unwrap();
    let silent_since = tokio::time::Instant::now();
    // The primary now says nothing, its connection open: the mom goes to the secondary.
    let (_stream2, _) = accept(&secondary, "head").await;
    let waited = silent_since.elapsed();
    assert!(waited >= every * proto::mom::SILENT_HEARTBEATS, "left only after the silence: {waited:?}");
    drop(stream);
    link.abort();
}
