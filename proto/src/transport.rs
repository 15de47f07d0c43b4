//! One framed connection for the daemons over either transport: the halves of a Unix stream
//! (identity from the kernel, frames as they are) or of a TCP stream (every frame a sealed
//! envelope, `seal.rs`; identity from each frame's MUNGE credential). The server's client and
//! mom code and the mom's link are written once against [`FrameReader`] / [`FrameWriter`].
//!
//! Owns: the rule that every frame of a sealed connection is made by the same uid (the first
//! frame's, or one of those given to [`FrameReader::only_from`]), and each half's binding
//! (`seal::Binding`): a sealed reader takes its first frame as `Opening` or `Legacy`, then
//! nothing until told to [`FrameReader::bind`] to its own nonce (each frame then numbered) or
//! to accept `Legacy` (a protocol-1 peer); a writer seals its first frame `Opening`, then
//! nothing until bound to the peer's nonce or set to `Legacy`. MUNGE calls block, so they
//! run on tokio's blocking pool. The first frame is read under `Limits::HANDSHAKE`, the rest under
//! `Limits::NORMAL` (`frame.rs`).
//!
//! Protocol 3 (`session.rs`): the opener's writer is told to [`FrameWriter::open_session`], so
//! its first frame's credential carries the connection's key, and its reader is `keyed`; the
//! acceptor's reader takes that key from the first frame ([`FrameReader::take_session`]) and
//! both its halves are keyed. Keyed frames need no munged: no blocking pool.

use crate::frame::{self, nonblocking, FrameError, Limits};
use crate::seal::{self, Binding, Direction, Identity, Nonce, SealError};
use crate::session::{self, FrameKey, SessionKey, Side};
use crate::HelloReply;
use serde::{de::DeserializeOwned, Serialize};
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

pub type BoxRead = Box<dyn AsyncRead + Unpin + Send>;
pub type BoxWrite = Box<dyn AsyncWrite + Unpin + Send>;

/// Sealing of one direction: munged's socket and the direction label.
#[derive(Debug, Clone)]
pub struct Sealing {
    pub socket: Arc<Path>,
    pub direction: Direction,
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    #[error(transparent)]
    Frame(#[from] FrameError),
    #[error(transparent)]
    Seal(#[from] SealError),
    #[error("credential of uid {uid} where uid {expected} was expected")]
    Stranger { uid: u32, expected: String },
    /// A sealed frame to send before the connection's binding is settled (a bug, not the peer's).
    #[error("sealed frame before the connection is bound")]
    Unbound,
}

/// Which bindings one half of a sealed connection uses next.
#[derive(Debug, Clone)]
enum Mode {
    /// The connection's first frame: `Opening` (or, read, `Legacy` or `Session` too).
    First,
    /// After the first frame, until [`FrameReader::bind`], `keyed` or `legacy`: nothing.
    Unsettled,
    Legacy,
    /// Sealed for this nonce (ours when reading, the peer's when writing), numbered.
    Bound(Nonce),
    /// Protocol 3, a writer's first frame: its credential carries `key` to `uid` only; then
    /// `Keyed(send)`.
    Opening {
        key: SessionKey,
        uid: u32,
        send: FrameKey,
    },
    /// Protocol 3: every frame authenticated with this direction's key, numbered.
    Keyed(FrameKey),
}

impl TransportError {
    /// A clean end of the connection before a frame.
    pub fn is_closed(&self) -> bool {
        match self {
            TransportError::Frame(FrameError::Closed) => true,
            TransportError::Seal(error) => error.is_closed(),
            _ => false,
        }
    }

    /// The peer presented a credential (or none) that is refused, as opposed to a broken stream.
    pub fn is_refused_credential(&self) -> bool {
        matches!(self, TransportError::Stranger { .. })
            || matches!(self, TransportError::Seal(error) if !matches!(error, SealError::Frame(_)))
    }
}

/// The reading half.
pub struct FrameReader {
    inner: BoxRead,
    sealing: Option<Sealing>,
    identity: Option<Identity>,
    allowed: Option<Vec<u32>>,
    /// [`Limits::HANDSHAKE`] until the first frame has been read, then [`Limits::NORMAL`].
    limits: Limits,
    mode: Mode,
    /// Frames read so far: the next one's number.
    frames: u64,
    /// The key a protocol-3 opening brought, until taken.
    session: Option<SessionKey>,
}

impl FrameReader {
    /// Unsealed frames from a peer the kernel identified.
    pub fn plain(inner: BoxRead, identity: Identity) -> FrameReader {
        let limits = Limits::HANDSHAKE;
        FrameReader {
            inner,
            sealing: None,
            identity: Some(identity),
            allowed: None,
            limits,
            mode: Mode::First,
            frames: 0,
            session: None,
        }
    }

    /// Sealed frames; the first credential's uid is the peer's for the whole connection.
    pub fn sealed(inner: BoxRead, sealing: Sealing) -> FrameReader {
        let limits = Limits::HANDSHAKE;
        FrameReader {
            inner,
            sealing: Some(sealing),
            identity: None,
            allowed: None,
            limits,
            mode: Mode::First,
            frames: 0,
            session: None,
        }
    }

    /// Accepts from now on only frames sealed for `nonce` (drawn by us, sent to the peer), each
    /// numbered in turn.
    pub fn bind(&mut self, nonce: Nonce) {
        self.mode = Mode::Bound(nonce);
    }

    /// Accepts from now on frames sealed the protocol-1 way (a peer of the previous version).
    pub fn legacy(&mut self) {
        self.mode = Mode::Legacy;
    }

    /// Accepts from now on only frames authenticated with `key`, each numbered in turn
    /// (protocol 3: the receiving key of [`SessionKey::keys`]).
    pub fn keyed(&mut self, key: FrameKey) {
        self.mode = Mode::Keyed(key);
    }

    /// The key the connection's opening credential carried (protocol 3), once.
    pub fn take_session(&mut self) -> Option<SessionKey> {
        self.session.take()
    }

    /// Accepts credentials of these uids only.
    pub fn only_from(mut self, uids: Vec<u32>) -> FrameReader {
        self.allowed = Some(uids);
        self
    }

    /// Reads every frame under `limits` (a connection whose first frame is not a small hello,
    /// like the mom port's instructions, starts with [`Limits::NORMAL`]).
    pub fn with_limits(mut self, limits: Limits) -> FrameReader {
        self.limits = limits;
        self
    }

    /// Expects frames sealed for `direction` from now on (no effect when unsealed).
    pub fn set_direction(&mut self, direction: Direction) {
        if let Some(sealing) = &mut self.sealing {
            sealing.direction = direction;
        }
    }

    /// The peer, once known (Unix: always; sealed: after the first frame).
    pub fn identity(&self) -> Option<Identity> {
        self.identity
    }

    /// Reads one message.
    pub async fn read<T: DeserializeOwned>(&mut self) -> Result<T, TransportError> {
        let accepted = match &self.mode {
            Mode::First => vec![Binding::Opening, Binding::Legacy],
            Mode::Unsettled | Mode::Opening { .. } => Vec::new(),
            Mode::Legacy => vec![Binding::Legacy],
            Mode::Bound(nonce) => vec![Binding::Bound { nonce: *nonce, sequence: self.frames }],
            Mode::Keyed(_) => return self.read_keyed().await,
        };
        Ok(self.read_under(accepted).await?.1)
    }

    /// Reads the first binding a sealed `Hello` came under (`Opening`, `Legacy`, or `Session`,
    /// whose key [`FrameReader::take_session`] then gives) with it.
    pub async fn read_hello<T: DeserializeOwned>(&mut self) -> Result<(Option<Binding>, T), TransportError> {
        self.read_under(vec![Binding::Opening, Binding::Legacy, Binding::Session]).await
    }

    /// Reads the answer to our `Hello` after [`FrameReader::bind`] or `keyed`: bound to our
    /// nonce or keyed, or sealed the protocol-1 way (a server that could not read our
    /// credential, or an older one), then believed only as far as [`HelloReply::as_sealed`] says.
    pub async fn read_hello_reply(&mut self) -> Result<HelloReply, TransportError> {
        if let (Mode::Keyed(key), Some(_)) = (&self.mode, &self.sealing) {
            let key = key.clone();
            let body = self.next_body().await?;
            if session::is_keyed(&body) {
                let body = key.open(self.frames - 1, body).map_err(SealError::from)?;
                return Ok(frame::decode(&body)?);
            }
            let (binding, reply) = self.open_sealed(vec![Binding::Legacy], body).await?;
            return Ok(HelloReply::as_sealed(reply, binding));
        }
        let mut accepted = vec![Binding::Legacy];
        if let Mode::Bound(nonce) = self.mode {
            accepted.insert(0, Binding::Bound { nonce, sequence: self.frames });
        }
        match self.read_under(accepted).await? {
            (Some(binding), reply) => Ok(HelloReply::as_sealed(reply, binding)),
            (None, reply) => Ok(reply),
        }
    }

    /// The next frame's body, counted.
    async fn next_body(&mut self) -> Result<Vec<u8>, TransportError> {
        let body = nonblocking::read_body(&mut self.inner, self.limits).await?;
        self.limits = Limits::NORMAL;
        self.frames += 1;
        if matches!(self.mode, Mode::First) {
            self.mode = Mode::Unsettled;
        }
        Ok(body)
    }

    /// One keyed frame (protocol 3; a plain one when unsealed).
    async fn read_keyed<T: DeserializeOwned>(&mut self) -> Result<T, TransportError> {
        let body = self.next_body().await?;
        let (Mode::Keyed(key), Some(_)) = (&self.mode, &self.sealing) else { return Ok(frame::decode(&body)?) };
        Ok(frame::decode(&key.open(self.frames - 1, body).map_err(SealError::from)?)?)
    }

    /// One frame sealed under one of `accepted` (when sealed), and the binding it came under.
    async fn read_under<T: DeserializeOwned>(
        &mut self,
        accepted: Vec<Binding>,
    ) -> Result<(Option<Binding>, T), TransportError> {
        let body = self.next_body().await?;
        if self.sealing.is_none() {
            return Ok((None, frame::decode(&body)?));
        }
        let (binding, message) = self.open_sealed(accepted, body).await?;
        Ok((Some(binding), message))
    }

    /// Opens a credentialed envelope (on tokio's blocking pool: munged is asked).
    async fn open_sealed<T: DeserializeOwned>(
        &mut self,
        accepted: Vec<Binding>,
        body: Vec<u8>,
    ) -> Result<(Binding, T), TransportError> {
        let Some(sealing) = self.sealing.clone() else { return Err(SealError::Malformed.into()) };
        let opened =
            tokio::task::spawn_blocking(move || seal::open(&sealing.socket, &sealing.direction, &accepted, body))
                .await
                .map_err(|error| FrameError::Io(std::io::Error::other(error)))??;
        self.check(opened.identity)?;
        self.session = opened.key;
        Ok((opened.binding, frame::decode(&opened.body)?))
    }

    fn check(&mut self, identity: Identity) -> Result<(), TransportError> {
        if let Some(known) = self.identity {
            if known.uid != identity.uid {
                return Err(TransportError::Stranger { uid: identity.uid, expected: known.uid.to_string() });
            }
            return Ok(());
        }
        if let Some(allowed) = &self.allowed {
            if !allowed.contains(&identity.uid) {
                let expected = allowed.iter().map(u32::to_string).collect::<Vec<_>>().join(" or ");
                return Err(TransportError::Stranger { uid: identity.uid, expected });
            }
        }
        self.identity = Some(identity);
        Ok(())
    }
}

/// The writing half.
pub struct FrameWriter {
    inner: BoxWrite,
    sealing: Option<Sealing>,
    mode: Mode,
    /// Frames written so far: the next one's number.
    frames: u64,
}

impl FrameWriter {
    pub fn new(inner: BoxWrite, sealing: Option<Sealing>) -> FrameWriter {
        FrameWriter { inner, sealing, mode: Mode::First, frames: 0 }
    }

    /// Seals from now on for the peer's `nonce`, each frame numbered in turn.
    pub fn bind(&mut self, nonce: Nonce) {
        self.mode = Mode::Bound(nonce);
    }

    /// Seals from now on the protocol-1 way (a peer of the previous version, or a refusal to
    /// a peer whose nonce is unknown).
    pub fn legacy(&mut self) {
        self.mode = Mode::Legacy;
    }

    /// Authenticates every frame from now on with `key`, numbered in turn (protocol 3).
    pub fn keyed(&mut self, key: FrameKey) {
        self.mode = Mode::Keyed(key);
    }

    /// Opens a protocol-3 session: the next (first) frame's credential carries a fresh key that
    /// only `uid` (the receiving daemon's) can read, and every later frame is keyed. Returns
    /// the key the reading half is to check the peer's frames with ([`FrameReader::keyed`]).
    pub fn open_session(&mut self, uid: u32) -> Result<FrameKey, SealError> {
        let key = SessionKey::fresh().map_err(SealError::from)?;
        let (send, receive) = key.keys(Side::Opener);
        self.mode = Mode::Opening { key, uid, send };
        Ok(receive)
    }

    /// Seals for `direction` from now on (no effect when unsealed).
    pub fn set_direction(&mut self, direction: Direction) {
        if let Some(sealing) = &mut self.sealing {
            sealing.direction = direction;
        }
    }

    /// Writes one message (sealed as this process when the connection is sealed).
    pub async fn write<T: Serialize>(&mut self, message: &T) -> Result<(), TransportError> {
        let bytes = self.next_frame(message).await?;
        self.inner.write_all(&bytes).await.map_err(FrameError::from)?;
        self.inner.flush().await.map_err(FrameError::from)?;
        Ok(())
    }

    /// Writes several messages in order with one write and one flush: each is still its own
    /// frame (sealed and numbered as [`FrameWriter::write`] would), so a reader cannot tell.
    pub async fn write_batch<T: Serialize>(&mut self, messages: &[T]) -> Result<(), TransportError> {
        let mut bytes = Vec::new();
        for message in messages {
            bytes.extend_from_slice(&self.next_frame(message).await?);
        }
        self.inner.write_all(&bytes).await.map_err(FrameError::from)?;
        self.inner.flush().await.map_err(FrameError::from)?;
        Ok(())
    }

    /// The next frame's bytes, sealed as the connection's mode says; advances the mode.
    async fn next_frame<T: Serialize>(&mut self, message: &T) -> Result<Vec<u8>, TransportError> {
        let bytes = match self.sealing.clone() {
            None => frame::encode(message)?,
            Some(sealing) => {
                let body = serde_json::to_vec(message).map_err(FrameError::from)?;
                match self.how()? {
                    How::Keyed(key) => session::framed(&key, self.frames, &body)?,
                    How::Credential(binding, opening) => credentialed(sealing, binding, opening, body).await?,
                }
            }
        };
        self.frames += 1;
        match &self.mode {
            Mode::First => self.mode = Mode::Unsettled,
            Mode::Opening { send, .. } => self.mode = Mode::Keyed(send.clone()),
            _ => {}
        }
        Ok(bytes)
    }

    /// How the next frame is sealed.
    fn how(&self) -> Result<How, TransportError> {
        Ok(match &self.mode {
            Mode::First => How::Credential(Binding::Opening, None),
            Mode::Unsettled => return Err(TransportError::Unbound),
            Mode::Legacy => How::Credential(Binding::Legacy, None),
            Mode::Bound(nonce) => How::Credential(Binding::Bound { nonce: *nonce, sequence: self.frames }, None),
            Mode::Keyed(key) => How::Keyed(key.clone()),
            Mode::Opening { key, uid, .. } => How::Credential(Binding::Session, Some((key.clone(), *uid))),
        })
    }
}

/// How a frame is sealed: keyed, or with a credential (carrying a session key to a uid).
enum How {
    Keyed(FrameKey),
    Credential(Binding, Option<(SessionKey, u32)>),
}

/// The frame of `body` with a credential, made on tokio's blocking pool (munged is asked).
async fn credentialed(
    sealing: Sealing,
    binding: Binding,
    opening: Option<(SessionKey, u32)>,
    body: Vec<u8>,
) -> Result<Vec<u8>, TransportError> {
    let envelope = tokio::task::spawn_blocking(move || match opening {
        Some((key, uid)) => seal::seal_opening(&sealing.socket, &sealing.direction, uid, &key, &body),
        None => seal::seal(&sealing.socket, &sealing.direction, &binding, &body),
    })
    .await
    .map_err(|error| FrameError::Io(std::io::Error::other(error)))??;
    Ok(frame::prefixed(&envelope)?)
}

/// The boxed halves of a Unix or TCP stream.
pub fn split_unix(stream: tokio::net::UnixStream) -> (BoxRead, BoxWrite) {
    let (read, write) = stream.into_split();
    (Box::new(read), Box::new(write))
}

/// The boxed halves of a TCP stream.
pub fn split_tcp(stream: tokio::net::TcpStream) -> (BoxRead, BoxWrite) {
    let (read, write) = stream.into_split();
    (Box::new(read), Box::new(write))
}

#[cfg(test)]
#[path = "transport_tests.rs"]
mod tests;
