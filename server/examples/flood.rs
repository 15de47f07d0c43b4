//! `qstat` latency while one client floods the server with the largest requests it may send
//! (issue 12's benchmark; `bench/flood` starts the cluster and submits the jobs). Prints
//! figures only.
//! `cargo run --release -p server --example flood -- <qstat> <state-dir> [seconds per flood]`
//!
//! The floods, one after the other, each by one client sending requests back to back:
//! - `names`: `StatusJob` naming the cap's 100,000 distinct ids (every job's, then unknown ones);
//! - `listing`: every job with every attribute, subjobs and history (`qstat -f -t -x`);
//! - `frame`: one frame as large as the server reads (16 MiB) of `workq` repeated.

use proto::{ClientRequest, Hello, HelloReply, Role, ServerReply};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (qstat, state) = match &args[..] {
        [_, qstat, state, ..] => (PathBuf::from(qstat), PathBuf::from(state)),
        _ => panic!("usage: flood <qstat> <state-dir> [seconds]"),
    };
    let seconds = args.get(3).and_then(|text| text.parse().ok()).unwrap_or(20);
    let socket = state.join("server.sock");
    let pid: i32 = std::fs::read_to_string(state.join("pids/server.pid")).unwrap().trim().parse().unwrap();
    let jobs = count_jobs(&socket);
    println!("== qstat under a flood: {jobs} jobs, {seconds} s per flood");
    println!("server peak RSS before: {} MiB", peak_kib(pid) / 1024);
    let idle = latencies(&qstat, &state, Duration::from_secs(seconds));
    println!(
        "{:<8} {:>9} {:>12} {:>11} {:>11} {:>7}",
        "flood", "requests", "request", "median ms", "max ms", "max/idle"
    );
    print_row("idle", 0, 0, &idle, &idle);
    for (name, request) in floods() {
        let size = proto::frame::encode(&request).map(|frame| frame.len()).unwrap_or(0);
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicUsize::new(0));
        let flooder = {
            let (socket, stop, sent) = (socket.clone(), stop.clone(), sent.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    ask(&socket, &request);
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let flooded = latencies(&qstat, &state, Duration::from_secs(seconds));
        stop.store(true, Ordering::Relaxed);
        flooder.join().unwrap();
        print_row(name, sent.load(Ordering::Relaxed), size, &flooded, &idle);
    }
    println!("server peak RSS after: {} MiB", peak_kib(pid) / 1024);
}

/// The floods: a name and the request sent over and over.
fn floods() -> Vec<(&'static str, ClientRequest)> {
    let status = |selectors: Vec<String>, attrs: Option<Vec<String>>| ClientRequest::StatusJob {
        selectors,
        history: true,
        users: Vec::new(),
        attrs,
        subjobs: true,
        arrays_only: false,
        rows: false,
    };
    let names = (1..=server::bounds::MAX_NAMES).map(|seq| seq.to_string()).collect();
    let copies = proto::frame::MAX_FRAME / "\"workq\",".len() - 16;
    let frame = vec!["workq".to_string(); copies];
    vec![("names", status(names, None)), ("listing", status(Vec::new(), None)), ("frame", status(frame, None))]
}

/// Runs `qstat` over and over for `span`; returns each run's wall time in ms, sorted.
fn latencies(qstat: &Path, state: &Path, span: Duration) -> Vec<f64> {
    let started = Instant::now();
    let mut times = Vec::new();
    while started.elapsed() < span || times.len() < 5 {
        let run = Instant::now();
        let status = Command::new(qstat)
            .env("PBS_CONF_FILE", state.join("pbs.conf"))
            .stdout(Stdio::null())
            .status()
            .expect("qstat runs");
        assert!(status.success(), "qstat failed under the flood");
        times.push(run.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    times
}

fn print_row(name: &str, requests: usize, size: usize, times: &[f64], idle: &[f64]) {
    let median = times[times.len() / 2];
    let max = times[times.len() - 1];
    let ratio = max / idle[idle.len() - 1];
    let size = if size == 0 { "-".to_string() } else { format!("{:.1} MiB", size as f64 / 1048576.0) };
    println!("{name:<8} {requests:>9} {size:>12} {median:>11.1} {max:>11.1} {ratio:>7.1}x");
}

/// Sends one request and reads the whole reply (every frame); returns the jobs listed.
fn ask(socket: &Path, request: &ClientRequest) -> usize {
    let mut stream = UnixStream::connect(socket).expect("connect");
    proto::frame::write(&mut stream, &Hello::new(Role::Client, None)).unwrap();
    let _: HelloReply = proto::frame::read(&mut stream).unwrap();
    proto::frame::write(&mut stream, request).unwrap();
    let mut listed = 0;
    loop {
        match proto::frame::read::<ServerReply>(&mut stream).unwrap() {
            ServerReply::Jobs { jobs, more: true, .. } => listed += jobs.len(),
            ServerReply::Jobs { jobs, .. } => return listed + jobs.len(),
            _ => return listed,
        }
    }
}

fn count_jobs(socket: &Path) -> usize {
    let request = ClientRequest::StatusJob {
        selectors: Vec::new(),
        history: true,
        users: Vec::new(),
        attrs: Some(vec!["job_state".into()]),
        subjobs: true,
        arrays_only: false,
        rows: false,
    };
    ask(socket, &request)
}

/// The server's peak resident size (`VmHWM`), KiB.
fn peak_kib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("server alive");
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}
