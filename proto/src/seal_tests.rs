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

/// Protocol 3's opening: the credential carries the session key to the uid it names, once;
/// bound like any credential to its body and direction.
#[test]
fn an_opening_brings_its_key_once_to_its_uid_only() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let key = SessionKey::fresh().unwrap();
    let accepted = [Binding::Opening, Binding::Legacy, Binding::Session];
    let envelope = seal_opening(&socket, &Direction::ToServer, nix_uid(), &key, b"{\"hello\":3}").unwrap();
    let opened = open(&socket, &Direction::ToServer, &accepted, envelope.clone()).unwrap();
    assert_eq!((opened.binding, opened.key.as_ref(), opened.identity.uid), (Binding::Session, Some(&key), nix_uid()));
    // Replayed, on this connection or another: munged's replay cache.
    let replay = open(&socket, &Direction::ToServer, &accepted, envelope).unwrap_err();
    assert!(matches!(replay, SealError::Munge(MungeError::Replayed)), "{replay:?}");
    // Altered, or lifted to another direction, or where no session is accepted.
    let mut altered = seal_opening(&socket, &Direction::ToServer, nix_uid(), &key, b"{}").unwrap();
    *altered.last_mut().unwrap() = b']';
    assert!(matches!(open(&socket, &Direction::ToServer, &accepted, altered), Err(SealError::Mismatch)));
    let elsewhere = seal_opening(&socket, &Direction::ToServer, nix_uid(), &key, b"{}").unwrap();
    let to_mom = Direction::ServerToMom("node1".into());
    assert!(matches!(open(&socket, &to_mom, &accepted, elsewhere), Err(SealError::Mismatch)));
    let unexpected = seal_opening(&socket, &Direction::ToServer, nix_uid(), &key, b"{}").unwrap();
    let error = open(&socket, &Direction::ToServer, &[Binding::Opening, Binding::Legacy], unexpected).unwrap_err();
    assert!(matches!(error, SealError::Mismatch), "{error:?}");
}

/// The key cannot be read by another uid: a credential restricted to another uid does not
/// decode for us (root included: munged gives root no exception unless told to), and what
/// munged refuses carries no payload.
#[test]
fn an_opening_for_another_uid_does_not_decode() {
    let Some(munged) = TestMunged::start() else { return };
    let socket = munged.socket();
    let other = nix_uid().wrapping_add(4242);
    let key = SessionKey::fresh().unwrap();
    let envelope = seal_opening(&socket, &Direction::ToServer, other, &key, b"{}").unwrap();
    let (credential, _) = split(&envelope).unwrap();
    let error = munge::decode(&socket, credential).unwrap_err();
    assert!(matches!(error, MungeError::Unauthorized(_)), "{error:?}");
    assert!(error.to_string().contains("another uid"), "{error}");
    let error = open(&socket, &Direction::ToServer, &[Binding::Session], envelope).unwrap_err();
    assert!(matches!(error, SealError::Munge(MungeError::Unauthorized(_))), "{error:?}");
    // Nor is the key in the clear on the wire: the credential is encrypted.
    let text =
        String::from_utf8_lossy(&seal_opening(&socket, &Direction::ToServer, other, &key, b"").unwrap()).into_owned();
    let (credential, _) = text.split_once('\n').unwrap();
    use base64::Engine;
    let armor = credential.trim_start_matches("MUNGE:").trim_end_matches(':');
    let raw = base64::engine::general_purpose::STANDARD.decode(armor).unwrap();
    assert!(!raw.windows(32).any(|window| window == key.0), "the key appears in the credential");
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
