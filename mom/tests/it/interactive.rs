//! Interactive jobs on the mom: it connects to a (test) qsub, runs a login shell on a pty with
//! the PBS environment, relays both ways, reports the shell's status to qsub and the server,
//! delivers no output files, and hangs the job up when qsub goes away.

use crate::support::{launch, live_session_members, Harness};
use job::spec::Interactive;
use proto::frame;
use proto::interactive::{MomToQsub, QsubToMom, WindowSize};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;

const SECRET: &str = "0123456789abcdef0123456789abcdef";

/// A qsub stand-in: accepts one connection, proves itself and checks the mom's proof, accepts
/// the job, then runs `talk`.
fn fake_qsub<T: Send + 'static>(
    job_id: &str,
    talk: impl FnOnce(TcpStream) -> T + Send + 'static,
) -> (Interactive, JoinHandle<T>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let target =
        Interactive { host: "127.0.0.1".into(), port: listener.local_addr().unwrap().port(), secret: SECRET.into() };
    let job_id = job_id.to_string();
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        proto::interactive::answer_challenge(&mut stream, &job_id, SECRET, |_| Ok(None)).unwrap();
        let accept = QsubToMom::Accept { term: Some("vt100".into()), size: WindowSize { rows: 24, cols: 80 } };
        frame::write(&mut stream, &accept).unwrap();
        talk(stream)
    });
    (target, handle)
}

/// Everything the mom sends until it closes: the terminal output and the exit status.
fn read_to_end(mut stream: TcpStream) -> (String, Option<i32>) {
    let (mut output, mut status) = (Vec::new(), None);
    loop {
        match frame::read::<MomToQsub>(&mut stream) {
            Ok(MomToQsub::Data(bytes)) => output.extend(bytes),
            Ok(MomToQsub::Exit { status: exit }) => status = Some(exit),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => return (String::from_utf8_lossy(&output).into_owned(), status),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_on_a_pty_reports_its_status_to_qsub_and_server() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let spool = harness.dir.path().join("spool");
    let (target, qsub) = fake_qsub("20.testserver", move |mut stream| {
        // Set up before the mom connected: the nodefile, but no script or output spool files.
        assert!(spool.join("aux/20.testserver").exists());
        for suffix in ["SC", "OU", "ER"] {
            assert!(!spool.join(format!("20.testserver.{suffix}")).exists(), "{suffix}");
        }
        let keys = "echo \"E${PBS_ENVIRONMENT}-${TERM}E\"; tty >/dev/null && echo TTY-OK; exit 4\n";
        frame::write(&mut stream, &QsubToMom::Data(keys.as_bytes().to_vec())).unwrap();
        read_to_end(stream)
    });
    let mut job = launch("20.testserver", "echo the script must not run\n", &harness.out());
    job.interactive = Some(target);
    server.run(job).await;
    server.started("20.testserver").await;
    let obit = server.ended("20.testserver").await;
    assert_eq!(obit.exit_status, 4, "{obit:?}");
    let (output, status) = tokio::task::spawn_blocking(move || qsub.join().unwrap()).await.unwrap();
    assert_eq!(status, Some(4));
    assert!(output.contains("EPBS_INTERACTIVE-vt100E"), "{output}");
    assert!(output.contains("TTY-OK"), "{output}");
    assert!(!output.contains("the script must not run"), "{output}");
    let delivered: Vec<_> = std::fs::read_dir(harness.out()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(delivered.is_empty(), "no output files for an interactive job: {delivered:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_qsub_hangs_the_job_up() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let (target, qsub) = fake_qsub("21.testserver", |mut stream| {
        let keys = b"sleep 1000 & echo BG-STARTED\n".to_vec();
        frame::write(&mut stream, &QsubToMom::Data(keys)).unwrap();
        // Wait until the shell ran the line, then go away.
        let mut seen = Vec::new();
        while !String::from_utf8_lossy(&seen).contains("BG-STARTED\r\n") {
            if let Ok(MomToQsub::Data(bytes)) = frame::read::<MomToQsub>(&mut stream) {
                seen.extend(bytes);
            }
        }
    });
    let mut job = launch("21.testserver", "", &harness.out());
    job.interactive = Some(target);
    server.run(job).await;
    let sid = server.started("21.testserver").await;
    tokio::task::spawn_blocking(move || qsub.join().unwrap()).await.unwrap();
    let obit = server.ended("21.testserver").await;
    assert_eq!(obit.exit_status, 256 + libc::SIGHUP, "{obit:?}");
    assert_eq!(live_session_members(sid), Vec::<i32>::new(), "the background sleep went too");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_qsub_fails_the_job() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut job = launch("22.testserver", "", &harness.out());
    job.interactive = Some(Interactive { host: "127.0.0.1".into(), port, secret: SECRET.into() });
    server.run(job).await;
    let obit = server.ended("22.testserver").await;
    assert_eq!(obit.exit_status, -1, "{obit:?}");
    harness.stop().await;
}

/// Someone else listens on the port of a `qsub -I` that died: it hears no secret, gets no
/// terminal, and the job fails to start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_a_dead_qsubs_port_gets_neither_the_secret_nor_a_shell() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let impostor = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut heard = frame::read_body(&mut stream, frame::Limits::HANDSHAKE).unwrap();
        let guess = QsubToMom::Proof { nonce: "00".repeat(32), proof: "11".repeat(32), credential: None };
        frame::write(&mut stream, &guess).unwrap();
        let _ = frame::write(&mut stream, &QsubToMom::Accept { term: None, size: WindowSize { rows: 24, cols: 80 } });
        let _ = std::io::Read::read_to_end(&mut stream, &mut heard);
        String::from_utf8_lossy(&heard).into_owned()
    });
    let mut job = launch("24.testserver", "", &harness.out());
    job.interactive = Some(Interactive { host: "127.0.0.1".into(), port, secret: SECRET.into() });
    job.run_count = 3;
    server.run(job).await;
    let obit = server.ended("24.testserver").await;
    assert_eq!((obit.exit_status, obit.run_count), (-1, 3), "{obit:?}");
    let heard = impostor.join().unwrap();
    assert!(heard.contains("Challenge") && !heard.contains(SECRET), "{heard}");
    assert!(!heard.contains("Proven") && !heard.contains("Data"), "no proof, no terminal: {heard}");
    harness.stop().await;
}
