use super::*;

fn item(local: &str, host: &str, remote: &str) -> StageItem {
    StageItem { local: local.into(), host: host.into(), remote: remote.into() }
}

fn root() -> JobUser {
    super::super::user::resolve("root", None).unwrap()
}

#[test]
fn local_hosts() {
    let hosts = Hosts { node: "node1", machine: "login.example.org".into() };
    for local in ["node1", "NODE1.example.org", "login", "localhost"] {
        assert!(hosts.is_local(local), "{local}");
    }
    assert!(!hosts.is_local("node2"));
}

#[test]
fn the_private_job_directory_is_named_as_openpbs_names_it() {
    let mut launch = *crate::test_support::launch("7.head", Vec::new());
    assert_eq!(job_dir(&launch, Path::new("/home/a")), None);
    launch.exec.sandbox = Some(Sandbox::Private);
    assert_eq!(job_dir(&launch, Path::new("/home/a")), Some(PathBuf::from("/home/a/pbs.7.head.x8z")));
}

#[test]
fn local_stage_in_and_out_copy_files_and_report_failures() {
    let dir = tempfile::tempdir().unwrap();
    let user = JobUser { home: dir.path().to_path_buf(), ..root() };
    let as_user = AsUser { user: &user, change_identity: false, umask: 0o077 };
    let hosts = Hosts { node: "node1", machine: "m".into() };
    std::fs::write(dir.path().join("input"), "data\n").unwrap();
    let work = dir.path().join("work");
    as_user.create_dir(&work).unwrap();
    stage_in(&[item("in.dat", "node1", "input")], &work, &hosts, &as_user).unwrap();
    assert_eq!(std::fs::read_to_string(work.join("in.dat")).unwrap(), "data\n");
    let missing = stage_in(&[item("x", "localhost", "/no/such/file")], &work, &hosts, &as_user).unwrap_err();
    assert!(missing.error.contains("No such file"), "{missing:?}");
    std::fs::write(work.join("result"), "done\n").unwrap();
    let failures = stage_out(
        &[item("result", "node1", "out/result"), item("result", "m", "result.copy")],
        &work,
        &hosts,
        &as_user,
    );
    assert_eq!(failures.len(), 1, "out/ does not exist: {failures:?}");
    assert_eq!(std::fs::read_to_string(dir.path().join("result.copy")).unwrap(), "done\n");
    as_user.remove_dir(&work).unwrap();
    assert!(!work.exists());
}

/// A command whose `timeout` is stopped (its user may stop it) is killed by the mom once its
/// timeout and [`OVER_TIMEOUT`] are over, with what it started: the mom's wait is bounded.
#[test]
fn a_stopped_timeout_holds_the_mom_a_bounded_time() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let user = root();
        let as_user = AsUser { user: &user, change_identity: false, umask: 0o022 };
        let script = "echo started >&2; kill -STOP $PPID; exec sleep 120";
        let _ = done.send(as_user.run_for("1", "sh", &["-c".as_ref(), script.as_ref()]));
    });
    let waited = std::time::Duration::from_secs(1 + OVER_TIMEOUT + 30);
    let result = finished.recv_timeout(waited).expect("the mom still waits for the stopped command");
    let error = result.unwrap_err();
    assert_eq!(error, "started", "its error output is the message");
}

/// Without a pidfd the end is seen by looking: a child that ends is seen, one that does not
/// is given up at the deadline (and not reaped either way).
#[test]
fn without_a_pidfd_the_end_is_seen_by_looking() {
    let soon = || std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut quick = std::process::Command::new("true").spawn().unwrap();
    assert!(seen_ending_within(&quick, soon()));
    assert!(quick.try_wait().unwrap().is_some(), "left for the caller to reap");
    let mut slow = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    assert!(!seen_ending_within(&slow, deadline));
    slow.kill().unwrap();
    slow.wait().unwrap();
}
