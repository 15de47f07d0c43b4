//! The task server: the mom's task socket (`<spool>/task.sock`, mode 0666: anyone may
//! connect, each request is authorized), and the peer connections the mom port hands over
//! (port.rs, after [`proto::task::PEER_MAGIC`]). Each connection carries one request:
//! * a launcher's [`TaskRequest`]: checked (check.rs) as coming from its kernel-reported uid,
//!   then run here (local.rs) or forwarded to the target node's mom (peer.rs) with the frames
//!   relayed both ways;
//! * a peer mom's [`PeerRequest`] (its uid, from the kernel or the MUNGE credential, is this
//!   mom's own): a task for this node, checked again (job here, cookie), or the end of a job's
//!   tasks here with their usage.
//!
//! Bounds: at most `max_connections` connections at once (more are closed at once), every
//! frame under `peer::TASK_LIMITS`, the first within `OPENING_TIMEOUT`.
//!
//! Owns: the accept loops and the routing. Must not: start processes itself (local.rs).

use super::board::TaskBoard;
use super::check::{check, Caller, JobFacts, Refusal, Route};
use super::local;
use super::peer::{self, PeerSettings, TASK_LIMITS};
use crate::exec::{user, ExecContext};
use crate::port::PeerConnection;
use proto::frame::{nonblocking, Limits};
use proto::mom::ResourcesUsed;
use proto::seal::{Direction, Identity, Nonce};
use proto::task::{PeerRequest, TaskInput, TaskOutput, TaskRequest, TasksEnded};
use proto::transport::{self, FrameReader, FrameWriter, Sealing};
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixListener;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;

/// Connections held at once by default: launchers and peers together (a `pbsdsh` of a large
/// job holds one per task until it ends).
pub const MAX_CONNECTIONS: usize = 2048;

/// The first frame must arrive within this.
const OPENING_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the mother superior waits for each sister's usage at a job's end.
const END_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a peer's task request waits for its job to join here (the server sends the
/// sister its part and the mother superior the job on separate connections).
const JOIN_PATIENCE: Duration = Duration::from_secs(10);

/// What the task server works with.
pub struct TaskServer {
    pub board: Arc<TaskBoard>,
    pub context: Arc<ExecContext>,
    pub peers: PeerSettings,
    slots: Arc<Semaphore>,
}

impl TaskServer {
    pub fn new(board: Arc<TaskBoard>, context: Arc<ExecContext>, peers: PeerSettings, max: usize) -> Arc<TaskServer> {
        Arc::new(TaskServer { board, context, peers, slots: Arc::new(Semaphore::new(max)) })
    }

    /// Accepts launchers and same-machine peers on the task socket until aborted.
    pub async fn serve_unix(self: Arc<TaskServer>, listener: UnixListener) {
        loop {
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(error) => {
                    tracing::error!(%error, "task socket: accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Ok(slot) = self.slots.clone().try_acquire_owned() else {
                tracing::warn!("task socket: too many connections; one closed");
                continue;
            };
            let server = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                let Ok(credentials) = stream.peer_cred() else { return };
                let identity = Identity { uid: credentials.uid(), gid: credentials.gid() };
                let (read, write) = transport::split_unix(stream);
                let reader = FrameReader::plain(read, identity).with_limits(TASK_LIMITS);
                server.on_unix(identity.uid, reader, FrameWriter::new(write, None)).await;
            });
        }
    }

    async fn on_unix(&self, uid: u32, mut reader: FrameReader, mut writer: FrameWriter) {
        let opening = match tokio::time::timeout(OPENING_TIMEOUT, reader.read::<serde_json::Value>()).await {
            Ok(Ok(opening)) => opening,
            Ok(Err(error)) => return refuse(&mut writer, format!("bad task request: {error}")).await,
            Err(_) => return,
        };
        // A peer's request is a one-key object naming its kind; anything else is a launcher's,
        // whose decoding error says what is wrong with it.
        if let Ok(request) = PeerRequest::deserialize(&opening) {
            if uid != self.peers.mom_uid {
                tracing::warn!(uid, "task socket: a peer request from a uid that is no mom's; refused");
                return refuse(&mut writer, format!("uid {uid} is not a mom")).await;
            }
            return self.on_peer(request, reader, writer).await;
        }
        match TaskRequest::deserialize(opening) {
            Ok(request) => self.on_request(Caller::Launcher { uid }, request, reader, writer).await,
            Err(error) => refuse(&mut writer, format!("bad task request: {error}")).await,
        }
    }

    /// Serves the peer connections the mom port hands over until it stops.
    pub async fn serve_tcp_peers(self: Arc<TaskServer>, mut connections: mpsc::UnboundedReceiver<PeerConnection>) {
        while let Some(connection) = connections.recv().await {
            let Ok(slot) = self.slots.clone().try_acquire_owned() else {
                tracing::warn!(peer = %connection.peer, "task server: too many connections; peer closed");
                continue;
            };
            let server = self.clone();
            tokio::spawn(async move {
                let _slot = slot;
                server.on_tcp_peer(connection).await;
            });
        }
    }

    async fn on_tcp_peer(&self, connection: PeerConnection) {
        let PeerConnection { read, write, nonce, peer } = connection;
        let Some(socket) = self.peers.munge_socket.clone() else { return };
        let mut read = read;
        let theirs = nonblocking::read_limited::<_>(&mut read, Limits::HANDSHAKE);
        let theirs: Nonce = match tokio::time::timeout(OPENING_TIMEOUT, theirs).await {
            Ok(Ok(nonce)) => nonce,
            _ => return tracing::warn!("mom port: a peer connection from {peer} without a nonce; closed"),
        };
        let incoming = Sealing { socket: socket.clone(), direction: Direction::MomToMom(self.peers.node.clone()) };
        let mut reader =
            FrameReader::sealed(read, incoming).only_from(vec![self.peers.mom_uid]).with_limits(TASK_LIMITS);
        reader.bind(nonce);
        let outgoing = Sealing { socket, direction: Direction::MomToMom(String::new()) };
        let mut writer = FrameWriter::new(write, Some(outgoing));
        writer.bind(theirs);
        let request = match tokio::time::timeout(OPENING_TIMEOUT, reader.read::<PeerRequest>()).await {
            Ok(Ok(request)) => request,
            Ok(Err(error)) => return tracing::warn!("mom port: refused a peer request from {peer}: {error}"),
            Err(_) => return,
        };
        let (PeerRequest::Task { from, .. } | PeerRequest::EndTasks { from, .. }) = &request;
        writer.set_direction(Direction::MomToMom(from.clone()));
        self.on_peer(request, reader, writer).await;
    }

    async fn on_peer(&self, request: PeerRequest, reader: FrameReader, mut writer: FrameWriter) {
        match request {
            PeerRequest::Task { request, .. } => self.on_request(Caller::Peer, request, reader, writer).await,
            PeerRequest::EndTasks { job_id, cookie, from } => {
                let known = self
                    .board
                    .launch(&job_id)
                    .is_some_and(|launch| super::check::cookie_matches(&launch.cookie, &cookie));
                if !known {
                    return refuse(&mut writer, format!("job {job_id} does not run on this node")).await;
                }
                let tasks_used = self.board.end(&job_id).await.unwrap_or_default();
                let used = share_usage(&self.context, &job_id, tasks_used);
                tracing::info!(job_id, mother = from, cput = used.cput_secs, "job's tasks ended here");
                let _ = writer.write(&TasksEnded { used }).await;
            }
        }
    }

    async fn on_request(&self, caller: Caller, request: TaskRequest, reader: FrameReader, mut writer: FrameWriter) {
        let launch = match caller {
            Caller::Peer => self.board.launch_within(&request.job_id, JOIN_PATIENCE).await,
            Caller::Launcher { .. } => self.board.launch(&request.job_id),
        };
        // Only the owner's uid is needed here (no supplementary groups); the user database may
        // be a directory server, so it is asked off the runtime's threads.
        let owner_uid = match &launch {
            Some(launch) => {
                let (name, group) = (launch.user.clone(), launch.group.clone());
                let look_up = move || user::resolve_for(&name, group.as_deref(), user::Groups::Unused);
                tokio::task::spawn_blocking(look_up).await.ok().and_then(Result::ok).map(|owner| owner.uid)
            }
            None => None,
        };
        let facts = launch.as_ref().zip(owner_uid).map(|(launch, owner_uid)| JobFacts {
            owner_uid,
            cookie: &launch.cookie,
            hosts: &launch.hosts,
        });
        let routed = check(&request, caller, facts, &self.context.node);
        let result = match routed {
            Ok(Route::Here { node_num }) => {
                local::run(&self.board, Arc::clone(&self.context), request, node_num, reader, writer).await
            }
            Ok(Route::Forward { node, addr }) => {
                let job_id = request.job_id.clone();
                let asked = PeerRequest::Task { from: self.context.node.clone(), request };
                match peer::connect(&self.peers, &node, &addr, &asked).await {
                    Ok(link) => return relay(reader, writer, link).await,
                    Err(error) => {
                        tracing::warn!(job_id, node, "cannot forward a task: {error}");
                        let reason = error.to_string();
                        return refuse(&mut writer, Refusal::Unreachable { node, reason }.to_string()).await;
                    }
                }
            }
            Err(refusal) => {
                refuse(&mut writer, refusal.to_string()).await;
                Err(refusal)
            }
        };
        if let Err(refusal) = result {
            tracing::info!("task refused: {refusal}");
        }
    }

    /// Ends the job's tasks here and, as its mother superior, on each sister (bounded wait; a
    /// sister that does not answer is logged and skipped). Returns their summed usage; this
    /// node's tasks count only when the job had no cgroup here (its cgroup's figures, in the
    /// job's own usage, already include them).
    pub async fn end_job(&self, launch: &proto::mom::JobLaunch) -> ResourcesUsed {
        let local = self.board.end(&launch.job_id).await.unwrap_or_default();
        let mut used = if self.context.cgroups.is_some() { ResourcesUsed::default() } else { local };
        let mut asks = JoinSet::new();
        for host in launch.hosts.iter().skip(1).filter(|host| host.node != self.context.node) {
            let Some(addr) = host.mom_addr.clone() else { continue };
            let (settings, node) = (self.peers.clone(), host.node.clone());
            let ask = PeerRequest::EndTasks {
                from: self.context.node.clone(),
                job_id: launch.job_id.clone(),
                cookie: launch.cookie.clone(),
            };
            asks.spawn(async move {
                let answer = tokio::time::timeout(END_TIMEOUT, async {
                    let mut link = peer::connect(&settings, &node, &addr, &ask).await.map_err(|e| e.to_string())?;
                    link.reader.read::<TasksEnded>().await.map_err(|e| e.to_string())
                })
                .await;
                (node, answer.map_err(|_| "no answer in time".to_string()).and_then(|r| r))
            });
        }
        while let Some(Ok((node, answer))) = asks.join_next().await {
            match answer {
                Ok(ended) => {
                    used.cput_secs += ended.used.cput_secs;
                    used.mem_kb += ended.used.mem_kb;
                    used.vmem_kb += ended.used.vmem_kb;
                }
                Err(reason) => tracing::warn!(job_id = %launch.job_id, node, "sister's tasks not counted: {reason}"),
            }
        }
        used
    }
}

/// What a sister's share of a job used: its cgroup's figures when it has one (every process
/// the tasks started, reaped or not), else what its reaped tasks used.
fn share_usage(context: &ExecContext, job_id: &str, tasks: ResourcesUsed) -> ResourcesUsed {
    let cgroup = context.cgroups.as_ref().and_then(|cgroups| cgroups.job(job_id).ok());
    match cgroup.map(|cgroup| cgroup.usage()) {
        Some(usage) => ResourcesUsed {
            cput_secs: usage.cput_secs.max(tasks.cput_secs),
            mem_kb: usage.mem_kb.max(tasks.mem_kb),
            vmem_kb: usage.vmem_kb,
            ..tasks
        },
        None => tasks,
    }
}

async fn refuse(writer: &mut FrameWriter, message: String) {
    let _ = writer.write(&TaskOutput::Refused { message }).await;
}

/// Relays a launcher's frames to the peer mom and the peer's back, until the task's end or
/// either side goes away (dropping the peer connection then makes the target kill the task).
async fn relay(mut launcher_reader: FrameReader, mut launcher_writer: FrameWriter, link: peer::PeerLink) {
    let peer::PeerLink { mut reader, mut writer } = link;
    let mut up = tokio::spawn(async move {
        while let Ok(input) = launcher_reader.read::<TaskInput>().await {
            if writer.write(&input).await.is_err() {
                break;
            }
        }
    });
    let down = async {
        while let Ok(output) = reader.read::<TaskOutput>().await {
            let last = matches!(output, TaskOutput::Exited { .. } | TaskOutput::Refused { .. });
            if launcher_writer.write(&output).await.is_err() || last {
                break;
            }
        }
    };
    tokio::select! {
        _ = &mut up => {}
        () = down => {}
    }
    up.abort();
}
