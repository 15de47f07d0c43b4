//! Who may become a `qsub -I` job's terminal: the connections to qsub's port, each greeted on a
//! thread of its own ([`Greeter`]), so a peer that connects and stays silent (for up to
//! `HELLO_TIMEOUT`) does not keep the job's mom waiting behind it; the greeting itself
//! ([`greet`]): the peer must prove it is this job's mom (proto/src/interactive.rs).
//!
//! Bounds: at most `GREETERS_PER_ADDRESS` connections of one address and `GREETERS` in all are
//! greeted at once; the excess is closed at once. On a real cluster the mom connects from its
//! compute node, so silent peers on the login host cannot shut it out; on one host (`minipbs
//! up`) they share its address and can make the job fail to start, never take it over.
//!
//! Owns: the accept thread and the greeting threads. Must not: know the terminal or the server.

use proto::interactive as handshake;
use proto::keepalive::keep_alive;
use std::collections::HashMap;
use std::net::{IpAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// How long a peer has to prove itself.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections of one address greeted at once.
const GREETERS_PER_ADDRESS: usize = 16;
/// Connections greeted at once in all.
const GREETERS: usize = 64;
/// Outcomes waiting to be read: refusals beyond it are dropped (nobody reads them once the
/// session runs), so connections to the port cannot grow qsub's memory.
const PENDING: usize = 64;

/// Who qsub waits for: the mom of this job, holding this secret; over TCP qsub proves itself
/// with a MUNGE credential from this munged.
pub struct Expected {
    pub job_id: String,
    pub secret: String,
    pub munge_socket: Option<PathBuf>,
}

/// What became of a connection to the port.
pub enum Greeted {
    /// The job's mom, proven: the job's terminal.
    Mom(TcpStream),
    /// Anything else, and why (closed).
    Refused(String),
    /// The port itself failed.
    Closed(std::io::Error),
}

/// The port's accept thread and its greeters; dropping it closes the port.
pub struct Greeter {
    receiver: mpsc::Receiver<Greeted>,
    listener: TcpListener,
}

impl Greeter {
    /// Starts accepting on `listener` and greeting every connection.
    pub fn start(listener: TcpListener, expected: Expected) -> std::io::Result<Greeter> {
        let accepting = listener.try_clone()?;
        let (sender, receiver) = mpsc::sync_channel(PENDING);
        let expected = Arc::new(expected);
        std::thread::Builder::new().name("accept".into()).spawn(move || accept(accepting, expected, sender))?;
        Ok(Greeter { receiver, listener })
    }

    /// The next greeting's outcome, waiting at most `limit`.
    pub fn next(&self, limit: Duration) -> Result<Greeted, mpsc::RecvTimeoutError> {
        self.receiver.recv_timeout(limit)
    }
}

impl Drop for Greeter {
    fn drop(&mut self) {
        // Wakes the accept thread (its accept fails), which then ends: nobody else is greeted.
        // (std has no shutdown for a listener; nix's needs its `socket` feature for this call.)
        // SAFETY: shutdown(2) on a descriptor this listener owns and keeps open.
        unsafe { libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

fn accept(listener: TcpListener, expected: Arc<Expected>, sender: mpsc::SyncSender<Greeted>) {
    let busy = Arc::new(Mutex::new(HashMap::<IpAddr, usize>::new()));
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(stream) => stream,
            Err(error) => {
                let _ = sender.send(Greeted::Closed(error));
                return;
            }
        };
        let Ok(peer) = stream.peer_addr() else { continue };
        let Some(slot) = Slot::take(&busy, peer.ip()) else {
            let refused = format!("{peer}: too many connections being greeted at once");
            if let Err(mpsc::TrySendError::Disconnected(_)) = sender.try_send(Greeted::Refused(refused)) {
                return;
            }
            continue;
        };
        let (expected, greeted) = (expected.clone(), sender.clone());
        let spawned = std::thread::Builder::new().name("greet".into()).spawn(move || {
            let _slot = slot;
            match greet(stream, &expected) {
                // Waits for room: the mom must not be lost to a queue full of refusals.
                Ok(stream) => drop(greeted.send(Greeted::Mom(stream))),
                Err(reason) => drop(greeted.try_send(Greeted::Refused(reason))),
            }
        });
        if let Err(error) = spawned {
            let _ = sender.try_send(Greeted::Refused(format!("{peer}: cannot start a thread to greet it: {error}")));
        }
    }
}

/// One greeting under way, counted against its address and the total until dropped.
struct Slot {
    busy: Arc<Mutex<HashMap<IpAddr, usize>>>,
    address: IpAddr,
}

impl Slot {
    fn take(busy: &Arc<Mutex<HashMap<IpAddr, usize>>>, address: IpAddr) -> Option<Slot> {
        let mut counts = busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let total: usize = counts.values().sum();
        let mine = counts.entry(address).or_default();
        if *mine >= GREETERS_PER_ADDRESS || total >= GREETERS {
            return None;
        }
        *mine += 1;
        Some(Slot { busy: busy.clone(), address })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// The handshake with a peer at the port (proto/src/interactive.rs): it must prove it is this
/// job's mom before qsub accepts the job.
pub fn greet(mut stream: TcpStream, expected: &Expected) -> Result<TcpStream, String> {
    let peer = stream.peer_addr().map(|addr| addr.to_string()).unwrap_or_else(|_| "an unknown peer".into());
    stream.set_read_timeout(Some(HELLO_TIMEOUT)).map_err(|error| error.to_string())?;
    stream.set_write_timeout(Some(HELLO_TIMEOUT)).map_err(|error| error.to_string())?;
    let credential = |payload: &[u8]| match &expected.munge_socket {
        Some(socket) => proto::munge::encode(socket, payload).map(Some).map_err(|error| error.to_string()),
        None => Ok(None),
    };
    handshake::answer_challenge(&mut stream, &expected.job_id, &expected.secret, credential)
        .map_err(|error| format!("{peer} {error}"))?;
    stream.set_read_timeout(None).map_err(|error| error.to_string())?;
    stream.set_write_timeout(None).map_err(|error| error.to_string())?;
    let _ = stream.set_nodelay(true);
    if let Err(error) = keep_alive(&stream) {
        eprintln!("qsub: warning: no keepalive on the job's connection: {error}");
    }
    Ok(stream)
}

#[cfg(test)]
#[path = "qsub_greet_tests.rs"]
mod tests;
