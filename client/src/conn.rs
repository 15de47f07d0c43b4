//! A blocking connection to the server: connect to its Unix socket or its TCP port (every
//! frame sealed with MUNGE both ways and bound to the connection: our nonce in `Hello`, the
//! server's in `Welcome`, each frame numbered; `proto::seal`), handshake, then request/reply.
//! Commands are short-lived, so no async runtime is started.
//!
//! Failover (`PBS_PRIMARY`/`PBS_SECONDARY`): the heads are tried in turn, the one that
//! answered last first (`server_order.rs`). A head that refuses the connection or cannot be
//! reached is left at once; one that accepts but does not answer `Hello` (stopped, or its
//! host gone) is left after [`FAILOVER_ANSWER_TIMEOUT`]. With one server nothing changes:
//! the kernel's connect timeout, then [`REPLY_TIMEOUT`] for the answer.

use crate::conf::{PbsConf, ServerAddr};
use crate::server_order::{self, Memory};
use proto::frame;
use proto::seal::{self, Binding, Direction, Nonce};
use proto::{ClientRequest, Hello, HelloReply, Role, ServerReply};
use serde::{de::DeserializeOwned, Serialize};
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
    /// The server's name (the part after the dot in job ids).
    pub server_name: String,
}

enum Stream {
    Unix(UnixStream),
    Tcp(Sealed),
}

/// A TCP connection and how its frames are sealed.
struct Sealed {
    stream: TcpStream,
    /// munged's socket.
    munge: PathBuf,
    /// Ours, sent in `Hello`: the server's frames must be sealed for it.
    nonce: Nonce,
    /// The server's, from `Welcome`: ours are sealed for it.
    peer: Option<Nonce>,
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
    /// until the deadline), else as long as the kernel tries.
    fn connect(server: &ServerAddr, bound: Option<Duration>) -> std::io::Result<Stream> {
        match server {
            ServerAddr::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path)?)),
            ServerAddr::Tcp { host, port, munge_socket } => {
                let stream = match bound {
                    None => TcpStream::connect((host.as_str(), *port))?,
                    Some(bound) => connect_within((host.as_str(), *port), bound)?,
                };
                let _ = stream.set_nodelay(true);
                let nonce = Nonce::fresh().map_err(std::io::Error::other)?;
                let munge = munge_socket.clone();
                Ok(Stream::Tcp(Sealed { stream, munge, nonce, peer: None, sent: 0, received: 0 }))
            }
        }
    }

    fn set_timeouts(&self, read: Duration, write: Option<Duration>) {
        let _ = match self {
            Stream::Unix(stream) => stream.set_read_timeout(Some(read)).and(stream.set_write_timeout(write)),
            Stream::Tcp(tcp) => tcp.stream.set_read_timeout(Some(read)).and(tcp.stream.set_write_timeout(write)),
        };
    }

    /// Our nonce, for `Hello` (TCP).
    fn nonce(&self) -> Option<Nonce> {
        match self {
            Stream::Unix(_) => None,
            Stream::Tcp(tcp) => Some(tcp.nonce),
        }
    }

    /// Seals what we send from now on for the server's nonce.
    fn bind(&mut self, peer: Option<Nonce>) {
        if let Stream::Tcp(tcp) = self {
            tcp.peer = peer;
        }
    }

    fn send<T: Serialize>(&mut self, message: &T) -> FrameResult<()> {
        match self {
            Stream::Unix(stream) => Ok(frame::write(stream, message)?),
            Stream::Tcp(tcp) => {
                // Unbound until `Welcome` brought the server's nonce (then nothing accepts it).
                let binding = match tcp.peer {
                    Some(nonce) if tcp.sent > 0 => Binding::Bound { nonce, sequence: tcp.sent },
                    _ => Binding::Opening,
                };
                seal::write(&mut tcp.stream, &tcp.munge, &Direction::ToServer, &binding, message)?;
                tcp.sent += 1;
                Ok(())
            }
        }
    }

    fn receive<T: DeserializeOwned>(&mut self) -> FrameResult<T> {
        Ok(self.receive_sealed(false)?.1)
    }

    /// One message and, on TCP, the binding it was sealed under: bound to our nonce, or (the
    /// answer to `Hello` only, `hello_reply`) sealed the protocol-1 way.
    fn receive_sealed<T: DeserializeOwned>(&mut self, hello_reply: bool) -> FrameResult<(Option<Binding>, T)> {
        match self {
            Stream::Unix(stream) => Ok((None, frame::read(stream)?)),
            Stream::Tcp(tcp) => {
                let mut accepted = vec![Binding::Bound { nonce: tcp.nonce, sequence: tcp.received }];
                if hello_reply {
                    accepted.push(Binding::Legacy);
                }
                let (identity, binding, message) =
                    seal::read(&mut tcp.stream, &tcp.munge, &Direction::ServerToClient, &accepted)?;
                tcp.received += 1;
                // The server runs as root, or as this user in a personal cluster.
                let uid = nix::unistd::geteuid().as_raw();
                if identity.uid != 0 && identity.uid != uid {
                    return Err(FrameFailure::NotServer(identity.uid));
                }
                Ok((Some(binding), message))
            }
        }
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
    /// Connects to the configured server.
    pub fn open() -> Result<Connection, ConnError> {
        let conf = crate::conf::load().map_err(|error| ConnError::Unreachable(error.to_string()))?;
        Connection::open_conf(&conf)
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
        Connection::attempt(&conf.server, None).map_err(|failure| match failure {
            Attempt::OwnMunge(text) => ConnError::Unreachable(text),
            Attempt::Failed(error) => ConnError::Unreachable(format!(
                "cannot connect to server {} ({error}; {}, from {})",
                conf.server_name,
                conf.server,
                conf.source.display()
            )),
        })
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
            match Connection::attempt(server, Some(bound)) {
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

    /// Connects to `server` and handshakes, all within `bound` if one is given.
    fn attempt(server: &ServerAddr, bound: Option<Duration>) -> Result<Connection, Attempt> {
        let failed = |error: &dyn std::fmt::Display| Attempt::Failed(error.to_string());
        // Our own munged failing is the whole story: say only that.
        let sealing = |error: FrameFailure| match error {
            FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Unreachable { .. }))
            | FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Library(_))) => {
                Attempt::OwnMunge(error.to_string())
            }
            error if bound.is_some() && timed_out(&error) => no_answer(bound),
            error => failed(&error),
        };
        let started = Instant::now();
        let mut stream = Stream::connect(server, bound).map_err(|error| match error.kind() {
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
        stream.send(&Hello::new(Role::Client, stream.nonce())).map_err(sealing)?;
        let reply = match stream.receive_sealed::<HelloReply>(true).map_err(sealing)? {
            (Some(binding), reply) => reply.as_sealed(binding),
            (None, reply) => reply,
        };
        match reply {
            HelloReply::Welcome { server_name, nonce, .. } => {
                stream.bind(nonce);
                stream.set_timeouts(REPLY_TIMEOUT, None);
                Ok(Connection { stream, server_name })
            }
            HelloReply::Refused { message, .. } => Err(failed(&message)),
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
    /// joined into one `Jobs` reply.
    pub fn request_all(&mut self, request: &ClientRequest) -> Result<ServerReply, ConnError> {
        let mut reply = self.request(request)?;
        while let ServerReply::Jobs { more: true, .. } = reply {
            let next: ServerReply =
                self.stream.receive().map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))?;
            let (ServerReply::Jobs { jobs, .. }, ServerReply::Jobs { jobs: more_jobs, errors, more, .. }) =
                (&mut reply, next)
            else {
                return Err(ConnError::Broken("garbled job list from server".to_string()));
            };
            jobs.extend(more_jobs);
            if let ServerReply::Jobs { errors: all_errors, more: all_more, .. } = &mut reply {
                all_errors.extend(errors);
                *all_more = more;
            }
        }
        Ok(reply)
    }

    /// Sends one request and waits for its reply.
    pub fn request(&mut self, request: &ClientRequest) -> Result<ServerReply, ConnError> {
        self.stream.send(request).map_err(|error| ConnError::Broken(format!("cannot send request: {error}")))?;
        self.stream.receive().map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))
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
