//! pbsdsh and pbs_tmrsh end to end: the real binaries against a fake local mom over a real
//! Unix socket (`fake_mom.rs`): output and stdin relay, exit statuses, signal forwarding, the
//! hang-up, refusals, the worst status of several tasks, the bound on concurrent tasks, and
//! the texts of usage errors.

mod fake_mom;

use fake_mom::{note, Conn, FakeMom, Seen};
use proto::task::{TaskCommand, TaskInput, TaskOutput};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

const TMRSH: &str = env!("CARGO_BIN_EXE_pbs_tmrsh");
const PBSDSH: &str = env!("CARGO_BIN_EXE_pbsdsh");
const NODES: &str = "n1\nn1\nn2\nn2\n";

type Shared = Arc<(Mutex<Seen>, Condvar)>;

fn env_of(conn: &Conn, name: &str) -> String {
    conn.request.env.iter().find(|(have, _)| have == name).map(|(_, value)| value.clone()).unwrap_or_default()
}

/// Says who it is on stdout and stderr and exits with its vnode number.
fn report(conn: &mut Conn, _: &Shared) {
    let (node, vnode, rank) = (conn.request.node.clone(), conn.request.vnode, env_of(conn, "RANK"));
    conn.send(TaskOutput::Started { task: vnode + 1, node_num: 0 });
    conn.send(TaskOutput::Stdout(format!("rank {rank} ").into_bytes()));
    conn.send(TaskOutput::Stdout(format!("on {node} vnode {vnode}\n").into_bytes()));
    conn.send(TaskOutput::Stderr(format!("err {vnode}\n").into_bytes()));
    conn.send(TaskOutput::Exited { status: vnode as i32 });
}

/// Echoes stdin back in capitals once it ends (at once for a task without stdin).
fn upcase(conn: &mut Conn, _: &Shared) {
    conn.send(TaskOutput::Started { task: 1, node_num: 0 });
    let mut all = Vec::new();
    while let Some(TaskInput::Stdin(bytes)) = conn.request.stdin.then(|| conn.input()).flatten() {
        all.extend(bytes);
    }
    conn.send(TaskOutput::Stdout(all.to_ascii_uppercase()));
    conn.send(TaskOutput::Exited { status: 0 });
}

/// Says `ready`, then ends as killed by the first signal it is sent; notes a hang-up.
fn until_signal(conn: &mut Conn, seen: &Shared) {
    conn.send(TaskOutput::Started { task: 1, node_num: 0 });
    conn.send(TaskOutput::Stdout(b"ready\n".to_vec()));
    loop {
        match conn.input() {
            Some(TaskInput::Signal(signal)) => {
                note(seen, |all| all.notes.push(format!("signal {signal}")));
                conn.send(TaskOutput::Exited { status: 128 + signal });
                return;
            }
            Some(_) => {}
            None => return note(seen, |all| all.notes.push("hung up".into())),
        }
    }
}

fn refuse(conn: &mut Conn, _: &Shared) {
    conn.send(TaskOutput::Refused { message: format!("node {} is not one of job 7.s's", conn.request.node) });
}

fn run(mut command: std::process::Command) -> Output {
    command.stdin(Stdio::null()).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sorted_lines(bytes: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = text(bytes).lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// Waits for the child's first stdout line (`ready`).
fn first_line(child: &mut Child) -> String {
    let stdout = child.stdout.take().unwrap();
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = send.send(line);
    });
    receive.recv_timeout(Duration::from_secs(30)).expect("a first line in 30 s")
}

fn kill(child: &Child, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
}

#[test]
fn tmrsh_relays_output_and_exits_with_the_status() {
    let mom = FakeMom::start(NODES, report);
    let mut command = mom.command(TMRSH);
    command.args(["-x", "n2", " orted", "-mca", "ess", "\"env\"", "--tree-spawn"]);
    let output = run(command);
    assert_eq!(text(&output.stdout), "rank  on n2 vnode 2\n");
    assert_eq!(text(&output.stderr), "err 2\n");
    assert_eq!(output.status.code(), Some(2));
    let request = mom.wait_for("request", |seen| seen.requests.first().cloned());
    assert_eq!(request.command, TaskCommand::Shell(" orted -mca ess \"env\" --tree-spawn".into()));
    assert_eq!((request.job_id.as_str(), request.cookie.as_str(), request.cwd.as_deref()), ("7.s", "c00kie", None));
    assert!(request.stdin && request.output);
}

#[test]
fn tmrsh_relays_stdin_unless_n() {
    let mom = FakeMom::start(NODES, upcase);
    let mut child = mom
        .command(TMRSH)
        .args(["n1", "tr", "a-z", "A-Z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"hello\nworld\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!((text(&output.stdout).as_str(), output.status.code()), ("HELLO\nWORLD\n", Some(0)));
    let output = run(mom.command(TMRSH).args(["-n", "n1", "cat"]).stdin(Stdio::piped()).to_owned_command());
    assert_eq!(output.status.code(), Some(0));
    let requests = mom.wait_for("two requests", |seen| (seen.requests.len() == 2).then(|| seen.requests.clone()));
    assert_eq!(requests.iter().filter(|request| request.stdin).count(), 1);
}

#[test]
fn tmrsh_forwards_signals_and_its_death_hangs_up() {
    let mom = FakeMom::start(NODES, until_signal);
    let mut child = mom.command(TMRSH).args(["n2", "sleep", "1000"]).stdout(Stdio::piped()).spawn().unwrap();
    assert_eq!(first_line(&mut child), "ready\n");
    kill(&child, nix::sys::signal::Signal::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(143));
    mom.wait_for("forwarded signal", |seen| seen.notes.contains(&"signal 15".to_string()).then_some(()));
    let mut child = mom.command(TMRSH).args(["n2", "sleep", "1000"]).stdout(Stdio::piped()).spawn().unwrap();
    assert_eq!(first_line(&mut child), "ready\n");
    kill(&child, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    mom.wait_for("hang-up", |seen| seen.notes.contains(&"hung up".to_string()).then_some(()));
}

#[test]
fn tmrsh_refusals_exit_255() {
    let mom = FakeMom::start(NODES, refuse);
    let refused = run(mom.command(TMRSH).args(["n1", "true"]).to_owned_command());
    let not_in_job = run(mom.command(TMRSH).args(["n7.invalid", "true"]).to_owned_command());
    let outside = run(mom.command(TMRSH).env_remove("PBS_ENVIRONMENT").args(["n1", "true"]).to_owned_command());
    let no_socket = run(mom.command(TMRSH).env_remove("MINIPBS_TASK_SOCKET").args(["n1", "true"]).to_owned_command());
    let bad_user = run(mom.command(TMRSH).args(["-l", "nosuchuser", "n1", "true"]).to_owned_command());
    let bad_option = run(mom.command(TMRSH).args(["-Z", "n1", "true"]).to_owned_command());
    let no_command = run(mom.command(TMRSH).args(["n1"]).to_owned_command());
    let all = [refused, not_in_job, outside, no_socket, bad_user, bad_option, no_command];
    assert!(all.iter().all(|output| output.status.code() == Some(255) && output.stdout.is_empty()));
    let texts: Vec<String> = all.iter().map(|output| text(&output.stderr)).collect();
    let caller = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    insta::assert_snapshot!(texts.concat().replace(&format!("caller, {caller}\n"), "caller, <caller>\n"));
}

#[test]
fn pbsdsh_runs_one_task_per_vnode_and_exits_with_the_worst() {
    let mom = FakeMom::start(NODES, report);
    let output = run(mom
        .command(PBSDSH)
        .env("MASTER_ADDR", "n1")
        .env("MASTER_PORT", "29500")
        .args(["hostname", "-f"])
        .to_owned_command());
    assert_eq!(
        sorted_lines(&output.stdout),
        ["rank 0 on n1 vnode 0", "rank 1 on n1 vnode 1", "rank 2 on n2 vnode 2", "rank 3 on n2 vnode 3"]
    );
    assert_eq!(sorted_lines(&output.stderr), ["err 0", "err 1", "err 2", "err 3"]);
    assert_eq!(output.status.code(), Some(3));
    let mut requests = mom.wait_for("four requests", |seen| (seen.requests.len() == 4).then(|| seen.requests.clone()));
    requests.sort_by_key(|request| request.vnode);
    let dir = mom.dir.path().canonicalize().unwrap().to_string_lossy().into_owned();
    for (vnode, request) in requests.iter().enumerate() {
        assert_eq!(request.vnode as usize, vnode);
        assert_eq!(request.command, TaskCommand::Argv(vec!["hostname".into(), "-f".into()]));
        assert_eq!((request.cwd.as_deref(), request.stdin, request.output), (Some(dir.as_str()), false, true));
        let env: Vec<String> = request.env.iter().map(|(name, value)| format!("{name}={value}")).collect();
        assert_eq!(env[..2], [format!("RANK={vnode}"), format!("LOCAL_RANK={}", vnode % 2)]);
        assert!(env.contains(&"MASTER_ADDR=n1".to_string()) && env.contains(&"MASTER_PORT=29500".to_string()));
    }
}

#[test]
fn pbsdsh_options_pick_the_tasks() {
    let mom = FakeMom::start(NODES, report);
    let one = run(mom.command(PBSDSH).args(["-n", "1", "-v", "-e", "A=1", "true"]).to_owned_command());
    assert_eq!((text(&one.stdout).as_str(), one.status.code()), ("rank 0 on n1 vnode 1\n", Some(1)));
    let verbose = text(&one.stderr);
    assert!(verbose.contains("pbsdsh: spawned task 2 on n1 (vnode 1)\n"), "{verbose}");
    assert!(verbose.contains("pbsdsh: task on n1 (vnode 1) exited with status 1\n"), "{verbose}");
    let unique = run(mom.command(PBSDSH).args(["-u", "-s", "true"]).to_owned_command());
    assert_eq!(text(&unique.stdout), "rank 0 on n1 vnode 0\nrank 1 on n2 vnode 2\n");
    let requests = mom.wait_for("three requests", |seen| (seen.requests.len() == 3).then(|| seen.requests.clone()));
    assert!(requests[0].env.contains(&("A".into(), "1".into())));
    assert!(requests[1..].iter().all(|request| request.env.iter().any(|(name, _)| name == "PET_NNODES")));
}

#[test]
fn pbsdsh_refusals_and_usage() {
    let mom = FakeMom::start(NODES, refuse);
    let refused = run(mom.command(PBSDSH).args(["-n", "3", "true"]).to_owned_command());
    let outside = run(mom.command(PBSDSH).env_remove("PBS_ENVIRONMENT").arg("true").to_owned_command());
    let too_far = run(mom.command(PBSDSH).args(["-n", "4", "true"]).to_owned_command());
    let too_many = run(mom.command(PBSDSH).args(["-c", "65537", "true"]).to_owned_command());
    let bad_option = run(mom.command(PBSDSH).args(["-Z", "true"]).to_owned_command());
    let conflict = run(mom.command(PBSDSH).args(["-c", "2", "-n", "1", "true"]).to_owned_command());
    let no_program = run(mom.command(PBSDSH).args(["-s"]).to_owned_command());
    let all = [refused, outside, too_far, too_many, bad_option, conflict, no_program];
    assert!(all.iter().all(|output| output.status.code() == Some(1) && output.stdout.is_empty()));
    insta::assert_snapshot!(all.iter().map(|output| text(&output.stderr)).collect::<String>());
}

#[test]
fn pbsdsh_forwards_signals_to_every_task() {
    let mom = FakeMom::start("n1\nn2\n", until_signal);
    let mut child = mom.command(PBSDSH).args(["sleep", "1000"]).stdout(Stdio::piped()).spawn().unwrap();
    assert_eq!(first_line(&mut child), "ready\n");
    mom.wait_for("both tasks", |seen| (seen.requests.len() == 2).then_some(()));
    kill(&child, nix::sys::signal::Signal::SIGINT);
    assert_eq!(child.wait().unwrap().code(), Some(130));
    mom.wait_for("two signals", |seen| {
        (seen.notes.iter().filter(|note| *note == "signal 2").count() == 2).then_some(())
    });
}

/// 300 vnodes: the fake mom holds every task until 256 are open at once (or all 300 came): a
/// launcher running fewer at once would never get there (the test fails at its deadline), and
/// the 44 left must still run once slots free. That no more than 256 ever open is
/// `pbsdsh_run::workers` (one connection per worker), tested beside it.
#[test]
fn pbsdsh_runs_at_most_256_tasks_at_once() {
    const TASKS: usize = 300;
    let live = Arc::new((Mutex::new((0usize, 0usize, 0usize)), Condvar::new()));
    let counters = Arc::clone(&live);
    let mom = FakeMom::start(&"n1\n".repeat(TASKS), move |conn, _| {
        let (lock, changed) = &*counters;
        let mut state = lock.lock().unwrap();
        state.0 += 1;
        state.1 += 1;
        state.2 = state.2.max(state.0);
        changed.notify_all();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while state.2 < 256 && state.1 < TASKS && std::time::Instant::now() < deadline {
            state = changed.wait_timeout(state, Duration::from_secs(1)).unwrap().0;
        }
        state.0 -= 1;
        drop(state);
        conn.send(TaskOutput::Exited { status: 0 });
    });
    let output = run(mom.command(PBSDSH).arg("true").to_owned_command());
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let (_, started, peak) = *live.0.lock().unwrap();
    assert_eq!((started, peak), (TASKS, 256));
}

/// `Command` builders return `&mut`; this makes an owned one for [`run`].
trait ToOwnedCommand {
    fn to_owned_command(&mut self) -> std::process::Command;
}

impl ToOwnedCommand for std::process::Command {
    fn to_owned_command(&mut self) -> std::process::Command {
        std::mem::replace(self, std::process::Command::new("true"))
    }
}
