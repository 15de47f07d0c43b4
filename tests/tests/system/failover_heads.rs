//! Commands and moms with two heads configured (`PBS_PRIMARY`/`PBS_SECONDARY`, `pbs_mom
//! --secondary`; pbs-reference section 13) follow the one that answers: a primary that accepts
//! and never answers (a stopped server) costs the first command the bound and no later one, and
//! a mom whose primary refuses registers with the secondary; a mom leaves a server stopped with
//! its connection open (SIGSTOP) once its heartbeats stop. TCP + MUNGE on loopback; skipped
//! (loudly) when MUNGE is not installed.

use client::conn::FAILOVER_ANSWER_TIMEOUT;
use std::net::TcpListener;
use std::os::unix::fs::DirBuilderExt;
use std::time::{Duration, Instant};
use tests::{wait_for, Cluster, Shape};

/// A port on loopback nothing listens on.
fn refusing_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Writes a pbs.conf naming `primary` and `secondary` (ports on loopback) as the heads.
fn failover_conf(cluster: &Cluster, primary: u16, secondary: u16) -> std::path::PathBuf {
    let conf = std::fs::read_to_string(&cluster.conf).unwrap();
    let munge = conf.lines().find(|line| line.starts_with("PBS_MUNGE_SOCKET=")).expect("munge socket");
    let text =
        format!("PBS_SERVER=testsrv\nPBS_PRIMARY=127.0.0.1:{primary}\nPBS_SECONDARY=127.0.0.1:{secondary}\n{munge}\n");
    let path = cluster.work.path().join("failover.conf");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_command_leaves_a_silent_primary_once_and_then_goes_to_the_secondary_first() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--transport", "tcp"]);
    // Accepts (the kernel queues the connection) and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = cluster.server_port().expect("server.port written");
    let conf = failover_conf(&cluster, silent.local_addr().unwrap().port(), port);
    let home = cluster.work.path().join("home");
    std::fs::DirBuilder::new().mode(0o700).create(&home).unwrap();
    let qstat = || {
        let started = Instant::now();
        let output = cluster.command("qstat").args(["-B"]).env("PBS_CONF_FILE", &conf).env("HOME", &home).output();
        (output.unwrap(), started.elapsed())
    };
    let (output, first) = qstat();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("testsrv"));
    assert!(first >= FAILOVER_ANSWER_TIMEOUT, "the primary had its chance: {first:?}");
    assert!(first < FAILOVER_ANSWER_TIMEOUT * 3, "and no more: {first:?}");
    let remembered = std::fs::read_to_string(home.join(".minipbs/last-server")).unwrap();
    assert_eq!(remembered, format!("127.0.0.1:{port}\n"));
    let (output, second) = qstat();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(second < FAILOVER_ANSWER_TIMEOUT, "the secondary was tried first: {second:?}");
}

#[test]
fn neither_head_answering_is_one_line_naming_both() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--transport", "tcp"]);
    let first = refusing_port();
    let second = std::iter::repeat_with(refusing_port).find(|port| *port != first).unwrap();
    let conf = failover_conf(&cluster, first, second);
    let output = cluster.command("qstat").env("PBS_CONF_FILE", &conf).env("HOME", cluster.work.path()).output();
    let output = output.unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let prefix = format!("qstat: cannot connect to server testsrv (127.0.0.1:{first}: Connection refused");
    assert!(stderr.starts_with(&prefix), "{stderr}");
    assert!(stderr.contains(&format!("; 127.0.0.1:{second}: Connection refused")), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Starts a mom `node2` like node1, with `primary` and `secondary` as its heads and `extra` flags.
fn spawn_mom(cluster: &Cluster, primary: impl Fn(&str) -> String, secondary: impl Fn(&str) -> String, extra: &[&str]) {
    let mut argv: Vec<String> = cluster.daemon_argv("node1").iter().map(|arg| arg.replace("node1", "node2")).collect();
    let server = argv.iter().position(|arg| arg == "--server").expect("a TCP mom has --server");
    let real = argv[server + 1].clone();
    argv[server + 1] = primary(&real);
    argv.extend(["--secondary".to_string(), secondary(&real)]);
    argv.extend(extra.iter().map(ToString::to_string));
    cluster.spawn_daemon("node2", &argv);
    wait_for(Duration::from_secs(30), "node2 up", || {
        let nodes = String::from_utf8(cluster.run("pbsnodes", &["node2"]).stdout).unwrap();
        nodes.contains("state = free").then_some(())
    });
}

fn node2_log(cluster: &Cluster) -> String {
    std::fs::read_to_string(cluster.state.path().join("logs/node2.log")).unwrap_or_default()
}

#[test]
fn a_mom_whose_primary_refuses_registers_with_the_secondary() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--transport", "tcp"]);
    let refused = format!("127.0.0.1:{}", refusing_port());
    spawn_mom(&cluster, |_| refused.clone(), |real| real.to_string(), &[]);
    let port = cluster.server_port().unwrap();
    // The server lists node2 free on its Hello; the mom logs its registration after the Welcome.
    let registered = format!("registered with the server server=testsrv at=127.0.0.1:{port}");
    let log = wait_for(Duration::from_secs(10), "node2's registration logged", || {
        let log = node2_log(&cluster);
        log.contains(&registered).then_some(log)
    });
    assert!(log.contains(&format!("cannot connect to {refused}")), "{log}");
}

/// Continues a stopped process when dropped (a failed assertion must not leave it stopped).
struct Stopped(nix::unistd::Pid);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
    }
}

#[test]
fn a_mom_leaves_a_server_stopped_with_its_connection_open() {
    if !tests::munge_installed() {
        return;
    }
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--transport", "tcp"]);
    let refused = format!("127.0.0.1:{}", refusing_port());
    // Heartbeats every second both ways: the silence is noticed after 3 s.
    spawn_mom(&cluster, |real| real.to_string(), |_| refused.clone(), &["--heartbeat", "1"]);
    // Stopped only once the mom is registered: stopped before, the server leaves the mom's
    // handshake unanswered, which is another failure than the silence this test is about.
    wait_for(Duration::from_secs(30), "the mom registered", || {
        node2_log(&cluster).contains("registered with the server").then_some(())
    });
    let server = nix::unistd::Pid::from_raw(cluster.server_pid());
    nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let stopped = Stopped(server);
    wait_for(Duration::from_secs(30), "the mom noticing the silence", || {
        node2_log(&cluster).contains("server silent for 3s after its heartbeats").then_some(())
    });
    // It went on to the secondary (refused), and is back once the server runs again.
    drop(stopped);
    wait_for(Duration::from_secs(30), "the mom registered again", || {
        (node2_log(&cluster).matches("registered with the server").count() >= 2).then_some(())
    });
    assert!(node2_log(&cluster).contains(&format!("cannot connect to {refused}")), "{}", node2_log(&cluster));
}
