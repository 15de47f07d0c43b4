//! Hostile input at the server's port (issue 4, "bounded inputs"): a thousand garbage and
//! truncated frames (random bytes, huge length prefixes, cut-short bodies, valid lengths of
//! invalid JSON, a valid `Hello` then garbage or a huge declared frame that never comes) while
//! silent and slow connections are held open and another thread runs `qstat` all along. Every
//! `qstat` succeeds, the server's resident memory stays within a bound of what it was, silent
//! connections are closed by the server, and the log is not flooded (warnings rate-limited).

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::{Cluster, Shape};

/// Frames thrown at the server in all.
const FRAMES: usize = 1000;
/// Connections throwing them at once.
const ATTACKERS: usize = 4;
/// Silent connections held open during the attack.
const SILENT: usize = 40;
/// How long the server may take to hang up on a silent or slow connection (frame deadline plus
/// slack for a loaded machine).
const HANG_UP_LIMIT: Duration = Duration::from_secs(60);
/// How much the server's resident size may grow.
const RSS_SLACK_KIB: u64 = 16 * 1024;

/// A connection to the server, whatever the transport.
trait Peer: Read + Write + Send {}
impl<T: Read + Write + Send> Peer for T {}

/// Connects to the server's client port: its TCP port when the cluster runs over TCP + MUNGE
/// (`MINIPBS_TEST_TRANSPORT=tcp`), else its Unix socket. The one place that knows the transport.
fn connect(cluster: &Cluster) -> Box<dyn Peer> {
    if let Some(port) = cluster.server_port() {
        let stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        return Box::new(stream);
    }
    connect_unix(cluster)
}

/// Connects to the server's Unix socket.
fn connect_unix(cluster: &Cluster) -> Box<dyn Peer> {
    let stream = std::os::unix::net::UnixStream::connect(cluster.state.path().join("server.sock")).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    Box::new(stream)
}

/// Each attacker's bytes come from a seeded `fastrand` generator, so a failure can be replayed.
/// Not proptest: what is checked holds for the whole attack at once (memory, qstat all along,
/// hang-ups), not for one frame, so there is no single case to shrink.
type Noise = fastrand::Rng;

fn noise_bytes(noise: &mut Noise, len: usize) -> Vec<u8> {
    std::iter::repeat_with(|| noise.u8(..)).take(len).collect()
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
    bytes.extend_from_slice(body);
    bytes
}

fn hello() -> Vec<u8> {
    proto::frame::encode(&proto::Hello::new(proto::Role::Client, None)).unwrap()
}

/// Sends the `n`th kind of garbage on a fresh connection, then closes it. Write and read errors
/// are expected (the server hangs up on garbage) and ignored.
fn throw(cluster: &Cluster, n: usize, noise: &mut Noise) {
    let mut peer = connect(cluster);
    let len = 16 + noise.usize(..4000);
    let bytes = match n % 8 {
        0 => noise_bytes(noise, len),
        1 => [&[0xff, 0xff, 0xff, 0xff][..], &noise_bytes(noise, len)].concat(),
        2 => [&(16u32 << 20).to_be_bytes()[..], &noise_bytes(noise, len)].concat(),
        3 => frame(&noise_bytes(noise, len))[..len / 2].to_vec(),
        4 => frame(&noise_bytes(noise, len)),
        5 => [hello(), frame(b"{\"StatusJob\": [1, 2")].concat(),
        6 => [hello(), (15u32 << 20).to_be_bytes().to_vec(), noise_bytes(noise, len)].concat(),
        _ => [hello(), vec![0, 0]].concat(),
    };
    let _ = peer.write_all(&bytes);
    if n % 8 == 5 {
        // A complete frame of garbage after the welcome: the server answers and hangs up.
        let mut sink = [0u8; 4096];
        while matches!(peer.read(&mut sink), Ok(read) if read > 0) {}
    }
    // Otherwise the connection closes here, mid-frame for the truncated kinds.
}

fn rss_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("server alive");
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn qstat_ok(cluster: &Cluster, id: &str) -> Result<(), String> {
    let output = cluster.run("qstat", &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() && stdout.contains(id.split('.').next().unwrap()) {
        Ok(())
    } else {
        Err(format!("qstat: {:?}\n{stdout}{}", output.status, String::from_utf8_lossy(&output.stderr)))
    }
}

#[test]
fn garbage_at_the_server_port_does_not_stop_qstat_or_grow_memory() {
    let cluster = Arc::new(Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 }));
    let script = cluster.script("held.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h"]);
    qstat_ok(&cluster, &id).unwrap();
    let pid = cluster.server_pid();
    let before = rss_kib(pid);
    let log_lines_before = server_log(&cluster).lines().count();

    let mut silent: Vec<Box<dyn Peer>> = (0..SILENT).map(|_| connect(&cluster)).collect();
    // Half of them say hello and then begin a frame they never finish (slow loris).
    for peer in silent.iter_mut().skip(SILENT / 2) {
        peer.write_all(&[hello(), vec![0, 0, 1, 0, b'{']].concat()).unwrap();
    }
    let attacking = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (cluster, attacking, id) = (cluster.clone(), attacking.clone(), id.clone());
        std::thread::spawn(move || {
            let mut runs = 0;
            while attacking.load(Ordering::Relaxed) {
                qstat_ok(&cluster, &id).map_err(|error| format!("qstat #{runs} failed under attack: {error}"))?;
                runs += 1;
            }
            Ok::<usize, String>(runs)
        })
    };
    let attackers: Vec<_> = (0..ATTACKERS)
        .map(|attacker| {
            let cluster = cluster.clone();
            std::thread::spawn(move || {
                let mut noise = Noise::with_seed(0x9e37_79b9_7f4a_7c15 ^ (attacker as u64 + 1));
                for n in (attacker..FRAMES).step_by(ATTACKERS) {
                    throw(&cluster, n, &mut noise);
                }
            })
        })
        .collect();
    for attacker in attackers {
        attacker.join().unwrap();
    }
    attacking.store(false, Ordering::Relaxed);
    let runs = watcher.join().unwrap().unwrap_or_else(|error| panic!("{error}\n{}", cluster.logs()));
    assert!(runs > 0, "qstat never ran during the attack");
    qstat_ok(&cluster, &id).unwrap();

    let after = rss_kib(pid);
    assert!(after <= before + RSS_SLACK_KIB, "server RSS grew from {before} KiB to {after} KiB");

    // The server hangs up on the silent ones (hello timeout, 10 s) and on the slow ones (the
    // frame deadline, 30 s), whatever they do.
    let started = Instant::now();
    for (n, peer) in silent.iter_mut().enumerate() {
        let mut sink = [0u8; 64];
        let closed = loop {
            match peer.read(&mut sink) {
                Ok(0) => break true,
                Ok(_) => continue,
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                    if started.elapsed() > HANG_UP_LIMIT {
                        break false;
                    }
                }
                Err(_) => break true,
            }
        };
        assert!(closed, "connection {n} still open after {:?}", started.elapsed());
    }

    let log = server_log(&cluster);
    let new_lines: Vec<&str> = log.lines().skip(log_lines_before).collect();
    let warnings = new_lines.iter().filter(|line| line.contains("unreadable frame")).count();
    assert!(warnings >= 1, "garbage not logged at all:\n{}", new_lines.join("\n"));
    assert!(new_lines.len() < 100, "{} log lines for {FRAMES} garbage frames:\n{}", new_lines.len(), log);
}

fn server_log(cluster: &Cluster) -> String {
    std::fs::read_to_string(cluster.state.path().join("logs/server.log")).unwrap_or_default()
}

/// `$ qsub args` with stdin, as a transcript line: stderr and the exit code.
fn qsub_transcript(cluster: &Cluster, args: &[&str], stdin: Option<Vec<u8>>, env: &[(String, &str)]) -> String {
    let mut child = cluster
        .command("qsub")
        .args(args)
        .envs(env.iter().map(|(name, value)| (name, value)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("qsub runs");
    let mut input = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin.unwrap_or_default());
    });
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    format!(
        "$ qsub {}\n{}[exit {}]\n",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr),
        output.status.code().unwrap_or(-1)
    )
}

/// `Variable_List: 4103 variables, ...` becomes `Variable_List: N variables, ...`.
fn environment_dependent_count(line: String) -> String {
    match line.split_once("Variable_List: ") {
        Some((head, tail)) => {
            format!("{head}Variable_List: N{}", tail.trim_start_matches(|c: char| c.is_ascii_digit()))
        }
        None => line,
    }
}

#[test]
fn jobs_over_the_limits_are_refused_by_qsub_and_by_the_server() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let big = format!("#!/bin/sh\n{}", "# padding\n".repeat(job::limits::MAX_SCRIPT_SIZE / 10 + 1));
    let script = cluster.script("big.sh", &big);
    let mut transcript = qsub_transcript(&cluster, &[script.to_str().unwrap()], None, &[]);
    transcript += &qsub_transcript(&cluster, &[], Some(big.clone().into_bytes()), &[]);
    // One argument or variable cannot pass 128 KiB (the kernel's MAX_ARG_STRLEN): ten big ones
    // through -V.
    let chunk = "x".repeat(job::limits::MAX_VARIABLE_BYTES / 10 + 1);
    let bigs: Vec<(String, &str)> = (0..10).map(|n| (format!("BIG{n}"), chunk.as_str())).collect();
    // The size and the count include qsub's PBS_O_* variables, which depend on its own
    // environment (MAIL, TZ, LANG...): shown as N.
    let line = qsub_transcript(&cluster, &["-V", "--", "/bin/true"], None, &bigs);
    transcript += &environment_dependent_count(line);
    let many: Vec<String> = (0..job::limits::MAX_VARIABLES).map(|n| format!("V{n}=1")).collect();
    let many = many.join(",");
    let line = qsub_transcript(&cluster, &["-v", &many, "--", "/bin/true"], None, &[]).replace(&many, "V0=1,...");
    transcript += &environment_dependent_count(line);
    insta::assert_snapshot!(transcript.replace(&script.display().to_string(), "big.sh"));

    // The server checks again: a client that skips qsub's checks gets the same refusal.
    let mut spec: job::JobSpec = serde_json::from_value(serde_json::json!({
        "name": "big", "script": big, "queue": null, "resources": [], "output_path": null,
        "error_path": null, "join": "No", "keep": "n", "user_hold": false, "rerunnable": true,
        "priority": 0, "variables": [], "shell": null, "init_dir": null, "mail_points": "a",
        "mail_users": [], "account": null, "submit_host": "h", "submit_args": ""
    }))
    .unwrap();
    spec.variables.push("PBS_O_WORKDIR", "/tmp");
    // Unsealed frames: the server's own check, over its Unix socket whatever the transport.
    let mut peer = connect_unix(&cluster);
    proto::frame::write(&mut peer, &proto::Hello::new(proto::Role::Client, None)).unwrap();
    let _: proto::HelloReply = proto::frame::read(&mut peer).unwrap();
    proto::frame::write(&mut peer, &proto::ClientRequest::SubmitJob(Box::new(spec))).unwrap();
    match proto::frame::read::<proto::ServerReply>(&mut peer).unwrap() {
        proto::ServerReply::Error(error) => assert_eq!(error.code.number(), 15175, "{error:?}"),
        other => panic!("the server took an oversized script: {other:?}"),
    }
    let listing = cluster.run("qstat", &[]);
    assert!(listing.status.success() && listing.stdout.is_empty(), "nothing stored: {listing:?}");
}
