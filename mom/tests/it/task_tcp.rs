//! Tasks between two moms over TCP with MUNGE (the peer path on the mom port): a task on the
//! other node through the local mom, and the port's refusals of peer frames sealed by another
//! uid or for the server's direction (a frame of one kind is never accepted as the other).
//! Root and a munged of the test's own (MUNGE installed) are needed; under CI both must be there.

use crate::support::{root_or_skip, within};
use crate::task_client::{request, run, shell, two_moms};
use proto::frame::{self, FrameError, Limits};
use proto::seal::{self, Binding, Direction, Nonce};
use proto::task::{PeerRequest, TaskOutput, PEER_MAGIC};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};

/// A private munged (its own key and socket), killed on drop.
struct TestMunged {
    dir: tempfile::TempDir,
    child: Child,
}

impl TestMunged {
    fn start() -> TestMunged {
        assert!(Path::new("/usr/sbin/munged").exists(), "MUNGE is needed: apt-get install munge");
        let dir = tempfile::tempdir().unwrap();
        // uid nobody must reach the socket to make its own credentials.
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let file = |name: &str| dir.path().join(name);
        let status = Command::new("mungekey").arg("-c").arg("-k").arg(file("key")).status().unwrap();
        assert!(status.success(), "mungekey failed");
        let child = Command::new("/usr/sbin/munged")
            .args(["-F", "-f", "--socket"])
            .arg(file("socket"))
            .arg("--key-file")
            .arg(file("key"))
            .arg("--pid-file")
            .arg(file("pid"))
            .arg("--log-file")
            .arg(file("log"))
            .arg("--seed-file")
            .arg(file("seed"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let munged = TestMunged { dir, child };
        let deadline = std::time::Instant::now() + crate::support::DEADLINE;
        while proto::munge::encode(&munged.socket(), b"").is_err() {
            assert!(std::time::Instant::now() < deadline, "munged did not start");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        munged
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("socket")
    }
}

impl Drop for TestMunged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tasks_cross_tcp_sealed_by_the_moms_uid_only() {
    if !root_or_skip("tasks_cross_tcp_sealed_by_the_moms_uid_only") {
        return;
    }
    let munged = TestMunged::start();
    let moms = two_moms(Some(&munged.socket())).await;
    let seen = run(&moms.sockets[0], &request("node1", shell("echo $PBS_NODENUM; exit 4")), b"").await;
    assert_eq!((seen.stdout(), seen.status), ("1\n".to_string(), Some(4)), "{seen:?}");
    let port = moms.servers[1].registration.port;
    let socket = munged.socket();
    let peer = Direction::MomToMom("node1".into());
    let first = |socket: &Path, direction: &Direction, uid: u32| {
        let (socket, direction) = (socket.to_path_buf(), direction.clone());
        std::thread::spawn(move || forged_peer(port, &socket, &direction, uid)).join().expect("peer thread")
    };
    assert!(
        matches!(within(async { first(&socket, &peer, 0) }).await, Ok(TaskOutput::Started { node_num: 1, .. })),
        "the control: a peer frame sealed by the moms' uid is served"
    );
    let nobody = nix::unistd::User::from_name("nobody").unwrap().expect("user nobody").uid.as_raw();
    let refused = first(&socket, &peer, nobody);
    assert!(matches!(refused, Err(FrameError::Closed)), "sealed by nobody: {refused:?}");
    let server_frame = first(&socket, &Direction::ServerToMom("node1".into()), 0);
    assert!(matches!(server_frame, Err(FrameError::Closed)), "sealed for the server's direction: {server_frame:?}");
    moms.stop().await;
}

/// Opens a peer connection to the mom port `port` as `uid` (this thread only), sends a task
/// request for node1 sealed for `direction`, and returns the first answer, or how the
/// connection ended.
fn forged_peer(port: u16, socket: &Path, direction: &Direction, uid: u32) -> Result<TaskOutput, FrameError> {
    if uid != 0 {
        // SAFETY: plain syscalls with integer arguments; the thread ends right after.
        unsafe {
            assert_eq!(libc::syscall(libc::SYS_setresgid, 65534, 65534, 0), 0, "setresgid");
            assert_eq!(libc::syscall(libc::SYS_setresuid, uid, uid, 0), 0, "setresuid");
        }
    }
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the mom port");
    let ours = Nonce::fresh().unwrap();
    stream.write_all(PEER_MAGIC).unwrap();
    stream.write_all(&frame::encode(&ours).unwrap()).unwrap();
    let theirs: Nonce = frame::decode(&frame::read_body(&mut stream, Limits::HANDSHAKE).unwrap()).unwrap();
    let asked = PeerRequest::Task { from: "node0".into(), request: request("node1", shell("true")) };
    seal::write(&mut stream, socket, direction, &Binding::Bound { nonce: theirs, sequence: 0 }, &asked).unwrap();
    let envelope = frame::read_body(&mut stream, Limits::NORMAL)?;
    let back = Direction::MomToMom("node0".into());
    let opened =
        seal::open(socket, &back, &[Binding::Bound { nonce: ours, sequence: 0 }], envelope).expect("sealed answer");
    assert_eq!(opened.identity.uid, 0, "answered by the mom");
    frame::decode(&opened.body)
}
