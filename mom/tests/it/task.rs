//! Tasks through the moms (issue 15): a launcher in a job asks its local mom (node0) to start
//! a task on the job's other node (node1); the moms reach each other over Unix sockets. Output,
//! status, stdin and signals are relayed; a dropped launcher kills its task; every refusal
//! names its reason; a job's end kills its tasks on every node and counts their CPU. Root only.

use crate::support::{is_alive, poll_until, root_or_skip, within};
use crate::task_client::{collect, open, request, run, shell, two_moms, JOB};
use proto::mom::ServerToMom;
use proto::task::TaskCommand;
use std::io::Write;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_task_on_the_other_node_relays_output_status_and_stdin() {
    if !root_or_skip("a_task_on_the_other_node_relays_output_status_and_stdin") {
        return;
    }
    let moms = two_moms(None).await;
    let line = "echo $PBS_NODENUM $PBS_VNODENUM $PBS_TASKNUM $FROM_LAUNCHER $PBS_JOBID $MINIPBS_TASK_SOCKET; echo oops >&2; exit 3";
    let seen = run(&moms.sockets[0], &request("node1", shell(line)), b"").await;
    let (task, node_num) = seen.started.expect("started");
    assert_eq!(node_num, 1);
    let expected = format!("1 3 {task} yes {JOB} {}\n", moms.sockets[1].display());
    assert_eq!(seen.stdout(), expected, "ran on node1 with its environment");
    assert_eq!(seen.stderr, b"oops\n");
    assert_eq!(seen.status, Some(3));
    let killed = run(&moms.sockets[0], &request("node1", shell("kill -TERM $$")), b"").await;
    assert_eq!(killed.status, Some(128 + 15), "killed by SIGTERM: 128 + 15");
    let mut cat = request("node1", TaskCommand::Argv(vec!["cat".into()]));
    cat.stdin = true;
    let echoed = run(&moms.sockets[0], &cat, b"through two moms\n").await;
    assert_eq!((echoed.stdout(), echoed.status), ("through two moms\n".to_string(), Some(0)));
    let here = run(&moms.sockets[0], &request("node0", shell("echo $PBS_NODENUM $PBS_TASKNUM")), b"").await;
    assert_eq!(here.stdout(), format!("0 {}\n", here.started.unwrap().0), "a task on the local node");
    assert!(here.started.unwrap().0 >= 2, "the top shell is task 1");
    moms.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dropped_launcher_kills_its_task() {
    if !root_or_skip("a_dropped_launcher_kills_its_task") {
        return;
    }
    let moms = two_moms(None).await;
    let mut stream = open(&moms.sockets[0], &request("node1", shell("echo $$; exec sleep 1000")), b"").await;
    let mut pid = String::new();
    while !pid.ends_with('\n') {
        match within(proto::frame::nonblocking::read::<proto::task::TaskOutput>(&mut stream)).await.unwrap() {
            proto::task::TaskOutput::Stdout(bytes) => pid.push_str(&String::from_utf8_lossy(&bytes)),
            proto::task::TaskOutput::Started { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    let pid: i32 = pid.trim().parse().unwrap();
    assert!(is_alive(pid));
    drop(stream);
    poll_until("the task to be killed", || !is_alive(pid)).await;
    // A launcher's signal reaches its task.
    let mut stream = open(&moms.sockets[0], &request("node1", shell("exec sleep 1000")), b"").await;
    proto::frame::nonblocking::write(&mut stream, &proto::task::TaskInput::Signal(15)).await.unwrap();
    assert_eq!(collect(&mut stream).await.status, Some(128 + 15));
    moms.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn refusals_name_their_reason() {
    if !root_or_skip("refusals_name_their_reason") {
        return;
    }
    let moms = two_moms(None).await;
    let socket = &moms.sockets[0];
    let mut wrong = request("node1", shell("true"));
    wrong.cookie = "beef".into();
    let refused = run(socket, &wrong, b"").await.refused.expect("refused");
    assert_eq!(refused, format!("wrong cookie for job {JOB}"));
    let mut other_job = request("node1", shell("true"));
    other_job.job_id = "78.server".into();
    let refused = run(socket, &other_job, b"").await.refused.expect("refused");
    assert_eq!(refused, "job 78.server does not run on this node");
    let refused = run(socket, &request("node9", shell("true")), b"").await.refused.expect("refused");
    assert_eq!(refused, format!("node node9 is not one of job {JOB}'s nodes"));
    let refused = run(socket, &request("node1", TaskCommand::Argv(vec![])), b"").await.refused.expect("refused");
    assert_eq!(refused, "a task needs a command");
    let mut stream = crate::support::within(tokio::net::UnixStream::connect(socket)).await.unwrap();
    proto::frame::nonblocking::write(&mut stream, &serde_json::json!({"version": 1})).await.unwrap();
    let garbled = collect(&mut stream).await.refused.expect("refused");
    assert!(garbled.starts_with("bad task request: ") && garbled.contains("job_id"), "{garbled}");
    let nobody = nix::unistd::User::from_name("nobody").unwrap().expect("user nobody");
    let refused = as_user(nobody.uid.as_raw(), nobody.gid.as_raw(), socket, request("node1", shell("true")));
    assert!(refused.contains(&format!("uid {} may not start tasks of job {JOB}", nobody.uid)), "{refused}");
    moms.stop().await;
}

/// Sends `request` from a thread that runs as `uid` (raw syscalls change that thread only) and
/// returns the refusal.
fn as_user(uid: u32, gid: u32, socket: &std::path::Path, request: proto::task::TaskRequest) -> String {
    let socket = socket.to_path_buf();
    std::thread::spawn(move || {
        // SAFETY: plain syscalls with integer arguments; the thread ends right after.
        unsafe {
            assert_eq!(libc::syscall(libc::SYS_setresgid, gid, gid, 0), 0, "setresgid");
            assert_eq!(libc::syscall(libc::SYS_setresuid, uid, uid, 0), 0, "setresuid");
        }
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).expect("connect as nobody");
        stream.write_all(&proto::frame::encode(&request).unwrap()).unwrap();
        match proto::frame::read::<proto::task::TaskOutput>(&mut stream).expect("an answer") {
            proto::task::TaskOutput::Refused { message } => message,
            other => panic!("not refused: {other:?}"),
        }
    })
    .join()
    .expect("client thread")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_jobs_end_kills_its_tasks_everywhere_and_counts_their_cpu() {
    if !root_or_skip("the_jobs_end_kills_its_tasks_everywhere_and_counts_their_cpu") {
        return;
    }
    let mut moms = two_moms(None).await;
    // 1.5 s of the task shell's own user CPU on the sister (field 14 of its stat, in ticks),
    // however busy the machine, counted once the task ended.
    let burn =
        "while [ $(cut -d' ' -f14 /proc/$$/stat) -lt 150 ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; done";
    let burned = run(&moms.sockets[0], &request("node1", shell(burn)), b"").await;
    assert_eq!(burned.status, Some(0));
    let mut stream = open(&moms.sockets[0], &request("node1", shell("echo $$; exec sleep 1000")), b"").await;
    let mut pid = String::new();
    while !pid.ends_with('\n') {
        if let proto::task::TaskOutput::Stdout(bytes) =
            within(proto::frame::nonblocking::read::<proto::task::TaskOutput>(&mut stream)).await.unwrap()
        {
            pid.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    let pid: i32 = pid.trim().parse().unwrap();
    moms.servers[0].send(ServerToMom::KillJob { job_id: JOB.into() }).await;
    let obit = moms.servers[0].ended(JOB).await;
    assert!(obit.used.cput_secs >= 1, "the sister's task CPU is in the obit: {:?}", obit.used);
    poll_until("the sister's task to be killed", || !is_alive(pid)).await;
    let seen = collect(&mut stream).await;
    assert_eq!(seen.status, Some(128 + 9), "its launcher hears it was killed: {seen:?}");
    let after = run(&moms.sockets[1], &request("node1", shell("true")), b"").await;
    assert_eq!(after.refused, Some(format!("job {JOB} does not run on this node")), "the sister's share ended");
    moms.servers[0].send(ServerToMom::ObitAck { job_id: JOB.into() }).await;
    moms.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_task_socket_bounds_connections_and_frames() {
    if !root_or_skip("the_task_socket_bounds_connections_and_frames") {
        return;
    }
    let mut harness = crate::support::Harness::without_server();
    harness.listen();
    harness.start_mom_with(|config| config.task_connections = 2);
    let _server = harness.accept().await;
    let socket = harness.dir.path().join("spool/task.sock");
    let connect = || tokio::net::UnixStream::connect(socket.clone());
    let held = [within(connect()).await.unwrap(), within(connect()).await.unwrap()];
    // The third is closed unread while two are held (each waits for its first frame).
    let mut third = within(connect()).await.unwrap();
    let mut byte = [0u8; 1];
    // Well before the mom's 30 s wait for a first frame would close it anyway.
    let patience = std::time::Duration::from_secs(10);
    let closed = tokio::time::timeout(patience, tokio::io::AsyncReadExt::read(&mut third, &mut byte)).await;
    assert!(matches!(closed, Ok(Ok(0) | Err(_))), "a third connection is closed at once: {closed:?}");
    drop(held);
    // Once they go, a request is answered again; a frame over the limit is refused by size.
    let deadline = tokio::time::Instant::now() + crate::support::DEADLINE;
    let answer = loop {
        let mut stream = within(connect()).await.unwrap();
        let oversized = (mom::task::peer::TASK_LIMITS.max_body as u32 + 1).to_be_bytes();
        // Closed unread while the held ones are still being released: try again.
        if tokio::io::AsyncWriteExt::write_all(&mut stream, &oversized).await.is_ok() {
            if let Some(message) = collect(&mut stream).await.refused {
                break message;
            }
        }
        assert!(tokio::time::Instant::now() < deadline, "the held connections were never released");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert!(answer.contains("exceeds the limit"), "{answer}");
    let job = run(&socket, &request("node1", shell("true")), b"").await;
    assert_eq!(job.refused, Some(format!("job {JOB} does not run on this node")));
    harness.stop().await;
}
