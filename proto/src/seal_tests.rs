//! Seal tests against a real munged started here (skipped, loudly, when MUNGE is absent).

use super::*;
use std::path::PathBuf;
use std::process::{Child, Command};

/// A private munged with its own key, socket and files; killed on drop.
pub(crate) struct TestMunged {
    dir: tempfile::TempDir,
    child: Child,
}

impl TestMunged {
    pub(crate) fn start() -> Option<TestMunged> {
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

    pub(crate) fn socket(&self) -> PathBuf {
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
    let envelope = seal(&socket, &Direction::ToServer, &Binding::Opening, b"{\"hello\":1}").unwrap();
    let opened = open(&socket, &Direction::ToServer, &[Binding::Opening], envelope.clone()).unwrap();
    assert_eq!(opened.body, b"{\"hello\":1}");
    assert_eq!(opened.identity.uid, nix_uid());
    assert_eq!(opened.binding, Binding::Opening);
    let replay = open(&socket, &Direction::ToServer, &[Binding::Opening], envelope).unwrap_err();
    assert!(matches!(replay, SealError::Munge(MungeError::Replayed)), "{replay:?}");
}

#[test]
fn credential_bound_to_body_and_direction() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    for binding in [Binding::Legacy, Binding::Opening, Binding::Bound { nonce: Nonce([7; 32]), sequence: 3 }] {
        let accepted = [binding];
        let mut envelope = seal(&socket, &Direction::ToServer, &binding, b"qstat").unwrap();
        *envelope.last_mut().unwrap() = b'X';
        assert!(matches!(open(&socket, &Direction::ToServer, &accepted, envelope), Err(SealError::Mismatch)));
        let envelope = seal(&socket, &Direction::ServerToClient, &binding, b"reply").unwrap();
        assert!(matches!(open(&socket, &Direction::ToServer, &accepted, envelope), Err(SealError::Mismatch)));
        let garbage = open(&socket, &Direction::ToServer, &accepted, b"{}".to_vec());
        assert!(matches!(garbage, Err(SealError::Malformed)));
        let to_node1 = Direction::ServerToMom("node1".into());
        let envelope = seal(&socket, &to_node1, &binding, b"RunJob").unwrap();
        let to_node2 = Direction::ServerToMom("node2".into());
        assert!(matches!(open(&socket, &to_node2, &accepted, envelope), Err(SealError::Mismatch)));
        let envelope = seal(&socket, &to_node1, &binding, b"RunJob").unwrap();
        assert_eq!(open(&socket, &to_node1, &accepted, envelope).unwrap().binding, binding);
    }
}

/// The splice: a frame sealed on one connection (for its receiver's nonce, as its second
/// frame) and kept from it fits neither another connection of the same uid and direction,
/// nor another place on its own, nor an unbound (protocol 1) reader.
#[test]
fn a_frame_sealed_for_one_connection_fits_no_other() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let (first, second) = (Nonce::fresh().unwrap(), Nonce::fresh().unwrap());
    assert_ne!(first, second);
    let on_first = Binding::Bound { nonce: first, sequence: 1 };
    let misfits = [
        (Binding::Bound { nonce: second, sequence: 1 }, "another connection"),
        (Binding::Bound { nonce: first, sequence: 2 }, "a later place"),
        (Binding::Legacy, "an unbound reader"),
        (Binding::Opening, "a first frame"),
    ];
    for (elsewhere, what) in misfits {
        let envelope = seal(&socket, &Direction::ToServer, &on_first, b"{\"DeleteJob\":{}}").unwrap();
        let error = open(&socket, &Direction::ToServer, &[elsewhere], envelope).unwrap_err();
        assert!(matches!(error, SealError::Mismatch), "{what}: {error:?}");
    }
    let envelope = seal(&socket, &Direction::ToServer, &on_first, b"{}").unwrap();
    assert!(open(&socket, &Direction::ToServer, &[on_first], envelope).is_ok());
    // A protocol-1 frame where a bound one is expected is said so plainly.
    let envelope = seal(&socket, &Direction::ToServer, &Binding::Legacy, b"{}").unwrap();
    let error = open(&socket, &Direction::ToServer, &[on_first], envelope).unwrap_err();
    assert!(matches!(error, SealError::Legacy), "{error:?}");
    assert!(error.to_string().contains("protocol 1"), "{error}");
}

#[test]
fn a_nonce_is_64_hex_digits_on_the_wire() {
    let nonce = Nonce::fresh().unwrap();
    let text = serde_json::to_string(&nonce).unwrap();
    assert_eq!(text.len(), 66, "{text}");
    assert_eq!(serde_json::from_str::<Nonce>(&text).unwrap(), nonce);
    for bad in ["\"\"", "\"zz\"", "12", "null", &format!("\"{}\"", "0".repeat(65)), &format!("\"{}\"", "g".repeat(64))]
    {
        assert!(serde_json::from_str::<Nonce>(bad).is_err(), "{bad}");
    }
}

#[test]
fn credential_of_another_key_is_invalid() {
    let Some(ours) = TestMunged::start() else { return };
    let Some(theirs) = TestMunged::start() else { return };
    let envelope = seal(&theirs.socket(), &Direction::ToServer, &Binding::Opening, b"x").unwrap();
    let error = open(&ours.socket(), &Direction::ToServer, &[Binding::Opening], envelope).unwrap_err();
    assert!(matches!(error, SealError::Munge(MungeError::Invalid(_))), "{error:?}");
    assert!(error.to_string().contains("another MUNGE key"), "{error}");
}

#[test]
fn framed_round_trip() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let mut wire = Vec::new();
    let binding = Binding::Bound { nonce: Nonce([1; 32]), sequence: 0 };
    write(&mut wire, &socket, &Direction::ToServer, &binding, &vec!["a".to_string()]).unwrap();
    let (identity, opened, message): (Identity, Binding, Vec<String>) =
        read(&mut wire.as_slice(), &socket, &Direction::ToServer, &[Binding::Legacy, binding]).unwrap();
    assert_eq!((identity.uid, opened, message), (nix_uid(), binding, vec!["a".to_string()]));
}

fn nix_uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}
