//! A blocking connection to the server: connect to its Unix socket or its TCP port (every
//! frame sealed with MUNGE both ways and bound to the connection: our nonce in `Hello`, the
//! server's in `Welcome`, each frame numbered; `proto::seal`), handshake, then request/reply.
//! Commands are short-lived, so no async runtime is started.

use crate::conf::{PbsConf, ServerAddr};
use proto::frame;
use proto::seal::{self, Binding, Direction, Nonce};
use proto::{ClientRequest, Hello, HelloReply, Role, ServerReply};
use serde::{de::DeserializeOwned, Serialize};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

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
    fn connect(server: &ServerAddr) -> std::io::Result<Stream> {
        match server {
            ServerAddr::Unix(path) => Ok(Stream::Unix(UnixStream::connect(path)?)),
            ServerAddr::Tcp { host, port, munge_socket } => {
                let stream = TcpStream::connect((host.as_str(), *port))?;
                let _ = stream.set_nodelay(true);
                let nonce = Nonce::fresh().map_err(std::io::Error::other)?;
                let munge = munge_socket.clone();
                Ok(Stream::Tcp(Sealed { stream, munge, nonce, peer: None, sent: 0, received: 0 }))
            }
        }
    }

    fn set_read_timeout(&self, limit: Duration) {
        let _ = match self {
            Stream::Unix(stream) => stream.set_read_timeout(Some(limit)),
            Stream::Tcp(tcp) => tcp.stream.set_read_timeout(Some(limit)),
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

impl Connection {
    /// Connects to the configured server.
    pub fn open() -> Result<Connection, ConnError> {
        let conf = crate::conf::load().map_err(ConnError::Unreachable)?;
        Connection::open_conf(&conf)
    }

    /// Connects to the server described by `conf`.
    pub fn open_conf(conf: &PbsConf) -> Result<Connection, ConnError> {
        let unreachable = |error: &dyn std::fmt::Display| {
            ConnError::Unreachable(format!(
                "cannot connect to server {} ({error}; {}, from {})",
                conf.server_name,
                conf.server,
                conf.source.display()
            ))
        };
        // Our own munged failing is the whole story: say only that.
        let sealing = |error: FrameFailure| match error {
            FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Unreachable { .. }))
            | FrameFailure::Seal(seal::SealError::Munge(error @ proto::munge::MungeError::Library(_))) => {
                ConnError::Unreachable(error.to_string())
            }
            error => unreachable(&error),
        };
        let mut stream = Stream::connect(&conf.server).map_err(|error| unreachable(&error))?;
        stream.set_read_timeout(Duration::from_secs(120));
        stream.send(&Hello::new(Role::Client, stream.nonce())).map_err(sealing)?;
        let reply = match stream.receive_sealed::<HelloReply>(true).map_err(sealing)? {
            (Some(binding), reply) => reply.as_sealed(binding),
            (None, reply) => reply,
        };
        match reply {
            HelloReply::Welcome { server_name, nonce, .. } => {
                stream.bind(nonce);
                Ok(Connection { stream, server_name })
            }
            HelloReply::Refused { message, .. } => Err(unreachable(&message)),
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
