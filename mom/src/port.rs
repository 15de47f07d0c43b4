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
//! they (and sister traffic) can arrive from elsewhere without opening a door.
//!
//! At most `MAX_CONNECTIONS` are held at once, each closed after `IDLE_TIMEOUT` of silence.
//!
//! Must not: act on anything itself; it only forwards.

use proto::frame::Limits;
use proto::mom::ServerToMom;
use proto::seal::{Direction, Nonce};
use proto::transport::{self, FrameReader, FrameWriter, Sealing};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// A silent connection is closed after this long.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Connections held at once; more are closed at once. The server and sisters need few; each
/// may buffer a frame of up to `MAX_FRAME` before its credential is checked, so this bounds
/// what unauthenticated peers can make the mom hold (16 x 16 MiB).
const MAX_CONNECTIONS: usize = 16;

/// Accepts connections until the task is aborted.
pub async fn serve(
    listener: TcpListener,
    munge_socket: Arc<Path>,
    node: String,
    server_uid: u32,
    inbound: mpsc::UnboundedSender<ServerToMom>,
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
        let (read, write) = transport::split_tcp(stream);
        let sealing = Sealing { socket: munge_socket.clone(), direction: Direction::ServerToMom(node.clone()) };
        // The first frame is an instruction (a RunJob carries the script), not a small hello.
        let mut reader = FrameReader::sealed(read, sealing).only_from(vec![server_uid]).with_limits(Limits::NORMAL);
        let inbound = inbound.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let nonce = match Nonce::fresh() {
                Ok(nonce) => nonce,
                Err(error) => return tracing::error!("mom port: {error}"),
            };
            reader.bind(nonce);
            // Nothing else is ever said; the write half lives as long as the connection, so the
            // peer sees it close only once its message is dealt with.
            let mut write = FrameWriter::new(write, None);
            if write.write(&nonce).await.is_err() {
                return;
            }
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
