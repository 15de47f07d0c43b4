//! Hostile requests and connections (issue 12, items 2 and 7): one request repeating a name
//! 20,000 times (a queue, a subjob range) must not make the server allocate per repetition; a
//! client that stops reading its reply is dropped; thousands of idle connections, before and
//! after the handshake, must not keep `qstat` or a mom out.
//!
//! Raw requests go over the server's Unix socket whatever the transport (unsealed frames); the
//! idle connections also go to the TCP port when the cluster runs over TCP.

use proto::{ClientRequest, ServerReply};
use std::io::Read;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

/// How much one hostile request may raise the server's peak resident size (the bound).
const PEAK_SLACK_KIB: u64 = 64 * 1024;

/// The server's peak resident size (`VmHWM`), KiB.
fn peak_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("server alive");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A client connection on the server's Unix socket, past the handshake.
fn connect(cluster: &Cluster) -> UnixStream {
    let mut stream = UnixStream::connect(cluster.state.path().join("server.sock")).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let hello = proto::Hello::new(proto::Role::Client, None);
    proto::frame::write(&mut stream, &hello).unwrap();
    match proto::frame::read(&mut stream).unwrap() {
        proto::HelloReply::Welcome { .. } => stream,
        other => panic!("{other:?}"),
    }
}

/// Sends one request and reads its whole reply (every frame of a long job list).
fn request(cluster: &Cluster, request: &ClientRequest) -> Vec<ServerReply> {
    let mut stream = connect(cluster);
    proto::frame::write(&mut stream, request).unwrap();
    let mut replies = Vec::new();
    loop {
        let reply: ServerReply = proto::frame::read(&mut stream).unwrap();
        let more = matches!(reply, ServerReply::Jobs { more: true, .. });
        replies.push(reply);
        if !more {
            return replies;
        }
    }
}

fn status(selectors: Vec<String>, subjobs: bool) -> ClientRequest {
    ClientRequest::StatusJob {
        selectors,
        history: false,
        users: Vec::new(),
        attrs: None,
        subjobs,
        arrays_only: false,
        rows: false,
    }
}

/// The job ids of a (multi-frame) status reply, and its errors' messages.
fn listed(replies: &[ServerReply]) -> (Vec<String>, Vec<String>) {
    let (mut ids, mut errors) = (Vec::new(), Vec::new());
    for reply in replies {
        match reply {
            ServerReply::Jobs { jobs, errors: failed, .. } => {
                ids.extend(jobs.iter().map(|job| job.id.clone()));
                errors.extend(failed.iter().map(|error| error.message.clone()));
            }
            ServerReply::Done { errors: failed } => errors.extend(failed.iter().map(|error| error.message.clone())),
            other => panic!("{:.300}", format!("{other:?}")),
        }
    }
    (ids, errors)
}

#[test]
fn repeated_selectors_and_ranges_do_not_grow_the_server() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    for _ in 0..5 {
        cluster.qsub(&script, &["-h"]);
    }
    let array = cluster.qsub(&script, &["-h", "-J", "0-9"]);
    let range = array.replace("[]", "[0-9]");
    let pid = cluster.server_pid();
    let before = peak_kib(pid);

    // The command itself, as a user would type it.
    let workq = vec!["workq"; 20_000];
    let output = cluster.run("qstat", &workq);
    let lines = String::from_utf8_lossy(&output.stdout).lines().count();
    let by_queue = listed(&request(&cluster, &status(vec!["workq".into(); 20_000], false)));
    let by_range = listed(&request(&cluster, &status(vec![range.clone(); 20_000], true)));
    // The largest frame the server reads, of one queue name repeated.
    let copies = (proto::MAX_FRAME - 1024) / "\"workq\",".len();
    let whole_frame = listed(&request(&cluster, &status(vec!["workq".into(); copies], false)));
    let ids = vec![range.clone(); 20_000];
    let held = listed(&request(&cluster, &ClientRequest::HoldJob { ids: ids.clone(), hold_types: "u".into() }));
    let deleted = listed(&request(&cluster, &ClientRequest::DeleteJob { ids, force: false, history: false }));
    let after = peak_kib(pid);

    assert!(
        after < before + PEAK_SLACK_KIB,
        "the server's peak RSS went from {before} KiB to {after} KiB for requests repeating one name"
    );
    assert!(output.status.success() && lines == 2 + 6, "qstat lists each job once: {lines} lines\n{output:?}");
    assert_eq!((by_queue.0.len(), by_queue.1.len()), (6, 0), "each job of workq once");
    assert_eq!((whole_frame.0.len(), whole_frame.1.len()), (6, 0), "each job of workq once");
    assert_eq!((by_range.0.len(), by_range.1.len()), (10, 0), "each subjob of the range once");
    assert_eq!(held.1, Vec::<String>::new());
    assert_eq!(deleted.1, Vec::<String>::new());
}

#[test]
fn too_many_names_in_one_request_are_refused_whole() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h"]);
    let mut ids: Vec<String> = (0..100_000).map(|seq| format!("{}.testsrv", seq + 1000)).collect();
    ids.push(id.clone());
    let replies = request(&cluster, &ClientRequest::DeleteJob { ids, force: false, history: false });
    match &replies[..] {
        [ServerReply::Error(error)] => {
            assert_eq!(error.code, proto::error::ErrorCode::InvalidRequest);
            assert_eq!(error.message, "Invalid request: more than 100000 distinct job ids");
        }
        other => panic!("{:.300}", format!("{other:?}")),
    }
    assert!(cluster.job_attr(&id, "job_state").is_some_and(|state| state == "H"), "nothing was deleted");

    // Ranges are counted before they are expanded: together they may name at most
    // MAX_ARRAY_SIZE plus the jobs there are.
    let array = cluster.qsub(&script, &["-h", "-J", "0-9999"]);
    let ranges: Vec<String> = (0..100).map(|start| array.replace("[]", &format!("[{start}-9999]"))).collect();
    let (ids, errors) = listed(&request(&cluster, &status(ranges, true)));
    assert_eq!(ids.len(), 10_000, "every subjob once");
    assert!(!errors.is_empty() && errors.iter().all(|error| error.contains("the subjob ranges name more than")));
}

#[test]
fn a_client_that_stops_reading_is_dropped() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    cluster.qsub(&script, &["-h", "-J", "0-1999"]);
    let mut stream = connect(&cluster);
    // Thousands of full listings, far more than the socket buffers hold; never read.
    proto::frame::write(&mut stream, &status(Vec::new(), true)).unwrap();
    wait_for(Duration::from_secs(90), "the server to drop the client that does not read", || {
        server_log(&cluster).contains("client not reading its reply").then_some(())
    });
    // What the server had written is still there, then the end of the stream.
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let read = stream.read_to_end(&mut rest);
    assert!(read.is_ok(), "connection not closed: {read:?} after {} bytes", rest.len());
    let output = cluster.run("qstat", &[]);
    assert!(output.status.success(), "{output:?}");
}

fn server_log(cluster: &Cluster) -> String {
    std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap_or_default()
}

/// Idle connections the attacker holds: half of them to the Unix socket (of those, half say
/// hello and then nothing), and as many to the TCP port when the cluster has one.
const IDLE: usize = 2000;

/// An open connection of the attacker's, or the address to open it again.
enum Target {
    Unix(std::path::PathBuf, bool),
    Tcp(u16),
}

impl Target {
    fn open(&self) -> Option<Box<dyn ReadWrite>> {
        match self {
            Target::Unix(path, hello) => {
                let mut stream = UnixStream::connect(path).ok()?;
                if *hello {
                    let hello = proto::Hello::new(proto::Role::Client, None);
                    proto::frame::write(&mut stream, &hello).ok()?;
                }
                stream.set_nonblocking(true).ok()?;
                Some(Box::new(stream))
            }
            Target::Tcp(port) => {
                let stream = tcp_from(std::net::Ipv4Addr::new(127, 0, 0, 2), *port)?;
                stream.set_nonblocking(true).ok()?;
                Some(Box::new(stream))
            }
        }
    }
}

trait ReadWrite: std::io::Read + Send {}
impl<T: std::io::Read + Send> ReadWrite for T {}

/// A TCP connection to the server's port on 127.0.0.1 from `source` (another loopback address:
/// another host, as far as the server's per-address cap can tell).
fn tcp_from(source: std::net::Ipv4Addr, port: u16) -> Option<std::net::TcpStream> {
    use std::os::fd::FromRawFd;
    let address = |ip: std::net::Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor this function owns; the addresses outlive them.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return None;
        }
        let stream = std::net::TcpStream::from_raw_fd(fd);
        let local = address(source, 0);
        let remote = address(std::net::Ipv4Addr::LOCALHOST, port);
        let bound = libc::bind(fd, (&local as *const libc::sockaddr_in).cast(), len) == 0;
        let connected = bound && libc::connect(fd, (&remote as *const libc::sockaddr_in).cast(), len) == 0;
        connected.then_some(stream)
    }
}

/// Whether a non-blocking connection is still open (what the server sent is read and dropped).
fn still_open(stream: &mut Box<dyn ReadWrite>) -> bool {
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(error) => return error.kind() == std::io::ErrorKind::WouldBlock,
        }
    }
}

/// Holds [`IDLE`] connections (per transport) as `nobody` on a thread of its own, opening again
/// every one the server closes, until `stop`; returns how many it opened in all.
fn hold_idle_connections(cluster: &Cluster, stop: Arc<AtomicBool>) -> (std::thread::JoinHandle<usize>, Receiver<()>) {
    let socket = cluster.state.path().join("server.sock");
    let mut targets: Vec<Target> = (0..IDLE).map(|n| Target::Unix(socket.clone(), n % 2 == 1)).collect();
    if let Some(port) = cluster.server_port() {
        targets.extend((0..IDLE).map(|_| Target::Tcp(port)));
    }
    let (ready, is_ready) = std::sync::mpsc::channel();
    let thread = std::thread::spawn(move || {
        // This thread only (the raw system calls, not libc's process-wide wrappers): the
        // connections carry nobody's credentials, as another user's would.
        // SAFETY: changes this thread's credentials; it keeps root as its saved uid.
        unsafe {
            assert_eq!(libc::syscall(libc::SYS_setresgid, 65534, 65534, 0), 0);
            assert_eq!(libc::syscall(libc::SYS_setresuid, 65534, 65534, 0), 0);
        }
        let mut open: Vec<Option<Box<dyn ReadWrite>>> = targets.iter().map(Target::open).collect();
        let mut opened = open.iter().filter(|stream| stream.is_some()).count();
        let _ = ready.send(());
        while !stop.load(Ordering::Relaxed) {
            for (stream, target) in open.iter_mut().zip(&targets) {
                if !stream.as_mut().is_some_and(still_open) {
                    *stream = target.open();
                    opened += usize::from(stream.is_some());
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        opened
    });
    (thread, is_ready)
}

/// Raises this process's descriptor limit to its hard limit (the attacker's connections).
fn raise_fd_limit() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    assert!(limit.rlim_cur >= 2 * IDLE as u64 + 512, "descriptor limit {} too low for the test", limit.rlim_cur);
}

#[test]
fn idle_connections_keep_neither_qstat_nor_a_mom_out() {
    if !nix::unistd::getuid().is_root() {
        assert!(std::env::var_os("CI").is_none(), "needs root (to hold connections as another user)");
        eprintln!("skipped: needs root");
        return;
    }
    raise_fd_limit();
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let registrations = || server_log(&cluster).matches("mom registered").count();
    let registered = registrations();
    let stop = Arc::new(AtomicBool::new(false));
    let (holder, ready) = hold_idle_connections(&cluster, stop.clone());
    ready.recv().unwrap();

    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for _ in 0..5 {
            let started = std::time::Instant::now();
            let output = cluster.run("qstat", &["-B"]);
            eprintln!("qstat -B under attack: {:?}", started.elapsed());
            assert!(output.status.success(), "qstat kept out by idle connections: {output:?}");
        }
        let argv = cluster.daemon_argv("node1");
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(cluster.daemon_pid("node1")),
            nix::sys::signal::Signal::SIGKILL,
        );
        cluster.spawn_daemon("node1", &argv);
        wait_for(Duration::from_secs(30), "the restarted mom to register", || {
            (registrations() > registered).then_some(())
        });
        eprintln!("mom registered again");
        let script = cluster.script("quick.sh", "#!/bin/sh\ntrue\n");
        let id = cluster.qsub(&script, &[]);
        assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), 0, "{}", cluster.logs());
    }));
    stop.store(true, Ordering::Relaxed);
    let opened = holder.join().unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert!(opened >= IDLE, "the attacker opened only {opened} connections");
}
