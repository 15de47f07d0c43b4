//! One mom's connection: registration, then its reports (starts, ends, heartbeats) in and the
//! server's instructions out through a channel drained by a writer task. A mom that goes
//! silent for `node_timeout` or disconnects is marked down; its jobs are kept until it
//! registers again and the two sides reconcile.

use crate::handlers;
use crate::shared::{now, MomLink, Shared};
use proto::frame::nonblocking as frame;
use proto::{MomToServer, ServerToMom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

static NEXT_LINK_ID: AtomicU64 = AtomicU64::new(1);

/// Serves one mom until it disconnects or goes silent.
pub async fn serve(shared: Arc<Shared>, stream: UnixStream) {
    let (mut reader, mut writer) = stream.into_split();
    let timeout = shared.config.node_timeout;
    let registration = match tokio::time::timeout(timeout, frame::read::<MomToServer>(&mut reader)).await {
        Ok(Ok(MomToServer::Register(registration))) => registration,
        _ => {
            tracing::warn!("mom connection without registration dropped");
            return;
        }
    };
    let node = registration.node.clone();
    let (sender, mut receiver) = mpsc::unbounded_channel::<ServerToMom>();
    let link_id = NEXT_LINK_ID.fetch_add(1, Ordering::Relaxed);
    let registered = shared.apply(|state, out| {
        // Under the state lock: the link exists and `Registered` is queued first, before any
        // message the scheduler may send once the node is up.
        let reply = handlers::register_mom::register_mom(state, out, registration, now());
        let _ = sender.send(reply);
        shared
            .moms
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(node.clone(), MomLink { link_id, sender: sender.clone() });
    });
    registered.await;
    drop(sender);
    let writer_task = tokio::spawn(async move {
        while let Some(message) = receiver.recv().await {
            if frame::write(&mut writer, &message).await.is_err() {
                break;
            }
        }
    });
    let reason = loop {
        match tokio::time::timeout(timeout, frame::read::<MomToServer>(&mut reader)).await {
            Ok(Ok(message)) => handle_message(&shared, &node, message).await,
            Ok(Err(proto::FrameError::Closed)) => break "mom connection closed".to_string(),
            Ok(Err(error)) => break format!("mom connection failed: {error}"),
            Err(_) => break format!("no heartbeat for {} s", timeout.as_secs()),
        }
    };
    writer_task.abort();
    mark_down(&shared, &node, link_id, &reason);
}

async fn handle_message(shared: &Shared, node: &str, message: MomToServer) {
    match message {
        MomToServer::Heartbeat => {}
        MomToServer::Register(_) => {
            tracing::warn!(node, "second registration on one connection ignored");
        }
        MomToServer::JobStarted { job_id, session_id } => {
            shared.apply(|state, out| handlers::job_started::job_started(state, out, &job_id, session_id)).await
        }
        MomToServer::JobEnded(obit) => {
            shared.apply(|state, out| handlers::job_ended::job_ended(state, out, node, obit, now())).await
        }
    }
}

/// Marks `node` down if `link_id` is still its current link.
fn mark_down(shared: &Shared, node: &str, link_id: u64, reason: &str) {
    let mut state = shared.state();
    let mut moms = shared.moms.lock().unwrap_or_else(|p| p.into_inner());
    if moms.get(node).map(|link| link.link_id) != Some(link_id) {
        return;
    }
    moms.remove(node);
    if let Some(entry) = state.nodes.get_mut(node) {
        entry.up = false;
        entry.comment = Some(format!("node down: {reason}"));
        entry.last_state_change = now();
    }
    tracing::warn!(node, reason, "node down");
}
