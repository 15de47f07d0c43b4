//! Protocol 3 on TCP: MUNGE once per connection, then an HMAC per frame (as Slurm's
//! `auth/slurm` does). The opener (a command, a mom) draws a fresh 256-bit [`SessionKey`] and
//! sends it inside the MUNGE credential of its first frame (`seal::seal_opening`): the payload is
//! encrypted by munged and the credential restricted to the uid of the receiving daemon, so only
//! munged and that uid can read the key, and munged's replay cache refuses the credential a
//! second time. Every later frame, in either direction, carries
//! `HMAC-SHA256(direction key, "minipbs/3 frame" || sequence || body)` instead of a credential:
//! the two direction keys are derived from the session key (`HMAC(K, label)`, a PRF of a uniform
//! key), so a frame cannot be reflected back to its sender; the sequence is the frame's number in
//! its direction on this connection (the opening is 0), so frames cannot be reordered, dropped
//! or replayed within the connection, and a frame of another connection fits no key here.
//! Why it is as safe as a credential per frame: docs/security.md (B1).
//!
//! On the wire a keyed frame's body is `HMAC:<64 hex digits>\n<message>` (a credential's is
//! `MUNGE:...`, so the two never mix up).
//!
//! Owns: the key, the derivation, the tag and the keyed envelope. Pure: no munged, no I/O.

use crate::frame::FrameError;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// The start of a keyed envelope.
const PREFIX: &[u8] = b"HMAC:";

/// A keyed envelope's header: the prefix, 64 hex digits and a newline.
pub const HEADER_LEN: usize = PREFIX.len() + 64 + 1;

/// Why a keyed frame was refused, or no key could be drawn.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyedError {
    #[error("malformed message (no tag of the connection's key)")]
    Malformed,
    /// Forged, altered, replayed, reordered, or from another connection.
    #[error("message not authenticated by this connection's key (forged, altered, replayed or reordered)")]
    BadTag,
    #[error("cannot draw a random key: {0}")]
    Random(String),
}

/// A connection's secret, drawn by its opener. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey(pub(crate) [u8; 32]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

/// Which end of the connection a key is used at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Sent the opening credential (a command, a mom connecting to the server).
    Opener,
    /// Read it (the server).
    Acceptor,
}

impl SessionKey {
    /// 32 bytes from the kernel's generator.
    pub fn fresh() -> Result<SessionKey, KeyedError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|error| KeyedError::Random(error.to_string()))?;
        Ok(SessionKey(bytes))
    }

    /// The keys of `side`: (for what it sends, for what it receives).
    pub fn keys(&self, side: Side) -> (FrameKey, FrameKey) {
        let to_acceptor = self.derive(b"minipbs/3 opener->acceptor");
        let to_opener = self.derive(b"minipbs/3 acceptor->opener");
        match side {
            Side::Opener => (to_acceptor, to_opener),
            Side::Acceptor => (to_opener, to_acceptor),
        }
    }

    fn derive(&self, label: &[u8]) -> FrameKey {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(label);
        FrameKey(mac.finalize().into_bytes().into())
    }
}

/// The key of one direction of one connection.
#[derive(Clone)]
pub struct FrameKey([u8; 32]);

impl std::fmt::Debug for FrameKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FrameKey(..)")
    }
}

impl FrameKey {
    fn mac(&self, sequence: u64, body: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes any key length");
        mac.update(b"minipbs/3 frame\0");
        mac.update(&sequence.to_be_bytes());
        mac.update(body);
        mac
    }

    /// The envelope of `body` sent as frame number `sequence` of this direction.
    pub fn seal(&self, sequence: u64, body: &[u8]) -> Vec<u8> {
        let tag = self.mac(sequence, body).finalize().into_bytes();
        let mut envelope = Vec::with_capacity(HEADER_LEN + body.len());
        envelope.extend_from_slice(PREFIX);
        let mut digits = [0u8; 64];
        hex::encode_to_slice(tag, &mut digits).expect("64 digits for 32 bytes");
        envelope.extend_from_slice(&digits);
        envelope.push(b'\n');
        envelope.extend_from_slice(body);
        envelope
    }

    /// The body of an envelope received as frame number `sequence`, if its tag is right
    /// (compared in constant time).
    pub fn open(&self, sequence: u64, mut envelope: Vec<u8>) -> Result<Vec<u8>, KeyedError> {
        if !is_keyed(&envelope) || envelope.len() < HEADER_LEN || envelope[HEADER_LEN - 1] != b'\n' {
            return Err(KeyedError::Malformed);
        }
        let mut tag = [0u8; 32];
        hex::decode_to_slice(&envelope[PREFIX.len()..HEADER_LEN - 1], &mut tag).map_err(|_| KeyedError::Malformed)?;
        let body = envelope.split_off(HEADER_LEN);
        self.mac(sequence, &body).verify_slice(&tag).map_err(|_| KeyedError::BadTag)?;
        Ok(body)
    }
}

/// Whether an envelope is a keyed one (else a credential's, or garbage).
pub fn is_keyed(envelope: &[u8]) -> bool {
    envelope.starts_with(PREFIX)
}

/// A keyed frame's bytes on the wire (length-prefixed).
pub fn framed(key: &FrameKey, sequence: u64, body: &[u8]) -> Result<Vec<u8>, FrameError> {
    crate::frame::prefixed(&key.seal(sequence, body))
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
