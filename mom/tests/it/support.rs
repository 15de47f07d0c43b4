//! Test support: a tiny server speaking the real protocol on a Unix socket, a mom started
//! in-process against it, a launch builder, and deadline-bounded waits (no fixed sleeps).

use mom::MomConfig;
use proto::frame::nonblocking::{read, write};
use proto::mom::{HostAlloc, JobLaunch, JobObit, MomToServer, Registration, ServerToMom};
use proto::{Hello, HelloReply, Role, PROTOCOL_VERSION};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long any single wait in a test may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Whether this test may run: it needs root (useradd, setuid). When not root it says
/// `SKIPPED: <test> needs root ...` and the caller returns, except under CI (`CI` set and not
/// empty), where a skip is a failure (the rule of `tests::skip`, which this crate cannot use).
pub fn root_or_skip(test: &str) -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    let reason = format!("{test} needs root (useradd, setuid)");
    if std::env::var("CI").is_ok_and(|value| !value.is_empty()) {
        panic!("SKIPPED under CI, which is a failure (CI is set): {reason}");
    }
    println!("SKIPPED: {reason}");
    false
}

/// Installs a log subscriber once (`RUST_LOG=debug cargo test -p mom` shows the mom's logs).
pub fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
}

/// A temp directory with the server socket, the mom's spool and tmpdir, and an `out/`
/// directory for job output.
pub struct Harness {
    pub dir: TempDir,
    pub socket: PathBuf,
    listener: Option<UnixListener>,
    mom: Option<(oneshot::Sender<()>, JoinHandle<anyhow::Result<()>>)>,
}

impl Harness {
    /// A harness whose server is already listening, with a mom running.
    pub async fn start() -> Harness {
        let mut harness = Harness::without_server();
        harness.listen();
        harness.start_mom();
        harness
    }

    /// A harness with neither server nor mom yet.
    pub fn without_server() -> Harness {
        init_logs();
        let dir = tempfile::tempdir().expect("temp dir");
        // Readable by job users (their nodefile lives under spool/aux).
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir(dir.path().join("out")).unwrap();
        let socket = dir.path().join("server.sock");
        Harness { dir, socket, listener: None, mom: None }
    }

    /// Binds the server socket.
    pub fn listen(&mut self) {
        self.listener = Some(UnixListener::bind(&self.socket).expect("bind server socket"));
    }

    /// Binds the server socket as a process of `uid` would serve it: `SO_PEERCRED` reports the
    /// credentials of whoever called `listen`, here a thread that switched to `uid` and `gid`
    /// with raw syscalls (they change that thread only; the test stays root). Root only.
    pub fn listen_as(&mut self, uid: u32, gid: u32) {
        let socket = tokio::net::UnixSocket::new_stream().expect("socket");
        socket.bind(&self.socket).expect("bind server socket");
        let runtime = tokio::runtime::Handle::current();
        let listener = std::thread::spawn(move || {
            let _runtime = runtime.enter();
            // SAFETY: plain syscalls with integer arguments; the thread ends right after.
            unsafe {
                assert_eq!(libc::syscall(libc::SYS_setresgid, gid, gid, 0), 0, "setresgid");
                assert_eq!(libc::syscall(libc::SYS_setresuid, uid, uid, 0), 0, "setresuid");
            }
            socket.listen(16)
        });
        self.listener = Some(listener.join().expect("listening thread").expect("listen"));
    }

    /// Accepts the mom's next connection and hands it over as it is.
    pub async fn accept_raw(&self) -> UnixStream {
        let listener = self.listener.as_ref().expect("listening");
        within(listener.accept()).await.expect("accept").0
    }

    /// The configuration the harness gives its mom.
    pub fn config(&self) -> MomConfig {
        let mut config = MomConfig::new(&self.socket, "node1");
        config.np = 4;
        config.mem_bytes = 8 << 30;
        config.gpus = mom::gpu::GpuChoice::Count(4);
        config.properties = vec!["fast".into()];
        config.spool_dir = self.dir.path().join("spool");
        config.tmpdir_base = self.dir.path().join("tmp");
        config.heartbeat_interval = Duration::from_millis(200);
        config.kill_delay = Duration::from_secs(2);
        config.reconnect_min = Duration::from_millis(20);
        config.reconnect_max = Duration::from_millis(500);
        config.kill_jobs_on_shutdown = true;
        // Tests run side by side: each mom cleans up and limits only its own slice.
        let unique = self.dir.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        config.cgroup_slice = format!("minipbs-it-{unique}.slice");
        config
    }

    /// Starts the mom in-process.
    pub fn start_mom(&mut self) {
        self.start_mom_with(|_| {});
    }

    /// Starts the mom in-process with its configuration changed by `edit`.
    pub fn start_mom_with(&mut self, edit: impl FnOnce(&mut MomConfig)) {
        let (stop, stopped) = oneshot::channel::<()>();
        let mut config = self.config();
        edit(&mut config);
        let handle = tokio::spawn(mom::run(config, async move {
            let _ = stopped.await;
        }));
        self.mom = Some((stop, handle));
    }

    /// The output directory for jobs.
    pub fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// Accepts the mom's next connection, answers the handshake and registration (with
    /// `stale_jobs`), and returns the server's side.
    pub async fn accept_with_stale(&self, stale_jobs: Vec<String>) -> ServerSide {
        let listener = self.listener.as_ref().expect("listening");
        let (mut stream, _) = within(listener.accept()).await.expect("accept");
        let hello: Hello = within(read(&mut stream)).await.expect("hello");
        assert_eq!(hello, Hello::new(Role::Mom, None), "no nonce on the Unix socket");
        let welcome = HelloReply::Welcome { protocol: PROTOCOL_VERSION, server_name: "testserver".into(), nonce: None };
        write(&mut stream, &welcome).await.unwrap();
        let registration = match within(read::<MomToServer>(&mut stream)).await.expect("register") {
            MomToServer::Register(registration) => registration,
            other => panic!("expected Register, got {other:?}"),
        };
        let registered = ServerToMom::Registered { server_name: "testserver".into(), stale_jobs };
        write(&mut stream, &registered).await.unwrap();
        ServerSide { stream, registration }
    }

    /// [`Harness::accept_with_stale`] with no stale jobs.
    pub async fn accept(&self) -> ServerSide {
        self.accept_with_stale(Vec::new()).await
    }

    /// Stops the mom (killing its jobs) and waits for it.
    pub async fn stop(mut self) {
        if let Some((stop, handle)) = self.mom.take() {
            let _ = stop.send(());
            within(handle).await.expect("mom task").expect("mom run");
        }
    }
}

/// The server's end of one mom connection.
pub struct ServerSide {
    stream: UnixStream,
    pub registration: Registration,
}

impl ServerSide {
    /// Sends one message to the mom.
    pub async fn send(&mut self, message: ServerToMom) {
        write(&mut self.stream, &message).await.expect("send to mom");
    }

    /// Sends `RunJob`.
    pub async fn run(&mut self, launch: JobLaunch) {
        self.send(ServerToMom::RunJob(Box::new(launch))).await;
    }

    /// The next message, heartbeats included.
    pub async fn recv_any(&mut self) -> MomToServer {
        within(read::<MomToServer>(&mut self.stream)).await.expect("message from mom")
    }

    /// The next message other than a heartbeat.
    pub async fn recv(&mut self) -> MomToServer {
        loop {
            match self.recv_any().await {
                MomToServer::Heartbeat => continue,
                other => return other,
            }
        }
    }

    /// Waits for `JobStarted` of `job_id` and returns its session id; fails on anything else
    /// about that job.
    pub async fn started(&mut self, job_id: &str) -> i32 {
        loop {
            match self.recv().await {
                MomToServer::JobStarted { job_id: id, session_id, .. } if id == job_id => return session_id,
                MomToServer::JobEnded(obit) if obit.job_id == job_id => panic!("job ended without starting: {obit:?}"),
                _ => continue,
            }
        }
    }

    /// Waits for `JobEnded` of `job_id`.
    pub async fn ended(&mut self, job_id: &str) -> JobObit {
        loop {
            if let MomToServer::JobEnded(obit) = self.recv().await {
                if obit.job_id == job_id {
                    return obit;
                }
            }
        }
    }
}

/// A launch for `root` (the test user) on `node1` with one slot, output into `out`.
pub fn launch(job_id: &str, script: &str, out: &Path) -> JobLaunch {
    JobLaunch {
        job_id: job_id.to_string(),
        name: "testjob".into(),
        queue: "workq".into(),
        user: current_user(),
        group: None,
        script: script.to_string(),
        variables: vec![("PBS_O_WORKDIR".to_string(), out.display().to_string())].into(),
        hosts: vec![host("node1", 1, &[])],
        walltime: None,
        kill_delay: 2,
        output_path: format!("login1:{}/{job_id}.o", out.display()),
        error_path: format!("{}/{job_id}.e", out.display()),
        join: Default::default(),
        // A login `sh`, not the test user's login shell: root's login files on a developer or
        // CI machine (pyenv, conda) can be slow or hang on a lock a killed job left behind.
        shell: Some("/bin/sh".into()),
        init_dir: None,
        num_ppn: 1,
        first_ncpus: 1,
        omp_threads: None,
        cookie: "cafe".into(),
        array_index: None,
        array_id: None,
        interactive: None,
        root_allowed: true,
        run_count: 1,
        script_args: Vec::new(),
        output_name: String::new(),
        error_name: String::new(),
        exec: Default::default(),
        keep: "n".to_string(),
    }
}

/// One host of an allocation.
pub fn host(node: &str, mpiprocs: u32, gpus: &[u32]) -> HostAlloc {
    HostAlloc {
        node: node.into(),
        ncpus: mpiprocs,
        mpiprocs,
        gpus: gpus.to_vec(),
        mem_bytes: None,
        gpu_uuids: Vec::new(),
        mps: None,
        mom_addr: None,
    }
}

/// The name of the user running the tests.
pub fn current_user() -> String {
    let uid = nix::unistd::geteuid();
    nix::unistd::User::from_uid(uid).ok().flatten().map(|u| u.name).expect("test user has a passwd entry")
}

/// Awaits `future`, failing the test after [`DEADLINE`].
pub async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, future).await.expect("timed out")
}

/// Polls `check` every 20 ms until it is true; fails after [`DEADLINE`].
pub async fn poll_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Live (non-zombie) processes of session `sid`, read from /proc independently of the mom.
pub fn live_session_members(sid: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let Some((_, tail)) = stat.rsplit_once(')') else { continue };
        let fields: Vec<&str> = tail.split_whitespace().collect();
        if fields.len() > 3 && fields[3] == sid.to_string() && fields[0] != "Z" {
            members.push(pid);
        }
    }
    members
}

/// Whether `pid` is running (exists and is not a zombie).
pub fn is_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, tail)| !tail.trim_start().starts_with('Z')))
        .unwrap_or(false)
}
