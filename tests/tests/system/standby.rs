//! Two servers on one PostgreSQL store (`minipbs up --standby`): when the active one dies the
//! standby takes over within 10 s, with every printed id and the running jobs, and commands
//! and moms follow it unchanged; an active server stopped past its lease and resumed writes
//! nothing and exits (split brain).

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

fn signal(pid: i32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).expect("signal the server");
}

/// A cluster with a standby (and its own PostgreSQL). Needs PostgreSQL's server: fails under CI
/// without it.
fn standby_cluster(extra: &[&str]) -> Option<Cluster> {
    if !std::path::Path::new("/usr/lib/postgresql").is_dir() {
        tests::skip("PostgreSQL is not installed (apt-get install postgresql)");
        return None;
    }
    let mut args = vec!["--standby"];
    args.extend_from_slice(extra);
    Some(Cluster::up_with(Shape { nodes: 2, ppn: 4, gpus: 0 }, &args))
}

/// Job ids in `qstat -x`.
fn listed(cluster: &Cluster) -> HashSet<String> {
    let output = cluster.run("qstat", &["-x"]);
    assert!(output.status.success(), "qstat -x: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .skip(2)
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_standby_takes_over_after_kill_9_with_every_printed_id_and_the_running_jobs() {
    let Some(cluster) = standby_cluster(&[]) else { return };
    let cluster = Arc::new(cluster);
    // Its PostgreSQL trusts whoever reaches its socket: nobody but its owner and root may.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(cluster.state.path().join("postgres")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the cluster's PostgreSQL socket directory is private");
    if tests::is_root() {
        let url = tests::postgres_url(cluster.state.path());
        let psql = std::process::Command::new("runuser")
            .args(["-u", "nobody", "--", "psql", &url, "-c", "SELECT 1"])
            .output()
            .expect("runuser runs");
        assert!(
            !psql.status.success(),
            "another user connected to the job store: {}",
            String::from_utf8_lossy(&psql.stdout)
        );
    }
    let flag = cluster.work.path().join("go");
    let long = cluster.script("long.sh", &format!("while [ ! -e {} ]; do sleep 0.1; done\nexit 3\n", flag.display()));
    let running: Vec<String> = (0..2).map(|_| cluster.qsub(&long, &[])).collect();
    for id in &running {
        tests::wait_for(Duration::from_secs(20), "the long jobs to run", || {
            (cluster.job_attr(id, "job_state")? == "R").then_some(())
        });
    }
    let quick = cluster.script("quick.sh", "true\n");
    let printed = Arc::new(AtomicUsize::new(0));
    let submitters = tests::submit_concurrently(&cluster, &quick, 8, 25, &printed);
    tests::wait_for(Duration::from_secs(60), "some submissions", || {
        (printed.load(Ordering::SeqCst) >= 40).then_some(())
    });
    signal(cluster.server_pid(), nix::sys::signal::Signal::SIGKILL);
    let killed = Instant::now();
    tests::wait_for(Duration::from_secs(10), "the standby to serve within 10 s", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    eprintln!("the standby served {:.2} s after the kill", killed.elapsed().as_secs_f64());
    let ids: Vec<String> = submitters.into_iter().flat_map(|handle| handle.join().unwrap()).collect();
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "an id was printed twice: {ids:?}");
    assert!(ids.len() >= 40, "submissions before the kill ({} ids)", ids.len());
    let after = listed(&cluster);
    for id in ids.iter().chain(&running) {
        assert!(after.contains(id), "{id} was printed but is not known to the new active server\n{after:?}");
    }
    // The moms follow the new server: the long jobs end with their own status, and new work runs.
    std::fs::write(&flag, "").unwrap();
    for id in &running {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(30)), 3, "{}", cluster.logs());
    }
    let fresh = cluster.qsub(&cluster.script("after.sh", "exit 5\n"), &[]);
    assert_eq!(cluster.wait_finished(&fresh, Duration::from_secs(30)), 5, "{}", cluster.logs());
}

#[test]
fn an_active_server_stopped_past_its_lease_writes_nothing_and_exits() {
    // Unix sockets: over TCP on one host the stopped server would keep the port the standby
    // needs (real heads are two hosts).
    let Some(cluster) = standby_cluster(&["--transport", "unix", "--server-arg=--lease-time=2"]) else { return };
    let before = cluster.qsub(&cluster.script("before.sh", "true\n"), &[]);
    let old = cluster.server_pid();
    // The active server keeps its lease for longer than two lease times (it renews it).
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(5) {
        assert!(!tests::process_gone(old), "the active server stopped on its own: {}", cluster.logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let log = std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap();
    assert!(!log.contains("cannot renew"), "{log}");
    signal(old, nix::sys::signal::Signal::SIGSTOP);
    // A submission sent to the stopped server waits in its socket's backlog ...
    let pending = cluster.command("qsub").arg(cluster.script("late.sh", "true\n")).output_async();
    // Until the standby has bound the socket, a command would join the stopped server's backlog.
    tests::wait_for(Duration::from_secs(15), "the standby to take over and listen", || {
        let log = std::fs::read_to_string(cluster.state.path().join("logs/server2.log")).unwrap_or_default();
        let active = log.split("holds the store's lease: active").nth(1)?;
        active.contains("server ready").then_some(())
    });
    tests::wait_for(Duration::from_secs(10), "the new active server to serve", || {
        cluster.run("qstat", &[]).status.success().then_some(())
    });
    let during = cluster.qsub(&cluster.script("during.sh", "true\n"), &[]);
    // ... and is refused when the old server resumes: it finds the lease taken and exits.
    signal(old, nix::sys::signal::Signal::SIGCONT);
    tests::wait_for(Duration::from_secs(10), "the old server to exit", || tests::process_gone(old).then_some(()));
    let late = pending.wait_with_output().expect("qsub ends");
    let log = std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap();
    // Whichever noticed first: the lease keeper, a commit's lease check, or (when it was stopped
    // inside a transaction, which PostgreSQL then ended) the commit's broken connection.
    let fenced = ["writes nothing more", "no longer active", "pbs_server exits to recover from the store"];
    assert!(fenced.iter().any(|line| log.contains(line)), "{log}");
    // The late qsub was refused by the fenced server, or (had it given up on that server and
    // tried again) acknowledged by the new one: either way every printed id is stored.
    let jobs = listed(&cluster);
    let mut expected = HashSet::from([before, during]);
    if late.status.success() {
        expected.insert(String::from_utf8(late.stdout).unwrap().trim().to_string());
    }
    assert_eq!(jobs, expected, "the jobs stored are exactly those acknowledged");
}

/// `Command::spawn` with its output captured, for a command that blocks.
trait OutputAsync {
    fn output_async(&mut self) -> std::process::Child;
}

impl OutputAsync for std::process::Command {
    fn output_async(&mut self) -> std::process::Child {
        self.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the command starts")
    }
}
