//! A blocking connection to the server: connect to its Unix socket, handshake, then
//! request/reply. Commands are short-lived, so no async runtime is started.

use crate::conf::PbsConf;
use proto::frame;
use proto::{ClientRequest, Hello, HelloReply, Role, ServerReply};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// An open connection.
pub struct Connection {
    stream: UnixStream,
    /// The server's name (the part after the dot in job ids).
    pub server_name: String,
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
                "cannot connect to server {} ({error}; socket {}, from {})",
                conf.server_name,
                conf.socket.display(),
                conf.source.display()
            ))
        };
        let mut stream = UnixStream::connect(&conf.socket).map_err(|error| unreachable(&error))?;
        let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
        frame::write(&mut stream, &Hello { role: Role::Client, protocol: proto::PROTOCOL_VERSION })
            .map_err(|error| unreachable(&error))?;
        match frame::read::<HelloReply>(&mut stream).map_err(|error| unreachable(&error))? {
            HelloReply::Welcome { server_name, .. } => Ok(Connection { stream, server_name }),
            HelloReply::Refused { message, .. } => Err(unreachable(&message)),
        }
    }

    /// Sends one request and waits for its whole reply: a job list sent in several frames is
    /// joined into one `Jobs` reply.
    pub fn request_all(&mut self, request: &ClientRequest) -> Result<ServerReply, ConnError> {
        let mut reply = self.request(request)?;
        while let ServerReply::Jobs { more: true, .. } = reply {
            let next: ServerReply = frame::read(&mut self.stream)
                .map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))?;
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
        frame::write(&mut self.stream, request)
            .map_err(|error| ConnError::Broken(format!("cannot send request: {error}")))?;
        frame::read(&mut self.stream).map_err(|error| ConnError::Broken(format!("no reply from server: {error}")))
    }
}
