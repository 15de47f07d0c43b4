//! The wire protocol between commands, `pbs_server` and `pbs_mom`: messages typed by direction,
//! the handshake that names role and protocol version, length-delimited framing and the
//! numeric error codes.
//!
//! API boundary: everything here is a compatibility promise. New fields get `#[serde(default)]`;
//! the server accepts the current and the previous protocol version. Identity is never a
//! message field: the server takes it from the transport (`SO_PEERCRED` on the Unix socket, the MUNGE
//! credential of each sealed frame on TCP: `munge.rs`, `seal.rs`, `transport.rs`).
//!
//! Must not know: the database, scheduling policy, process execution, terminal output.

pub mod alter;
pub mod client;
pub mod error;
pub mod flavor;
pub mod frame;
pub mod gpu;
pub mod interactive;
pub mod keepalive;
pub mod manage;
pub mod mom;
pub mod munge;
pub mod names;
pub mod seal;
pub mod status;
#[cfg(feature = "tokio")]
pub mod transport;

pub use alter::JobAlteration;
pub use client::{ClientRequest, ServerReply};
pub use error::ErrorCode;
pub use flavor::Flavor;
pub use frame::{FrameError, MAX_FRAME};
pub use mom::{JobLaunch, MomToServer, ServerToMom};
pub use status::{JobStatus, NodeStatus, ObjectStatus};

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. The server also accepts `PROTOCOL_VERSION - 1`.
pub const PROTOCOL_VERSION: u32 = 1;

/// Who opens a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    Client,
    Mom,
}

/// First frame on every connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub role: Role,
    pub protocol: u32,
}

/// The server's answer to [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HelloReply {
    Welcome { protocol: u32, server_name: String },
    Refused { code: ErrorCode, message: String },
}

/// Whether a peer's protocol version is one this build accepts.
pub fn protocol_accepted(version: u32) -> bool {
    version == PROTOCOL_VERSION || version + 1 == PROTOCOL_VERSION
}
