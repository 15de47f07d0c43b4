//! The peer path, caller's side: connecting to the mom of another node of the job at its
//! `HostAlloc::mom_addr` and opening a [`PeerRequest`] there.
//!
//! * `unix:<task socket>` (moms of one machine): the listening socket's kernel-reported uid
//!   must be this mom's own; frames are plain.
//! * `<ip>:<port>` (the target's mom port): [`PEER_MAGIC`], then this side's nonce as a plain
//!   frame; the target answers with its own nonce; every frame after is sealed with MUNGE
//!   (`Direction::MomToMom(<receiving node>)`, bound to the receiver's nonce and numbered) and
//!   accepted only when the credential's uid is this mom's own (another mom of the cluster).
//!
//! Owns: [`connect`] and [`PeerLink`]. Must not: decide whether a request may be forwarded
//! (check.rs) or relay frames (serve.rs does).

use proto::frame::{nonblocking, Limits, FRAME_DEADLINE};
use proto::seal::{Direction, Identity, Nonce};
use proto::task::{PeerRequest, PEER_MAGIC};
use proto::transport::{self, FrameReader, FrameWriter, Sealing};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Largest frame on a task connection: a request (at most `MAX_REQUEST_BYTES` of words, each
/// byte at most 6 as JSON) or a chunk of output (`MAX_CHUNK`, hex-escaped at worst).
pub const TASK_LIMITS: Limits = Limits { max_body: 8 * 1024 * 1024, deadline: FRAME_DEADLINE };

/// How long reaching a peer may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// This mom, as its peers know it.
#[derive(Debug, Clone)]
pub struct PeerSettings {
    /// This node's name (the direction label of frames sealed for it).
    pub node: String,
    /// munged's socket; `None`: no TCP peers (Unix transport).
    pub munge_socket: Option<Arc<Path>>,
    /// This mom's effective uid: every peer mom's.
    pub mom_uid: u32,
}

/// Why a peer could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("cannot connect to {addr}: {source}")]
    Connect { addr: String, source: std::io::Error },
    #[error("timed out connecting to {0}")]
    Timeout(String),
    #[error("{0} is not served by a mom of uid {1}")]
    Impostor(String, u32),
    #[error("{addr} is a TCP address but this mom has no MUNGE")]
    NoMunge { addr: String },
    #[error(transparent)]
    Transport(#[from] transport::TransportError),
    #[error(transparent)]
    Frame(#[from] proto::frame::FrameError),
    #[error(transparent)]
    Seal(#[from] proto::seal::SealError),
}

/// An open peer connection whose request has been sent.
pub struct PeerLink {
    pub reader: FrameReader,
    pub writer: FrameWriter,
}

/// Connects to the mom of `node` at `addr` and sends `request`.
pub async fn connect(
    settings: &PeerSettings,
    node: &str,
    addr: &str,
    request: &PeerRequest,
) -> Result<PeerLink, PeerError> {
    let opened = tokio::time::timeout(CONNECT_TIMEOUT, open(settings, node, addr)).await;
    let mut link = opened.map_err(|_| PeerError::Timeout(addr.to_string()))??;
    link.writer.write(request).await?;
    Ok(link)
}

async fn open(settings: &PeerSettings, node: &str, addr: &str) -> Result<PeerLink, PeerError> {
    let failed = |source| PeerError::Connect { addr: addr.to_string(), source };
    if let Some(path) = addr.strip_prefix("unix:") {
        let stream = tokio::net::UnixStream::connect(path).await.map_err(failed)?;
        let credentials = stream.peer_cred().map_err(failed)?;
        if credentials.uid() != settings.mom_uid {
            return Err(PeerError::Impostor(addr.to_string(), settings.mom_uid));
        }
        let identity = Identity { uid: credentials.uid(), gid: credentials.gid() };
        let (read, write) = transport::split_unix(stream);
        let reader = FrameReader::plain(read, identity).with_limits(TASK_LIMITS);
        return Ok(PeerLink { reader, writer: FrameWriter::new(write, None) });
    }
    let socket = settings.munge_socket.clone().ok_or_else(|| PeerError::NoMunge { addr: addr.to_string() })?;
    let mut stream = tokio::net::TcpStream::connect(addr).await.map_err(failed)?;
    let ours = Nonce::fresh()?;
    stream.write_all(PEER_MAGIC).await.map_err(failed)?;
    nonblocking::write(&mut stream, &ours).await?;
    let theirs: Nonce = nonblocking::read_limited(&mut stream, Limits::HANDSHAKE).await?;
    let (read, write) = transport::split_tcp(stream);
    let incoming = Sealing { socket: socket.clone(), direction: Direction::MomToMom(settings.node.clone()) };
    let mut reader = FrameReader::sealed(read, incoming).only_from(vec![settings.mom_uid]).with_limits(TASK_LIMITS);
    reader.bind(ours);
    let outgoing = Sealing { socket, direction: Direction::MomToMom(node.to_string()) };
    let mut writer = FrameWriter::new(write, Some(outgoing));
    writer.bind(theirs);
    Ok(PeerLink { reader, writer })
}
