//! A blocking connection to the server: connect to its Unix socket or its TCP port (protocol 3,
//! `proto::session`: `Hello` credentialed with MUNGE, the credential carrying a fresh session
//! key only the server's uid can read; every later frame both ways authenticated with it and
//! numbered), handshake, then request/reply. A command's request follows `Hello` at once and
//! the answer to both is read together: one round trip ([`Connection::open`]).
//! Commands are short-lived, so no async runtime is started.
//!
//! Failover (`PBS_PRIMARY`/`PBS_SECONDARY`): the heads are tried in turn, the one that
//! answered last first (`server_order.rs`). A head that refuses the connection or cannot be
//! reached is left at once; one that accepts but does not answer `Hello` (stopped, or its
//! host gone) is left after [`FAILOVER_ANSWER_TIMEOUT`]. With one server nothing changes:
//! the kernel's connect timeout, then [`REPLY_TIMEOUT`] for the answer.

use crate::conf::{PbsConf, ServerAddr};
use crate::server_order::{self, Memory};
use proto::frame::{self, FrameError};
use proto::seal::{self, Binding, Direction};
use proto::session::{self, FrameKey, SessionKey, Side};
use proto::{ClientRequest, Hello, HelloReply, Role, ServerReply};
use serde::{de::DeserializeOwned, Serialize};
use std::io::Write;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// With failover configured, how long each head has to accept the connection and answer
/// `Hello` before the next one is tried.
pub const FAILOVER_ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the server may take to answer a request (and, without failover, `Hello`).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// An open connection.
pub struct Connection {
    stream: Stream,
    /// The server's name (the part after the dot in job ids); empty until `Welcome` is read
    /// (with the first reply, when the connection was opened by [`Connection::open`]).
    pub server_name: String,
    /// `Hello` sent and its answer not read yet: the first request goes right after it (one
    /// round trip per command), and the answer is read before the reply.
    pending: Option<Pending>,
}

/// What a connection whose `Welcome` is still to come needs to report a refusal as
/// [`Connection::open`] would, or to try again restricted to our own uid.
struct Pending {
    conf: PbsConf,
}

enum Stream {
    Unix(UnixStream),
    Tcp(Sealed),
}

/// A TCP connection and how its frames are sealed (protocol 3, `proto::session`): the first
/// credentialed with the session key for `restriction`, the rest keyed.
struct Sealed {
    stream: TcpStream,
    /// munged's socket.
    munge: PathBuf,
    /// The uid our opening credential is restricted to: the server's (root, or ours in a
    /// personal cluster).
    restriction: u32,
    /// The session key until the opening is sent, then the keys of both directions.
    key: Option<SessionKey>,
    keys: Option<(FrameKey, FrameKey)>,
    sent: u64,
    received: u64,
}

/// Why a frame could not be sent or read: framing, or a credential (ours or the server's).
type FrameResult<T> = Result<T, FrameFailure>;

#[derive(Debug)]
enum FrameFailure {
    Seal(seal::SealError),
    /// A reply sealed by a uid that is neither root nor ours: not the server (a user on some
    /// host answering in its place).
    NotServer(u32),
}

impl std::fmt::Display for FrameFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameFailure::Seal(error) => error.fmt(f),
            FrameFailure::NotServer(uid) => write!(f, "reply sealed by uid {uid}, which is not the server's"),
        }
    }
}

impl<E: Into<seal::SealError>> From<E> for FrameFailure {
    fn from(error: E) -> FrameFailure {
        FrameFailure::Seal(error.into())
    }
}

impl Stream {
    /// Connects; within `bound` when one is given (TCP: each of the host's addresses in turn
    /// until the deadline), else as long as the kernel tries. A TCP connection's opening is
    /// restricted to `restriction`.
    fn connect(server: &ServerAddr, bound: Option<Duration>, restriction: u32) -> std::io::Result<Stream> {
        match server {
            ServerAddr::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path)?)),
            ServerAddr::Tcp { host, port, munge_socket } => {
                let stream = match bound {
                    None => TcpStream::connect((host.as_str(), *port))?,
                    Some(bound) => connect_within((host.as_str(), *port), bound)?,
                };
                let _ = stream.set_nodelay(true);
                let key = SessionKey::fresh().map_err(std::io::Error::other)?;
                let munge = munge_socket.clone();
                let keys = None;
                Ok(Stream::Tcp(Sealed { stream, munge, restriction, key: Some(key), keys, sent: 0, received: 0 }))
            }
        }
    }

    fn set_timeouts(&self, read: Duration, write: Option<Duration>) {
        let _ = match self {
            Stream::Unix(stream) => stream.set_read_timeout(Some(read)).and(stream.set_write_timeout(write)),
            Stream::Tcp(tcp) => tcp.stream.set_read_timeout(Some(read)).and(tcp.stream.set_write_timeout(write)),
        };
    }

    fn send<T: Serialize>(&mut self, message: &T) -> FrameResult<()> {
        match self {
            Stream::Unix(stream) => Ok(frame::write(stream, message)?),
            Stream::Tcp(tcp) => {
                let body = serde_json::to_vec(message).map_err(FrameError::from)?;
                let envelope = match (tcp.key.take(), &tcp.keys) {
                    (Some(key), _) => {
                        let envelope =
                            seal::seal_opening(&tcp.munge, &Direction::ToServer, tcp.restriction, &key, &body)?;
                        tcp.keys = Some(key.keys(Side::Opener));
                        envelope
                    }
                    (None, Some((send, _))) => send.seal(tcp.sent, &body),
                    (None, None) => return Err(seal::SealError::Malformed.into()),
                };
                tcp.stream.write_all(&frame::prefixed(&envelope)?).map_err(FrameError::from)?;
                tcp.stream.flush().map_err(FrameError::from)?;
                tcp.sent += 1;
                Ok(())
            }
        }
    }

    fn receive<T: DeserializeOwned>(&mut self) -> FrameResult<T> {
        Ok(self.receive_sealed(false)?.1)
    }

    /// One message and, on TCP, whether it was keyed (`None`), or (the answer to `Hello` only,
    /// `hello_reply`: a server that could not read our credential) sealed the protocol-1 way.
    fn receive_sealed<T: DeserializeOwned>(&mut self, hello_reply: bool) -> FrameResult<(Option<Binding>, T)> {
        match self {
            Stream::Unix(stream) => Ok((None, frame::read(stream)?)),
            Stream::Tcp(tcp) => {
                let envelope = frame::read_body(&mut tcp.stream, frame::Limits::NORMAL)?;
                let sequence = tcp.received;
                tcp.received += 1;
                match &tcp.keys {
                    Some((_, receive)) if session::is_keyed(&envelope) => {
                        Ok((None, frame::decode(&receive.open(sequence, envelope)?)?))
                    }
                    _ if hello_reply => {
                        let opened = seal::open(&tcp.munge, &Direction::ServerToClient, &[Binding::Legacy], envelope)?;
                        // The server runs as root, or as this user in a personal cluster.
                        let uid = nix::unistd::geteuid().as_raw();
                        if opened.identity.uid != 0 && opened.identity.uid != uid {
                            return Err(FrameFailure::NotServer(opened.identity.uid));
                        }
                        Ok((Some(opened.binding), frame::decode(&opened.body)?))
                    }
                    _ => Err(seal::SealError::Malformed.into()),
                }
            }
        }
    }

    /// Whether a refusal sealed the protocol-1 way may mean the server could not read our
    /// opening because it runs as another uid than the one it was restricted to: a personal
    /// cluster's server runs as its user, not root.
    fn may_be_personal(&self) -> bool {
        let uid = nix::unistd::geteuid().as_raw();
        matches!(self, Stream::Tcp(tcp) if tcp.restriction != uid)
    }
}

/// Why the server could not be reached or answered badly.
#[derive(Debug)]
pub enum ConnError {
    /// Could not connect or handshake: exit code 3.
    Unreachable(String),
    /// The conversation broke after connecting: exit code 1.
    Broken(String),
}

impl std::fmt::Display for ConnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnError::Unreachable(text) | ConnError::Broken(text) => f.write_str(text),
        }
    }
}

impl ConnError {
    pub fn exit_code(&self) -> u8 {
        match self {
            ConnError::Unreachable(_) => crate::exit::NO_SERVER,
            ConnError::Broken(_) => crate::exit::FAILURE,
        }
    }
}

/// Why one address did not give a connection.
enum Attempt {
    /// Our own munged failed: no other address can help.
    OwnMunge(String),
    /// This address did not answer, or answered badly.
    Failed(String),
}

impl Connection {
    /// Connects to the configured server. With one head, the answer to `Hello` is read with
    /// the first reply (the request goes right after it: one round trip per command); with
    /// failover, at once (it tells which head is active).
    pub fn open() -> Result<Connection, ConnError> {
        let conf = crate::conf::load().map_err(|error| ConnError::Unreachable(error.to_string()))?;
        match conf.secondary {
            None => Connection::open_pipelined(&conf),
            Some(_) => Connection::open_conf(&conf),
        }
    }

    /// Connects to the server described by `conf`: with failover, to whichever head answers
    /// (the one that answered last tried first, remembered in `~/.minipbs/last-server`).
    pub fn open_conf(conf: &PbsConf) -> Result<Connection, ConnError> {
        match conf.secondary {
            None => Connection::open_single(conf),
            Some(_) => Connection::open_heads(conf, Memory::for_user().as_ref()),
        }
    }

    fn open_single(conf: &PbsConf) -> Result<Connection, ConnError> {
        Connection::attempt(&conf.server, None, conf.server_uid.unwrap_or(0))
            .map_err(|failure| unreachable(conf, failure))
    }

    /// Tries each head of `conf` in turn, each within [`FAILOVER_ANSWER_TIMEOUT`], the one
    /// `memory` names first; the memory then names the one that answered.
    pub fn open_heads(conf: &PbsConf, memory: Option<&Memory>) -> Result<Connection, ConnError> {
        Connection::open_heads_within(conf, memory, FAILOVER_ANSWER_TIMEOUT)
    }

    fn open_heads_within(conf: &PbsConf, memory: Option<&Memory>, bound: Duration) -> Result<Connection, ConnError> {
        let recalled = memory.and_then(Memory::recall);
        let mut failures = Vec::new();
        for server in server_order::ordered(conf.addresses(), recalled.as_deref()) {
            match Connection::attempt(server, Some(bound), conf.server_uid.unwrap_or(0)) {
                Ok(connection) => {
                    if let Some(memory) = memory {
                        memory.update(recalled.as_deref(), server, &conf.server);
                    }
                    return Ok(connection);
                }
                Err(Attempt::OwnMunge(text)) => return Err(ConnError::Unreachable(text)),
                Err(Attempt::Failed(error)) => failures.push(format!("{server}: {error}")),
            }
        }
        Err(ConnError::Unreachable(format!(
            "cannot connect to server {} ({}; from {})",
            conf.server_name,
            failures.join("; "),
            conf.source.display()
        )))
    }

    /// Connects to `server` and handshakes, all within `bound` if one is given. Over TCP the
    /// opening is restricted to `server_uid` (root unless `pbs.conf` says otherwise); a server
    /// that could not read it may run as us (a personal cluster without `PBS_SERVER_UID`):
    /// tried again so.
    fn attempt(server: &ServerAddr, bound: Option<Duration>, server_uid: u32) -> Result<Connection, Attempt> {
        let mut connection = Connection::start(server, bound, server_uid)?;
        match connection.finish(bound) {
            Err(Refusal::Sealed(_)) if connection.stream.may_be_personal() => Connection::as_own_uid(server, bound),
            Err(refusal) => Err(refusal.into_attempt()),
            Ok(()) => Ok(connection),
        }
    }

    /// A connection handshaken with an opening restricted to our own uid: the second try at a
    /// server that could not read one restricted to root (a personal cluster's, run as us).
    fn as_own_uid(server: &ServerAddr, bound: Option<Duration>) -> Result<Connection, Attempt> {
        let mut connection = Connection::start(server, bound, nix::unistd::geteuid().as_raw())?;
        connection.finish(bound).map_err(Refusal::into_attempt)?;
        Ok(connection)
    }

    /// Connects to `server` and sends `Hello`, its TCP opening restricted to `restriction`.
    fn start(server: &ServerAddr, bound: Option<Duration>, restriction: u32) -> Result<Connection, Attempt> {
        let failed = |error: &dyn std::fmt::Display| Attempt::Failed(error.to_string());
        let started = Instant::now();
        let mut stream = Stream::connect(server, bound, restriction).map_err(|error| match error.kind() {
            std::io::ErrorKind::TimedOut if bound.is_some() => no_answer(bound),
            _ => failed(&error),
        })?;
        match bound {
            // What is left of the bound (at least a moment: a zero timeout means none).
            Some(bound) => {
                let left = bound.saturating_sub(started.elapsed()).max(Duration::from_millis(1));
                stream.set_timeouts(left, Some(left));
            }
            None => stream.set_timeouts(REPLY_TIMEOUT, None),
        }
        stream.send(&Hello::new(Role::Client, None)).map_err(|error| sealing_failure(error, bound))?;
        Ok(Connection { stream, server_name: String::new(), pending: None })
    }

    /// Reads the answer to `Hello`.
    fn finish(&mut self, bound: Option<Duration>) -> Result<(), Refusal> {
        // Credentialed (not keyed): the server could not read our opening.
        let (credentialed, reply) = match self.stream.receive_sealed::<HelloReply>(true) {
            Ok((Some(binding), reply)) => (true, reply.as_sealed(binding)),
            Ok((None, reply)) => (false, reply),
            Err(error) => return Err(Refusal::Frame(sealing_failure(error, bound))),
        };
        match reply {
            HelloReply::Welcome { server_name, .. } => {
                self.server_name = server_name;
                self.stream.set_timeouts(REPLY_TIMEOUT, None);
                Ok(())
            }
            HelloReply::Refused { message, .. } if credentialed => Err(Refusal::Sealed(older_server_hint(message))),
            HelloReply::Refused { message, .. } => Err(Refusal::Frame(Attempt::Failed(message))),
        }
    }

    /// Connects to the server of `conf` (one head) and sends `Hello` without waiting for its
    /// answer, which is read with the first reply (one round trip per command).
    fn open_pipelined(conf: &PbsConf) -> Result<Connection, ConnError> {
        let restriction = conf.server_uid.unwrap_or(0);
        let mut connection =
            Connection::start(&conf.server, None, restriction).map_err(|failure| unreachable(conf, failure))?;
        connection.pending = Some(Pending { conf: conf.clone() });
        Ok(connection)
    }

    /// Reads the answer to a `Hello` sent by [`Connection::open_pipelined`]; a refusal is what
    /// [`Connection::open`] would have said, and a server that could not read our opening is
    /// tried again with one restricted to our uid (a personal cluster).
    fn finish_pending(&mut self, pending: Pending) -> Result<bool, ConnError> {
        match self.finish(None) {
            Ok(()) => Ok(false),
            Err(Refusal::Sealed(_)) if self.stream.may_be_personal() => {
                *self = Connection::as_own_uid(&pending.conf.server, None)
                    .map_err(|failure| unreachable(&pending.conf, failure))?;
                Ok(true)
            }
            Err(refusal) => Err(unreachable(&pending.conf, refusal.into_attempt())),
        }
    }

    /// This end's address of a TCP connection: the address the server sees this host by, so
    /// one it can pass on to a compute node (`qsub -I` listens there). `None` over the Unix
    /// socket.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        match &self.stream {
            Stream::Unix(_) => None,
            Stream::Tcp(tcp) => tcp.stream.local_addr().ok(),
        }
    }

    /// munged's socket when this connection is TCP (MUNGE-sealed); `None` over the Unix socket.
    pub fn munge_socket(&self) -> Option<std::path::PathBuf> {
        match &self.stream {
            Stream::Unix(_) => None,
            Stream::Tcp(tcp) => Some(tcp.munge.clone()),
        }
    }

    /// Sends one request and waits for its whole reply: a job list sent in several frames is
    /// joined into one `Jobs` (or `Rows`) reply.
    pub fn request_all(&mut self, request: &ClientRequest) -> Result<ServerReply, ConnError> {
        let mut reply = self.request(request)?;
        while let ServerReply::Jobs { more: true, .. } | ServerReply::Rows { more: true, .. } = reply {
            let next: ServerReply =
                self.stream.receive().map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))?;
            if !append(&mut reply, next) {
                return Err(ConnError::Broken("garbled job list from server".to_string()));
            }
        }
        Ok(reply)
    }

    /// Sends one request and waits for its reply (after the answer to `Hello`, when that is
    /// still to come: a refusal is reported as the connection's).
    pub fn request(&mut self, request: &ClientRequest) -> Result<ServerReply, ConnError> {
        let sent = self.stream.send(request);
        if let Some(pending) = self.pending.take() {
            if self.finish_pending(pending)? {
                return self.request(request);
            }
        }
        sent.map_err(|error| ConnError::Broken(format!("cannot send request: {error}")))?;
        self.stream.receive().map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))
    }
}

/// Appends the next frame of a job listing to the frames before it; false when it is not a
/// listing of the same shape.
fn append(reply: &mut ServerReply, next: ServerReply) -> bool {
    match (reply, next) {
        (
            ServerReply::Jobs { jobs, errors, more, .. },
            ServerReply::Jobs { jobs: next_jobs, errors: next_errors, more: next_more, .. },
        ) => {
            jobs.extend(next_jobs);
            errors.extend(next_errors);
            *more = next_more;
            true
        }
        (
            ServerReply::Rows { rows, errors, more, .. },
            ServerReply::Rows { rows: next_rows, errors: next_errors, more: next_more, .. },
        ) => {
            rows.extend(next_rows);
            errors.extend(next_errors);
            *more = next_more;
            true
        }
        _ => false,
    }
}

/// A server older than protocol 3 reads our opening credential as one that does not match its
/// message: said so.
fn older_server_hint(message: String) -> String {
    if message.contains("does not match the message") {
        let version = proto::PROTOCOL_VERSION;
        format!("{message}; or pbs_server is older than this command, which speaks protocol {version}: upgrade it")
    } else {
        message
    }
}

/// The error of a connection to the one server of `conf` that failed.
fn unreachable(conf: &PbsConf, failure: Attempt) -> ConnError {
    match failure {
        Attempt::OwnMunge(text) => ConnError::Unreachable(text),
        Attempt::Failed(error) => ConnError::Unreachable(format!(
            "cannot connect to server {} ({error}; {}, from {})",
            conf.server_name,
            conf.server,
            conf.source.display()
        )),
    }
}

/// Why the answer to `Hello` was not `Welcome`.
enum Refusal {
    /// A refusal sealed with a credential: the server could not read our opening.
    Sealed(String),
    /// Anything else.
    Frame(Attempt),
}

impl Refusal {
    fn into_attempt(self) -> Attempt {
        match self {
            Refusal::Sealed(message) => Attempt::Failed(message),
            Refusal::Frame(attempt) => attempt,
        }
    }
}

/// What a frame that could not be sent or read during the handshake means: our own munged
/// failing is the whole story (said alone); a socket timeout within `bound`, no answer.
fn sealing_failure(error: FrameFailure, bound: Option<Duration>) -> Attempt {
    match error {
        FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Unreachable { .. }))
        | FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Library(_))) => {
            Attempt::OwnMunge(error.to_string())
        }
        error if bound.is_some() && timed_out(&error) => no_answer(bound),
        error => Attempt::Failed(error.to_string()),
    }
}

/// Connects to `target` within `bound`, trying each of its addresses until the deadline.
fn connect_within(target: (&str, u16), bound: Duration) -> std::io::Result<TcpStream> {
    let deadline = Instant::now() + bound;
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the host name has no address");
    for address in target.to_socket_addrs()? {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        match TcpStream::connect_timeout(&address, left) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// A head that said nothing within `bound`.
fn no_answer(bound: Option<Duration>) -> Attempt {
    let bound = bound.unwrap_or_default();
    match bound.subsec_millis() {
        0 => Attempt::Failed(format!("no answer within {} s", bound.as_secs())),
        _ => Attempt::Failed(format!("no answer within {} ms", bound.as_millis())),
    }
}

/// Whether a frame failed because the peer said nothing in time (a socket timeout).
fn timed_out(error: &FrameFailure) -> bool {
    use proto::frame::FrameError;
    match error {
        FrameFailure::Seal(seal::SealError::Frame(FrameError::TimedOut(_))) => true,
        FrameFailure::Seal(seal::SealError::Frame(FrameError::Io(error))) => {
            matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
        }
        _ => false,
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
