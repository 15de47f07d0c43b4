//! Several hosts on one machine (network namespaces joined by a bridge, one `munged` per host;
//! `tests/src/netns.rs`): the server, two moms and a login host talking TCP + MUNGE. A job
//! spans both moms; replayed, forged and other-key credentials are refused and logged with the
//! peer's address, at the server and at a mom's port; a killed mom, or one cut off the network,
//! is marked down within 30 s and comes back. `qsub -I` from the login host gets a terminal on a
//! mom that cannot resolve the login host's name.
//! Every test skips (`tests::skip`: prints `SKIPPED: ...` and passes, but fails under CI) when
//! it is not root or `ip netns` is missing.

use crate::users::TestUser;
use proto::frame;
use proto::mom::{HostAlloc, JobLaunch, ServerToMom};
use proto::seal::{self, Binding, Direction, Nonce};
use proto::{ErrorCode, HelloReply};
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tests::netcluster::{NetCluster, LOGIN, MOM_PORT, SERVER, SERVER_PORT};
use tests::netns::{Host, Net};

/// Credentials made on one host decode on another with the same key; a credential decodes
/// once (replay refused); another key's does not decode. This checks the harness's munged
/// set-up, without minipbs.
#[test]
fn munge_credentials_cross_hosts_once_and_only_with_the_shared_key() {
    let Some(net) = Net::new(&["alpha", "beta"]) else { return };
    let (alpha, beta) = (net.host("alpha"), net.host("beta"));
    let encode = |socket: &std::path::Path| {
        let output = net.command(alpha, "munge").arg("-S").arg(socket).args(["-s", "hello"]).output().unwrap();
        assert!(output.status.success(), "munge: {}", String::from_utf8_lossy(&output.stderr));
        output.stdout
    };
    let decode = |credential: &[u8]| {
        let mut child = net
            .command(beta, "unmunge")
            .arg("-S")
            .arg(&beta.munge_socket)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(credential).unwrap();
        let output = child.wait_with_output().unwrap();
        (output.status.success(), String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let credential = encode(&alpha.munge_socket);
    let (ok, text) = decode(&credential);
    assert!(ok && text.contains("STATUS:          Success") && text.ends_with("hello"), "{text}");
    let (ok, text) = decode(&credential);
    assert!(!ok && text.contains("Replayed credential"), "{text}");
    let (ok, _) = decode(&encode(&net.other_key_socket));
    assert!(!ok, "a credential of another key decoded");

    // The hosts reach each other over the bridge, by name, and only inside the network.
    let listener = net.in_host(beta, || TcpListener::bind((beta.addr, 0)).unwrap());
    let port = listener.local_addr().unwrap().port();
    let output = net.run(alpha, "getent", &["hosts", "beta"]);
    assert_eq!(String::from_utf8_lossy(&output.stdout).split_whitespace().next(), Some("10.201.0.2"));
    let mut stream = net.in_host(alpha, || TcpStream::connect((beta.addr, port)).unwrap());
    stream.write_all(b"ping").unwrap();
    let (mut accepted, peer) = listener.accept().unwrap();
    assert_eq!(peer.ip(), alpha.addr);
    let mut buffer = [0u8; 4];
    accepted.read_exact(&mut buffer).unwrap();
    assert_eq!(&buffer, b"ping");
    let outside = TcpStream::connect_timeout(&SocketAddr::from((beta.addr, port)), Duration::from_millis(300));
    assert!(outside.is_err(), "the test network is reachable from the host's namespace");
}

fn qsub_as(cluster: &NetCluster, user: &TestUser, script: &Path, args: &[&str]) -> String {
    let output = cluster.command_as("qsub", &user.name, user.uid, user.gid).args(args).arg(script).output().unwrap();
    assert!(output.status.success(), "qsub: {}\n{}", String::from_utf8_lossy(&output.stderr), cluster.logs());
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn write_script(cluster: &NetCluster, name: &str, text: &str) -> PathBuf {
    let path = cluster.work.join(name);
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_two_node_job_runs_across_both_moms() {
    let Some(cluster) = NetCluster::up(&["hosta", "hostb"]) else { return };
    let user = TestUser::create("mha");
    let (release, nodes, addr) = (cluster.work.join("release"), cluster.work.join("nodes"), cluster.work.join("addr"));
    let script = write_script(
        &cluster,
        "span.sh",
        &format!(
            "#PBS -l nodes=2:ppn=1\ncat \"$PBS_NODEFILE\" > {nodes}\nip -o -4 addr show dev eth0 > {addr}\n\
             while [ ! -e {release} ]; do sleep 0.1; done\n",
            nodes = nodes.display(),
            addr = addr.display(),
            release = release.display()
        ),
    );
    let id = qsub_as(&cluster, &user, &script, &[]);
    let exec_host = tests::wait_for(Duration::from_secs(30), "the job to run", || {
        let attrs = cluster.job_attrs(&id);
        (attrs.get("job_state").map(String::as_str) == Some("R")).then(|| attrs["exec_host"].clone())
    });
    let mother = exec_host.split('/').next().unwrap().to_string();
    let sister = if mother == "hosta" { "hostb" } else { "hosta" };
    assert!(exec_host.contains("hosta/") && exec_host.contains("hostb/"), "exec_host {exec_host}");
    // Each mom holds its part: the mother superior runs the script (in its own namespace: it
    // sees that host's address), the sister was told to join.
    for node in ["hosta", "hostb"] {
        let attrs = cluster.node_attrs(node);
        let jobs = attrs.get("jobs").cloned().unwrap_or_default();
        assert!(jobs.contains(&id), "{node} does not hold {id}: jobs = {jobs}\n{}", cluster.logs());
        // The server knows each mom by the address its connection came from.
        let (addr, port) = (cluster.host(node).addr.to_string(), MOM_PORT.to_string());
        assert_eq!((attrs.get("Mom"), attrs.get("Port")), (Some(&addr), Some(&port)), "pbsnodes {node}");
    }
    tests::wait_for(Duration::from_secs(10), "the sister's JoinJob", || {
        cluster.log(sister).contains("JoinJob").then_some(())
    });
    tests::wait_for(Duration::from_secs(10), "the job's address", || {
        std::fs::read_to_string(&addr).ok().filter(|text| !text.is_empty())
    });
    std::fs::write(&release, "").unwrap();
    tests::wait_for(Duration::from_secs(30), "the job to finish", || {
        (cluster.job_attrs(&id).get("job_state").map(String::as_str) == Some("F")).then_some(())
    });
    assert_eq!(cluster.job_attrs(&id).get("Exit_status").map(String::as_str), Some("0"), "{}", cluster.logs());
    let mut listed: Vec<String> = std::fs::read_to_string(&nodes).unwrap().lines().map(str::to_string).collect();
    listed.sort();
    assert_eq!(listed, ["hosta", "hostb"], "PBS_NODEFILE");
    let mother_addr = cluster.host(&mother).addr.to_string();
    let seen = std::fs::read_to_string(&addr).unwrap();
    assert!(seen.contains(&format!(" {mother_addr}/24 ")), "the script ran outside {mother}: {seen}");
}

#[test]
fn a_killed_mom_is_marked_down_with_its_reason_and_is_free_again_after_a_restart() {
    let Some(cluster) = NetCluster::up(&["hosta", "hostb"]) else { return };
    cluster.kill9_mom("hostb");
    let attrs = cluster.wait_node_state("hostb", "down", Duration::from_secs(30));
    let comment = attrs.get("comment").cloned().unwrap_or_default();
    assert!(comment.starts_with("node down: "), "pbsnodes hostb shows no reason: {attrs:?}");
    let listed = String::from_utf8(cluster.run("pbsnodes", &["-l"]).stdout).unwrap();
    assert!(listed.starts_with("hostb ") && listed.contains("down") && listed.contains(&comment), "{listed}");
    assert_eq!(cluster.node_attrs("hosta").get("state").map(String::as_str), Some("free"));
    cluster.start_mom("hostb");
    let attrs = cluster.wait_node_state("hostb", "free", Duration::from_secs(30));
    assert!(!attrs.contains_key("comment"), "the down reason stayed: {attrs:?}");
}

#[test]
fn a_mom_cut_off_the_network_is_down_within_30_s_and_free_when_it_is_back() {
    let Some(cluster) = NetCluster::up(&["hosta", "hostb"]) else { return };
    let hostb = cluster.host("hostb").clone();
    cluster.net.set_link(&hostb, false);
    let cut = Instant::now();
    let attrs = cluster.wait_node_state("hostb", "down", Duration::from_secs(40));
    assert!(cut.elapsed() <= Duration::from_secs(31), "marked down after {:?}", cut.elapsed());
    let comment = attrs.get("comment").cloned().unwrap_or_default();
    assert!(comment.starts_with("node down: no heartbeat"), "pbsnodes hostb: {attrs:?}");
    cluster.net.set_link(&hostb, true);
    let attrs = cluster.wait_node_state("hostb", "free", Duration::from_secs(60));
    assert!(!attrs.contains_key("comment"), "the down reason stayed: {attrs:?}");
}

/// Relays connections from `listener` to `upstream`, from a thread in `host`'s namespace,
/// and keeps what each client sent.
pub(crate) fn recording_proxy(host: Host, listener: TcpListener, upstream: SocketAddr) -> Arc<Mutex<Vec<Vec<u8>>>> {
    let records = Arc::new(Mutex::new(Vec::new()));
    let kept = records.clone();
    std::thread::spawn(move || {
        host.enter();
        for client in listener.incoming() {
            let Ok(mut client) = client else { return };
            let Ok(mut server) = TcpStream::connect(upstream) else { return };
            let (mut client_reader, mut server_writer) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let back = std::thread::spawn(move || {
                let _ = std::io::copy(&mut server, &mut client);
                let _ = client.shutdown(Shutdown::Write);
            });
            let mut sent = Vec::new();
            let mut buffer = [0u8; 4096];
            while let Ok(count @ 1..) = client_reader.read(&mut buffer) {
                sent.extend_from_slice(&buffer[..count]);
                if server_writer.write_all(&buffer[..count]).is_err() {
                    break;
                }
            }
            let _ = server_writer.shutdown(Shutdown::Write);
            let _ = back.join();
            kept.lock().unwrap().push(sent);
        }
    });
    records
}

/// Sends `bytes` to the server from the login host on a new connection and returns what
/// came back before the server closed it.
fn send_raw(cluster: &NetCluster, bytes: &[u8]) -> Vec<u8> {
    let server = SocketAddr::from((cluster.host(SERVER).addr, SERVER_PORT));
    let mut stream = cluster.net.in_host(cluster.host(LOGIN), || TcpStream::connect(server).unwrap());
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(bytes).unwrap();
    let _ = stream.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

/// Waits for a server log line, new since `before` lines, naming the login host's address
/// and containing `word` (case-insensitive).
fn wait_refusal_logged(cluster: &NetCluster, before: usize, word: &str) -> String {
    let login = cluster.host(LOGIN).addr.to_string();
    tests::wait_for(Duration::from_secs(10), &format!("a server log line with {login} and {word}"), || {
        cluster
            .log("server")
            .lines()
            .skip(before)
            .find(|line| line.contains(&login) && line.to_lowercase().contains(word))
            .map(str::to_string)
    })
}

fn log_lines(cluster: &NetCluster) -> usize {
    cluster.log("server").lines().count()
}

#[test]
fn replayed_forged_and_other_key_requests_are_refused_and_logged_with_the_peer() {
    let Some(cluster) = NetCluster::up(&["hosta"]) else { return };
    let login = cluster.host(LOGIN).clone();
    let server = SocketAddr::from((cluster.host(SERVER).addr, SERVER_PORT));
    // A real pbsnodes through a proxy on the login host: it works, and its bytes are kept.
    let listener = cluster.net.in_host(&login, || TcpListener::bind((login.addr, 0)).unwrap());
    let proxy_port = listener.local_addr().unwrap().port();
    let records = recording_proxy(login.clone(), listener, server);
    let proxied_conf = cluster.net.dir.path().join("proxied.conf");
    std::fs::write(
        &proxied_conf,
        format!(
            "PBS_SERVER={LOGIN}\nPBS_BATCH_SERVICE_PORT={proxy_port}\nPBS_MUNGE_SOCKET={}\n",
            login.munge_socket.display()
        ),
    )
    .unwrap();
    let output = cluster.command("pbsnodes").env("PBS_CONF_FILE", &proxied_conf).arg("-a").output().unwrap();
    assert!(output.status.success(), "pbsnodes through the proxy: {}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("hosta"));
    let recorded = tests::wait_for(Duration::from_secs(10), "the recorded request", || records.lock().unwrap().pop());

    // The same bytes again on a new connection: MUNGE refuses the replayed credential.
    let before = log_lines(&cluster);
    let answer = send_raw(&cluster, &recorded);
    wait_refusal_logged(&cluster, before, "credential replayed");
    assert!(!String::from_utf8_lossy(&answer).contains("hosta"), "the replay was answered: {answer:?}");

    // A fresh credential over a changed body: the hash does not match.
    let hello = serde_json::to_vec(&proto::Hello::new(proto::Role::Client, None)).unwrap();
    let mut envelope = seal::seal(&login.munge_socket, &Direction::ToServer, &Binding::Opening, &hello).unwrap();
    let last = envelope.len() - 2;
    envelope[last] ^= 0x01;
    let before = log_lines(&cluster);
    send_raw(&cluster, &frame::prefixed(&envelope).unwrap());
    wait_refusal_logged(&cluster, before, "does not match");

    // Garbage where the credential goes.
    let mut garbage = b"MUNGE:AwQFAAC0garbage0garbage0garbage0garbage0garbage=:\n".to_vec();
    garbage.extend_from_slice(&hello);
    let before = log_lines(&cluster);
    send_raw(&cluster, &frame::prefixed(&garbage).unwrap());
    wait_refusal_logged(&cluster, before, "credential invalid");

    // The real client with a munged of another key: refused.
    let other_conf = cluster.net.dir.path().join("other-key.conf");
    let other_socket = cluster.net.other_key_socket.display();
    let text = format!("PBS_SERVER={SERVER}\nPBS_BATCH_SERVICE_PORT={SERVER_PORT}\nPBS_MUNGE_SOCKET={other_socket}\n");
    std::fs::write(&other_conf, text).unwrap();
    let before = log_lines(&cluster);
    let output = cluster.command("qstat").env("PBS_CONF_FILE", &other_conf).output().unwrap();
    assert!(!output.status.success(), "qstat with another key worked");
    wait_refusal_logged(&cluster, before, "credential invalid");
}

/// A `RunJob` for host `hosta` whose script creates `marker`, as user nobody.
fn forged_run_job(cluster: &NetCluster, tag: &str, marker: &Path) -> Vec<u8> {
    let script = format!("#!/bin/sh\ntouch {}\n", marker.display());
    let work = cluster.work.display().to_string();
    let launch = JobLaunch {
        job_id: format!("{tag}.{SERVER}"),
        name: tag.to_string(),
        queue: "workq".to_string(),
        user: "nobody".to_string(),
        group: None,
        script,
        variables: job::PairList::default(),
        hosts: vec![HostAlloc {
            node: "hosta".to_string(),
            ncpus: 1,
            mpiprocs: 1,
            gpus: Vec::new(),
            mem_bytes: None,
            gpu_uuids: Vec::new(),
            mps: None,
            mom_addr: None,
        }],
        walltime: None,
        kill_delay: 2,
        output_path: format!("{work}/{tag}.o"),
        error_path: format!("{work}/{tag}.e"),
        join: job::spec::Join::No,
        shell: Some("/bin/sh".to_string()),
        init_dir: Some(work),
        num_ppn: 1,
        first_ncpus: 1,
        omp_threads: None,
        cookie: "0123456789abcdef".to_string(),
        array_index: None,
        array_id: None,
        interactive: None,
        root_allowed: false,
        run_count: 1,
        script_args: Vec::new(),
        output_name: String::new(),
        error_name: String::new(),
        exec: Default::default(),
        keep: "n".to_string(),
    };
    serde_json::to_vec(&ServerToMom::RunJob(Box::new(launch))).unwrap()
}

/// Connects from the login host to hosta's mom port, reads the connection's nonce, sends the
/// frame `make` builds for it (returned), and waits until the mom closes the connection or 5 s
/// pass.
fn send_to_mom(cluster: &NetCluster, make: impl FnOnce(Nonce) -> Vec<u8>) -> Vec<u8> {
    let mom = SocketAddr::from((cluster.host("hosta").addr, MOM_PORT));
    let mut stream = cluster.net.in_host(cluster.host(LOGIN), || TcpStream::connect(mom).unwrap());
    stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let nonce: Nonce = frame::read(&mut stream).expect("the mom port's nonce");
    let frame = make(nonce);
    stream.write_all(&frame).unwrap();
    let _ = stream.read_to_end(&mut Vec::new());
    frame
}

/// hosta's mom log lines refusing a message from the login host for `reason`.
fn mom_refusals(cluster: &NetCluster, reason: &str) -> usize {
    let login = format!("refused a message from {}:", cluster.host(LOGIN).addr);
    cluster.log("hosta").lines().filter(|line| line.contains(&login) && line.contains(reason)).count()
}

#[test]
fn a_run_job_at_the_mom_port_runs_only_with_the_server_uids_credential() {
    let Some(cluster) = NetCluster::up(&["hosta"]) else { return };
    let login = cluster.host(LOGIN).clone();
    let nobody = uzers::get_user_by_name("nobody").expect("user nobody");
    let marker = |tag: &str| cluster.work.join(format!("{tag}.ran"));
    let sealed = |tag: &str, socket: &Path, ids: Option<(u32, u32)>, direction: Direction, binding: Binding| {
        let body = forged_run_job(&cluster, tag, &marker(tag));
        let envelope = cluster.net.in_host_as(&login, ids, || seal::seal(socket, &direction, &binding, &body));
        frame::prefixed(&envelope.unwrap()).unwrap()
    };
    let nobody_ids = Some((nobody.uid(), nobody.primary_group_id()));
    let to_hosta = || Direction::ServerToMom("hosta".to_string());
    let first = |nonce: Nonce| Binding::Bound { nonce, sequence: 0 };
    type Attempt<'a> = (&'a str, &'a str, Box<dyn Fn(Nonce) -> Vec<u8> + 'a>);
    let attempts: [Attempt; 6] = [
        (
            "unsealed",
            "unsealed",
            Box::new(|_| frame::prefixed(&forged_run_job(&cluster, "unsealed", &marker("unsealed"))).unwrap()),
        ),
        (
            "nobody",
            "credential of uid",
            Box::new(|nonce| sealed("nobody", &login.munge_socket, nobody_ids, to_hosta(), first(nonce))),
        ),
        (
            "otherkey",
            "credential invalid",
            Box::new(|nonce| sealed("otherkey", &cluster.net.other_key_socket, None, to_hosta(), first(nonce))),
        ),
        // Root's credential, but made for a message to the server (a lifted credential).
        (
            "lifted",
            "does not match",
            Box::new(|nonce| sealed("lifted", &login.munge_socket, None, Direction::ToServer, first(nonce))),
        ),
        // Root's credential for another node's mom.
        (
            "elsewhere",
            "does not match",
            Box::new(|nonce| {
                sealed(
                    "elsewhere",
                    &login.munge_socket,
                    None,
                    Direction::ServerToMom("hostb".to_string()),
                    first(nonce),
                )
            }),
        ),
        // Root's credential for this mom, but made on another connection (another nonce):
        // spliced into this one.
        (
            "spliced",
            "does not match",
            Box::new(|_| sealed("spliced", &login.munge_socket, None, to_hosta(), first(Nonce::fresh().unwrap()))),
        ),
    ];
    for (tag, reason, make) in &attempts {
        let before = mom_refusals(&cluster, reason);
        send_to_mom(&cluster, make);
        tests::wait_for(Duration::from_secs(10), &format!("the mom to log refusing the {tag} RunJob"), || {
            (mom_refusals(&cluster, reason) > before).then_some(())
        });
    }
    // The same instruction with the server uid's credential runs (so the refusals above are
    // the credential's doing), and by then none of the refused ones has run.
    let genuine = send_to_mom(&cluster, |nonce| sealed("genuine", &login.munge_socket, None, to_hosta(), first(nonce)));
    tests::wait_for(Duration::from_secs(30), "the genuine RunJob's marker", || {
        marker("genuine").exists().then_some(())
    });
    for (tag, _, _) in &attempts {
        assert!(!marker(tag).exists(), "the {tag} RunJob ran");
    }
    // The genuine frame once more: MUNGE refuses the replay.
    let before = mom_refusals(&cluster, "replayed");
    send_to_mom(&cluster, |_| genuine.clone());
    tests::wait_for(Duration::from_secs(10), "the mom to log refusing the replayed RunJob", || {
        (mom_refusals(&cluster, "replayed") > before).then_some(())
    });
}

/// A user on the login host who gets the commands to talk to them (a planted pbs.conf, a
/// spoofed address) cannot make them believe a reply: replies must be sealed by root (or, in a
/// personal cluster, by the command's own user).
#[test]
fn a_command_does_not_believe_a_reply_sealed_by_another_user() {
    let Some(cluster) = NetCluster::up(&["hosta"]) else { return };
    let login = cluster.host(LOGIN).clone();
    let nobody = uzers::get_user_by_name("nobody").expect("user nobody");
    let listener = cluster.net.in_host(&login, || TcpListener::bind((login.addr, 0)).unwrap());
    let fake_conf = cluster.net.dir.path().join("fake.conf");
    let text = format!(
        "PBS_SERVER={LOGIN}\nPBS_BATCH_SERVICE_PORT={}\nPBS_MUNGE_SOCKET={}\n",
        listener.local_addr().unwrap().port(),
        login.munge_socket.display()
    );
    std::fs::write(&fake_conf, text).unwrap();
    let qstat = cluster.command("qstat").env("PBS_CONF_FILE", &fake_conf).stderr(Stdio::piped()).spawn().unwrap();
    let ids = Some((nobody.uid(), nobody.primary_group_id()));
    cluster.net.in_host_as(&login, ids, || {
        let (mut stream, _) = listener.accept().unwrap();
        frame::read_body(&mut stream, frame::Limits::NORMAL).unwrap();
        let reply = HelloReply::Refused { code: ErrorCode::System, message: "words of a fake server".to_string() };
        seal::write(&mut stream, &login.munge_socket, &Direction::ServerToClient, &Binding::Legacy, &reply).unwrap();
    });
    let output = qstat.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success() && !stderr.contains("fake server"), "qstat believed nobody: {stderr}");
    assert!(stderr.contains(&format!("uid {}", nobody.uid())), "{stderr}");
}

/// `qsub -I` on the login host, on a real pty: hosta's hosts file does not know `login`, so
/// the mom reaches qsub only because the server names the address the submission came from;
/// qsub listens on that address only. The shell runs on hosta, sees `PBS_O_HOST=login`, and
/// its exit code is qsub's.
#[test]
fn qsub_interactive_from_the_login_host_gets_a_terminal_on_the_mom() {
    let Some(cluster) = NetCluster::up(&["hosta"]) else { return };
    let (hosta, login) = (cluster.host("hosta").clone(), cluster.host(LOGIN).clone());
    let hosts = cluster.net.hosts_file(&hosta);
    let known: String = std::fs::read_to_string(&hosts)
        .unwrap()
        .lines()
        .filter(|line| !line.ends_with(" login"))
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&hosts, known).unwrap();
    assert!(!cluster.net.run(&hosta, "getent", &["hosts", LOGIN]).status.success(), "hosta still resolves login");
    let user = TestUser::create("mhi");
    let mut command = cluster.command_as("qsub", &user.name, user.uid, user.gid);
    command.args(["-I", "-S", "/bin/sh", "-N", "across"]);
    let mut qsub = rexpect::session::spawn_command(command, Some(30_000)).expect("qsub -I starts on a pty");
    let failed = |what: &str| format!("{what}\n{}", cluster.logs());
    let (_, waiting) =
        qsub.exp_regex(r"qsub: waiting for job \S+ to start").unwrap_or_else(|e| panic!("{e}: {}", failed("waiting")));
    let id = waiting.split_whitespace().nth(4).expect("an id").to_string();
    qsub.exp_string(&format!("qsub: job {id} ready\r\n\r\n")).unwrap_or_else(|e| panic!("{e}: {}", failed("ready")));
    // Markers around each value: the echoed command line never matches, only the output.
    qsub.send_line(r#"echo "H$(hostname)H"; echo "O${PBS_O_HOST}O""#).unwrap();
    qsub.exp_string("HhostaH").expect("the shell runs on hosta");
    qsub.exp_string("OloginO").expect("PBS_O_HOST is the login host's name");
    // The only listener on the login host is qsub's, on the address it reached the server from.
    let listening = String::from_utf8(cluster.net.run(&login, "ss", &["-Hltn"]).stdout).unwrap();
    let addresses: Vec<&str> = listening.lines().filter_map(|line| line.split_whitespace().nth(3)).collect();
    assert!(
        addresses.len() == 1 && addresses[0].starts_with(&format!("{}:", login.addr)),
        "qsub listens on {addresses:?}, not on {} only",
        login.addr
    );
    qsub.send_line("exit 5").unwrap();
    qsub.exp_string(&format!("\r\nqsub: job {id} completed\r\n")).expect("the completed line");
    qsub.exp_eof().expect("qsub ends");
    let status = qsub.process().wait().expect("qsub is waited for");
    assert!(
        matches!(status, rexpect::process::WaitStatus::Exited(_, 5)),
        "qsub exits with the shell's code: {status:?}"
    );
    let attrs = tests::wait_for(Duration::from_secs(20), "the job to finish", || {
        let attrs = cluster.job_attrs(&id);
        (attrs.get("job_state").map(String::as_str) == Some("F")).then_some(attrs)
    });
    assert_eq!(attrs.get("Exit_status").map(String::as_str), Some("5"), "{}", cluster.logs());
    assert_eq!(attrs.get("exec_host").map(|host| host.starts_with("hosta/")), Some(true), "{attrs:?}");
    assert!(attrs["Variable_List"].contains("PBS_O_HOST=login"), "{attrs:?}");
    assert!(attrs["Job_Owner"].ends_with("@login"), "the submit host's name stays for display: {attrs:?}");
}
