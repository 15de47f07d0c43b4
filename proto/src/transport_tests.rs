//! The halves' bindings against a real munged (skipped, loudly, when MUNGE is absent): what a
//! reader accepts at each point of a connection and what a writer seals; protocol 3's keyed
//! session and what it costs munged.

use super::*;
use crate::seal::tests::TestMunged;
use crate::session::{self, SessionKey, Side};
use crate::ErrorCode;
use tokio::io::{AsyncReadExt, DuplexStream};

/// A sealed reader on one end of a pipe, and the other end to feed it raw frames.
fn reader(munged: &TestMunged, direction: Direction) -> (FrameReader, DuplexStream) {
    let (near, far) = tokio::io::duplex(1 << 20);
    let sealing = Sealing { socket: Arc::from(munged.socket().as_path()), direction };
    (FrameReader::sealed(Box::new(near), sealing), far)
}

/// One frame of `message` sealed by this process under `binding`.
fn sealed<T: Serialize>(munged: &TestMunged, direction: &Direction, binding: Binding, message: &T) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    frame::prefixed(&seal::seal(&munged.socket(), direction, &binding, &body).unwrap()).unwrap()
}

#[tokio::test]
async fn a_reader_takes_an_opening_then_only_frames_bound_to_its_nonce_in_order() {
    let Some(munged) = TestMunged::start() else { return };
    let direction = Direction::ToServer;
    let (mut reader, mut feed) = reader(&munged, direction.clone());
    feed.write_all(&sealed(&munged, &direction, Binding::Opening, &"hello")).await.unwrap();
    let (binding, hello): (_, String) = reader.read_hello().await.unwrap();
    assert_eq!((binding, hello.as_str()), (Some(Binding::Opening), "hello"));
    let (ours, theirs) = (Nonce::fresh().unwrap(), Nonce::fresh().unwrap());
    reader.bind(ours);
    feed.write_all(&sealed(&munged, &direction, Binding::Bound { nonce: ours, sequence: 1 }, &1)).await.unwrap();
    assert_eq!(reader.read::<u32>().await.unwrap(), 1);
    // Sealed for another connection, or for another place on this one: refused.
    for (nonce, sequence) in [(theirs, 2), (ours, 3), (ours, 1)] {
        let (mut reader, mut feed) = self::reader(&munged, direction.clone());
        reader.bind(ours);
        reader.frames = 2;
        feed.write_all(&sealed(&munged, &direction, Binding::Bound { nonce, sequence }, &2)).await.unwrap();
        let error = reader.read::<u32>().await.unwrap_err();
        assert!(matches!(error, TransportError::Seal(SealError::Mismatch)), "{sequence}: {error:?}");
    }
}

#[tokio::test]
async fn a_reader_not_yet_bound_after_its_first_frame_takes_nothing() {
    let Some(munged) = TestMunged::start() else { return };
    let direction = Direction::ToServer;
    let (mut reader, mut feed) = reader(&munged, direction.clone());
    feed.write_all(&sealed(&munged, &direction, Binding::Legacy, &"hello")).await.unwrap();
    let (binding, _): (_, String) = reader.read_hello().await.unwrap();
    assert_eq!(binding, Some(Binding::Legacy));
    for binding in [Binding::Opening, Binding::Bound { nonce: Nonce([0; 32]), sequence: 1 }] {
        feed.write_all(&sealed(&munged, &direction, binding, &"again")).await.unwrap();
        assert!(reader.read::<String>().await.is_err(), "{binding:?}");
    }
}

#[tokio::test]
async fn a_reply_to_hello_sealed_the_old_way_is_believed_only_as_a_refusal() {
    let Some(munged) = TestMunged::start() else { return };
    let direction = Direction::ServerToClient;
    let nonce = Nonce::fresh().unwrap();
    let welcome = |nonce| HelloReply::Welcome { protocol: 1, server_name: "s".into(), nonce };
    let refused = HelloReply::Refused { code: ErrorCode::ProtocolMismatch, message: "speaks 1".into() };
    let bound = Binding::Bound { nonce, sequence: 0 };
    let cases = [
        (bound, welcome(Some(nonce)), true),
        (Binding::Legacy, refused.clone(), true),
        (Binding::Legacy, welcome(None), false),
        (bound, welcome(None), false),
    ];
    for (binding, reply, believed) in cases {
        let (mut reader, mut feed) = reader(&munged, direction.clone());
        reader.bind(nonce);
        feed.write_all(&sealed(&munged, &direction, binding, &reply)).await.unwrap();
        let read = reader.read_hello_reply().await.unwrap();
        if believed {
            assert_eq!(read, reply);
        } else {
            let HelloReply::Refused { code, message } = read else { panic!("{binding:?} {reply:?} believed") };
            assert_eq!(code, ErrorCode::ProtocolMismatch);
            assert!(message.contains("upgrade pbs_server"), "{message}");
        }
    }
}

#[tokio::test]
async fn a_writer_seals_its_first_frame_opening_then_nothing_until_bound() {
    let Some(munged) = TestMunged::start() else { return };
    let (near, mut far) = tokio::io::duplex(1 << 20);
    let sealing = Sealing { socket: Arc::from(munged.socket().as_path()), direction: Direction::ToServer };
    let mut writer = FrameWriter::new(Box::new(near), Some(sealing));
    writer.write(&"hello").await.unwrap();
    assert!(matches!(writer.write(&"unbound").await, Err(TransportError::Unbound)));
    let nonce = Nonce::fresh().unwrap();
    writer.bind(nonce);
    writer.write(&"bound").await.unwrap();
    drop(writer);
    let mut wire = Vec::new();
    far.read_to_end(&mut wire).await.unwrap();
    let mut wire = wire.as_slice();
    let socket = munged.socket();
    let (_, first, _): (_, _, String) =
        seal::read(&mut wire, &socket, &Direction::ToServer, &[Binding::Opening]).unwrap();
    assert_eq!(first, Binding::Opening);
    let second = [Binding::Bound { nonce, sequence: 1 }];
    let (_, _, text): (_, _, String) = seal::read(&mut wire, &socket, &Direction::ToServer, &second).unwrap();
    assert_eq!(text, "bound");
}

/// Both ends of a protocol-3 connection over a pipe: (opener's halves, acceptor's halves).
fn session_pair(munged: &TestMunged) -> ((FrameReader, FrameWriter), (FrameReader, FrameWriter)) {
    let (near, far) = tokio::io::duplex(1 << 20);
    let (near_read, near_write) = tokio::io::split(near);
    let (far_read, far_write) = tokio::io::split(far);
    let socket: Arc<Path> = Arc::from(munged.socket().as_path());
    let sealing = |direction| Some(Sealing { socket: socket.clone(), direction });
    let opener = (
        FrameReader::sealed(Box::new(near_read), sealing(Direction::ServerToClient).unwrap()),
        FrameWriter::new(Box::new(near_write), sealing(Direction::ToServer)),
    );
    let acceptor = (
        FrameReader::sealed(Box::new(far_read), sealing(Direction::ToServer).unwrap()),
        FrameWriter::new(Box::new(far_write), sealing(Direction::ServerToClient)),
    );
    (opener, acceptor)
}

fn own_uid() -> u32 {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() }
}

/// A command's whole exchange (hello, two requests, welcome, two replies) asks munged twice
/// in all: the opening's encode and its decode. Protocol 2 asked it twice per frame (12 here).
#[tokio::test]
async fn a_session_asks_munged_once_per_connection_each_side() {
    let Some(munged) = TestMunged::start() else { return };
    let ((mut client_reader, mut client_writer), (mut server_reader, mut server_writer)) = session_pair(&munged);
    let before = crate::munge::calls(&munged.socket());
    client_reader.keyed(client_writer.open_session(own_uid()).unwrap());
    // The requests go right after the hello, before any answer.
    for message in ["hello", "request 1", "request 2"] {
        client_writer.write(&message).await.unwrap();
    }
    let (binding, hello): (_, String) = server_reader.read_hello().await.unwrap();
    assert_eq!((binding, hello.as_str()), (Some(Binding::Session), "hello"));
    assert_eq!(server_reader.identity().map(|identity| identity.uid), Some(own_uid()));
    let (send, receive) = server_reader.take_session().unwrap().keys(Side::Acceptor);
    assert!(server_reader.take_session().is_none(), "taken once");
    server_writer.keyed(send);
    server_reader.keyed(receive);
    let welcome = HelloReply::Welcome { protocol: crate::PROTOCOL_VERSION, server_name: "s".into(), nonce: None };
    server_writer.write(&welcome).await.unwrap();
    for expected in ["request 1", "request 2"] {
        assert_eq!(server_reader.read::<String>().await.unwrap(), expected);
        server_writer.write(&format!("reply to {expected}")).await.unwrap();
    }
    assert_eq!(client_reader.read_hello_reply().await.unwrap(), welcome);
    assert_eq!(client_reader.read::<String>().await.unwrap(), "reply to request 1");
    assert_eq!(client_reader.read::<String>().await.unwrap(), "reply to request 2");
    assert_eq!(crate::munge::calls(&munged.socket()) - before, 2, "the opening's encode and decode");
}

/// After the opening, a keyed reader takes each frame at its place only: a replayed, a
/// reordered, a forged frame or one of another connection is refused.
#[tokio::test]
async fn a_keyed_reader_refuses_replayed_reordered_forged_and_foreign_frames() {
    let Some(munged) = TestMunged::start() else { return };
    let key = SessionKey::fresh().unwrap();
    let (send, _) = key.keys(Side::Opener);
    let (other_send, _) = SessionKey::fresh().unwrap().keys(Side::Opener);
    let (_, to_acceptor) = key.keys(Side::Acceptor);
    let forged = frame::prefixed(format!("HMAC:{}\n\"xx\"", "0".repeat(64)).as_bytes()).unwrap();
    let first = session::framed(&send, 1, b"\"one\"").unwrap();
    let cases: [(&str, Vec<Vec<u8>>); 4] = [
        ("replayed", vec![first.clone(), first.clone()]),
        ("reordered", vec![session::framed(&send, 2, b"\"two\"").unwrap()]),
        ("another connection's", vec![first.clone(), session::framed(&other_send, 2, b"\"two\"").unwrap()]),
        ("forged", vec![first.clone(), forged]),
    ];
    for (what, frames) in cases {
        let (mut reader, mut feed) = reader(&munged, Direction::ToServer);
        reader.keyed(to_acceptor.clone());
        reader.frames = 1;
        for frame in &frames {
            feed.write_all(frame).await.unwrap();
        }
        let mut results = Vec::new();
        for _ in &frames {
            results.push(reader.read::<String>().await);
        }
        let last = results.pop().unwrap();
        assert!(results.iter().all(Result::is_ok), "{what}: {results:?}");
        assert!(
            matches!(last, Err(TransportError::Seal(SealError::Keyed(session::KeyedError::BadTag)))),
            "{what}: {last:?}"
        );
        assert!(last.unwrap_err().is_refused_credential(), "{what}");
    }
}

/// A server that could not read our opening answers with a credential (the old way): believed
/// as a refusal, never as a welcome.
#[tokio::test]
async fn a_credentialed_answer_to_a_keyed_hello_is_only_a_refusal() {
    let Some(munged) = TestMunged::start() else { return };
    let direction = Direction::ServerToClient;
    let welcome = HelloReply::Welcome { protocol: 3, server_name: "s".into(), nonce: None };
    let refused = HelloReply::Refused { code: ErrorCode::PermissionDenied, message: "credential refused".into() };
    for (reply, believed) in [(refused.clone(), true), (welcome, false)] {
        let (mut reader, mut feed) = reader(&munged, direction.clone());
        let (_, receive) = SessionKey::fresh().unwrap().keys(Side::Opener);
        reader.keyed(receive);
        feed.write_all(&sealed(&munged, &direction, Binding::Legacy, &reply)).await.unwrap();
        let read = reader.read_hello_reply().await.unwrap();
        assert_eq!(read == reply, believed, "{read:?}");
        assert!(matches!(read, HelloReply::Refused { .. }));
    }
}

/// A batch leaves as frames a reader takes one by one, in order, each keyed and numbered as
/// single writes would be: a frame after the batch is still accepted at its place.
#[tokio::test]
async fn a_batch_is_read_as_its_frames_in_order() {
    let Some(munged) = TestMunged::start() else { return };
    let ((mut client_reader, mut client_writer), (mut server_reader, mut server_writer)) = session_pair(&munged);
    client_reader.keyed(client_writer.open_session(own_uid()).unwrap());
    client_writer.write(&"hello").await.unwrap();
    let _: (_, String) = server_reader.read_hello().await.unwrap();
    let (send, receive) = server_reader.take_session().unwrap().keys(Side::Acceptor);
    server_writer.keyed(send);
    server_reader.keyed(receive);
    client_writer.write_batch(&["one", "two", "three"]).await.unwrap();
    client_writer.write(&"four").await.unwrap();
    for expected in ["one", "two", "three", "four"] {
        assert_eq!(server_reader.read::<String>().await.unwrap(), expected);
    }
}
