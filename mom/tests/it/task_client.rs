//! A tiny launcher for the task tests, speaking proto::task to a mom's task socket, and two
//! moms of one job (node0 the mother superior, node1 a sister) reaching each other over Unix
//! sockets or over TCP with MUNGE.

use crate::support::{host, launch, within, Harness, ServerSide};
use proto::frame::nonblocking::{read_limited, write};
use proto::frame::Limits;
use proto::mom::ServerToMom;
use proto::task::{TaskCommand, TaskInput, TaskOutput, TaskRequest, TASK_VERSION};
use std::path::{Path, PathBuf};
use tokio::net::UnixStream;

/// The job both moms run.
pub const JOB: &str = "77.server";
pub const COOKIE: &str = "cafe";

/// What a launcher saw.
#[derive(Debug, Default)]
pub struct Seen {
    pub started: Option<(u32, u32)>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub status: Option<i32>,
    pub refused: Option<String>,
}

impl Seen {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A request for `command` of the test job on `node`, output relayed.
pub fn request(node: &str, command: TaskCommand) -> TaskRequest {
    TaskRequest {
        version: TASK_VERSION,
        job_id: JOB.into(),
        cookie: COOKIE.into(),
        node: node.into(),
        command,
        env: vec![("FROM_LAUNCHER".into(), "yes".into())],
        cwd: None,
        vnode: 3,
        stdin: false,
        output: true,
    }
}

pub fn shell(line: &str) -> TaskCommand {
    TaskCommand::Shell(line.into())
}

/// Connects to `socket` and sends `request` (and `stdin` then EOF when it asks for stdin).
pub async fn open(socket: &Path, request: &TaskRequest, stdin: &[u8]) -> UnixStream {
    let mut stream = within(UnixStream::connect(socket)).await.expect("connect to the task socket");
    write(&mut stream, request).await.expect("send the request");
    if request.stdin {
        write(&mut stream, &TaskInput::Stdin(stdin.to_vec())).await.unwrap();
        write(&mut stream, &TaskInput::StdinEof).await.unwrap();
    }
    stream
}

/// Reads frames until `Exited`, `Refused` or the end.
pub async fn collect(stream: &mut UnixStream) -> Seen {
    let mut seen = Seen::default();
    loop {
        let Ok(output) = within(read_limited::<TaskOutput>(stream, Limits::NORMAL)).await else { return seen };
        match output {
            TaskOutput::Started { task, node_num } => seen.started = Some((task, node_num)),
            TaskOutput::Stdout(bytes) => seen.stdout.extend(bytes),
            TaskOutput::Stderr(bytes) => seen.stderr.extend(bytes),
            TaskOutput::Exited { status } => {
                seen.status = Some(status);
                return seen;
            }
            TaskOutput::Refused { message } => {
                seen.refused = Some(message);
                return seen;
            }
        }
    }
}

/// Runs one task to its end.
pub async fn run(socket: &Path, request: &TaskRequest, stdin: &[u8]) -> Seen {
    let mut stream = open(socket, request, stdin).await;
    collect(&mut stream).await
}

/// Two moms running [`JOB`]: node0 its mother superior (the top shell sleeps), node1 a sister.
pub struct TwoMoms {
    pub harnesses: Vec<Harness>,
    pub servers: Vec<ServerSide>,
    /// Each mom's task socket.
    pub sockets: Vec<PathBuf>,
}

/// Starts both moms; with `munge`, they listen on TCP and reach each other there.
pub async fn two_moms(munge: Option<&Path>) -> TwoMoms {
    let (mut harnesses, mut servers, mut hosts) = (Vec::new(), Vec::new(), Vec::new());
    for node in ["node0", "node1"] {
        let mut harness = Harness::without_server();
        harness.listen();
        harness.start_mom_with(|config| {
            config.node = node.into();
            if let Some(socket) = munge {
                config.listen = Some(([127, 0, 0, 1], 0).into());
                config.munge_socket = socket.to_path_buf();
            }
        });
        let server = harness.accept().await;
        let mut entry = host(node, 1, &[]);
        entry.mom_addr = Some(match munge {
            Some(_) => format!("127.0.0.1:{}", server.registration.port),
            None => format!("unix:{}", server.registration.task_socket.clone().expect("task socket registered")),
        });
        hosts.push(entry);
        harnesses.push(harness);
        servers.push(server);
    }
    let mut launch = launch(JOB, "sleep 1000\n", &harnesses[0].out());
    launch.hosts = hosts;
    launch.cookie = COOKIE.into();
    servers[0].run(launch.clone()).await;
    servers[0].started(JOB).await;
    servers[1].send(ServerToMom::JoinJob(Box::new(launch.clone()))).await;
    let sockets: Vec<PathBuf> = harnesses.iter().map(|h| h.dir.path().join("spool/task.sock")).collect();
    // The sister serves the job once it has handled the join.
    let probe = request("node1", shell("true"));
    let deadline = tokio::time::Instant::now() + crate::support::DEADLINE;
    loop {
        let seen = run(&sockets[1], &probe, b"").await;
        if seen.status == Some(0) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the sister never served the job: {seen:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    TwoMoms { harnesses, servers, sockets }
}

impl TwoMoms {
    pub async fn stop(self) {
        for harness in self.harnesses {
            harness.stop().await;
        }
    }
}
