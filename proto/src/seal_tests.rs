//! Seal tests against a real munged started here (skipped, loudly, when MUNGE is absent).

use super::*;
use std::path::PathBuf;
use std::process::{Child, Command};

/// A private munged with its own key, socket and files; killed on drop.
struct TestMunged {
    dir: tempfile::TempDir,
    child: Child,
}

impl TestMunged {
    fn start() -> Option<TestMunged> {
        if !Path::new("/usr/sbin/munged").exists() {
            munge::skip_test("/usr/sbin/munged is not installed (apt-get install munge)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
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
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while munge::encode(&munged.socket(), b"").is_err() {
            assert!(std::time::Instant::now() < deadline, "munged did not start");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(munged)
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

#[test]
fn sealed_message_opens_once_with_the_makers_identity() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let envelope = seal(&socket, &Direction::ToServer, b"{\"hello\":1}").unwrap();
    let (identity, body) = open(&socket, &Direction::ToServer, envelope.clone()).unwrap();
    assert_eq!(body, b"{\"hello\":1}");
    assert_eq!(identity.uid, nix_uid());
    let replay = open(&socket, &Direction::ToServer, envelope).unwrap_err();
    assert!(matches!(replay, SealError::Munge(MungeError::Replayed)), "{replay:?}");
}

#[test]
fn credential_bound_to_body_and_direction() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let mut envelope = seal(&socket, &Direction::ToServer, b"qstat").unwrap();
    *envelope.last_mut().unwrap() = b'X';
    assert!(matches!(open(&socket, &Direction::ToServer, envelope), Err(SealError::Mismatch)));
    let envelope = seal(&socket, &Direction::ServerToClient, b"reply").unwrap();
    assert!(matches!(open(&socket, &Direction::ToServer, envelope), Err(SealError::Mismatch)));
    assert!(matches!(open(&socket, &Direction::ToServer, b"{}".to_vec()), Err(SealError::Malformed)));
    let to_node1 = Direction::ServerToMom("node1".into());
    let envelope = seal(&socket, &to_node1, b"RunJob").unwrap();
    let to_node2 = Direction::ServerToMom("node2".into());
    assert!(matches!(open(&socket, &to_node2, envelope), Err(SealError::Mismatch)));
    let envelope = seal(&socket, &to_node1, b"RunJob").unwrap();
    assert!(open(&socket, &to_node1, envelope).is_ok());
}

#[test]
fn credential_of_another_key_is_invalid() {
    let Some(ours) = TestMunged::start() else { return };
    let Some(theirs) = TestMunged::start() else { return };
    let envelope = seal(&theirs.socket(), &Direction::ToServer, b"x").unwrap();
    let error = open(&ours.socket(), &Direction::ToServer, envelope).unwrap_err();
    assert!(matches!(error, SealError::Munge(MungeError::Invalid(_))), "{error:?}");
    assert!(error.to_string().contains("another MUNGE key"), "{error}");
}

#[test]
fn framed_round_trip() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let mut wire = Vec::new();
    write(&mut wire, &socket, &Direction::ToServer, &vec!["a".to_string()]).unwrap();
    let (identity, message): (Identity, Vec<String>) =
        read(&mut wire.as_slice(), &socket, &Direction::ToServer).unwrap();
    assert_eq!((identity.uid, message), (nix_uid(), vec!["a".to_string()]));
}

fn nix_uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}
