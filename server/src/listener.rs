//! Accepts connections on the server's Unix socket, learns the peer's identity from the kernel
//! (`SO_PEERCRED`), reads the handshake and hands the connection to the client or mom code.
//! The TCP + MUNGE transport (cluster mode) will plug in here beside this one.

use crate::shared::Shared;
use crate::state::Requester;
use proto::error::ErrorCode;
use proto::frame::nonblocking as frame;
use proto::{Hello, HelloReply, Role};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};

/// How long a new connection may take to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until the task is dropped.
pub async fn accept_loop(shared: Arc<Shared>, listener: UnixListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let shared = shared.clone();
                tokio::spawn(async move { handle_connection(shared, stream).await });
            }
            Err(error) => {
                tracing::error!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn handle_connection(shared: Arc<Shared>, mut stream: UnixStream) {
    let credentials = match stream.peer_cred() {
        Ok(credentials) => credentials,
        Err(error) => {
            tracing::warn!(%error, "no peer credentials; connection dropped");
            return;
        }
    };
    let hello: Hello = match tokio::time::timeout(HELLO_TIMEOUT, frame::read(&mut stream)).await {
        Ok(Ok(hello)) => hello,
        Ok(Err(error)) => {
            tracing::debug!(%error, "bad handshake");
            return;
        }
        Err(_) => return,
    };
    if !proto::protocol_accepted(hello.protocol) {
        let message =
            format!("protocol version {} not supported (server speaks {})", hello.protocol, proto::PROTOCOL_VERSION);
        let _ = frame::write(&mut stream, &HelloReply::Refused { code: ErrorCode::ProtocolMismatch, message }).await;
        return;
    }
    let requester = requester(credentials.uid(), credentials.gid());
    if hello.role == Role::Mom && requester.uid != 0 && requester.uid != nix::unistd::getuid().as_raw() {
        let message = format!("uid {} may not register a mom", requester.uid);
        let _ = frame::write(&mut stream, &HelloReply::Refused { code: ErrorCode::PermissionDenied, message }).await;
        return;
    }
    let welcome =
        HelloReply::Welcome { protocol: proto::PROTOCOL_VERSION, server_name: shared.config.server_name.clone() };
    if frame::write(&mut stream, &welcome).await.is_err() {
        return;
    }
    match hello.role {
        Role::Client => crate::client_conn::serve(shared, stream, requester).await,
        Role::Mom => crate::mom_conn::serve(shared, stream).await,
    }
}

/// The requester for a uid/gid pair as the kernel reported them.
fn requester(uid: u32, gid: u32) -> Requester {
    let user = uzers::get_user_by_uid(uid)
        .map(|user| user.name().to_string_lossy().into_owned())
        .unwrap_or_else(|| uid.to_string());
    Requester { uid, gid, user }
}
