//! `/metrics` (issue 18, item 1): the server's and a mom's pass `promtool check metrics`, the
//! submission and job-end counters move as jobs come and go, and both listeners keep their
//! bounds (a silent client is cut off, an unknown path is 404, a POST is 405).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn cluster() -> Cluster {
    Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 2 }, &["--http"])
}

fn port_in(file: PathBuf) -> u16 {
    let text = std::fs::read_to_string(&file).unwrap_or_else(|error| panic!("{}: {error}", file.display()));
    text.trim().parse().expect("a port")
}

fn server_port(cluster: &Cluster) -> u16 {
    port_in(cluster.state.path().join("server.http"))
}

/// The port of the (one) mom's `/metrics`, from `<state>/mom/<node>/mom.http`.
fn mom_port(cluster: &Cluster) -> u16 {
    let spools = std::fs::read_dir(cluster.state.path().join("mom")).expect("mom spools");
    let spool = spools.flatten().map(|entry| entry.path()).find(|path| path.join("mom.http").exists());
    port_in(spool.expect("a mom with --http").join("mom.http"))
}

/// One HTTP/1.1 request; the status code and the body.
fn request(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    write!(stream, "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, body.to_string())
}

fn metrics(port: u16) -> String {
    let (status, body) = request(port, "GET", "/metrics");
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the sample `series` (name and labels as printed), if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines().find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `promtool check metrics` on `text`; `None` (skipped, a failure under CI) without promtool.
fn promtool(text: &str, what: &str) -> Option<()> {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        tests::skip("promtool (Debian's prometheus package) is not installed");
        return None;
    };
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "promtool refuses the {what}'s /metrics: {said}\n{text}");
    assert!(said.trim().is_empty(), "promtool has remarks on the {what}'s /metrics: {said}\n{text}");
    Some(())
}

fn ends(text: &str) -> f64 {
    ["ended", "deleted", "aborted"]
        .iter()
        .map(|how| value(text, &format!("minipbs_job_ends_total{{how=\"{how}\"}}")).unwrap_or(0.0))
        .sum()
}

#[test]
fn server_and_mom_metrics_pass_promtool_and_follow_jobs() {
    let cluster = cluster();
    let (server, mom) = (server_port(&cluster), mom_port(&cluster));
    let before = metrics(server);
    assert_eq!(value(&before, "minipbs_submissions_total"), Some(0.0), "{before}");
    assert_eq!(ends(&before), 0.0);
    wait_for(LIMIT, "the mom to be connected", || {
        (value(&metrics(server), "minipbs_moms_connected") == Some(1.0)).then_some(())
    });

    let sleeper = cluster.qsub(&cluster.script("sleep.sh", "#!/bin/sh\nsleep 60\n"), &["-l", "nodes=1:ppn=1:gpus=1"]);
    let mom_text = wait_for(LIMIT, "the job on the mom", || {
        let text = metrics(mom);
        (value(&text, "minipbs_mom_jobs{state=\"mother\"}") == Some(1.0)).then_some(text)
    });
    assert_eq!(value(&mom_text, "minipbs_mom_gpus{use=\"job\"}"), Some(1.0), "{mom_text}");
    assert!(mom_text.contains("minipbs_mom_gpu_memory_total_bytes{gpu=\"0\""), "{mom_text}");
    let server_text = metrics(server);
    assert_eq!(value(&server_text, "minipbs_jobs{queue=\"workq\",state=\"running\"}"), Some(1.0), "{server_text}");
    assert_eq!(value(&server_text, "minipbs_user_slots_in_use{user=\"root\"}"), Some(1.0), "{server_text}");
    if promtool(&server_text, "server").is_none() || promtool(&mom_text, "mom").is_none() {
        return;
    }

    let quick = cluster.script("true.sh", "#!/bin/sh\ntrue\n");
    let done = [cluster.qsub(&quick, &[]), cluster.qsub(&quick, &[])];
    for id in &done {
        assert_eq!(cluster.wait_finished(id, LIMIT), 0);
    }
    let text = metrics(server);
    assert_eq!(value(&text, "minipbs_submissions_total"), Some(3.0), "{text}");
    assert_eq!(ends(&text), 2.0, "{text}");
    assert!(value(&text, "minipbs_store_commit_seconds_count").unwrap_or(0.0) > 0.0, "{text}");
    assert!(value(&text, "minipbs_scheduling_pass_seconds_count").unwrap_or(0.0) > 0.0, "{text}");

    let deleted = cluster.run("qdel", &[&sleeper]);
    assert!(deleted.status.success(), "{}", String::from_utf8_lossy(&deleted.stderr));
    cluster.wait_finished(&sleeper, LIMIT);
    wait_for(LIMIT, "the third end counted", || (ends(&metrics(server)) == 3.0).then_some(()));
    promtool(&metrics(server), "server");
}

#[test]
fn both_listeners_refuse_what_they_do_not_serve_and_cut_silent_clients_off() {
    let cluster = cluster();
    for (port, what) in [(server_port(&cluster), "server"), (mom_port(&cluster), "mom")] {
        assert_eq!(request(port, "GET", "/nothing-here").0, 404, "{what}");
        assert_eq!(request(port, "POST", "/metrics").0, 405, "{what}");
        assert_eq!(request(port, "HEAD", "/metrics").0, 200, "{what}");
        // 256 clients that send nothing take every slot (they are accepted in the order they
        // connected, before the scrape below); each is cut off at the 10 s head timeout, and
        // only then is the scrape accepted and served.
        let silent: Vec<TcpStream> =
            (0..256).map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect")).collect();
        let started = std::time::Instant::now();
        let (status, _) = request(port, "GET", "/metrics");
        let waited = started.elapsed();
        assert_eq!(status, 200, "{what}");
        assert!(waited >= Duration::from_secs(5), "the {what} served past its connection limit ({waited:?})");
        assert!(
            waited < Duration::from_secs(25),
            "the {what} kept silent clients past their head timeout ({waited:?})"
        );
        for mut client in silent {
            client.set_read_timeout(Some(LIMIT)).unwrap();
            let mut buffer = [0u8; 256];
            let read = client.read(&mut buffer);
            assert!(!matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock), "{what}: still open");
        }
    }
}
