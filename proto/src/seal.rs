//! The sealed envelope of the TCP transport: a frame body is `<MUNGE credential>\n<body>`,
//! where the credential's payload is SHA-256 of what it vouches for: the direction label, the
//! node for a message to a mom (so it cannot be replayed to another mom's port: each host's
//! munged has its own replay cache), the [`Binding`] to the connection, and the body.
//!
//! Binding (protocol 2): each side draws a fresh [`Nonce`] when the connection starts and
//! sends it in the clear (in `Hello`, `Welcome`, or the mom port's greeting); every frame after
//! that is sealed for the receiver's nonce and its number in its direction, so a frame lifted
//! from one connection before it was opened fits no other, and frames of one connection cannot
//! be reordered or dropped unnoticed. The first frame of a connection (`Hello`) is sealed
//! [`Binding::Opening`]. Protocol 1 peers seal [`Binding::Legacy`] (no binding: munged's replay
//! cache alone stops a frame that was opened once).
//!
//! Protocol 3 ([`Binding::Session`], `session.rs`): only the first frame is sealed here, its
//! credential carrying the connection's key as well ([`seal_opening`]); the rest are keyed.
//!
//! Opening decodes the credential with munged (which refuses a replayed one), checks the hash
//! against the bindings the reader accepts (a credential lifted from another message,
//! direction or connection does not fit), and yields the maker's uid and gid with the body.
//! Identity comes from the credential only.
//!
//! Owns: the envelope layout, the direction labels and the binding. Must not know message
//! types beyond JSON framing (`read`/`write` here are the blocking pair the commands use; the
//! daemons' async pair is `transport.rs`).

use crate::frame::{self, FrameError};
use crate::munge::{self, MungeError};
use crate::session::{KeyedError, SessionKey};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
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
    /// From one mom to the mom of this node (the task path between the moms of a job): its
    /// own label, so a server frame is never accepted as a peer's and vice versa.
    MomToMom(String),
}

impl Direction {
    fn label(&self) -> &'static [u8] {
        match self {
            Direction::ToServer => b"minipbs ->server",
            Direction::ServerToClient => b"minipbs server->client",
            Direction::ServerToMom(_) => b"minipbs server->mom",
            Direction::MomToMom(_) => b"minipbs mom->mom",
        }
    }
}

/// A connection's fresh random number, drawn by the side that will receive frames sealed for
/// it. On the wire: 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Nonce(pub [u8; 32]);

impl Nonce {
    /// 32 bytes from the kernel's generator.
    pub fn fresh() -> Result<Nonce, SealError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|error| SealError::Random(error.to_string()))?;
        Ok(Nonce(bytes))
    }

    fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    fn from_hex(text: &str) -> Option<Nonce> {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(text, &mut bytes).ok()?;
        Some(Nonce(bytes))
    }
}

impl std::fmt::Debug for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nonce({})", self.to_hex())
    }
}

impl Serialize for Nonce {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Nonce {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Nonce, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Nonce::from_hex(&text).ok_or_else(|| serde::de::Error::custom("a nonce is 64 hex digits"))
    }
}

/// What a credential vouches for beyond direction and body: how the frame is tied to its
/// connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// Protocol 1: not at all.
    Legacy,
    /// Protocol 2, the first frame of a connection, before the peer's nonce is known.
    Opening,
    /// Protocol 2: the receiver's nonce and the frame's number among the frames sent to it on
    /// this connection (the first is 0).
    Bound { nonce: Nonce, sequence: u64 },
    /// Protocol 3, the first frame of a connection: the credential also carries the connection's
    /// [`SessionKey`] (`session.rs`); every later frame is keyed, not credentialed.
    Session,
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
    #[error("MUNGE credential does not match the message (lifted from another message or connection)")]
    Mismatch,
    /// Sealed the protocol-1 way where a frame bound to this connection was expected.
    #[error("message sealed without connection binding (protocol 1): the peer needs an upgrade")]
    Legacy,
    #[error("cannot draw a random nonce: {0}")]
    Random(String),
    /// A keyed frame (protocol 3) refused: malformed, or its tag does not fit (forged, altered,
    /// replayed, reordered, or from another connection).
    #[error(transparent)]
    Keyed(#[from] KeyedError),
    #[error(transparent)]
    Frame(#[from] FrameError),
}

impl SealError {
    /// A clean end of the connection before a frame.
    pub fn is_closed(&self) -> bool {
        matches!(self, SealError::Frame(FrameError::Closed))
    }
}

/// The payload of a credential for `body` sent in `direction` under `binding`. Protocol 2's
/// preimages start with a prefix protocol 1's never do and have fixed-size or length-prefixed
/// fields, so no two (direction, binding, body) share one.
fn digest(direction: &Direction, binding: &Binding, body: &[u8]) -> Vec<u8> {
    let mut hash = Sha256::new();
    let node = match direction {
        Direction::ServerToMom(node) | Direction::MomToMom(node) => Some(node.as_bytes()),
        _ => None,
    };
    if *binding == Binding::Legacy {
        hash.update(direction.label());
        if let Some(node) = node {
            hash.update([0u8]);
            hash.update(node);
        }
        hash.update([0u8]);
    } else {
        hash.update(if *binding == Binding::Session { b"minipbs/3\0" } else { b"minipbs/2\0" });
        hash.update(direction.label());
        hash.update([0u8]);
        let node = node.unwrap_or_default();
        hash.update((node.len() as u64).to_be_bytes());
        hash.update(node);
        match binding {
            Binding::Bound { nonce, sequence } => {
                hash.update([1u8]);
                hash.update(nonce.0);
                hash.update(sequence.to_be_bytes());
            }
            _ => hash.update([0u8]),
        }
    }
    hash.update(body);
    hash.finalize().to_vec()
}

/// Wraps `body` in an envelope credentialed as this process (blocking: asks munged).
pub fn seal(socket: &Path, direction: &Direction, binding: &Binding, body: &[u8]) -> Result<Vec<u8>, SealError> {
    let credential = munge::encode(socket, &digest(direction, binding, body))?;
    let mut envelope = Vec::with_capacity(credential.len() + 1 + body.len());
    envelope.extend_from_slice(credential.as_bytes());
    envelope.push(b'\n');
    envelope.extend_from_slice(body);
    Ok(envelope)
}

/// Wraps `body`, the first frame of a protocol-3 connection, in an envelope credentialed as
/// this process whose credential also carries `key`, encrypted and decodable by `uid` only
/// (the receiving daemon's; blocking: asks munged).
pub fn seal_opening(
    socket: &Path,
    direction: &Direction,
    uid: u32,
    key: &SessionKey,
    body: &[u8],
) -> Result<Vec<u8>, SealError> {
    let mut payload = digest(direction, &Binding::Session, body);
    payload.extend_from_slice(&key.0);
    let credential = munge::encode_for(socket, &payload, uid)?;
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

/// An opened envelope.
#[derive(Debug)]
pub struct Opened {
    /// The credential's maker.
    pub identity: Identity,
    pub body: Vec<u8>,
    /// Which of the accepted bindings the credential vouches for.
    pub binding: Binding,
    /// The connection's key, when the binding is [`Binding::Session`].
    pub key: Option<SessionKey>,
}

/// Opens an envelope sealed under one of the `accepted` bindings (blocking). A credential that
/// fits none but would fit [`Binding::Legacy`] is [`SealError::Legacy`] (a protocol-1 peer,
/// said plainly), any other misfit [`SealError::Mismatch`].
pub fn open(
    socket: &Path,
    direction: &Direction,
    accepted: &[Binding],
    mut envelope: Vec<u8>,
) -> Result<Opened, SealError> {
    let (credential, _) = split(&envelope)?;
    let credential_len = credential.len();
    let decoded = munge::decode(socket, credential)?;
    let body = envelope.split_off(credential_len + 1);
    let identity = Identity { uid: decoded.uid, gid: decoded.gid };
    if accepted.contains(&Binding::Session) && decoded.payload.len() == 64 {
        let (hash, key) = decoded.payload.split_at(32);
        if hash == digest(direction, &Binding::Session, &body) {
            let key = SessionKey(key.try_into().map_err(|_| SealError::Mismatch)?);
            return Ok(Opened { identity, body, binding: Binding::Session, key: Some(key) });
        }
    }
    if let Some(binding) = accepted.iter().find(|binding| decoded.payload == digest(direction, binding, &body)) {
        return Ok(Opened { identity, body, binding: *binding, key: None });
    }
    if decoded.payload == digest(direction, &Binding::Legacy, &body) {
        return Err(SealError::Legacy);
    }
    Err(SealError::Mismatch)
}

/// Writes one sealed message (blocking).
pub fn write<T: Serialize>(
    stream: &mut impl Write,
    socket: &Path,
    direction: &Direction,
    binding: &Binding,
    message: &T,
) -> Result<(), SealError> {
    let body = serde_json::to_vec(message).map_err(FrameError::from)?;
    let envelope = seal(socket, direction, binding, &body)?;
    stream.write_all(&frame::prefixed(&envelope)?).map_err(FrameError::from)?;
    stream.flush().map_err(FrameError::from)?;
    Ok(())
}

/// Reads one message sealed under one of the `accepted` bindings (blocking): its maker, the
/// binding it was sealed under, and the message.
pub fn read<T: DeserializeOwned>(
    stream: &mut impl Read,
    socket: &Path,
    direction: &Direction,
    accepted: &[Binding],
) -> Result<(Identity, Binding, T), SealError> {
    let envelope = frame::read_body(stream, frame::Limits::NORMAL)?;
    let opened = open(socket, direction, accepted, envelope)?;
    Ok((opened.identity, opened.binding, frame::decode(&opened.body)?))
}

#[cfg(test)]
#[path = "seal_tests.rs"]
pub(crate) mod tests;
