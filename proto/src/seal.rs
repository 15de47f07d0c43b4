//! The sealed envelope of the TCP transport: a frame body is `<MUNGE credential>\n<body>`,
//! where the credential's payload is SHA-256 of (direction label, NUL, body); a message to a
//! mom names the node too, so it cannot be replayed to another mom's port (each host's munged
//! has its own replay cache). Opening decodes
//! the credential with munged (which refuses a replayed one), checks the hash (a credential
//! lifted from another message or direction does not fit), and yields the maker's uid and gid
//! with the body. Identity comes from the credential only.
//!
//! Owns: the envelope layout and the direction labels. Must not know message types beyond
//! JSON framing (`read`/`write` here are the blocking pair the commands use; the daemons'
//! async pair is `transport.rs`).

use crate::frame::{self, FrameError};
use crate::munge::{self, MungeError};
use serde::{de::DeserializeOwned, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::Path;

/// Who sends a sealed message to whom: part of what the credential vouches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Direction {
    /// From a command or a mom (the credential's uid tells them apart).
    ToServer,
    ServerToClient,
    /// To the mom of this node (empty during the handshake, before the mom has named itself).
    ServerToMom(String),
}

impl Direction {
    fn label(&self) -> &'static [u8] {
        match self {
            Direction::ToServer => b"minipbs ->server",
            Direction::ServerToClient => b"minipbs server->client",
            Direction::ServerToMom(_) => b"minipbs server->mom",
        }
    }
}

/// The maker of a credential, as munged vouches for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
}

/// Why an envelope could not be made or opened.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error(transparent)]
    Munge(#[from] MungeError),
    #[error("unsealed or malformed message (no MUNGE credential)")]
    Malformed,
    #[error("MUNGE credential does not match the message (lifted from another message)")]
    Mismatch,
    #[error(transparent)]
    Frame(#[from] FrameError),
}

impl SealError {
    /// A clean end of the connection before a frame.
    pub fn is_closed(&self) -> bool {
        matches!(self, SealError::Frame(FrameError::Closed))
    }
}

fn digest(direction: &Direction, body: &[u8]) -> Vec<u8> {
    let mut hash = Sha256::new();
    hash.update(direction.label());
    if let Direction::ServerToMom(node) = direction {
        hash.update([0u8]);
        hash.update(node.as_bytes());
    }
    hash.update([0u8]);
    hash.update(body);
    hash.finalize().to_vec()
}

/// Wraps `body` in an envelope credentialed as this process (blocking: asks munged).
pub fn seal(socket: &Path, direction: &Direction, body: &[u8]) -> Result<Vec<u8>, SealError> {
    let credential = munge::encode(socket, &digest(direction, body))?;
    let mut envelope = Vec::with_capacity(credential.len() + 1 + body.len());
    envelope.extend_from_slice(credential.as_bytes());
    envelope.push(b'\n');
    envelope.extend_from_slice(body);
    Ok(envelope)
}

/// Longest credential line looked for (MUNGE credentials of a hash payload are ~150 bytes).
pub const MAX_CREDENTIAL: usize = 4096;

/// Splits an envelope into its credential text and body without asking munged (pure): garbage
/// is refused here, before any credential is decoded.
pub fn split(envelope: &[u8]) -> Result<(&str, &[u8]), SealError> {
    let newline = envelope.iter().take(MAX_CREDENTIAL).position(|&byte| byte == b'\n').ok_or(SealError::Malformed)?;
    let credential = std::str::from_utf8(&envelope[..newline]).map_err(|_| SealError::Malformed)?;
    if !credential.starts_with("MUNGE:") {
        return Err(SealError::Malformed);
    }
    Ok((credential, &envelope[newline + 1..]))
}

/// Opens an envelope: the credential's maker and the body it vouches for (blocking).
pub fn open(socket: &Path, direction: &Direction, mut envelope: Vec<u8>) -> Result<(Identity, Vec<u8>), SealError> {
    let (credential, _) = split(&envelope)?;
    let credential_len = credential.len();
    let decoded = munge::decode(socket, credential)?;
    let body = envelope.split_off(credential_len + 1);
    if decoded.payload != digest(direction, &body) {
        return Err(SealError::Mismatch);
    }
    Ok((Identity { uid: decoded.uid, gid: decoded.gid }, body))
}

/// Writes one sealed message (blocking).
pub fn write<T: Serialize>(
    stream: &mut impl Write,
    socket: &Path,
    direction: &Direction,
    message: &T,
) -> Result<(), SealError> {
    let body = serde_json::to_vec(message).map_err(FrameError::from)?;
    let envelope = seal(socket, direction, &body)?;
    stream.write_all(&frame::prefixed(&envelope)?).map_err(FrameError::from)?;
    stream.flush().map_err(FrameError::from)?;
    Ok(())
}

/// Reads one sealed message (blocking).
pub fn read<T: DeserializeOwned>(
    stream: &mut impl Read,
    socket: &Path,
    direction: &Direction,
) -> Result<(Identity, T), SealError> {
    let envelope = frame::read_body(stream, frame::Limits::NORMAL)?;
    let (identity, body) = open(socket, direction, envelope)?;
    Ok((identity, frame::decode(&body)?))
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod tests;
