//! One mom's connection (Unix or sealed TCP, the same code): registration, then its reports
//! (starts, ends, heartbeats) in and the server's instructions out through a channel drained by
//! a writer task. A mom that goes silent for `node_timeout` or disconnects is marked down; its
//! jobs are kept until it registers again and the two sides reconcile.
//!
//! A mom that asks for them (`Registration::heartbeat_ms`) also gets `Heartbeat` at that interval
//! (1 to 60 s), so it notices a server that stopped with its connection open and goes to the
//! other head (failover).
//!
//! Node identity: the mom's address is the connection's. A registration under the name of a
//! node whose link is alive is a takeover from the same address (a restarted mom) and refused
//! from another one.

use crate::handlers;
use crate::peer::{log_bad_frame, Peer};
use crate::shared::{now, MomLink, Shared};
use proto::transport::{FrameReader, FrameWriter};
use proto::{MomToServer, ServerToMom};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::mpsc;

static NEXT_LINK_ID: AtomicU64 = AtomicU64::new(1);

/// Serves one mom until it disconnects or goes silent.
pub async fn serve(shared: Arc<Shared>, mut reader: FrameReader, mut writer: FrameWriter, peer: Peer) {
    let timeout = shared.config.node_timeout;
    let registration = match tokio::time::timeout(timeout, reader.read::<MomToServer>()).await {
        Ok(Ok(MomToServer::Register(registration))) => registration,
        Ok(Err(error)) if error.is_refused_credential() => return log_bad_frame(peer, &error),
        _ => {
            tracing::warn!("mom connection from {peer} without registration dropped");
            return;
        }
    };
    let node = registration.node.clone();
    let heartbeat = proto::mom::server_heartbeat(registration.heartbeat_ms);
    writer.set_direction(proto::seal::Direction::ServerToMom(node.clone()));
    let port = registration.port;
    let task_socket = registration.task_socket.clone();
    let (sender, mut receiver) = mpsc::unbounded_channel::<ServerToMom>();
    let link_id = NEXT_LINK_ID.fetch_add(1, Ordering::Relaxed);
    let registered = shared.apply(|state, out| {
        let mut moms = crate::shared::lock_moms(&shared.moms);
        if let Some(live) = moms.get(&node).filter(|link| !link.sender.is_closed() && !same_host(link.peer, peer)) {
            return Err(format!("node {node} is connected from {}", live.peer));
        }
        // Under the state lock: the link exists and `Registered` is queued first, before any
        // message the scheduler may send once the node is up.
        let reply = handlers::register_mom::register_mom(state, out, registration, now());
        if let Some(entry) = state.node_mut(&node) {
            entry.mom_addr = match peer {
                Peer::Tcp(addr) => Some(addr.ip().to_string()),
                Peer::Local => None,
            };
            entry.mom_port = port;
            entry.task_socket = task_socket;
        }
        let _ = sender.send(reply);
        moms.insert(node.clone(), MomLink { link_id, peer, sender: sender.clone() });
        Ok(())
    });
    if let Err(message) = registered.await {
        tracing::warn!("refused the registration of node {node} from {peer}: {message}");
        let _ = writer.write(&ServerToMom::Refused { message }).await;
        return;
    }
    drop(sender);
    let writer_task = tokio::spawn(async move {
        // The first beat right after `Registered` (queued before this task started, and
        // written first: `biased`), so the mom can tell at once that this server beats.
        let mut beats = heartbeat.map(|every| {
            let mut beats = tokio::time::interval(every);
            beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            beats
        });
        loop {
            let message = tokio::select! {
                biased;
                message = receiver.recv() => match message {
                    Some(message) => message,
                    None => break,
                },
                () = next_beat(&mut beats) => ServerToMom::Heartbeat,
            };
            if writer.write(&message).await.is_err() {
                break;
            }
        }
    });
    let reason = loop {
        match tokio::time::timeout(timeout, reader.read::<MomToServer>()).await {
            Ok(Ok(message)) => handle_message(&shared, &node, message).await,
            Ok(Err(error)) if error.is_closed() => break "mom connection closed".to_string(),
            Ok(Err(error)) => {
                log_bad_frame(peer, &error);
                break format!("mom connection failed: {error}");
            }
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
        MomToServer::JobStarted { job_id, session_id, run_count } => {
            shared
                .apply(|state, out| {
                    handlers::job_started::job_started(state, out, node, &job_id, session_id, run_count)
                })
                .await
        }
        MomToServer::JobEnded(obit) => {
            shared.apply(|state, out| handlers::job_ended::job_ended(state, out, node, obit, now())).await
        }
        MomToServer::GpuStatus(reports) => {
            shared.apply(|state, out| handlers::gpu_status::gpu_status(state, out, node, reports)).await
        }
        MomToServer::ShareRefused { job_id, reason, run_count } => {
            shared
                .apply(|state, out| {
                    handlers::gpu_status::share_refused(state, out, node, &job_id, run_count, &reason, now())
                })
                .await
        }
    }
}

/// The next server heartbeat, for a mom that asked for them (`Registration::heartbeat_ms`);
/// never for one that did not.
async fn next_beat(beats: &mut Option<tokio::time::Interval>) {
    match beats {
        Some(beats) => {
            beats.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// Whether two connections come from the same host (a takeover, not an impostor).
fn same_host(a: Peer, b: Peer) -> bool {
    match (a, b) {
        (Peer::Tcp(a), Peer::Tcp(b)) => a.ip() == b.ip(),
        (a, b) => a == b,
    }
}

/// Marks `node` down if `link_id` is still its current link.
fn mark_down(shared: &Shared, node: &str, link_id: u64, reason: &str) {
    let mut state = shared.state();
    let mut moms = crate::shared::lock_moms(&shared.moms);
    if moms.get(node).map(|link| link.link_id) != Some(link_id) {
        return;
    }
    moms.remove(node);
    if let Some(entry) = state.node_mut(node) {
        entry.up = false;
        entry.comment = Some(format!("node down: {reason}"));
        entry.last_state_change = now();
    }
    tracing::warn!(node, reason, "node down");
}
