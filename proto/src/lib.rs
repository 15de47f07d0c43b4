//! The wire protocol between commands, `pbs_server` and `pbs_mom`: messages typed by direction,
//! the handshake that names role and protocol version, length-delimited framing and the
//! numeric error codes.
//!
//! API boundary: everything here is a compatibility promise. New fields get `#[serde(default)]`;
//! the server accepts the current and the previous protocol version ([`ACCEPTED_PROTOCOLS`]);
//! `tests/previous_release.rs` decodes messages as released builds wrote them (fixtures in
//! `tests/fixtures/<release>/`). Identity is never a message field: the server takes it from
//! the transport (`SO_PEERCRED` on the Unix socket, the MUNGE credential of each sealed frame
//! on TCP: `munge.rs`, `seal.rs`, `transport.rs`).
//!
//! Must not know: the database, scheduling policy, process execution, terminal output.

pub mod alter;
pub mod client;
pub mod error;
pub mod exit_status;
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
pub mod session;
pub mod status;
pub mod task;
#[cfg(feature = "tokio")]
pub mod transport;

pub use alter::JobAlteration;
pub use client::{ClientRequest, ServerReply};
pub use error::ErrorCode;
pub use flavor::Flavor;
pub use frame::{FrameError, MAX_FRAME};
pub use mom::{JobLaunch, MomToServer, ServerToMom};
pub use status::{JobRow, JobStatus, NodeStatus, ObjectStatus};

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. Version 1 was the first; version 2: on TCP every
/// frame is bound to its connection (`seal::Binding`); version 1 peers' frames are not.
/// Version 3: on TCP only the first frame carries a MUNGE credential, which also carries the
/// connection's key; every later frame is authenticated with it (`session.rs`), and a command
/// sends its request right after `Hello` without waiting for `Welcome`.
pub const PROTOCOL_VERSION: u32 = 3;

/// The versions a server of this build accepts: its own and the previous releases', which
/// existed (`tests/fixtures/` keeps messages as released builds wrote them).
pub const ACCEPTED_PROTOCOLS: [u32; 3] = [1, 2, PROTOCOL_VERSION];

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
    /// The nonce the server's frames to this peer must be sealed for (TCP, protocol 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nonce: Option<seal::Nonce>,
}

impl Hello {
    /// This build's hello, with the peer's nonce when the connection is sealed.
    pub fn new(role: Role, nonce: Option<seal::Nonce>) -> Hello {
        Hello { role, protocol: PROTOCOL_VERSION, nonce }
    }
}

/// The server's answer to [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HelloReply {
    Welcome {
        protocol: u32,
        server_name: String,
        /// The nonce the peer's frames must be sealed for from now on (TCP, protocol 2).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nonce: Option<seal::Nonce>,
    },
    Refused {
        code: ErrorCode,
        message: String,
    },
}

impl HelloReply {
    /// The answer to our `Hello` on a sealed connection, as far as it can be believed given how
    /// it was sealed. Bound to our nonce: as it is (a `Welcome` must bring the server's nonce).
    /// Sealed the protocol-1 way (an older server, or one that refused our credential before it
    /// could read our nonce): a refusal is shown as one, a `Welcome` is refused.
    pub fn as_sealed(self, binding: seal::Binding) -> HelloReply {
        let bound = matches!(binding, seal::Binding::Bound { .. });
        match self {
            HelloReply::Welcome { nonce: Some(_), .. } if bound => self,
            HelloReply::Welcome { protocol, .. } => HelloReply::Refused {
                code: ErrorCode::ProtocolMismatch,
                message: format!(
                    "the server speaks protocol {protocol}, without connection binding; this build needs {PROTOCOL_VERSION}: upgrade pbs_server"
                ),
            },
            refused => refused,
        }
    }
}

/// Whether a peer's protocol version is one this build accepts.
pub fn protocol_accepted(version: u32) -> bool {
    ACCEPTED_PROTOCOLS.contains(&version)
}
