//! The keyed envelope without munged: what a frame fits and what it does not.

use super::*;

fn pair() -> ((FrameKey, FrameKey), (FrameKey, FrameKey)) {
    let key = SessionKey::fresh().unwrap();
    (key.keys(Side::Opener), key.keys(Side::Acceptor))
}

#[test]
fn a_frame_opens_with_the_peers_key_at_its_place_only() {
    let ((opener_send, opener_receive), (acceptor_send, acceptor_receive)) = pair();
    let envelope = opener_send.seal(1, b"{\"StatusServer\":null}");
    assert_eq!(acceptor_receive.open(1, envelope.clone()).unwrap(), b"{\"StatusServer\":null}");
    // Reordered, dropped or replayed within the connection: another number.
    for sequence in [0, 2, u64::MAX] {
        assert!(matches!(acceptor_receive.open(sequence, envelope.clone()), Err(KeyedError::BadTag)), "{sequence}");
    }
    // Reflected back to its sender: the other direction's key.
    assert!(matches!(opener_receive.open(1, envelope.clone()), Err(KeyedError::BadTag)));
    // And the other way round.
    let reply = acceptor_send.seal(0, b"{}");
    assert_eq!(opener_receive.open(0, reply.clone()).unwrap(), b"{}");
    assert!(matches!(acceptor_receive.open(0, reply), Err(KeyedError::BadTag)));
}

#[test]
fn a_frame_of_another_connection_fits_no_key_here() {
    let ((send, _), _) = pair();
    let ((_, _), (_, other_receive)) = pair();
    let envelope = send.seal(1, b"{}");
    assert!(matches!(other_receive.open(1, envelope), Err(KeyedError::BadTag)));
}

#[test]
fn an_altered_or_forged_frame_is_refused() {
    let ((send, _), (_, receive)) = pair();
    let envelope = send.seal(3, b"{\"DeleteJob\":{\"ids\":[\"1\"]}}");
    // Every single byte changed, in the tag or the body.
    for index in 0..envelope.len() {
        let mut altered = envelope.clone();
        altered[index] ^= 0x01;
        assert!(receive.open(3, altered).is_err(), "byte {index}");
    }
    let mut longer = envelope.clone();
    longer.push(b' ');
    assert!(matches!(receive.open(3, longer), Err(KeyedError::BadTag)));
    let forged = format!("HMAC:{}\n{{}}", "0".repeat(64)).into_bytes();
    assert!(matches!(receive.open(3, forged), Err(KeyedError::BadTag)));
    for garbage in [&b""[..], b"HMAC:", b"HMAC:zz\n{}", b"MUNGE:abc:\n{}", &envelope[..HEADER_LEN - 1]] {
        assert!(matches!(receive.open(3, garbage.to_vec()), Err(KeyedError::Malformed)), "{garbage:?}");
    }
}

#[test]
fn keys_are_never_printed() {
    let key = SessionKey::fresh().unwrap();
    let (send, _) = key.keys(Side::Opener);
    assert_eq!(format!("{key:?} {send:?}"), "SessionKey(..) FrameKey(..)");
}
