//! The mom's connection to the server: connect to the Unix socket (served by the server uid or
//! root, as `SO_PEERCRED` says, or nothing is sent) or (cluster transport) the server's TCP port, every
//! connection then keyed (protocol 3, `proto::session`: `Hello`'s MUNGE credential carries the
//! connection's key, restricted to the server uid, and every later frame both ways is
//! authenticated with it), so only the server uid is obeyed; handshake (`Hello` / `HelloReply`), `Register` with the jobs still held, then
//! heartbeats and messages in both directions. When the connection fails (server restart) it reconnects with backoff, registers
//! again, resends every obit the server has not acknowledged and reports the start (session id)
//! of every job it runs as mother superior again.
//!
//! Failover (`pbs_mom --secondary`): the link has two targets, the primary head first, and
//! each reconnect attempt goes to the other one, so the mom follows whichever head is active
//! (only the active one listens). What a head learns from a (re)connecting mom is the same
//! whether or not it is the process the mom spoke to before: the registration (the node, and
//! every job running here or holding a share, or ended without an acknowledged obit), then
//! those obits, then the start of every job running here as mother superior (its session id),
//! then the starts that could not be delivered. A head that dies is noticed by a
//! closed connection, by a connect or handshake that does not finish within the handshake
//! timeout, by the silence of a server that sent heartbeats (`Registration::heartbeat_ms`:
//! a server stopped with its connection open), or (its host gone) by heartbeats unacknowledged
//! by TCP for [`TCP_USER_TIMEOUT`].
//!
//! Owns: the connection's life and the order of messages on it. Must not: start, signal or
//! wait for processes; inbound messages go to the daemon through a channel.
//! Invariant: after `Registered`, unacknowledged obits are sent before anything else, then the
//! starts of the running jobs.

use crate::jobs::JobTable;
use proto::mom::{MomToServer, Registration, ServerToMom};
use proto::seal::{Direction, Identity};
use proto::transport::{self, FrameReader, FrameWriter, Sealing, TransportError};
use proto::{Hello, HelloReply, Role};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::mpsc;

/// How long the server may take to accept the connection and answer `Hello` and `Register`.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TCP link whose sent data (heartbeats) stays unacknowledged this long is dropped, so a
/// head whose host died is left for the other (the kernel's default waits about 15 minutes).
pub const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a connection ended.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("cannot connect to {target}: {source}")]
    Connect { target: String, source: std::io::Error },
    #[error(transparent)]
    Frame(#[from] TransportError),
    #[error("server refused the mom: {0}")]
    Refused(String),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("server did not answer within {0:?}")]
    Timeout(Duration),
    /// The server sent heartbeats, then nothing for this long: stopped, or its host hung.
    #[error("server silent for {0:?} after its heartbeats (stopped?)")]
    Silent(Duration),
    #[error("{target} is served by uid {uid}, not the server's uid {expected} or root: not connecting")]
    NotServer { target: String, uid: u32, expected: u32 },
}

/// What the link needs to know.
#[derive(Debug, Clone)]
pub struct LinkSettings {
    /// Where the server is: one target, or the primary and the secondary head (failover),
    /// tried in turn, one per attempt.
    pub targets: Vec<LinkTarget>,
    /// Sent on every registration, with `jobs` filled in from the job table and `gpu_states`
    /// from `gpu_reports`.
    pub registration: Registration,
    /// The GPUs' latest reports (gpu/board.rs).
    pub gpu_reports: crate::gpu::board::ReportCell,
    /// Time between heartbeats.
    pub heartbeat_interval: Duration,
    /// First reconnect delay.
    pub reconnect_min: Duration,
    /// Largest reconnect delay.
    pub reconnect_max: Duration,
    /// How long connecting, `Hello` and `Register` may take ([`HANDSHAKE_TIMEOUT`]).
    pub handshake_timeout: Duration,
}

/// How the link reaches the server.
#[derive(Debug, Clone)]
pub enum LinkTarget {
    /// Its Unix socket; only a socket served by `server_uid` or root (the kernel's
    /// `SO_PEERCRED`) is trusted.
    Unix { path: PathBuf, server_uid: u32 },
    /// `HOST:PORT`, frames sealed through munged at `munge_socket`; only credentials of
    /// `server_uid` are obeyed.
    Tcp { addr: String, munge_socket: Arc<Path>, server_uid: u32 },
}

impl std::fmt::Display for LinkTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkTarget::Unix { path, .. } => write!(f, "socket {}", path.display()),
            LinkTarget::Tcp { addr, .. } => f.write_str(addr),
        }
    }
}

impl LinkTarget {
    async fn connect(&self) -> Result<(FrameReader, FrameWriter), LinkError> {
        match self {
            LinkTarget::Unix { path, server_uid } => {
                let target = || path.display().to_string();
                let stream = UnixStream::connect(path)
                    .await
                    .map_err(|source| LinkError::Connect { target: target(), source })?;
                // The kernel vouches for who listens there: anyone could have bound a socket at
                // this path (a stale one removed, a wrong --socket), so nothing is sent, and
                // nothing obeyed, unless it is the server's uid (or root, who could be anyone:
                // a user's mom may serve a root server).
                let peer = stream.peer_cred().map_err(|source| LinkError::Connect { target: target(), source })?;
                if peer.uid() != *server_uid && peer.uid() != 0 {
                    return Err(LinkError::NotServer { target: target(), uid: peer.uid(), expected: *server_uid });
                }
                let (read, write) = transport::split_unix(stream);
                let identity = Identity { uid: peer.uid(), gid: peer.gid() };
                Ok((FrameReader::plain(read, identity), FrameWriter::new(write, None)))
            }
            LinkTarget::Tcp { addr, munge_socket, server_uid } => {
                let stream = connect_tcp(addr).await?;
                let (read, write) = transport::split_tcp(stream);
                // Bound to the node's name once the handshake is over (`session`).
                let inbound =
                    Sealing { socket: munge_socket.clone(), direction: Direction::ServerToMom(String::new()) };
                let outbound = Sealing { socket: munge_socket.clone(), direction: Direction::ToServer };
                let reader = FrameReader::sealed(read, inbound).only_from(vec![*server_uid]);
                Ok((reader, FrameWriter::new(write, Some(outbound))))
            }
        }
    }
}

/// Connects to a head over TCP: no Nagle delay, and data left unacknowledged for
/// [`TCP_USER_TIMEOUT`] ends the connection (a head whose host died is then left).
async fn connect_tcp(addr: &str) -> Result<TcpStream, LinkError> {
    let stream =
        TcpStream::connect(addr).await.map_err(|source| LinkError::Connect { target: addr.to_string(), source })?;
    let _ = stream.set_nodelay(true);
    let millis = u32::try_from(TCP_USER_TIMEOUT.as_millis()).unwrap_or(u32::MAX);
    if let Err(error) = rustix::net::sockopt::set_tcp_user_timeout(&stream, millis) {
        tracing::warn!("cannot bound how long {addr} may leave data unacknowledged: {error}");
    }
    Ok(stream)
}

/// Reconnect delays: `min`, doubling up to `max`; reset after a successful registration.
#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Starts at `min`.
    pub fn new(min: Duration, max: Duration) -> Backoff {
        Backoff { min, max, next: min }
    }

    /// The delay before the next attempt (and doubles the one after).
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(self.max);
        delay
    }

    /// Back to `min`.
    pub fn reset(&mut self) {
        self.next = self.min;
    }
}

/// The channels between the link and the daemon.
pub struct LinkChannels {
    /// Messages from the server, in order.
    pub inbound: mpsc::UnboundedSender<ServerToMom>,
    /// Messages for the server. `JobEnded` queued while disconnected is dropped here: the
    /// table's unacknowledged obits are resent instead.
    pub outbound: mpsc::UnboundedReceiver<MomToServer>,
}

/// Runs forever (until the task is aborted or the daemon drops its channels).
pub async fn run(settings: LinkSettings, table: Arc<Mutex<JobTable>>, mut channels: LinkChannels) {
    let mut backoff = Backoff::new(settings.reconnect_min, settings.reconnect_max);
    let mut carry: VecDeque<MomToServer> = VecDeque::new();
    let mut failures = 0u32;
    for attempt in 0usize.. {
        // One target per attempt, in turn: after the active head fails, the other is next.
        let Some(target) = settings.targets.get(attempt % settings.targets.len().max(1)) else { return };
        match session(&settings, target, &table, &mut channels, &mut carry, &mut backoff).await {
            Ok(()) => return,
            // Nobody there, or nobody answering (a stopped head): said once per target.
            Err(err @ (LinkError::Connect { .. } | LinkError::NotServer { .. } | LinkError::Timeout(_))) => {
                failures += 1;
                if failures <= settings.targets.len() as u32 {
                    match err {
                        LinkError::Timeout(_) => tracing::warn!("{target}: {err}; retrying"),
                        _ => tracing::warn!("{err}; retrying"),
                    }
                } else {
                    tracing::debug!("{err}");
                }
            }
            Err(err) => {
                failures = 0;
                tracing::warn!("server link ({target}): {err}; reconnecting");
            }
        }
        if channels.inbound.is_closed() {
            return;
        }
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// One connection. `Ok` only when the daemon is gone (outbound channel closed).
async fn session(
    settings: &LinkSettings,
    target: &LinkTarget,
    table: &Arc<Mutex<JobTable>>,
    channels: &mut LinkChannels,
    carry: &mut VecDeque<MomToServer>,
    backoff: &mut Backoff,
) -> Result<(), LinkError> {
    let limit = settings.handshake_timeout;
    let (mut reader, mut writer) = with_timeout(limit, target.connect()).await?;
    let server_uid = match target {
        LinkTarget::Tcp { server_uid, .. } => Some(*server_uid),
        LinkTarget::Unix { .. } => None,
    };
    let server_name = with_timeout(limit, handshake(&mut reader, &mut writer, server_uid)).await?;
    reader.set_direction(Direction::ServerToMom(settings.registration.node.clone()));
    keep_undelivered_starts(&mut channels.outbound, carry);
    let stale_jobs = with_timeout(limit, register(settings, table, &mut reader, &mut writer)).await?;
    tracing::info!(server = %server_name, at = %target, stale = stale_jobs.len(), "registered with the server");
    backoff.reset();
    let _ = channels.inbound.send(ServerToMom::Registered { server_name, stale_jobs });
    let obits = lock(table).unacked_obits();
    for obit in obits {
        writer.write(&MomToServer::JobEnded(obit)).await?;
    }
    let starts = lock(table).started_jobs();
    for (job_id, session_id, run_count) in starts {
        writer.write(&MomToServer::JobStarted { job_id, session_id, run_count }).await?;
    }
    while let Some(message) = carry.pop_front() {
        if let Err(err) = writer.write(&message).await {
            carry.push_front(message);
            return Err(err.into());
        }
    }
    serve(settings, reader, writer, channels, carry).await
}

/// Sends `Hello` and returns the server's name from `Welcome`. A sealed connection (the server's
/// uid given) is keyed both ways (protocol 3, `proto::session`): our `Hello`'s credential
/// carries the connection's key, readable by `server_uid` only.
async fn handshake(
    reader: &mut FrameReader,
    writer: &mut FrameWriter,
    server_uid: Option<u32>,
) -> Result<String, LinkError> {
    if let Some(uid) = server_uid {
        reader.keyed(writer.open_session(uid).map_err(TransportError::from)?);
    }
    writer.write(&Hello::new(Role::Mom, None)).await?;
    match reader.read_hello_reply().await? {
        HelloReply::Welcome { server_name, .. } => Ok(server_name),
        HelloReply::Refused { code, message } => Err(LinkError::Refused(format!("{code:?}: {message}"))),
    }
}

/// Sends `Register` and returns the stale jobs from `Registered`.
async fn register(
    settings: &LinkSettings,
    table: &Arc<Mutex<JobTable>>,
    reader: &mut FrameReader,
    writer: &mut FrameWriter,
) -> Result<Vec<String>, LinkError> {
    let registration = Registration {
        jobs: lock(table).registered_jobs(),
        gpu_states: settings.gpu_reports.get(),
        ..settings.registration.clone()
    };
    writer.write(&MomToServer::Register(registration)).await?;
    match reader.read::<ServerToMom>().await? {
        ServerToMom::Registered { stale_jobs, .. } => Ok(stale_jobs),
        ServerToMom::Refused { message } => Err(LinkError::Refused(message)),
        other => Err(LinkError::Protocol(format!("expected Registered, got {other:?}"))),
    }
}

/// The registered connection: forwards inbound messages, writes outbound ones, heartbeats.
async fn serve(
    settings: &LinkSettings,
    mut reader: FrameReader,
    mut writer: FrameWriter,
    channels: &mut LinkChannels,
    carry: &mut VecDeque<MomToServer>,
) -> Result<(), LinkError> {
    let inbound = channels.inbound.clone();
    let silence = proto::mom::server_heartbeat(settings.registration.heartbeat_ms)
        .map(|every| every * proto::mom::SILENT_HEARTBEATS);
    // Reading is not cancel-safe, so it gets its own task; aborted when this function ends.
    let reader_task = AbortOnDrop(tokio::spawn(async move {
        // Armed by the server's first heartbeat: an older server sends none.
        let mut armed = false;
        loop {
            let message = match silence.filter(|_| armed) {
                Some(limit) => tokio::time::timeout(limit, reader.read::<ServerToMom>())
                    .await
                    .map_err(|_| LinkError::Silent(limit))??,
                None => reader.read::<ServerToMom>().await?,
            };
            if message == ServerToMom::Heartbeat {
                armed = true;
            } else if inbound.send(message).is_err() {
                return Ok::<(), LinkError>(());
            }
        }
    }));
    let mut heartbeat = tokio::time::interval(settings.heartbeat_interval);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reader_done = reader_task;
    loop {
        tokio::select! {
            ended = &mut reader_done.0 => {
                return match ended {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(err)) => Err(err),
                    Err(err) => Err(LinkError::Protocol(format!("reader task failed: {err}"))),
                };
            }
            message = channels.outbound.recv() => {
                let Some(message) = message else { return Ok(()) };
                let batch = with_queued(message, &mut channels.outbound);
                if let Err(err) = writer.write_batch(&batch).await {
                    carry.extend(batch.into_iter().filter(|message| matches!(message, MomToServer::JobStarted { .. })));
                    return Err(err.into());
                }
            }
            _ = heartbeat.tick() => writer.write(&MomToServer::Heartbeat).await?,
        }
    }
}

/// At most this many reports leave in one write (jobs that end together: one system call
/// and one flush instead of one each).
const BATCH: usize = 64;

/// `first` and the reports already queued behind it, up to [`BATCH`], in order.
fn with_queued(first: MomToServer, outbound: &mut mpsc::UnboundedReceiver<MomToServer>) -> Vec<MomToServer> {
    let mut batch = vec![first];
    while batch.len() < BATCH {
        match outbound.try_recv() {
            Ok(message) => batch.push(message),
            Err(_) => break,
        }
    }
    batch
}

/// Moves messages queued while disconnected into `carry`: `JobStarted` is kept, `JobEnded`
/// dropped (the table resends it), heartbeats dropped.
fn keep_undelivered_starts(outbound: &mut mpsc::UnboundedReceiver<MomToServer>, carry: &mut VecDeque<MomToServer>) {
    while let Ok(message) = outbound.try_recv() {
        if matches!(message, MomToServer::JobStarted { .. }) {
            carry.push_back(message);
        }
    }
}

async fn with_timeout<T>(
    limit: Duration,
    future: impl std::future::Future<Output = Result<T, LinkError>>,
) -> Result<T, LinkError> {
    tokio::time::timeout(limit, future).await.unwrap_or(Err(LinkError::Timeout(limit)))
}

/// Locks the table; a panic while it was held (the table may be half-changed) ends the mom:
/// at restart it ends what it left behind and the server reconciles its jobs.
pub(crate) fn lock(table: &Mutex<JobTable>) -> std::sync::MutexGuard<'_, JobTable> {
    pbslog::fatal::lock_or_exit(table, "job table")
}

/// Aborts a task when dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_caps_and_resets() {
        let mut backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(2));
        let delays: Vec<u128> = (0..8).map(|_| backoff.next_delay().as_millis()).collect();
        assert_eq!(delays, vec![50, 100, 200, 400, 800, 1600, 2000, 2000]);
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(50));
    }

    #[tokio::test]
    async fn a_tcp_link_bounds_unacknowledged_data() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let stream = connect_tcp(&addr).await.unwrap();
        let millis = rustix::net::sockopt::tcp_user_timeout(&stream).unwrap();
        assert_eq!(u128::from(millis), TCP_USER_TIMEOUT.as_millis());
        drop(listener);
        assert!(matches!(connect_tcp(&addr).await, Err(LinkError::Connect { .. })));
    }

    #[test]
    fn a_batch_takes_what_is_queued_in_order_up_to_its_bound() {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let obit =
            |n: usize| MomToServer::JobEnded(proto::mom::JobObit { job_id: format!("{n}.s"), ..Default::default() });
        for n in 1..=BATCH + 5 {
            sender.send(obit(n)).unwrap();
        }
        let first = receiver.try_recv().unwrap();
        let batch = with_queued(first, &mut receiver);
        assert_eq!(batch, (1..=BATCH).map(obit).collect::<Vec<_>>());
        let rest = with_queued(receiver.try_recv().unwrap(), &mut receiver);
        assert_eq!(rest, (BATCH + 1..=BATCH + 5).map(obit).collect::<Vec<_>>());
    }

    #[test]
    fn queued_ends_are_dropped_starts_kept() {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        sender.send(MomToServer::Heartbeat).unwrap();
        sender.send(MomToServer::JobStarted { job_id: "1.s".into(), session_id: 9, run_count: 1 }).unwrap();
        let obit = proto::mom::JobObit { job_id: "2.s".into(), exit_status: 0, session_id: 3, ..Default::default() };
        sender.send(MomToServer::JobEnded(obit)).unwrap();
        let mut carry = VecDeque::new();
        keep_undelivered_starts(&mut receiver, &mut carry);
        assert_eq!(
            carry,
            VecDeque::from([MomToServer::JobStarted { job_id: "1.s".into(), session_id: 9, run_count: 1 }])
        );
    }
}
