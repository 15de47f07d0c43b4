//! One command's connection (Unix or sealed TCP, the same code): read requests, run their
//! handlers, reply. Reads are bounded in time (idle timeout here, per-frame deadline in
//! `proto::frame`) and memory (`MAX_FRAME`, read as it arrives), so a silent or garbling client
//! cannot hold a task or memory forever. Every list a request names is deduplicated and capped
//! first (`bounds.rs`), and writes are bounded in time ([`WRITE_TIMEOUT`]): a client that stops
//! reading its reply is dropped, and the reply's memory with it.
//! The one thing the transport changes: an interactive job submitted over TCP names the
//! address its qsub connected from, not the host qsub named ([`interactive_from_peer`]).

use crate::handlers;
use crate::listener::Peer;
use crate::shared::{now, Shared};
use crate::state::Requester;
use proto::error::{ErrorCode, RequestError};
use proto::transport::{FrameReader, FrameWriter};
use proto::{ClientRequest, ServerReply};
use std::sync::Arc;
use std::time::Duration;

/// A client idle this long is disconnected.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A client that takes longer than this to take one reply frame is disconnected.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(20);

/// Serves requests until the client closes the connection.
pub async fn serve(
    shared: Arc<Shared>,
    mut reader: FrameReader,
    mut writer: FrameWriter,
    requester: Requester,
    peer: Peer,
) {
    loop {
        let request: ClientRequest = match tokio::time::timeout(IDLE_TIMEOUT, reader.read()).await {
            Ok(Ok(request)) => request,
            Ok(Err(error)) if error.is_closed() => return,
            Err(_) => return,
            Ok(Err(error)) if error.is_refused_credential() => return crate::listener::log_bad_frame(peer, &error),
            Ok(Err(error)) => {
                crate::limits::bad_frame(&requester.user, "request", &error);
                let reply = ServerReply::Error(RequestError::new(
                    ErrorCode::InvalidRequest,
                    format!("Invalid request: {error}"),
                ));
                let _ = writer.write(&reply).await;
                return;
            }
        };
        let mut request = request;
        let reply = match crate::bounds::bound(&mut request) {
            Ok(()) => dispatch(&shared, &requester, peer, request).await,
            Err(error) => ServerReply::Error(error),
        };
        let reply = crate::flavor::localize_reply(shared.state().flavor, reply);
        let parts = split_reply(reply);
        let large = parts.len() > 1;
        for part in parts {
            match tokio::time::timeout(WRITE_TIMEOUT, writer.write(&part)).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return,
                Err(_) => {
                    tracing::warn!(user = %requester.user, %peer, "client not reading its reply; connection dropped");
                    return;
                }
            }
        }
        if large {
            release_free_memory();
        }
    }
}

async fn dispatch(shared: &Shared, requester: &Requester, peer: Peer, request: ClientRequest) -> ServerReply {
    match request {
        ClientRequest::SubmitJob(mut spec) => {
            interactive_from_peer(&mut spec, peer);
            shared.apply(|state, out| handlers::submit_job::submit_job(state, out, requester, now(), *spec)).await
        }
        ClientRequest::StatusJob { selectors, history, users, attrs, subjobs, arrays_only } => {
            let state = shared.state();
            let users = match state.query_filter(requester, &selectors, &users) {
                Ok(users) => users,
                Err(error) => return ServerReply::Error(error),
            };
            let arrays = handlers::status_job::ArrayListing { subjobs, arrays_only };
            let query = handlers::status_job::Query {
                selectors: &selectors,
                history,
                users: &users,
                wanted: attrs.as_deref(),
                arrays,
                reader: handlers::status_job::Reader::of(&state, requester),
            };
            handlers::status_job::status_job(&state, state.flavor, now(), query)
        }
        ClientRequest::StatusNode { names } => {
            let state = shared.state();
            handlers::status_node::status_node(&state, &names)
        }
        ClientRequest::DeleteJob { ids, force, history } => {
            let how = handlers::delete_job::How { force, history };
            shared.apply(|state, out| handlers::delete_job::delete_job(state, out, requester, now(), &ids, how)).await
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
        ClientRequest::ManageNode { names, offline, comment } => {
            let change = handlers::manage_node::Change { offline, comment };
            shared
                .apply(|state, out| handlers::manage_node::manage_node(state, out, requester, now(), &names, &change))
                .await
        }
        ClientRequest::AlterJob { ids, changes } => {
            shared
                .apply(|state, out| handlers::alter_job::alter_job(state, out, requester, now(), &ids, &changes))
                .await
        }
        ClientRequest::RerunJob { ids } => {
            shared.apply(|state, out| handlers::rerun_job::rerun_job(state, out, requester, now(), &ids)).await
        }
        ClientRequest::SignalJob { ids, signal } => {
            shared
                .apply(|state, out| handlers::signal_job::signal_job(state, out, requester, now(), &ids, &signal))
                .await
        }
        ClientRequest::Manage { op, kind, name, attrs } => {
            shared
                .apply(|state, out| handlers::manage::manage(state, out, requester, now(), op, kind, &name, &attrs))
                .await
        }
        ClientRequest::StatusQueue { names } => handlers::status_queue::status_queue(&shared.state(), &names),
        ClientRequest::StatusServer => handlers::status_server::status_server(&shared.state()),
        ClientRequest::MoveJob { destination, ids } => {
            shared
                .apply(|state, out| handlers::move_job::move_job(state, out, requester, now(), &destination, &ids))
                .await
        }
    }
}

/// A `qsub -I` over TCP: the mom is to connect to the address the submission came from
/// (where qsub listens, `client/src/qsub_interactive.rs`), never to a host named in the job,
/// which may not resolve on the compute node or may be any host the user likes. Over the Unix
/// socket qsub runs on this host, and its name stays.
fn interactive_from_peer(spec: &mut job::JobSpec, peer: Peer) {
    if let (Peer::Tcp(addr), Some(target)) = (peer, spec.interactive.as_mut()) {
        tracing::debug!(named = %target.host, %addr, "interactive job: the mom will connect to the submitting address");
        target.reached_at(addr.ip());
    }
}

/// Hands memory freed after a large listing back to the system, so one `qstat` of a long queue
/// does not leave the server's resident size high (glibc keeps freed memory otherwise).
fn release_free_memory() {
    // SAFETY: malloc_trim only releases free heap pages; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Jobs per frame of a status reply (keeps every frame far below `MAX_FRAME`).
const JOBS_PER_FRAME: usize = 500;

/// Splits a long job list into frames; other replies are one frame.
fn split_reply(reply: ServerReply) -> Vec<ServerReply> {
    let ServerReply::Jobs { server, mut jobs, errors, flavor, .. } = reply else { return vec![reply] };
    let mut parts = Vec::new();
    while jobs.len() > JOBS_PER_FRAME {
        let rest = jobs.split_off(JOBS_PER_FRAME);
        parts.push(ServerReply::Jobs { server: server.clone(), jobs, errors: Vec::new(), more: true, flavor });
        jobs = rest;
    }
    parts.push(ServerReply::Jobs { server, jobs, errors, more: false, flavor });
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use job::spec::Interactive;
    use proto::JobStatus;

    #[test]
    fn an_interactive_job_over_tcp_names_the_submitting_address() {
        let target = Interactive { host: "login1".into(), port: 40000, secret: "0123456789abcdef".repeat(2) };
        let mut spec = crate::handlers::tests::spec(&[]);
        spec.interactive = Some(Interactive { host: "elsewhere.example.com".into(), ..target.clone() });
        interactive_from_peer(&mut spec, Peer::Tcp("10.201.0.9:51234".parse().unwrap()));
        let reached = spec.interactive.as_ref().unwrap();
        assert_eq!((reached.host.as_str(), reached.port), ("10.201.0.9", 40000), "the port stays qsub's");
        assert_eq!(reached.secret, target.secret);

        let mut local = crate::handlers::tests::spec(&[]);
        local.interactive = Some(target.clone());
        interactive_from_peer(&mut local, Peer::Local);
        assert_eq!(local.interactive, Some(target), "over the Unix socket the name stays");

        let mut batch = crate::handlers::tests::spec(&[]);
        let submit_host = batch.submit_host.clone();
        interactive_from_peer(&mut batch, Peer::Tcp("10.201.0.9:51234".parse().unwrap()));
        assert_eq!((batch.interactive, batch.submit_host), (None, submit_host), "a batch job is left alone");
    }

    #[test]
    fn long_job_lists_are_split_and_errors_come_last() {
        let jobs: Vec<JobStatus> =
            (0..1201).map(|seq| JobStatus { id: format!("{seq}.s"), attrs: Vec::new() }).collect();
        let error = RequestError::new(ErrorCode::UnknownJobId, "Unknown Job Id 9.s");
        let reply = ServerReply::Jobs {
            server: "s".into(),
            jobs,
            errors: vec![error.clone()],
            more: false,
            flavor: proto::Flavor::Torque,
        };
        let parts = split_reply(reply);
        let shapes: Vec<(usize, usize, bool)> = parts
            .iter()
            .map(|part| match part {
                ServerReply::Jobs { jobs, errors, more, flavor, .. } => {
                    assert_eq!(*flavor, proto::Flavor::Torque, "every frame names the flavor");
                    (jobs.len(), errors.len(), *more)
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(shapes, vec![(500, 0, true), (500, 0, true), (201, 1, false)]);
    }
}
