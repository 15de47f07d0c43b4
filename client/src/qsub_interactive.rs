//! `qsub -I` (pbs-reference 2.6): connect to the server, listen on a TCP port (any port; on the
//! address of that connection when it is TCP, which is where the server tells the mom to
//! connect, `server/src/client_conn.rs`; on all interfaces over the Unix socket), submit the
//! job naming this host, that port and a random secret on that connection, print
//! `qsub: waiting for job <id> to start`, and wait for the mother superior to connect: each
//! side proves to the other that it holds the secret without sending it, and over TCP qsub's
//! proof carries a MUNGE credential so the mom knows qsub runs as the job's owner
//! (proto/src/interactive.rs). Then print `qsub: job <id> ready` and an empty line, put the
//! terminal in raw mode and relay: keystrokes and window sizes (SIGWINCH) to the job, its
//! output to stdout. At the end restore the terminal, print an empty line and
//! `qsub: job <id> completed`, and exit with the job's status ([`exit_code`]).
//!
//! While waiting, the server is asked every few seconds whether the job still exists (`qsub:
//! job <id> apparently deleted`, exit 1, as OpenPBS); SIGINT, SIGTERM, SIGHUP or SIGQUIT delete
//! the job (`Job <id> is being deleted`, exit 2). Once running, those signals restore the
//! terminal and end qsub; the mom then hangs up the job.
//!
//! Owns: the listener, the connection to the mom (greeted by `qsub_greet.rs`), the signal thread. Must not: know the
//! server's internals or the pty (the mom has it).

use crate::conn::Connection;
use crate::exit;
use crate::qsub_greet::{Expected, Greeted, Greeter};
use crate::submit::{fail, Failure};
use crate::terminal;
use job::spec::Interactive;
use job::JobSpec;
use nix::sys::signal::{SigSet, Signal};
use proto::frame::{self, FrameError};
use proto::interactive::{MomToQsub, QsubToMom};
use proto::{ClientRequest, ServerReply};
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

/// How often a waiting qsub asks whether its job still exists.
const STATUS_POLL: Duration = Duration::from_secs(3);

/// What the main thread and the signal thread share.
struct Session {
    /// Known once the server accepted the job.
    job_id: OnceLock<String>,
    /// Set once the job is ready (the terminal is raw from then on).
    running: AtomicBool,
    /// The connection's writing half, once the job is ready.
    writer: Mutex<Option<TcpStream>>,
    /// A window size change not sent yet (the keystroke thread held the writer): whoever
    /// writes next sends it.
    size_pending: AtomicBool,
}

/// Submits `spec` as an interactive job and runs its terminal session; returns the exit code.
pub fn run(mut spec: JobSpec) -> Result<u8, Failure> {
    let mut conn = crate::submit::connect()?;
    let listener = TcpListener::bind(listen_address(&conn))
        .map_err(|error| fail(exit::FAILURE, format!("unable to bind to socket: {error}")))?;
    let port =
        listener.local_addr().map_err(|error| fail(exit::FAILURE, format!("unable to get port number: {error}")))?;
    let secret = random_hex(16).map_err(|error| fail(exit::FAILURE, format!("cannot make a secret: {error}")))?;
    spec.interactive = Some(Interactive { host: spec.submit_host.clone(), port: port.port(), secret: secret.clone() });
    // From here on one thread takes these signals; they are blocked before any thread starts.
    let signals = signal_set();
    signals.thread_block().map_err(|error| fail(exit::FAILURE, format!("unable to catch signals: {error}")))?;
    let session = Arc::new(Session {
        job_id: OnceLock::new(),
        running: AtomicBool::new(false),
        writer: Mutex::new(None),
        size_pending: AtomicBool::new(false),
    });
    {
        let session = session.clone();
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || handle_signals(signals, &session))
            .map_err(|error| fail(exit::FAILURE, format!("cannot start the signal thread: {error}")))?;
    }
    let munge_socket = conn.munge_socket();
    let job_id = crate::submit::submit_on(&mut conn, spec)?;
    drop(conn);
    let _ = session.job_id.set(job_id.clone());
    println!("qsub: waiting for job {job_id} to start");
    let expected = Expected { job_id: job_id.clone(), secret: secret.clone(), munge_socket };
    // The port stays open (anyone else is greeted and refused) until the session ends.
    let (stream, _greeter) = wait_for_mom(listener, expected)?;
    Ok(converse(stream, &session, &job_id))
}

/// Where to listen for the mom: the address this host reaches the server from (over TCP the
/// server names exactly that address to the mom), else every interface.
fn listen_address(conn: &Connection) -> SocketAddr {
    let ip = conn.local_addr().map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |local| local.ip());
    SocketAddr::new(ip, 0)
}

fn signal_set() -> SigSet {
    let mut set = SigSet::empty();
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGWINCH, Signal::SIGTSTP]
    {
        set.add(signal);
    }
    set
}

/// The signal thread: window sizes while running, deletion or exit on the ending signals.
fn handle_signals(signals: SigSet, session: &Session) {
    loop {
        let Ok(signal) = signals.wait() else { return };
        let running = session.running.load(Ordering::SeqCst);
        match signal {
            Signal::SIGWINCH if running => send_size(session),
            Signal::SIGWINCH => {}
            Signal::SIGTSTP if !running => {
                println!("Sorry, you cannot suspend qsub until the job is started");
            }
            Signal::SIGTSTP => {}
            _ if running => {
                // The connection closes with this process; the mom hangs up the job.
                terminal::restore();
                std::process::exit(128 + signal as i32);
            }
            _ => match session.job_id.get() {
                Some(job_id) => {
                    println!("Job {job_id} is being deleted");
                    delete_job(job_id);
                    std::process::exit(exit::USAGE.into());
                }
                // Interrupted while submitting: as if the signal had not been caught.
                None => std::process::exit(128 + signal as i32),
            },
        }
    }
}

fn send(session: &Session, message: &QsubToMom) {
    if let Ok(mut writer) = session.writer.lock() {
        if let Some(stream) = writer.as_mut() {
            let _ = frame::write(stream, message);
        }
    }
    // Checked after the lock is released: a SIGWINCH that found it held is sent here.
    if session.size_pending.load(Ordering::SeqCst) {
        send_size(session);
    }
}

/// Sends the window size now, or, when keystrokes hold the connection (the job not reading
/// its input), leaves it pending for the keystroke thread's next write: the signal thread must
/// never block, it also restores the terminal on SIGTERM.
fn send_size(session: &Session) {
    session.size_pending.store(true, Ordering::SeqCst);
    if let Ok(mut writer) = session.writer.try_lock() {
        session.size_pending.store(false, Ordering::SeqCst);
        if let Some(stream) = writer.as_mut() {
            let _ = frame::write(stream, &QsubToMom::WindowSize(terminal::window_size()));
        }
    }
}

fn delete_job(job_id: &str) {
    let request = ClientRequest::DeleteJob { ids: vec![job_id.to_string()], force: false, history: false };
    match Connection::open().map(|mut conn| conn.request(&request)) {
        Ok(Ok(ServerReply::Done { errors })) if errors.is_empty() => {}
        Ok(Ok(ServerReply::Done { errors })) => {
            for error in errors {
                eprintln!("qsub: {}", error.message);
            }
        }
        Ok(Ok(other)) => eprintln!("qsub: unexpected reply from server: {other:?}"),
        Ok(Err(error)) | Err(error) => eprintln!("qsub: {error}"),
    }
}

/// Greets every connection to the port ([`Greeter`]) until one proves it is this job's mom,
/// and returns it with the greeter (dropping it closes the port); every few seconds meanwhile,
/// asks the server whether the job still exists.
fn wait_for_mom(listener: TcpListener, expected: Expected) -> Result<(TcpStream, Greeter), Failure> {
    let job_id = expected.job_id.clone();
    let greeter = Greeter::start(listener, expected)
        .map_err(|error| fail(exit::FAILURE, format!("cannot start the accept thread: {error}")))?;
    loop {
        match greeter.next(STATUS_POLL) {
            Ok(Greeted::Mom(stream)) => return Ok((stream, greeter)),
            Ok(Greeted::Refused(reason)) => eprintln!("qsub: warning: refused a connection: {reason}"),
            Ok(Greeted::Closed(error)) => {
                return Err(fail(exit::FAILURE, format!("accept error from interactive socket: {error}")));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if job_gone(&job_id) {
                    return Err(fail(exit::FAILURE, format!("job {job_id} apparently deleted")));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(fail(exit::FAILURE, "the interactive socket closed"));
            }
        }
    }
}

/// Whether the server no longer has the job, or has it finished. An unreachable server is not
/// taken as an answer (it may be restarting).
fn job_gone(job_id: &str) -> bool {
    let request = ClientRequest::StatusJob {
        selectors: vec![job_id.to_string()],
        history: true,
        users: Vec::new(),
        attrs: Some(vec!["job_state".to_string()]),
        subjobs: false,
        arrays_only: false,
        rows: false,
    };
    match Connection::open().and_then(|mut conn| conn.request_all(&request)) {
        // Finished: `F`, or `C` on a torque-flavored server.
        Ok(ServerReply::Jobs { jobs, .. }) => {
            jobs.first().is_none_or(|job| matches!(job.get("job_state"), Some("F") | Some("C")))
        }
        Ok(ServerReply::Error(_)) => true,
        _ => false,
    }
}

/// The session once the job is ready; returns qsub's exit code.
fn converse(stream: TcpStream, session: &Arc<Session>, id: &str) -> u8 {
    let accepted = stream.try_clone().and_then(|mut writer| {
        let accept = QsubToMom::Accept { term: std::env::var("TERM").ok(), size: terminal::window_size() };
        frame::write(&mut writer, &accept).map_err(std::io::Error::other)?;
        Ok(writer)
    });
    match accepted {
        Ok(writer) => *session.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(writer),
        Err(error) => {
            eprintln!("qsub: lost the connection to job {id}: {error}");
            return exit::FAILURE;
        }
    }
    println!("qsub: job {id} ready");
    println!();
    session.running.store(true, Ordering::SeqCst);
    if let Err(error) = terminal::enter_raw() {
        eprintln!("qsub: set terminal mode: {error}");
    }
    let keys = session.clone();
    if let Err(error) = std::thread::Builder::new().name("stdin".into()).spawn(move || relay_keys(&keys)) {
        terminal::restore();
        eprintln!("qsub: cannot start the input thread: {error}");
        return exit::FAILURE;
    }
    let status = relay_output(stream);
    terminal::restore();
    println!();
    println!("qsub: job {id} completed");
    if status.is_none() {
        eprintln!("qsub: the connection to job {id} ended without its exit status");
    }
    exit_code(status)
}

/// stdin -> the job. At the end of input the sending half closes: the mom hangs up the job,
/// whose end then comes back as usual.
fn relay_keys(session: &Session) {
    let mut stdin = std::io::stdin().lock();
    let mut buffer = [0u8; 4096];
    loop {
        match stdin.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => send(session, &QsubToMom::Data(buffer[..n].to_vec())),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    if let Ok(writer) = session.writer.lock() {
        if let Some(stream) = writer.as_ref() {
            let _ = stream.shutdown(Shutdown::Write);
        }
    }
}

/// The job's output -> stdout, until the mom closes; returns the job's status if it came.
fn relay_output(mut stream: TcpStream) -> Option<i32> {
    let mut stdout = std::io::stdout().lock();
    let mut status = None;
    loop {
        match frame::read::<MomToQsub>(&mut stream) {
            Ok(MomToQsub::Data(bytes)) => {
                if stdout.write_all(&bytes).and_then(|()| stdout.flush()).is_err() {
                    return status;
                }
            }
            Ok(MomToQsub::Exit { status: exit_status }) => status = Some(exit_status),
            Ok(MomToQsub::Challenge { .. } | MomToQsub::Proven { .. }) => {}
            Err(FrameError::Closed) | Err(_) => return status,
        }
    }
}

/// qsub's exit code for the job's PBS exit status: the shell's exit code (0..=255), 128 + N
/// for a shell killed by signal N (256 + N), 1 when the mom ended the job (negative: walltime,
/// failure to start) or the status never came.
pub fn exit_code(status: Option<i32>) -> u8 {
    match status {
        Some(code @ 0..=255) => code as u8,
        Some(code @ 256..=383) => (code - 128) as u8,
        _ => exit::FAILURE,
    }
}

/// `bytes` random bytes from the kernel (`getrandom`), as hex: the session's secret, so an
/// error rather than anything guessable.
fn random_hex(bytes: usize) -> Result<String, getrandom::Error> {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer)?;
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(Some(0)), 0);
        assert_eq!(exit_code(Some(3)), 3);
        assert_eq!(exit_code(Some(255)), 255);
        assert_eq!(exit_code(Some(256 + 15)), 143, "SIGTERM");
        assert_eq!(exit_code(Some(256 + 1)), 129, "SIGHUP");
        assert_eq!(exit_code(Some(-29)), 1, "walltime");
        assert_eq!(exit_code(None), 1);
    }

    #[test]
    fn secrets() {
        let secret = random_hex(16).unwrap();
        assert_eq!(secret.len(), 32);
        assert!(secret.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(secret, random_hex(16).unwrap());
    }
}
