//! Accepts connections on the server's Unix socket (the peer's identity from the kernel,
//! `SO_PEERCRED`) and, in cluster mode, on its TCP port (every frame sealed with MUNGE, the
//! peer's identity from the credentials: `proto::transport`), reads the handshake, binds a
//! sealed connection's frames to it (protocol 2: the peer's nonce from `Hello`, ours in
//! `Welcome`; `proto::seal::Binding`; protocol 3: keyed with the key its opening credential
//! carried, `proto::session`) and hands the connection to the client or mom code, which
//! are the same for both transports.
//! A refused credential is one warning line naming the peer address (up to 50 per 10 s, then
//! counted: `limits.rs`); the connection is closed.
//! Every connection holds a slot (`limits.rs`): from accept a pending one, charged to its peer
//! (a TCP address, or the Unix-socket uid from `SO_PEERCRED`; root's and the server's own uid
//! only to the whole pool), for at most [`HELLO_TIMEOUT`];
//! after the handshake a mom's or a command's (charged to its uid), which a refusal names.

use crate::limits::PeerKey;
use crate::peer::{log_bad_frame, Peer};
use crate::shared::Shared;
use crate::state::Requester;
use proto::error::ErrorCode;
use proto::seal::{Binding, Direction, Identity, Nonce};
use proto::session::Side;
use proto::transport::{self, FrameReader, FrameWriter, Sealing};
use proto::{Hello, HelloReply, Role};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, UnixListener};

/// How long a new connection may take to say hello (and, over TCP, have its credential read).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(2);

/// An accepted connection before the handshake.
struct Accepted {
    reader: FrameReader,
    writer: transport::BoxWrite,
    peer: Peer,
    /// The connection's pending slot, held until the handshake is done.
    slot: crate::limits::Slot,
}

/// Accepts connections on the Unix socket until the task is dropped.
pub async fn accept_loop(shared: Arc<Shared>, listener: UnixListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let Ok(credentials) = stream.peer_cred() else {
                    tracing::warn!("no peer credentials; connection dropped");
                    continue;
                };
                // Root and the server's own uid (local moms, admins) are charged to no peer.
                let uid = credentials.uid();
                let trusted = uid == 0 || uid == nix::unistd::getuid().as_raw();
                let Some(slot) = crate::limits::admit((!trusted).then_some(PeerKey::Uid(uid))) else { continue };
                let identity = Identity { uid: credentials.uid(), gid: credentials.gid() };
                let (read, writer) = transport::split_unix(stream);
                let accepted = Accepted { reader: FrameReader::plain(read, identity), writer, peer: Peer::Local, slot };
                tokio::spawn(handle_connection(shared.clone(), accepted));
            }
            Err(error) => {
                tracing::error!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Accepts connections on the TCP port until the task is dropped.
pub async fn accept_tcp(shared: Arc<Shared>, listener: TcpListener) {
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                let Some(slot) = crate::limits::admit(Some(PeerKey::Addr(addr.ip()))) else { continue };
                let _ = stream.set_nodelay(true);
                let (read, writer) = transport::split_tcp(stream);
                let sealing = Sealing { socket: shared.munge_socket(), direction: Direction::ToServer };
                let accepted =
                    Accepted { reader: FrameReader::sealed(read, sealing), writer, peer: Peer::Tcp(addr), slot };
                tokio::spawn(handle_connection(shared.clone(), accepted));
            }
            Err(error) => {
                tracing::error!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn handle_connection(shared: Arc<Shared>, accepted: Accepted) {
    let Accepted { mut reader, writer, peer, slot: pending } = accepted;
    let (binding, hello): (_, Hello) = match tokio::time::timeout(HELLO_TIMEOUT, reader.read_hello()).await {
        Ok(Ok(hello)) => hello,
        Ok(Err(error)) => {
            log_bad_frame(peer, &error);
            if error.is_refused_credential() {
                // Sealed with our credential: a peer of another MUNGE key learns that from it.
                let sealing = Sealing { socket: shared.munge_socket(), direction: Direction::ServerToClient };
                let message = format!("credential refused: {error}");
                let refused = HelloReply::Refused { code: ErrorCode::PermissionDenied, message };
                let mut writer = FrameWriter::new(writer, Some(sealing));
                writer.legacy();
                let _ = writer.write(&refused).await;
            }
            return;
        }
        Err(_) => return,
    };
    let sealing = match peer {
        Peer::Local => None,
        Peer::Tcp(_) => {
            // To a mom: bound to its node name once it registers (`mom_conn`).
            let direction =
                if hello.role == Role::Mom { Direction::ServerToMom(String::new()) } else { Direction::ServerToClient };
            Some(Sealing { socket: shared.munge_socket(), direction })
        }
    };
    let mut writer = FrameWriter::new(writer, sealing);
    let nonce = match bind_connection(&hello, binding, &mut reader, &mut writer) {
        Ok(nonce) => nonce,
        Err(message) => {
            let _ = writer.write(&HelloReply::Refused { code: ErrorCode::ProtocolMismatch, message }).await;
            return;
        }
    };
    let Some(identity) = reader.identity() else { return };
    let requester = requester(identity.uid, identity.gid);
    if hello.role == Role::Mom && requester.uid != 0 && requester.uid != nix::unistd::getuid().as_raw() {
        tracing::warn!("refused a mom from {peer}: credential of uid {}, not root or the server's", requester.uid);
        let message = format!("uid {} may not register a mom", requester.uid);
        let _ = writer.write(&HelloReply::Refused { code: ErrorCode::PermissionDenied, message }).await;
        return;
    }
    let _slot = match crate::limits::admit_authenticated(hello.role == Role::Mom, requester.uid) {
        Ok(slot) => slot,
        Err(refused) => {
            let message = format!("{} {refused}", ErrorCode::System.text());
            let _ = writer.write(&HelloReply::Refused { code: ErrorCode::System, message }).await;
            return;
        }
    };
    drop(pending);
    let server_name = shared.config.server_name.clone();
    let welcome = HelloReply::Welcome { protocol: proto::PROTOCOL_VERSION, server_name, nonce };
    if writer.write(&welcome).await.is_err() {
        return;
    }
    match hello.role {
        Role::Client => crate::client_conn::serve(shared, reader, writer, requester, peer).await,
        Role::Mom => crate::mom_conn::serve(shared, reader, writer, peer).await,
    }
}

/// Checks the protocol and settles how the rest of the connection is sealed, from how its
/// `Hello` was (`binding`; `None` on the Unix socket): a protocol-3 hello sealed `Session` keys
/// both halves with the key its credential carried (`proto::session`); a protocol-2 hello
/// sealed `Opening` with the peer's nonce binds both halves (our fresh nonce, returned, goes
/// back in `Welcome`); a protocol-1 hello sealed `Legacy` stays unbound. Anything else is
/// refused (the message).
fn bind_connection(
    hello: &Hello,
    binding: Option<Binding>,
    reader: &mut FrameReader,
    writer: &mut FrameWriter,
) -> Result<Option<Nonce>, String> {
    let session = reader.take_session().filter(|_| binding == Some(Binding::Session));
    let peer_nonce = hello.nonce.filter(|_| binding == Some(Binding::Opening));
    let keys = session.as_ref().map(|key| key.keys(Side::Acceptor));
    match (&keys, peer_nonce) {
        (Some((send, _)), _) => writer.keyed(send.clone()),
        (None, Some(peer_nonce)) => writer.bind(peer_nonce),
        (None, None) => writer.legacy(),
    }
    if !proto::protocol_accepted(hello.protocol) {
        return Err(format!(
            "protocol version {} not supported (server speaks {})",
            hello.protocol,
            proto::PROTOCOL_VERSION
        ));
    }
    let Some(binding) = binding else { return Ok(None) };
    match (hello.protocol, keys, peer_nonce, binding) {
        (3.., Some((_, receive)), _, _) => {
            reader.keyed(receive);
            Ok(None)
        }
        (2.., None, Some(_), _) => {
            let nonce = Nonce::fresh().map_err(|error| error.to_string())?;
            reader.bind(nonce);
            Ok(Some(nonce))
        }
        (1, None, None, Binding::Legacy) => {
            reader.legacy();
            Ok(None)
        }
        _ => {
            let with = if hello.nonce.is_some() { "with" } else { "without" };
            Err(format!("a protocol {} hello sealed {binding:?} {with} a nonce is not accepted", hello.protocol))
        }
    }
}

/// The requester for a uid/gid pair as the kernel or the credential reported them; the name is
/// looked up here (`names.rs`: kept a second, while the account files are unchanged).
fn requester(uid: u32, gid: u32) -> Requester {
    let user = crate::names::user_name(uid).unwrap_or_else(|| uid.to_string());
    Requester { uid, gid, user }
}
