//! Tests of the framing: round trips, and every way a hostile or broken peer can misbehave.

use super::*;

fn frame_of(body: &[u8]) -> Vec<u8> {
    let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

#[test]
fn round_trip() {
    let bytes = encode(&vec!["a".to_string(), "b".to_string()]).unwrap();
    let back: Vec<String> = read(&mut bytes.as_slice()).unwrap();
    assert_eq!(back, vec!["a", "b"]);
}

#[test]
fn oversized_prefix_refused_without_allocation() {
    let bytes = [0xff, 0xff, 0xff, 0xff, b'x'];
    let result: Result<String, _> = read(&mut bytes.as_slice());
    assert!(matches!(result, Err(FrameError::TooLarge { len: 0xffff_ffff, limit: MAX_FRAME })), "{result:?}");
}

#[test]
fn the_handshake_limit_is_lower() {
    let body = format!("\"{}\"", "x".repeat(MAX_HANDSHAKE_FRAME));
    let bytes = frame_of(body.as_bytes());
    let refused = read_limited::<String>(&mut bytes.as_slice(), Limits::HANDSHAKE);
    assert!(matches!(refused, Err(FrameError::TooLarge { limit: MAX_HANDSHAKE_FRAME, .. })), "{refused:?}");
    assert_eq!(read::<String>(&mut bytes.as_slice()).unwrap().len(), MAX_HANDSHAKE_FRAME);
}

#[test]
fn garbled_body_is_decode_error() {
    let bytes = frame_of(b"{{{");
    let result: Result<String, _> = read(&mut bytes.as_slice());
    assert!(matches!(result, Err(FrameError::Decode(_))));
}

#[test]
fn empty_stream_is_closed() {
    let result: Result<String, _> = read(&mut [].as_slice());
    assert!(matches!(result, Err(FrameError::Closed)));
}

#[test]
fn cut_short_prefix_and_body_are_truncated() {
    let result: Result<String, _> = read(&mut [0u8, 0].as_slice());
    assert!(matches!(result, Err(FrameError::Truncated { got: 0, len: 4 })), "{result:?}");
    let mut bytes = frame_of(b"\"abcdef\"");
    bytes.truncate(7);
    let result: Result<String, _> = read(&mut bytes.as_slice());
    assert!(matches!(result, Err(FrameError::Truncated { got: 3, len: 8 })), "{result:?}");
}

/// Hands out a declared length, then `available` bytes, then end of stream; records the
/// largest buffer a read was offered.
struct Trickle {
    prefix: [u8; 4],
    sent_prefix: bool,
    available: usize,
    largest_offer: usize,
    pause: std::time::Duration,
}

impl Trickle {
    fn new(declared: usize, available: usize) -> Trickle {
        let prefix = (declared as u32).to_be_bytes();
        Trickle { prefix, sent_prefix: false, available, largest_offer: 0, pause: Duration::ZERO }
    }
}

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.sent_prefix {
            self.sent_prefix = true;
            buf[..4].copy_from_slice(&self.prefix);
            return Ok(4);
        }
        std::thread::sleep(self.pause);
        self.largest_offer = self.largest_offer.max(buf.len());
        let n = buf.len().min(self.available).min(1000);
        buf[..n].fill(b' ');
        self.available -= n;
        Ok(n)
    }
}

#[test]
fn a_declared_length_is_not_allocated_up_front() {
    let mut trickle = Trickle::new(MAX_FRAME, 10_000);
    let result = read_body(&mut trickle, Limits::NORMAL);
    assert!(matches!(result, Err(FrameError::Truncated { got: 10_000, len: MAX_FRAME })), "{result:?}");
    assert!(trickle.largest_offer <= CHUNK, "a read was offered {} bytes", trickle.largest_offer);
    let mut whole = Trickle::new(3 * CHUNK + 5, 3 * CHUNK + 5);
    assert_eq!(read_body(&mut whole, Limits::NORMAL).unwrap().len(), 3 * CHUNK + 5);
}

#[test]
fn a_slow_frame_times_out() {
    let mut trickle = Trickle::new(100_000, 100_000);
    trickle.pause = Duration::from_millis(20);
    let limits = Limits { max_body: MAX_FRAME, deadline: Duration::from_millis(100) };
    let result = read_body(&mut trickle, limits);
    assert!(matches!(result, Err(FrameError::TimedOut(_))), "{result:?}");
}

#[cfg(feature = "tokio")]
mod nonblocking_tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn large_frames_arrive_in_pieces() {
        let (mut near, mut far) = tokio::io::duplex(1000);
        let message = "y".repeat(5 * CHUNK);
        let writer = tokio::spawn(async move { nonblocking::write(&mut far, &message).await.unwrap() });
        let back: String = nonblocking::read(&mut near).await.unwrap();
        assert_eq!(back.len(), 5 * CHUNK);
        writer.await.unwrap();
    }

    // Paused clock: the 300 ms of silence and the 100 ms deadline pass in virtual time.
    #[tokio::test(start_paused = true)]
    async fn a_begun_frame_must_finish_in_time_but_silence_before_it_is_fine() {
        let (mut near, mut far) = tokio::io::duplex(1000);
        let limits = Limits { max_body: MAX_FRAME, deadline: Duration::from_millis(100) };
        let reader = tokio::spawn(async move { nonblocking::read_body(&mut near, limits).await });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!reader.is_finished(), "silence before a frame is the caller's to time out");
        far.write_all(&[0, 0, 1, 0, b'x']).await.unwrap();
        let result = reader.await.unwrap();
        assert!(matches!(result, Err(FrameError::TimedOut(_))), "{result:?}");
    }

    #[tokio::test]
    async fn oversized_and_cut_short_frames_are_refused() {
        let (mut near, mut far) = tokio::io::duplex(1000);
        far.write_all(&[0, 2, 0, 0]).await.unwrap();
        let result = nonblocking::read_body(&mut near, Limits::HANDSHAKE).await;
        assert!(matches!(result, Err(FrameError::TooLarge { len: 0x2_0000, .. })), "{result:?}");
        let (mut near, mut far) = tokio::io::duplex(1000);
        far.write_all(&[0, 0, 0, 9, b'a']).await.unwrap();
        drop(far);
        let result = nonblocking::read_body(&mut near, Limits::NORMAL).await;
        assert!(matches!(result, Err(FrameError::Truncated { got: 1, len: 9 })), "{result:?}");
    }
}
