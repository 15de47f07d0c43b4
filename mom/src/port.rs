//! The mom port (`pbs_mom --listen`, OpenPBS 15002): the endpoint for server and sister
//! traffic on TCP (design.md section 8). On each connection the mom first sends a fresh
//! `proto::seal::Nonce` (one plain frame, its only words); every frame after must be a
//! `ServerToMom` sealed with MUNGE by the server uid (`--server-uid`) for this node
//! (`Direction::ServerToMom(node)`) and bound to that nonce and its place on the connection
//! (`Binding::Bound`, numbered from 0); such instructions go to the daemon exactly like the
//! ones arriving on the link. Anything else (no or another credential, a replay, a frame
//! sealed for another connection, garbage) is refused with one warning naming the peer
//! address, and the connection is closed.
//!
//! Today the server still pushes its instructions over the mom's own link; this port is where
//! they can arrive from elsewhere without opening a door.
//!
//! Other moms reach this mom's task server here too (the peer path, proto::task): such a
//! connection starts with `PEER_MAGIC`, four bytes no frame can start with (as a length they
//! exceed `MAX_FRAME`), and is handed over as a [`PeerConnection`]; the task server then
//! requires frames sealed by the mom's own uid for `Direction::MomToMom(node)`, a label no
//! server frame carries, so neither kind of frame is accepted as the other. The magic only
//! selects which credential is required next.
//!
//! At most `MAX_CONNECTIONS` are held at once, each closed after `IDLE_TIMEOUT` of silence.
//!
//! Must not: act on anything itself; it only forwards.

use proto::frame::{nonblocking, Limits};
use proto::mom::ServerToMom;
use proto::seal::{Direction, Nonce};
use proto::task::PEER_MAGIC;
use proto::transport::{self, BoxRead, BoxWrite, FrameReader, Sealing};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A silent connection is closed after this long.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections held at once; more are closed at once. The server and sisters need few; each
/// may buffer a frame of up to `MAX_FRAME` before its credential is checked, so this bounds
/// what unauthenticated peers can make the mom hold (16 x 16 MiB).
const MAX_CONNECTIONS: usize = 16;

/// A connection that opened with `proto::task::PEER_MAGIC`: another mom's, for the task
/// server (task/serve.rs), which authenticates it. The port's nonce was already sent.
pub struct PeerConnection {
    pub read: BoxRead,
    pub write: BoxWrite,
    pub nonce: Nonce,
    pub peer: SocketAddr,
}

/// Accepts connections until the task is aborted. Server instructions go to `inbound`;
/// peer connections to `peers` (closed when `None`).
pub async fn serve(
    listener: TcpListener,
    munge_socket: Arc<Path>,
    node: String,
    server_uid: u32,
    inbound: mpsc::UnboundedSender<ServerToMom>,
    peers: Option<mpsc::UnboundedSender<PeerConnection>>,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::error!(%error, "mom port: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tracing::debug!(%peer, "mom port: too many connections; closed");
            continue;
        };
        let (read, mut write) = transport::split_tcp(stream);
        let sealing = Sealing { socket: munge_socket.clone(), direction: Direction::ServerToMom(node.clone()) };
        let (inbound, peers) = (inbound.clone(), peers.clone());
        tokio::spawn(async move {
            let nonce = match Nonce::fresh() {
                Ok(nonce) => nonce,
                Err(error) => return tracing::error!("mom port: {error}"),
            };
            if nonblocking::write(&mut write, &nonce).await.is_err() {
                return;
            }
            let mut read = read;
            let mut prefix = [0u8; 4];
            match tokio::time::timeout(IDLE_TIMEOUT, read.read_exact(&mut prefix)).await {
                Ok(Ok(_)) => {}
                _ => return,
            }
            if &prefix == PEER_MAGIC {
                // The task server holds its own bound on connections.
                drop(slot);
                match peers {
                    Some(peers) => {
                        let _ = peers.send(PeerConnection { read, write, nonce, peer });
                    }
                    None => tracing::warn!(%peer, "mom port: a peer connection, but this mom serves no tasks; closed"),
                }
                return;
            }
            let read: BoxRead = Box::new(std::io::Cursor::new(prefix.to_vec()).chain(read));
            // The first frame is an instruction (a RunJob carries the script), not a small hello.
            let mut reader = FrameReader::sealed(read, sealing).only_from(vec![server_uid]).with_limits(Limits::NORMAL);
            reader.bind(nonce);
            let _slot = slot;
            // Nothing else is ever said; the write half lives as long as the connection, so the
            // peer sees it close only once its message is dealt with.
            let _write = write;
            loop {
                match tokio::time::timeout(IDLE_TIMEOUT, reader.read::<ServerToMom>()).await {
                    Ok(Ok(message)) => {
                        tracing::debug!(%peer, "instruction on the mom port");
                        if inbound.send(message).is_err() {
                            return;
                        }
                    }
                    Ok(Err(error)) if error.is_closed() => return,
                    Ok(Err(error)) => {
                        tracing::warn!("mom port: refused a message from {peer}: {error}; connection closed");
                        return;
                    }
                    Err(_) => return,
                }
            }
        });
    }
}
