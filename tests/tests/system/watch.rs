//! `qstat --watch` (issue 18, item 4): the listing redrawn until interrupted, following the
//! jobs as they change; on a terminal each frame clears the screen; bad intervals are refused.

use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

/// A running `qstat --watch` whose stdout is collected as it comes.
struct Watching {
    child: Child,
    seen: Arc<Mutex<String>>,
}

impl Watching {
    fn start(mut command: std::process::Command) -> Watching {
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("qstat --watch runs");
        let mut stdout = child.stdout.take().expect("piped");
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Watching { child, seen }
    }

    /// The frames printed so far (each begins with its `Every` header).
    fn frames(&self) -> Vec<String> {
        // (Split on the header's first word: a frame's rows never start with it.)
        let seen = self.seen.lock().unwrap();
        seen.split("Every ").skip(1).map(str::to_string).collect()
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_listing_is_redrawn_as_jobs_change_until_interrupted() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "true\n");
    let id = cluster.qsub(&script, &["-h"]);
    let row = format!("{}.", id.split('.').next().unwrap());
    let lists_job = move |frame: &str| frame.lines().any(|line| line.starts_with(&row));
    let mut command = cluster.command("qstat");
    command.args(["--watch", "0.5"]);
    let watching = Watching::start(command);
    wait_for(LIMIT, "two frames listing the held job", || {
        let frames = watching.frames();
        (frames.iter().filter(|frame| lists_job(frame) && frame.contains(" H ")).count() >= 2).then_some(())
    });
    let first = watching.frames().remove(0);
    assert!(first.starts_with("0.5s: qstat    "), "the header names the interval and command: {first:?}");
    assert!(!first.contains('\x1b'), "no terminal escapes into a pipe: {first:?}");
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "qdel: {}", String::from_utf8_lossy(&output.stderr));
    wait_for(LIMIT, "a frame without the deleted job", || {
        watching.frames().last().filter(|frame| frame.ends_with("\n\n") && !lists_job(frame)).map(|_| ())
    });
    let mut watching = watching;
    assert!(watching.child.try_wait().expect("wait").is_none(), "--watch goes on until interrupted");
}

#[test]
fn on_a_terminal_each_frame_clears_the_screen() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    // util-linux's `script` gives qstat a pseudo-terminal as its stdout.
    let line = format!("{} --watch 0.5 -a", cluster.bin.join("qstat").display());
    let mut command = std::process::Command::new("script");
    command
        .env("PBS_CONF_FILE", &cluster.conf)
        .current_dir(cluster.work.path())
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .stdin(Stdio::piped());
    let watching = Watching::start(command);
    wait_for(LIMIT, "two cleared frames", || {
        (watching.seen.lock().unwrap().matches("\x1b[H\x1b[2JEvery 0.5s: qstat -a").count() >= 2).then_some(())
    });
}

#[test]
fn bad_intervals_are_refused_before_asking_the_server() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    for bad in ["--watch=0", "--watch=100000", "--watch=soon"] {
        let output = cluster.run("qstat", &[bad]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.starts_with("qstat: --watch ") && stderr.contains("from 0.5 to 86400"), "{bad}: {stderr}");
    }
    // A usage error of the listing itself ends the watch at once, with qstat's message.
    let output = cluster.run("qstat", &["--watch", "1", "-F", "yaml", "-f"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unsupported -F format"));
}
