//! The halves' bindings against a real munged (skipped, loudly, when MUNGE is absent): what a
//! reader accepts at each point of a connection and what a writer seals.

use super::*;
use crate::seal::tests::TestMunged;
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
