//! One command's connection (Unix or sealed TCP, the same code): read requests, run their
//! handlers, reply. Reads are bounded in time (idle timeout here, per-frame deadline in
//! `proto::frame`) and memory (`MAX_FRAME`, read as it arrives), so a silent or garbling client
//! cannot hold a task or memory forever. Every list a request names is deduplicated and capped
//! first (`bounds.rs`), and writes are bounded in time ([`WRITE_TIMEOUT`]): a client that stops
//! reading its reply is dropped, and the reply's memory with it. A job listing is selected
//! (keys only) under the state lock, then built and sent a frame at a time, each frame's
//! statuses under a short lock of their own: it never exists whole in memory.
//! The one thing the transport changes: an interactive job submitted over TCP names the
//! address its qsub connected from, not the host qsub named ([`interactive_from_peer`]).

use crate::handlers;
use crate::peer::Peer;
use crate::shared::{now, Shared};
use crate::state::Requester;
use job::JobKey;
use proto::error::{ErrorCode, RequestError};
use proto::status::MAX_COLUMNS;
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
            Ok(Err(error)) if error.is_refused_credential() => return crate::peer::log_bad_frame(peer, &error),
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
        let parts = match crate::bounds::bound(&mut request) {
            Ok(()) => dispatch(&shared, &requester, peer, request).await,
            Err(error) => vec![Part::Ready(ServerReply::Error(error))],
        };
        let large = parts.len() > 1;
        let flavor = shared.state().flavor;
        for part in parts {
            let part = crate::flavor::localize_reply(flavor, part.build(&shared));
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

/// Runs a request: its reply, in the frames it is sent in.
async fn dispatch(shared: &Shared, requester: &Requester, peer: Peer, request: ClientRequest) -> Vec<Part> {
    let reply = match request {
        ClientRequest::SubmitJob(mut spec) => {
            interactive_from_peer(&mut spec, peer);
            shared.apply(|state, out| handlers::submit_job::submit_job(state, out, requester, now(), *spec)).await
        }
        ClientRequest::StatusJob { selectors, history, users, attrs, subjobs, arrays_only, rows } => {
            let arrays = handlers::status_job::ArrayListing { subjobs, arrays_only };
            return list_jobs(shared, requester, Asked { selectors, history, users, attrs, arrays, rows });
        }
        ClientRequest::StatusNode { names } => {
            let state = shared.state();
            handlers::status_node::status_node(&state, requester, &names)
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
        ClientRequest::StatusServer => handlers::status_server::status_server(&shared.state(), requester),
        ClientRequest::StatusResource { names } => {
            handlers::status_resource::status_resource(&shared.state(), requester, &names)
        }
        ClientRequest::MoveJob { destination, ids } => {
            shared
                .apply(|state, out| handlers::move_job::move_job(state, out, requester, now(), &destination, &ids))
                .await
        }
        ClientRequest::FairShare { op } => {
            shared.apply(|state, out| handlers::fairshare::fairshare(state, out, requester, now(), &op)).await
        }
    };
    vec![Part::Ready(reply)]
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
/// does not leave the server's resident size high (glibc keeps freed memory otherwise); the
/// start calls it too, after loading the store.
pub(crate) fn release_free_memory() {
    // SAFETY: malloc_trim only releases free heap pages; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Jobs per frame of a status reply (keeps every frame far below `MAX_FRAME`, and the state
/// lock short: a frame's statuses are built under it, one frame at a time).
const JOBS_PER_FRAME: usize = 500;

/// Errors per frame of a status reply (after the jobs).
const ERRORS_PER_FRAME: usize = 5000;

/// What a qstat asked for, owned.
struct Asked {
    selectors: Vec<String>,
    history: bool,
    users: Vec<String>,
    attrs: Option<Vec<String>>,
    arrays: handlers::status_job::ArrayListing,
    /// Answer in rows (`ServerReply::Rows`) if `attrs` allows it.
    rows: bool,
}

/// A qstat's request with what was decided when its jobs were selected.
struct Listing {
    asked: Asked,
    /// The owners whose jobs are listed (`query_filter`).
    users: Vec<String>,
    reader: handlers::status_job::Reader,
    now: i64,
    flavor: crate::config::Flavor,
    /// The row's columns when the listing is answered in rows.
    columns: Option<crate::status::Columns>,
}

impl Listing {
    fn query(&self) -> handlers::status_job::Query<'_> {
        handlers::status_job::Query {
            selectors: &self.asked.selectors,
            history: self.asked.history,
            users: &self.users,
            wanted: self.asked.attrs.as_deref(),
            arrays: self.asked.arrays,
            reader: self.reader,
        }
    }
}

/// One frame of a reply: ready, or a piece of a job listing whose statuses are built when it
/// is sent ([`Part::build`]), so a long listing never exists whole in memory.
enum Part {
    Ready(ServerReply),
    Jobs { listing: Arc<Listing>, keys: Vec<JobKey>, errors: Vec<RequestError>, more: bool },
}

impl Part {
    fn build(self, shared: &Shared) -> ServerReply {
        match self {
            Part::Ready(reply) => reply,
            Part::Jobs { listing, keys, errors, more } => {
                let (state, query, flavor, now) = (shared.state(), listing.query(), listing.flavor, listing.now);
                let server = state.server_name.clone();
                if let Some(columns) = &listing.columns {
                    let rows = handlers::status_job::rows(&state, flavor, now, &query, columns, &keys);
                    return ServerReply::Rows { server, rows, errors, more, flavor };
                }
                let jobs = handlers::status_job::statuses(&state, flavor, now, &query, &keys);
                ServerReply::Jobs { server, jobs, errors, more, flavor }
            }
        }
    }
}

/// Selects the jobs of a qstat (under the state lock, keys only) and cuts the listing into
/// frames.
fn list_jobs(shared: &Shared, requester: &Requester, asked: Asked) -> Vec<Part> {
    let state = shared.state();
    let users = match state.query_filter(requester, &asked.selectors, &asked.users) {
        Ok(users) => users,
        Err(error) => return vec![Part::Ready(ServerReply::Error(error))],
    };
    let reader = handlers::status_job::Reader::of(&state, requester);
    let columns = columns(&asked);
    let listing = Listing { asked, users, reader, now: now(), flavor: state.flavor, columns };
    let selection = handlers::status_job::select(&state, listing.flavor, listing.now, &listing.query());
    drop(state);
    let listing = Arc::new(listing);
    frames(selection.keys, selection.errors)
        .into_iter()
        .map(|(keys, errors, more)| Part::Jobs { listing: listing.clone(), keys, errors, more })
        .collect()
}

/// The columns of a listing answered in rows: when asked for, of at most [`MAX_COLUMNS`] named
/// attributes (a row holds a value or `null` for each); else it is answered in `Jobs`.
fn columns(asked: &Asked) -> Option<crate::status::Columns> {
    let names = asked.attrs.as_deref().filter(|names| asked.rows && names.len() <= MAX_COLUMNS)?;
    Some(crate::status::Columns::new(names))
}

/// Cuts a listing into frames: the jobs [`JOBS_PER_FRAME`] at a time, then the errors
/// [`ERRORS_PER_FRAME`] at a time; every frame but the last has `more`. At least one frame.
fn frames(keys: Vec<JobKey>, errors: Vec<RequestError>) -> Vec<(Vec<JobKey>, Vec<RequestError>, bool)> {
    let mut frames: Vec<(Vec<JobKey>, Vec<RequestError>, bool)> =
        keys.chunks(JOBS_PER_FRAME).map(|keys| (keys.to_vec(), Vec::new(), true)).collect();
    let mut errors = errors.into_iter().peekable();
    while errors.peek().is_some() {
        frames.push((Vec::new(), errors.by_ref().take(ERRORS_PER_FRAME).collect(), true));
    }
    match frames.last_mut() {
        Some(last) => last.2 = false,
        None => frames.push((Vec::new(), Vec::new(), false)),
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;
    use job::spec::Interactive;

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
    fn rows_are_sent_for_at_most_max_columns_named_attributes() {
        let asked = |attrs: Option<usize>, rows: bool| Asked {
            selectors: Vec::new(),
            history: false,
            users: Vec::new(),
            attrs: attrs.map(|count| (0..count).map(|n| format!("attr{n}")).collect()),
            arrays: Default::default(),
            rows,
        };
        assert_eq!(columns(&asked(Some(5), true)).map(|columns| columns.len()), Some(5));
        assert_eq!(columns(&asked(Some(MAX_COLUMNS), true)).map(|columns| columns.len()), Some(MAX_COLUMNS));
        assert_eq!(columns(&asked(Some(MAX_COLUMNS + 1), true)), None, "more: answered in Jobs");
        assert_eq!(columns(&asked(None, true)), None, "every attribute: Jobs");
        assert_eq!(columns(&asked(Some(5), false)), None, "not asked: Jobs");
    }

    #[test]
    fn long_job_lists_are_cut_into_frames_and_errors_come_last() {
        let error = RequestError::new(ErrorCode::UnknownJobId, "Unknown Job Id 9.s");
        let shapes = |keys: usize, errors: usize| -> Vec<(usize, usize, bool)> {
            frames((0..keys as u64).map(JobKey::from_raw).collect(), vec![error.clone(); errors])
                .into_iter()
                .map(|(keys, errors, more)| (keys.len(), errors.len(), more))
                .collect()
        };
        assert_eq!(shapes(1201, 1), vec![(500, 0, true), (500, 0, true), (201, 0, true), (0, 1, false)]);
        assert_eq!(shapes(0, 0), vec![(0, 0, false)], "an empty listing is one frame");
        assert_eq!(shapes(3, 12_000), vec![(3, 0, true), (0, 5000, true), (0, 5000, true), (0, 2000, false)]);
    }
}
