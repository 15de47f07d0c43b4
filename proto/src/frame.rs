//! Framing: every message is a 4-byte big-endian length followed by that many bytes of JSON.
//! JSON is self-describing, so a field added with `#[serde(default)]` is not a break.
//! Frames longer than [`MAX_FRAME`] are refused before any allocation.

use serde::{de::DeserializeOwned, Serialize};
use std::io::{Read, Write};

/// Largest frame accepted in either direction (a job script plus its environment fits easily).
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("connection closed")]
    Closed,
    #[error("frame of {0} bytes exceeds the limit of {MAX_FRAME} bytes")]
    TooLarge(usize),
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
        return Err(FrameError::TooLarge(body_len));
    }
    buffer[..4].copy_from_slice(&(body_len as u32).to_be_bytes());
    Ok(buffer)
}

/// Decodes a frame body (without the length prefix).
pub fn decode<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    Ok(serde_json::from_slice(body)?)
}

/// Checks a length prefix and returns the body length.
pub fn body_len(prefix: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > MAX_FRAME {
        return Err(FrameError::TooLarge(len));
    }
    Ok(len)
}

/// Writes one message (blocking).
pub fn write<T: Serialize>(stream: &mut impl Write, message: &T) -> Result<(), FrameError> {
    stream.write_all(&encode(message)?)?;
    stream.flush()?;
    Ok(())
}

/// Reads one message (blocking). A clean end of stream before a frame is `Closed`.
pub fn read<T: DeserializeOwned>(stream: &mut impl Read) -> Result<T, FrameError> {
    let mut prefix = [0u8; 4];
    match stream.read_exact(&mut prefix) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
        Err(err) => return Err(err.into()),
    }
    let mut body = vec![0u8; body_len(prefix)?];
    stream.read_exact(&mut body)?;
    decode(&body)
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

    /// Reads one message. A clean end of stream before a frame is `Closed`.
    pub async fn read<T: DeserializeOwned>(stream: &mut (impl AsyncRead + Unpin)) -> Result<T, FrameError> {
        let mut prefix = [0u8; 4];
        match stream.read_exact(&mut prefix).await {
            Ok(_) => {}
            Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => return Err(FrameError::Closed),
            Err(err) => return Err(err.into()),
        }
        let mut body = vec![0u8; body_len(prefix)?];
        stream.read_exact(&mut body).await?;
        decode(&body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(result, Err(FrameError::TooLarge(_))));
    }

    #[test]
    fn garbled_body_is_decode_error() {
        let mut bytes = 3u32.to_be_bytes().to_vec();
        bytes.extend_from_slice(b"{{{");
        let result: Result<String, _> = read(&mut bytes.as_slice());
        assert!(matches!(result, Err(FrameError::Decode(_))));
    }

    #[test]
    fn empty_stream_is_closed() {
        let result: Result<String, _> = read(&mut [].as_slice());
        assert!(matches!(result, Err(FrameError::Closed)));
    }
}
