//! One command's connection: read requests, run their handlers, reply. Reads are bounded in
//! time so a silent client cannot hold a task forever.

use crate::handlers;
use crate::shared::{now, Shared};
use crate::state::Requester;
use proto::error::{ErrorCode, RequestError};
use proto::frame::nonblocking as frame;
use proto::{ClientRequest, ServerReply};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixStream;

/// A client idle this long is disconnected.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Serves requests until the client closes the connection.
pub async fn serve(shared: Arc<Shared>, mut stream: UnixStream, requester: Requester) {
    loop {
        let request: ClientRequest = match tokio::time::timeout(IDLE_TIMEOUT, frame::read(&mut stream)).await {
            Ok(Ok(request)) => request,
            Ok(Err(proto::FrameError::Closed)) | Err(_) => return,
            Ok(Err(error)) => {
                let reply = ServerReply::Error(RequestError::new(
                    ErrorCode::InvalidRequest,
                    format!("Invalid request: {error}"),
                ));
                let _ = frame::write(&mut stream, &reply).await;
                return;
            }
        };
        let reply = dispatch(&shared, &requester, request).await;
        if frame::write(&mut stream, &reply).await.is_err() {
            return;
        }
    }
}

async fn dispatch(shared: &Shared, requester: &Requester, request: ClientRequest) -> ServerReply {
    let flavor = shared.config.flavor;
    let result = match request {
        ClientRequest::SubmitJob(spec) => {
            shared.apply(|state, out| handlers::submit_job::submit_job(state, out, requester, now(), *spec)).await
        }
        ClientRequest::StatusJob { selectors, history, users } => {
            let state = shared.state();
            return handlers::status_job::status_job(&state, flavor, &selectors, history, &users);
        }
        ClientRequest::StatusNode { names } => {
            let state = shared.state();
            return handlers::status_node::status_node(&state, &names);
        }
        ClientRequest::DeleteJob { ids } => {
            shared.apply(|state, out| handlers::delete_job::delete_job(state, out, requester, now(), &ids)).await
        }
        ClientRequest::HoldJob { ids, hold_types } => {
            shared
                .apply(|state, out| handlers::hold_job::hold_job(state, out, requester, now(), &ids, &hold_types, true))
                .await
        }
        ClientRequest::ReleaseJob { ids, hold_types } => {
            shared
                .apply(|state, out| {
                    handlers::hold_job::hold_job(state, out, requester, now(), &ids, &hold_types, false)
                })
                .await
        }
    };
    result.unwrap_or_else(|error| {
        tracing::error!(%error, "store commit failed");
        ServerReply::Error(RequestError::new(ErrorCode::System, format!("{} {error}", ErrorCode::System.text())))
    })
}
