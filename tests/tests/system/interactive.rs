//! `qsub -I` driven through a real pty (rexpect): the job's shell runs on a terminal on the
//! first node with the PBS environment, window sizes and Ctrl-C reach it, qsub exits with the
//! shell's exit code, and qdel or a killed qsub end the session.

use rexpect::process::{Signal, WaitStatus};
use rexpect::session::PtySession;
use std::process::Stdio;
use std::time::Duration;
use tests::{Cluster, Shape};
use uzers::os::unix::UserExt;

/// How long any one expectation may wait.
const EXPECT_MS: u64 = 30_000;

/// `qsub -I <args>` on a new pty.
fn qsub_interactive(cluster: &Cluster, args: &[&str]) -> PtySession {
    let mut command = cluster.command("qsub");
    command.arg("-I").args(args);
    rexpect::session::spawn_command(command, Some(EXPECT_MS)).expect("qsub -I starts on a pty")
}

/// Waits for `waiting` and `ready`; returns the job id.
fn until_ready(qsub: &mut PtySession) -> String {
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).expect("an id").to_string();
    qsub.exp_string(&format!("qsub: job {id} ready\r\n\r\n")).expect("the ready line and an empty line");
    id
}

/// The exit code of qsub once it ends.
fn exit_code(qsub: &PtySession) -> i32 {
    match qsub.process().wait().expect("qsub is waited for") {
        WaitStatus::Exited(_, code) => code,
        other => panic!("qsub did not exit normally: {other:?}"),
    }
}

/// Sets the window size of the pty qsub runs on (the kernel signals SIGWINCH to qsub).
fn set_outer_size(qsub: &PtySession, rows: u16, cols: u16) {
    let master = qsub.process().get_file_handle().expect("the pty master");
    let size = rustix::termios::Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    rustix::termios::tcsetwinsize(&master, size).expect("TIOCSWINSZ on the pty master");
}

#[test]
fn interactive_shell_on_the_first_node_with_the_pbs_environment() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-S", "/bin/sh", "-N", "inter", "-l", "nodes=2:ppn=1"]);
    let id = until_ready(&mut qsub);
    let host = nix::unistd::gethostname().unwrap().into_string().unwrap();
    // Markers around each value: the echoed command line never matches, only the output.
    qsub.send_line(r#"echo "H$(hostname)H""#).unwrap();
    qsub.exp_string(&format!("H{host}H")).expect("hostname runs in the job");
    qsub.send_line(r#"echo "J${PBS_JOBID}J""#).unwrap();
    qsub.exp_string(&format!("J{id}J")).expect("PBS_JOBID");
    qsub.send_line(r#"echo "E${PBS_ENVIRONMENT}E""#).unwrap();
    qsub.exp_string("EPBS_INTERACTIVEE").expect("PBS_ENVIRONMENT");
    let home = uzers::get_user_by_uid(uzers::get_current_uid()).unwrap().home_dir().display().to_string();
    qsub.send_line(r#"echo "D$(pwd)D"; tty >/dev/null && echo "T-tty-T""#).unwrap();
    qsub.exp_string(&format!("D{home}D")).expect("starts in the home directory");
    qsub.exp_string("T-tty-T").expect("stdin is a terminal");
    // Every node is this host: the mom that runs the shell shows in the spool path it gives.
    let exec_host = cluster.job_attr(&id, "exec_host").expect("exec_host while running");
    let first = exec_host.split('/').next().unwrap().to_string();
    assert_eq!(exec_host.matches('+').count(), 1, "two nodes: {exec_host}");
    qsub.send_line(r#"echo "N$(head -1 $PBS_NODEFILE)N"; echo "P${PBS_NODEFILE}P""#).unwrap();
    qsub.exp_string(&format!("N{first}N")).expect("the first node of the allocation heads the nodefile");
    qsub.exp_regex(&format!("P[^P]*/mom/{first}/aux/[^P]*P")).expect("the first node's mom runs the shell");
    qsub.send_line("exit 3").unwrap();
    qsub.exp_string(&format!("\r\nqsub: job {id} completed\r\n")).expect("the completed line");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 3, "qsub exits with the shell's exit code");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 3, "{}", cluster.logs());
    assert_eq!(cluster.job_attr(&id, "interactive").as_deref(), Some("True"));
    assert_eq!(cluster.job_attr(&id, "Rerunable").as_deref(), Some("False"));
    let full = String::from_utf8(cluster.run("qstat", &["-x", "-f", &id]).stdout).unwrap();
    assert!(!full.contains("secret") && full.contains("interactive = True"), "{full}");
    let seq = id.split('.').next().unwrap();
    assert!(!cluster.work.path().join(format!("inter.o{seq}")).exists(), "no output file for an interactive job");
}

#[test]
fn window_size_and_ctrl_c_reach_the_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &[]);
    set_outer_size(&qsub, 30, 90);
    until_ready(&mut qsub);
    qsub.send_line(r#"echo "S$(stty size)S""#).unwrap();
    qsub.exp_string("S30 90S").expect("the size qsub had when the job started");
    set_outer_size(&qsub, 33, 101);
    // The new size travels as a message after SIGWINCH; ask until the job sees it.
    tests::wait_for(Duration::from_secs(20), "the new window size in the job", || {
        qsub.send_line(r#"echo "S$(stty size)S""#).unwrap();
        let (_, size) = qsub.exp_regex(r"S\d+ \d+S").expect("stty size output");
        (size == "S33 101S").then_some(())
    });
    // The marker comes from the process that then sleeps: once it shows, that process is the
    // terminal's foreground job and Ctrl-C is not taken by the shell's line editing.
    qsub.send_line(r#"sh -c 'echo "Z-$$-Z"; exec sleep 1000'"#).unwrap();
    qsub.exp_regex(r"Z-\d+-Z").expect("the sleeper runs");
    qsub.send_control('c').unwrap();
    qsub.send_line(r#"echo "C$?C""#).unwrap();
    qsub.exp_string("C130C").expect("Ctrl-C interrupted sleep through the job's terminal");
    qsub.send_line("exit").unwrap();
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 0);
}

#[test]
fn qdel_ends_the_session_and_qsub() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &[]);
    let id = until_ready(&mut qsub);
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    qsub.exp_string(&format!("qsub: job {id} completed")).expect("qsub reports the end");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 128 + libc::SIGHUP, "the shell was hung up");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 256 + libc::SIGHUP, "{}", cluster.logs());
}

#[test]
fn qdel_while_waiting_ends_qsub() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-h"]);
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).unwrap().to_string();
    assert!(cluster.run("qdel", &[&id]).status.success());
    qsub.exp_string(&format!("qsub: job {id} apparently deleted")).expect("qsub notices");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 1);
}

#[test]
fn a_killed_qsub_ends_its_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &[]);
    let id = until_ready(&mut qsub);
    qsub.process_mut().signal(Signal::SIGTERM).unwrap();
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 128 + libc::SIGTERM);
    let status = cluster.wait_finished(&id, Duration::from_secs(20));
    assert_eq!(status, 256 + libc::SIGHUP, "the mom hung up the job: {}", cluster.logs());
}

#[test]
fn x11_forwarding_is_ignored_with_a_warning_and_the_session_runs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-X"]);
    qsub.exp_string("qsub: warning: -X: minipbs does not forward X11; ignored").expect("the warning");
    let id = until_ready(&mut qsub);
    qsub.send_line("exit 4").unwrap();
    qsub.exp_string(&format!("qsub: job {id} completed")).expect("the completed line");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 4);
}

#[test]
fn refused_combinations_and_no_terminal() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let cases: [&[&str]; 4] = [&["-I", "-X"], &["-X", "job.sh"], &["-I", "-J", "1-3"], &["-I"]];
    cluster.script("job.sh", "true\n");
    let mut report = String::new();
    for args in cases {
        let output = cluster.command("qsub").args(args).stdin(Stdio::null()).output().unwrap();
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        report.push_str(&format!("$ qsub {} -> exit {:?}\n{stderr}", args.join(" "), output.status.code()));
    }
    insta::assert_snapshot!(report);
    let listed = cluster.run("qstat", &["-x"]);
    assert!(listed.stdout.is_empty(), "nothing was submitted");
}

#[test]
fn walltime_ends_the_session_with_the_reason_on_the_terminal() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-l", "walltime=00:00:02"]);
    let id = until_ready(&mut qsub);
    qsub.exp_string("=>> PBS: job killed: walltime").expect("the reason on the user's terminal");
    qsub.exp_string(&format!("qsub: job {id} completed")).expect("qsub reports the end");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 1, "a job the mom ended is a failure");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), -29, "{}", cluster.logs());
}

#[test]
fn all_output_arrives_before_the_end_and_no_secret_is_logged() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &[]);
    let id = until_ready(&mut qsub);
    qsub.send_line("seq 1 30000; exit 0").unwrap();
    let before = qsub.exp_string(&format!("qsub: job {id} completed")).expect("the completed line");
    assert!(before.contains("\r\n29999\r\n30000\r\n"), "the last lines arrived before the end");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 0);
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 0);
    // The secret is 32 hex digits; the logs (info level) hold no such run.
    for entry in std::fs::read_dir(cluster.state.path().join("logs")).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let longest =
            text.split(|c: char| !(c.is_ascii_digit() || ('a'..='f').contains(&c))).map(str::len).max().unwrap_or(0);
        assert!(longest < 32, "{} holds a secret-like value", entry.path().display());
    }
}

#[test]
fn a_job_whose_qsub_is_gone_ends_when_it_starts() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-h"]);
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).unwrap().to_string();
    qsub.process_mut().kill(Signal::SIGKILL).unwrap();
    assert!(cluster.run("qrls", &[&id]).status.success());
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), -1, "{}", cluster.logs());
}

#[test]
fn interrupting_a_waiting_qsub_deletes_its_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut qsub = qsub_interactive(&cluster, &["-h"]);
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).unwrap().to_string();
    qsub.send_control('c').unwrap();
    qsub.exp_string(&format!("Job {id} is being deleted")).expect("qsub says so");
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 2);
    tests::wait_for(Duration::from_secs(20), "the job to be deleted", || {
        (cluster.job_attr(&id, "job_state")? == "F").then_some(())
    });
}

#[test]
fn a_script_gives_directives_only_and_d_sets_the_start_directory() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let marker = cluster.work.path().join("ran");
    let script = cluster.script("inter.sh", &format!("#PBS -N fromdirective\n#PBS -I\ntouch {}\n", marker.display()));
    let mut command = cluster.command("qsub");
    command.args(["-d", "/tmp"]).arg(&script);
    let mut qsub = rexpect::session::spawn_command(command, Some(EXPECT_MS)).expect("qsub starts on a pty");
    until_ready(&mut qsub);
    qsub.send_line(r#"echo "N${PBS_JOBNAME}N"; echo "D$(pwd)D""#).unwrap();
    qsub.exp_string("NfromdirectiveN").expect("the directive's name");
    qsub.exp_string("D/tmpD").expect("-d is the start directory");
    qsub.send_line("exit").unwrap();
    qsub.exp_eof().expect("qsub ends");
    assert_eq!(exit_code(&qsub), 0);
    assert!(!marker.exists(), "the script itself does not run");
}

/// The ports `pid` listens on over TCP (its sockets' inodes matched in /proc/net/tcp{,6}).
fn listening_ports(pid: i32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| fds.flatten().filter_map(|fd| std::fs::read_link(fd.path()).ok()).collect::<Vec<_>>())
        .unwrap_or_default()
        .iter()
        .filter_map(|link| link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']').map(String::from))
        .collect();
    let tables = ["/proc/net/tcp", "/proc/net/tcp6"].map(|path| std::fs::read_to_string(path).unwrap_or_default());
    let mut ports: Vec<u16> = tables
        .iter()
        .flat_map(|table| table.lines().skip(1))
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let listening =
                fields.get(3) == Some(&"0A") && inodes.iter().any(|inode| fields.get(9) == Some(&inode.as_str()));
            let port = fields.get(1)?.rsplit_once(':')?.1;
            listening.then(|| u16::from_str_radix(port, 16).ok()).flatten()
        })
        .collect();
    ports.dedup();
    ports
}

/// The one process whose environment holds `mark` (`NAME=value`).
fn marked_process(mark: &str) -> i32 {
    let marked: Vec<i32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            environ.split(|&byte| byte == 0).any(|entry| entry == mark.as_bytes())
        })
        .collect();
    assert_eq!(marked.len(), 1, "one process marked {mark}: {marked:?}");
    marked[0]
}

/// A `qsub -I` killed while waiting leaves its port free; another process takes it and answers
/// the mom with a guess and an `Accept`. It hears only the challenge (no secret), gets no
/// terminal, and the job ends without a shell having run.
#[test]
fn a_fake_listener_on_a_dead_qsubs_port_gets_neither_the_secret_nor_a_shell() {
    use proto::interactive::{MomToQsub, QsubToMom, WindowSize};
    use std::io::Read;
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    // rexpect does not tell the pid: the process is found by a mark in its environment.
    let mark = format!("MINIPBS_TEST_MARK=fake-listener-{}", std::process::id());
    let mut command = cluster.command("qsub");
    command.args(["-I", "-h"]).env("MINIPBS_TEST_MARK", mark.split_once('=').unwrap().1);
    let mut qsub = rexpect::session::spawn_command(command, Some(EXPECT_MS)).expect("qsub -I starts on a pty");
    let (_, waiting) = qsub.exp_regex(r"qsub: waiting for job \S+ to start").expect("the waiting line");
    let id = waiting.split_whitespace().nth(4).unwrap().to_string();
    let pid = marked_process(&mark);
    let ports = listening_ports(pid);
    assert_eq!(ports.len(), 1, "qsub listens on one port: {ports:?}");
    qsub.process_mut().kill(Signal::SIGKILL).unwrap();
    tests::wait_for(Duration::from_secs(10), "qsub to be gone", || tests::process_gone(pid).then_some(()));
    let fake = tests::wait_for(Duration::from_secs(10), "the dead qsub's port", || {
        std::net::TcpListener::bind(("0.0.0.0", ports[0])).ok()
    });
    fake.set_nonblocking(true).unwrap();
    assert!(cluster.run("qrls", &[&id]).status.success());
    let (mut stream, _) = tests::wait_for(Duration::from_secs(30), "the mom to connect", || fake.accept().ok());
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let first: MomToQsub = proto::frame::read(&mut stream).expect("a frame the current protocol knows");
    assert!(matches!(first, MomToQsub::Challenge { .. }), "{first:?}");
    let guess = QsubToMom::Proof { nonce: "00".repeat(32), proof: "11".repeat(32), credential: None };
    proto::frame::write(&mut stream, &guess).unwrap();
    let _ = proto::frame::write(&mut stream, &QsubToMom::Accept { term: None, size: WindowSize::default() });
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(rest.is_empty(), "the mom sent nothing after the challenge: {}", String::from_utf8_lossy(&rest));
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), -1, "no shell ran: {}", cluster.logs());
}
