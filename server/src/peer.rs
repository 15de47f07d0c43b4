//! Where a connection comes from ([`Peer`]) and how a frame it sent that was not accepted is
//! logged ([`log_bad_frame`]), shared by the code that accepts connections (`listener.rs`)
//! and the code that serves them (`client_conn.rs`, `mom_conn.rs`) so that those do not
//! import the listener that calls them.

use proto::transport::TransportError;
use std::net::SocketAddr;

/// Where a connection comes from: the Unix socket, or a TCP address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    Local,
    Tcp(SocketAddr),
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peer::Local => f.write_str("the local socket"),
            Peer::Tcp(addr) => write!(f, "{addr}"),
        }
    }
}

/// Logs why a frame from `peer` was not accepted: a refused credential (replayed, forged,
/// another key or uid) as a warning naming the peer (`limits::refused_credential`: up to 50
/// per 10 s, then counted); an unsealed frame or anything else (garbage, a broken stream) as a
/// garbage warning (`limits::bad_frame`: one per 10 s), so a flood cannot flood the log.
pub fn log_bad_frame(peer: Peer, error: &TransportError) {
    let unsealed = matches!(error, TransportError::Seal(proto::seal::SealError::Malformed));
    if error.is_refused_credential() && !unsealed {
        crate::limits::refused_credential(&peer.to_string(), error);
    } else if !error.is_closed() {
        crate::limits::bad_frame(&peer.to_string(), "frame", error);
    }
}
