//! Framing: every message is a 4-byte big-endian length followed by that many bytes of JSON.
//! JSON is self-describing, so a field added with `#[serde(default)]` is not a break.
//!
//! Reading is bounded for hostile peers: a length over the reader's [`Limits`] is refused before
//! anything is allocated, the body is read in chunks and the buffer grows only as bytes actually
//! arrive (a declared 16 MiB that never comes costs one chunk), and a frame once begun must be
//! complete within the limits' deadline (slow-loris). Before the handshake the limit is
//! [`Limits::HANDSHAKE`] (a `Hello` is tiny); after it, [`Limits::NORMAL`]. How long a peer may
//! stay silent *between* frames is the caller's business (idle and hello timeouts).

use serde::{de::DeserializeOwned, Serialize};
use std::io::{ErrorKind, Read, Write};
use std::time::{Duration, Instant};

/// Largest frame accepted in either direction (a job script plus its environment fits easily).
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Largest frame accepted before the handshake is done.
pub const MAX_HANDSHAKE_FRAME: usize = 64 * 1024;

/// How long a frame may take from its first byte to its last.
pub const FRAME_DEADLINE: Duration = Duration::from_secs(30);

/// The body is read at most this many bytes at a time; the buffer never runs further ahead.
const CHUNK: usize = 64 * 1024;

/// What a reader accepts: the largest body and the time a begun frame may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_body: usize,
    pub deadline: Duration,
}

impl Limits {
    /// Before the handshake: a `Hello` (or the interactive stream's first frame) is tiny.
    pub const HANDSHAKE: Limits = Limits { max_body: MAX_HANDSHAKE_FRAME, deadline: FRAME_DEADLINE };
    /// After the handshake.
    pub const NORMAL: Limits = Limits { max_body: MAX_FRAME, deadline: FRAME_DEADLINE };
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("frame of {len} bytes exceeds the limit of {limit} bytes")]
    TooLarge { len: usize, limit: usize },
    #[error("frame cut short: {got} of {len} bytes arrived")]
    Truncated { got: usize, len: usize },
    #[error("frame not complete within {} s", .0.as_secs())]
    TimedOut(Duration),
    #[error("garbled message: {0}")]
    Decode(#[from] serde_json::Error),
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// Encodes `message` as one frame (length prefix included).
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let mut buffer = vec![0u8; 4];
    serde_json::to_writer(&mut buffer, message)?;
    let body_len = buffer.len() - 4;
    if body_len > MAX_FRAME {
        return Err(FrameError::TooLarge { len: body_len, limit: MAX_FRAME });
    }
    buffer[..4].copy_from_slice(&(body_len as u32).to_be_bytes());
    Ok(buffer)
}

/// Decodes a frame body (without the length prefix).
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    Ok(serde_json::from_slice(body)?)
}

/// Checks a length prefix against `limit` and returns the body length.
pub fn body_len(prefix: [u8; 4], limit: usize) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > limit {
        return Err(FrameError::TooLarge { len, limit });
    }
    Ok(len)
}

/// A ready frame (length prefix included) around an already encoded body (a sealed envelope).
pub fn prefixed(body: &[u8]) -> Result<Vec<u8>, FrameError> {
    if body.len() > MAX_FRAME {
        return Err(FrameError::TooLarge { len: body.len(), limit: MAX_FRAME });
    }
    let mut buffer = Vec::with_capacity(4 + body.len());
    buffer.extend_from_slice(&(body.len() as u32).to_be_bytes());
    buffer.extend_from_slice(body);
    Ok(buffer)
}

/// A body being received: the buffer runs at most one chunk ahead of what has arrived.
struct Body {
    bytes: Vec<u8>,
    received: usize,
    len: usize,
}

impl Body {
    fn new(len: usize) -> Body {
        Body { bytes: Vec::with_capacity(len.min(CHUNK)), received: 0, len }
    }

    fn done(&self) -> bool {
        self.received == self.len
    }

    /// Room for the next read, at most one chunk.
    fn room(&mut self) -> &mut [u8] {
        let want = (self.len - self.received).min(CHUNK);
        self.bytes.resize(self.received + want, 0);
        &mut self.bytes[self.received..]
    }

    /// Keeps `read` bytes of the room; a zero read means the peer stopped mid-frame.
    fn filled(&mut self, read: usize) -> Result<(), FrameError> {
        if read == 0 {
            return Err(FrameError::Truncated { got: self.received, len: self.len });
        }
        self.received += read;
        Ok(())
    }

    fn into_bytes(mut self) -> Vec<u8> {
        self.bytes.truncate(self.received);
        self.bytes
    }
}

/// Writes one message (blocking).
pub fn write<T: Serialize>(stream: &mut impl Write, message: &T) -> Result<(), FrameError> {
    stream.write_all(&encode(message)?)?;
    stream.flush()?;
    Ok(())
}

/// Reads one message (blocking) under [`Limits::NORMAL`]. A clean end of stream before a frame
/// is `Closed`.
pub fn read<T: DeserializeOwned>(stream: &mut impl Read) -> Result<T, FrameError> {
    read_limited(stream, Limits::NORMAL)
}

/// Reads one message (blocking) under `limits`.
pub fn read_limited<T: DeserializeOwned>(stream: &mut impl Read, limits: Limits) -> Result<T, FrameError> {
    decode(&read_body(stream, limits)?)
}

/// Reads one frame's body (blocking). The deadline is checked as each piece arrives, so a
/// stream without a read timeout can still block in one `read`; give sockets a read timeout.
pub fn read_body(stream: &mut impl Read, limits: Limits) -> Result<Vec<u8>, FrameError> {
    let mut prefix = [0u8; 4];
    let mut got = 0;
    let mut began = None;
    while got < 4 {
        match stream.read(&mut prefix[got..]) {
            Ok(0) if got == 0 => return Err(FrameError::Closed),
            Ok(0) => return Err(FrameError::Truncated { got: 0, len: 4 }),
            Ok(read) => got += read,
            Err(err) if err.kind() == ErrorKind::Interrupted => continue,
            Err(err) => return Err(err.into()),
        }
        let began = *began.get_or_insert_with(Instant::now);
        check_deadline(began, limits)?;
    }
    let began = began.unwrap_or_else(Instant::now);
    let mut body = Body::new(body_len(prefix, limits.max_body)?);
    while !body.done() {
        match stream.read(body.room()) {
            Ok(read) => body.filled(read)?,
            Err(err) if err.kind() == ErrorKind::Interrupted => {}
            Err(err) => return Err(err.into()),
        }
        check_deadline(began, limits)?;
    }
    Ok(body.into_bytes())
}

fn check_deadline(began: Instant, limits: Limits) -> Result<(), FrameError> {
    if began.elapsed() > limits.deadline {
        return Err(FrameError::TimedOut(limits.deadline));
    }
    Ok(())
}

/// Async framing for the daemons.
#[cfg(feature = "tokio")]
pub mod nonblocking {
    use super::*;
    use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

    /// Writes one message.
    pub async fn write<T: Serialize>(stream: &mut (impl AsyncWrite + Unpin), message: &T) -> Result<(), FrameError> {
        stream.write_all(&encode(message)?).await?;
        stream.flush().await?;
        Ok(())
    }

    /// Reads one message under [`Limits::NORMAL`]. A clean end of stream before a frame is
    /// `Closed`.
    pub async fn read<T: DeserializeOwned>(stream: &mut (impl AsyncRead + Unpin)) -> Result<T, FrameError> {
        read_limited(stream, Limits::NORMAL).await
    }

    /// Reads one message under `limits`.
    pub async fn read_limited<T: DeserializeOwned>(
        stream: &mut (impl AsyncRead + Unpin),
        limits: Limits,
    ) -> Result<T, FrameError> {
        decode(&read_body(stream, limits).await?)
    }

    /// Reads one frame's body: waits as long as it takes for the first byte, then the rest of
    /// the frame must arrive within `limits.deadline`.
    pub async fn read_body(stream: &mut (impl AsyncRead + Unpin), limits: Limits) -> Result<Vec<u8>, FrameError> {
        let mut prefix = [0u8; 4];
        if stream.read(&mut prefix[..1]).await? == 0 {
            return Err(FrameError::Closed);
        }
        match tokio::time::timeout(limits.deadline, rest_of_frame(stream, prefix, limits)).await {
            Ok(result) => result,
            Err(_) => Err(FrameError::TimedOut(limits.deadline)),
        }
    }

    async fn rest_of_frame(
        stream: &mut (impl AsyncRead + Unpin),
        mut prefix: [u8; 4],
        limits: Limits,
    ) -> Result<Vec<u8>, FrameError> {
        let mut got = 1;
        while got < 4 {
            match stream.read(&mut prefix[got..]).await? {
                0 => return Err(FrameError::Truncated { got: 0, len: 4 }),
                read => got += read,
            }
        }
        let mut body = Body::new(body_len(prefix, limits.max_body)?);
        while !body.done() {
            let read = stream.read(body.room()).await?;
            body.filled(read)?;
        }
        Ok(body.into_bytes())
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
