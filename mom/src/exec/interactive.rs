//! An interactive job's terminal on the mother superior (`qsub -I`): connect to the waiting
//! qsub and have it prove it holds the job's secret (and, on the TCP transport, that it runs as
//! the job's owner: MUNGE) before proving the same back (proto/src/interactive.rs), open a pty
//! of qsub's window size, and once the shell runs on it, relay: pty output to qsub, keystrokes
//! and window sizes (TIOCSWINSZ, which signals SIGWINCH to the job) to the pty. When qsub goes
//! away the job is hung up; when the shell is gone, the rest of its output and its exit status
//! go to qsub and the connection closes.
//!
//! Owns: the connection to qsub and the pty master. Must not: spawn the shell (spawn.rs does,
//! on the slave), decide exit statuses (run.rs does) or log what crosses the terminal.

use super::StartError;
use job::spec::Interactive;
use proto::frame::{self, FrameError};
use proto::interactive::{self as handshake, Handshake, MomToQsub, Prover, QsubToMom, WindowSize, INTERACTIVE_VERSION};
use proto::keepalive::keep_alive;
use proto::mom::JobLaunch;
use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// How long the mom tries to reach qsub, per address.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long qsub has to accept the job once connected.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the output of an ended job may keep draining before the mom stops waiting.
const DRAIN_PATIENCE: Duration = Duration::from_secs(5);
/// How long a write to qsub may block (qsub not reading) before qsub counts as gone, so a stuck
/// qsub can neither block the job forever nor keep the mom from reporting its end.
const WRITE_TIMEOUT: Duration = Duration::from_secs(120);

/// qsub accepted the job: the connection, and what its terminal is.
#[derive(Debug)]
pub struct Accepted {
    stream: TcpStream,
    /// qsub's `TERM`.
    pub term: Option<String>,
    size: WindowSize,
}

/// Who may answer for the job at qsub's port.
#[derive(Debug, Clone, Copy)]
pub struct Peer<'a> {
    /// The job owner's uid on this host.
    pub owner_uid: u32,
    /// munged's socket on the TCP transport: qsub's MUNGE credential must then be the owner's.
    /// `None` on the Unix-socket transport (one host, no munged): the secret alone.
    pub munge_socket: Option<&'a Path>,
}

/// Connects to the qsub named in `target` and has it accept `launch`'s job once each side
/// proved itself to the other (blocking).
pub fn connect(launch: &JobLaunch, target: &Interactive, peer: Peer) -> Result<Accepted, StartError> {
    let unreachable = |reason: String| StartError::Interactive { host: target.host.clone(), port: target.port, reason };
    let addresses = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|err| unreachable(format!("cannot resolve the host: {err}")))?;
    let mut last_error = String::from("the host has no address");
    let mut stream = None;
    for address in addresses {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(connected) => {
                stream = Some(connected);
                break;
            }
            Err(err) => last_error = err.to_string(),
        }
    }
    let mut stream = stream.ok_or_else(|| unreachable(last_error))?;
    match authenticate(&mut stream, &launch.job_id, &target.secret, peer) {
        Ok((term, size)) => Ok(Accepted { stream, term, size }),
        Err(HandshakeError::Frame(err)) => Err(unreachable(format!("qsub did not accept the job: {err}"))),
        Err(err) => {
            tracing::warn!(host = %target.host, port = target.port, "refused the peer at qsub's port: {err}");
            Err(unreachable(format!("qsub did not accept the job: {err}")))
        }
    }
}

/// Why the handshake with the peer at qsub's port failed.
#[derive(Debug, thiserror::Error)]
enum HandshakeError {
    #[error("{0}")]
    Frame(#[from] FrameError),
    #[error("the peer answered {0} instead of {1}")]
    Unexpected(String, &'static str),
    #[error("the peer did not prove it holds the job's secret")]
    BadProof,
    #[error("the peer sent no MUNGE credential")]
    NoCredential,
    #[error("the peer's MUNGE credential is refused: {0}")]
    Credential(String),
    #[error("the peer runs as uid {0}, not as the job's owner")]
    NotOwner(u32),
}

impl From<io::Error> for HandshakeError {
    fn from(err: io::Error) -> HandshakeError {
        HandshakeError::Frame(FrameError::Io(err))
    }
}

/// The handshake of proto/src/interactive.rs on the mom's side: qsub's terminal type and size.
fn authenticate(
    stream: &mut TcpStream,
    job_id: &str,
    secret: &str,
    peer: Peer,
) -> Result<(Option<String>, WindowSize), HandshakeError> {
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_write_timeout(Some(HANDSHAKE_TIMEOUT))?;
    stream.set_nodelay(true)?;
    let mom_nonce = handshake::nonce().map_err(|err| FrameError::Io(io::Error::other(err)))?;
    let challenge =
        MomToQsub::Challenge { version: INTERACTIVE_VERSION, job_id: job_id.to_string(), nonce: mom_nonce.clone() };
    frame::write(stream, &challenge)?;
    let (qsub_nonce, proof, credential) = match frame::read_limited(stream, frame::Limits::HANDSHAKE)? {
        QsubToMom::Proof { nonce, proof, credential } => (nonce, proof, credential),
        other => return Err(HandshakeError::Unexpected(format!("{other:?}"), "a proof")),
    };
    let shake = Handshake { job_id, mom_nonce: &mom_nonce, qsub_nonce: &qsub_nonce };
    if !handshake::verify(secret, Prover::Qsub, &shake, &proof) {
        return Err(HandshakeError::BadProof);
    }
    if let Some(socket) = peer.munge_socket {
        let credential = credential.ok_or(HandshakeError::NoCredential)?;
        let maker =
            proto::munge::decode(socket, &credential).map_err(|err| HandshakeError::Credential(err.to_string()))?;
        if maker.payload != handshake::credential_payload(&proof) {
            return Err(HandshakeError::Credential("it was made for another handshake".to_string()));
        }
        if maker.uid != peer.owner_uid {
            return Err(HandshakeError::NotOwner(maker.uid));
        }
    }
    frame::write(stream, &MomToQsub::Proven { proof: handshake::proof(secret, Prover::Mom, &shake) })?;
    let accepted = match frame::read_limited(stream, frame::Limits::HANDSHAKE)? {
        QsubToMom::Accept { term, size } => (term, size),
        other => return Err(HandshakeError::Unexpected(format!("{other:?}"), "accepting the job")),
    };
    stream.set_read_timeout(None)?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    keep_alive(stream)?;
    Ok(accepted)
}

/// A new pty of the accepted window size: (master, slave).
pub fn open_pty(accepted: &Accepted) -> io::Result<(File, OwnedFd)> {
    let size = winsize(accepted.size);
    let pty = nix::pty::openpty(Some(&size), None).map_err(io::Error::from)?;
    for fd in [&pty.master, &pty.slave] {
        nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC))
            .map_err(io::Error::from)?;
    }
    Ok((File::from(pty.master), pty.slave))
}

/// The relay between a running job's pty and qsub.
#[derive(Debug)]
pub struct Terminal {
    writer: Arc<Mutex<TcpStream>>,
    /// Signalled once the pty has no writer left (the job and its leftovers are gone). In a
    /// mutex only to be `Sync`.
    output_done: Mutex<mpsc::Receiver<()>>,
}

impl Terminal {
    /// Starts relaying between `master` and qsub. The receiver fires when qsub hangs up (its
    /// connection ended or broke) while the job still runs.
    pub fn start(accepted: Accepted, master: File) -> io::Result<(Terminal, oneshot::Receiver<()>)> {
        let reader = accepted.stream.try_clone()?;
        let writer = Arc::new(Mutex::new(accepted.stream));
        let (hangup_tx, hangup_rx) = oneshot::channel();
        let (done_tx, done_rx) = mpsc::channel();
        let keys = master.try_clone()?;
        std::thread::Builder::new().name("pty-in".into()).spawn(move || {
            relay_input(reader, keys);
            let _ = hangup_tx.send(());
        })?;
        let output_writer = writer.clone();
        std::thread::Builder::new().name("pty-out".into()).spawn(move || {
            relay_output(master, &output_writer);
            let _ = done_tx.send(());
        })?;
        Ok((Terminal { writer, output_done: Mutex::new(done_rx) }, hangup_rx))
    }

    /// Shows a line from the mom on the user's terminal (a limit kill's reason). The write
    /// happens on the blocking pool: a qsub that does not read must not stall the runtime.
    pub fn notice(&self, line: &str) {
        let text = format!("\r\n{line}\r\n").into_bytes();
        let writer = self.writer.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(err) = send(&writer, &MomToQsub::Data(text)) {
                tracing::debug!("cannot show a notice to qsub: {err}");
            }
        });
    }

    /// After the job's processes are gone: lets the last output through, sends the exit
    /// status and closes the connection (blocking).
    pub fn finish(self, exit_status: i32) {
        let drained = self.output_done.lock().map(|done| done.recv_timeout(DRAIN_PATIENCE).is_ok());
        if !drained.unwrap_or(false) {
            tracing::warn!("the job's terminal still had a writer; its last output may be lost");
        }
        if let Err(err) = send(&self.writer, &MomToQsub::Exit { status: exit_status }) {
            tracing::info!("cannot send the exit status to qsub: {err}");
        }
        if let Ok(stream) = self.writer.lock() {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// qsub -> pty, until qsub's side ends or breaks.
fn relay_input(mut stream: TcpStream, mut master: File) {
    loop {
        match frame::read::<QsubToMom>(&mut stream) {
            Ok(QsubToMom::Data(bytes)) => {
                if let Err(err) = master.write_all(&bytes) {
                    tracing::debug!("cannot write to the job's terminal: {err}");
                }
            }
            Ok(QsubToMom::WindowSize(size)) => set_window_size(&master, size),
            Ok(QsubToMom::Accept { .. } | QsubToMom::Proof { .. }) => {
                tracing::debug!("a handshake message from qsub after the handshake: ignored")
            }
            Err(FrameError::Closed) => return,
            Err(err) => {
                tracing::info!("the connection to qsub ended: {err}");
                return;
            }
        }
    }
}

/// pty -> qsub, until the pty has no writer left (EIO) or qsub is gone.
fn relay_output(mut master: File, writer: &Mutex<TcpStream>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match master.read(&mut buffer) {
            Ok(0) => return,
            Ok(n) => {
                if send(writer, &MomToQsub::Data(buffer[..n].to_vec())).is_err() {
                    // qsub is gone; keep draining so the job never blocks on a full pty.
                    continue;
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            // EIO: every slave descriptor is closed.
            Err(_) => return,
        }
    }
}

/// Sends one message; a failed or timed-out write (which may have sent part of a frame) ends
/// the connection, which also ends the input relay and so hangs up the job.
fn send(writer: &Mutex<TcpStream>, message: &MomToQsub) -> Result<(), FrameError> {
    let mut stream = writer.lock().map_err(|_| FrameError::Io(io::Error::other("writer lock poisoned")))?;
    let result = frame::write(&mut *stream, message);
    if result.is_err() {
        let _ = stream.shutdown(Shutdown::Both);
    }
    result
}

fn winsize(size: WindowSize) -> nix::pty::Winsize {
    nix::pty::Winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 }
}

/// TIOCSWINSZ on the master: the kernel signals SIGWINCH to the job's foreground group.
fn set_window_size(master: &File, size: WindowSize) {
    let size = rustix::termios::Winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
    if let Err(error) = rustix::termios::tcsetwinsize(master, size) {
        tracing::debug!("cannot set the job's window size: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    const SECRET: &str = "5ec2e75ec2e75ec2e75ec2e7";

    fn target(port: u16) -> Interactive {
        Interactive { host: "127.0.0.1".into(), port, secret: SECRET.into() }
    }

    fn launch() -> JobLaunch {
        *crate::test_support::launch("9.s", Vec::new())
    }

    const UNIX_TRANSPORT: Peer<'static> = Peer { owner_uid: 1000, munge_socket: None };

    /// A listener on a port the mom will connect to, and the port.
    fn listen() -> (TcpListener, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, port)
    }

    #[test]
    fn proves_itself_to_a_qsub_that_proved_itself_and_takes_the_window_size() {
        let (listener, port) = listen();
        let qsub = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            handshake::answer_challenge(&mut stream, "9.s", SECRET, |_| Ok(None)).unwrap();
            let size = WindowSize { rows: 33, cols: 99 };
            frame::write(&mut stream, &QsubToMom::Accept { term: Some("xterm".into()), size }).unwrap();
        });
        let accepted = connect(&launch(), &target(port), UNIX_TRANSPORT).unwrap();
        qsub.join().unwrap();
        assert_eq!(accepted.term.as_deref(), Some("xterm"));
        assert!(proto::keepalive::is_kept_alive(&accepted.stream), "a vanished qsub host is noticed");
        let (master, slave) = open_pty(&accepted).unwrap();
        let size = nix::sys::termios::tcgetattr(&slave).map(|_| ());
        assert!(size.is_ok(), "the slave is a terminal");
        let got = rustix::termios::tcgetwinsize(&master).unwrap();
        assert_eq!((got.ws_row, got.ws_col), (33, 99));
    }

    /// What a listener that does not know the secret gets from the mom: every byte it read.
    fn impostor(listener: TcpListener, answer: QsubToMom) -> Vec<u8> {
        let (mut stream, _) = listener.accept().unwrap();
        let challenge = frame::read_body(&mut stream, frame::Limits::HANDSHAKE).unwrap();
        frame::write(&mut stream, &answer).unwrap();
        let _ = frame::write(&mut stream, &QsubToMom::Accept { term: None, size: WindowSize::default() });
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        [challenge, rest].concat()
    }

    #[test]
    fn a_listener_without_the_secret_learns_nothing_and_gets_no_terminal() {
        let answers = [
            QsubToMom::Proof { nonce: "00".repeat(32), proof: "00".repeat(32), credential: None },
            QsubToMom::Accept { term: None, size: WindowSize::default() },
        ];
        for answer in answers {
            let (listener, port) = listen();
            let fake = std::thread::spawn(move || impostor(listener, answer));
            let error = connect(&launch(), &target(port), UNIX_TRANSPORT).unwrap_err();
            let heard = String::from_utf8_lossy(&fake.join().unwrap()).into_owned();
            assert!(error.to_string().contains("did not accept"), "{error}");
            assert_eq!(error.exit_status(), proto::exit_status::JOB_EXEC_FAIL1);
            assert!(heard.contains("Challenge") && !heard.contains("Proven"), "{heard}");
            assert!(!heard.contains(SECRET), "{heard}");
        }
    }

    #[test]
    fn on_the_tcp_transport_a_proof_without_the_owners_credential_is_refused() {
        let socket = Path::new("/nonexistent/munge.socket");
        let tcp = Peer { owner_uid: 1000, munge_socket: Some(socket) };
        for credential in [None, Some("MUNGE:forged:".to_string())] {
            let (listener, port) = listen();
            let qsub = std::thread::spawn(move || {
                let (mut stream, _) = listener.accept().unwrap();
                handshake::answer_challenge(&mut stream, "9.s", SECRET, |_| Ok(credential)).unwrap_err()
            });
            let error = connect(&launch(), &target(port), tcp).unwrap_err();
            let refused = qsub.join().unwrap();
            assert!(matches!(refused, handshake::AnswerError::Frame(_)), "the mom proved nothing: {refused}");
            assert!(error.to_string().contains("MUNGE credential"), "{error}");
        }
    }

    #[test]
    fn a_qsub_that_closes_refuses_the_job() {
        let (listener, port) = listen();
        let qsub = std::thread::spawn(move || drop(listener.accept().unwrap()));
        let error = connect(&launch(), &target(port), UNIX_TRANSPORT).unwrap_err();
        qsub.join().unwrap();
        assert!(error.to_string().contains("did not accept"), "{error}");
        assert_eq!(error.exit_status(), proto::exit_status::JOB_EXEC_FAIL1);
    }

    #[test]
    fn nobody_listening_is_an_error_naming_the_target() {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let error = connect(&launch(), &target(port), UNIX_TRANSPORT).unwrap_err();
        assert!(error.to_string().contains(&format!("127.0.0.1:{port}")), "{error}");
    }
}
