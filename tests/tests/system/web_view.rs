//! The web view (`pbs_server --http`, docs/web.md) in a real headless browser: Debian's
//! `chromium` driven through `chromedriver` over WebDriver (fantoccini). A submitted job
//! appears, turns running, then finished, on a page that is never reloaded; a screenshot is
//! kept in `<target>/test-artefacts/web-view.png`. And over plain HTTP: a job's page shows
//! nothing of its environment or command line and escapes the user's text, the security
//! headers are there, only GET is served, and the event streams are bounded.

use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A chromedriver of this test's own, on a free loopback port; killed when dropped.
struct Chromedriver {
    child: Child,
    port: u16,
}

impl Chromedriver {
    /// Starts one, or skips ([`tests::skip`]: a failure under CI) when Debian's chromium or
    /// chromium-driver is not installed.
    fn start() -> Option<Chromedriver> {
        if !Path::new(CHROMIUM).exists() || !Path::new(CHROMEDRIVER).exists() {
            tests::skip(
                "the web view test needs chromium and chromium-driver (apt-get install chromium chromium-driver)",
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|socket| socket.local_addr()).unwrap().port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver = Chromedriver { child, port };
        wait_for(Duration::from_secs(20), "chromedriver to listen", || TcpStream::connect(("127.0.0.1", port)).ok());
        Some(driver)
    }

    /// A headless chromium session (`--no-sandbox`: the tests run as root), phone-sized.
    async fn session(&self) -> Client {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let mut caps = serde_json::Map::new();
        let args =
            ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=412,915"];
        caps.insert("goog:chromeOptions".to_string(), json!({ "binary": CHROMIUM, "args": args }));
        ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a chromium session")
    }
}

impl Drop for Chromedriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `http://127.0.0.1:<port>/` of the cluster's web view (`--http`).
fn base_url(cluster: &Cluster) -> String {
    let port = std::fs::read_to_string(cluster.state.path().join("server.http")).expect("server.http");
    format!("http://127.0.0.1:{}/", port.trim())
}

/// One HTTP/1.0 exchange: the status line and headers, and the body.
fn http(cluster: &Cluster, request: &str) -> (String, String) {
    let port: u16 = std::fs::read_to_string(cluster.state.path().join("server.http")).unwrap().trim().parse().unwrap();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.to_string(), body.to_string())
}

fn get(cluster: &Cluster, path: &str) -> (String, String) {
    http(cluster, &format!("GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n"))
}

/// Where the test binary's target directory keeps artefacts: `<target>/test-artefacts/`.
fn artefacts() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/<binary>
    let dir = exe.ancestors().nth(3).unwrap().join("test-artefacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The state letter in the row of job `id`, wherever it is on the page.
const STATE_OF: &str = "const row = document.querySelector(`tr[data-job=\"${arguments[0]}\"]`); \
                        return row ? row.querySelector('.state').textContent : null;";

#[test]
fn a_job_appears_runs_and_finishes_on_the_page_without_a_reload() {
    let Some(driver) = Chromedriver::start() else { return };
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &["--http"]);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let browser = runtime.block_on(driver.session());
    let run = |script: &str, args: Vec<Value>| runtime.block_on(browser.execute(script, args)).expect("script runs");
    runtime.block_on(browser.goto(&base_url(&cluster))).expect("the page loads");
    wait_for(Duration::from_secs(20), "the first snapshot to render", || {
        run("return window.minipbs.frames", vec![]).as_u64().filter(|&frames| frames > 0)
    });
    // A marker on this document: a reload or a navigation would lose it.
    run("window.minipbs.marker = 'kept'; return null", vec![]);
    let held = cluster.qsub(&cluster.script("held.sh", "true\n"), &["-h", "-N", "waits"]);
    let id = cluster.qsub(&cluster.script("short.sh", "sleep 3\n"), &["-N", "webjob", "-l", "walltime=00:05:00"]);
    let state_of = |job: &str| run(STATE_OF, vec![json!(job)]).as_str().map(str::to_string);
    wait_for(Duration::from_secs(30), "the job to show R", || (state_of(&id)? == "R").then_some(()));
    assert_eq!(state_of(&held).as_deref(), Some("H"));
    let reason =
        run("return document.querySelector(`tr[data-job=\"${arguments[0]}\"] .why`).textContent", vec![json!(held)]);
    assert_eq!(reason, json!("Held (u)"));
    // While it runs: the picture with every table filled.
    let png = runtime.block_on(browser.screenshot()).expect("a screenshot");
    let path = artefacts().join("web-view.png");
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());
    wait_for(Duration::from_secs(30), "the job to show F", || (state_of(&id)? == "F").then_some(()));
    let kept = run("return [window.minipbs.marker, performance.getEntriesByType('navigation').length]", vec![]);
    assert_eq!(kept, json!(["kept", 1]), "the page was never reloaded");
    // The job's own page, reached by its link.
    let link = run("return document.querySelector(`tr[data-job=\"${arguments[0]}\"] a`).href", vec![json!(id)]);
    runtime.block_on(browser.goto(link.as_str().unwrap())).unwrap();
    let title = run("return document.querySelector('h1').textContent", vec![]);
    assert_eq!(title, json!(format!("Job {id}")));
    let _ = runtime.block_on(browser.close());
}

#[test]
fn a_job_page_shows_no_environment_or_command_line_and_escapes_text() {
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--http"]);
    let script = cluster.script("secret.sh", "sleep 1000\n");
    let hostile = "<img src=x onerror=alert(1)>";
    let id = cluster.qsub(&script, &["-h", "-v", "SECRET_TOKEN=hunter2", "-A", hostile]);
    let (head, body) = get(&cluster, &format!("/job/{id}"));
    assert!(head.starts_with("HTTP/1.0 200") || head.starts_with("HTTP/1.1 200"), "{head}");
    for absent in ["Variable_List", "SECRET_TOKEN", "hunter2", "Submit_arguments", "sleep 1000", "<img"] {
        assert!(!body.contains(absent), "{absent} on the page: {body}");
    }
    assert!(body.contains("&lt;img src=x onerror=alert(1)&gt;"), "{body}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("content-security-policy: default-src 'none'; script-src 'self'"), "{head}");
    assert!(lower.contains("x-content-type-options: nosniff"), "{head}");
    // The snapshot carries none of it either.
    let (_, json) = get(&cluster, "/view.json");
    assert!(json.contains(&id) && !json.contains("hunter2") && !json.contains("SECRET_TOKEN"), "{json}");
    // Unknown and over-long ids, and anything but GET.
    let (head, _) = get(&cluster, "/job/999999");
    assert!(head.contains(" 404 "), "{head}");
    let (head, _) = get(&cluster, &format!("/job/{}", "1".repeat(10_000)));
    assert!(head.contains(" 404 ") || head.contains(" 431 ") || head.contains(" 414 "), "{head}");
    let (head, _) = http(&cluster, &format!("POST /job/{id} HTTP/1.0\r\nContent-Length: 0\r\n\r\n"));
    assert!(head.contains(" 405 "), "{head}");
    cluster.run("qdel", &[&id]);
}

#[test]
fn event_streams_are_bounded() {
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--http"]);
    let port: u16 = std::fs::read_to_string(cluster.state.path().join("server.http")).unwrap().trim().parse().unwrap();
    let open = || {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.write_all(b"GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        (stream, String::from_utf8_lossy(&head).to_string())
    };
    let streams: Vec<TcpStream> = (0..server::http::web::MAX_CLIENTS)
        .map(|_| {
            let (stream, head) = open();
            assert_eq!(head, "HTTP/1.1 200");
            stream
        })
        .collect();
    let (_, head) = open();
    assert_eq!(head, "HTTP/1.1 503", "one stream over the bound");
    drop(streams);
    wait_for(Duration::from_secs(45), "a slot to be free again (at the next keep-alive)", || {
        (open().1 == "HTTP/1.1 200").then_some(())
    });
}
