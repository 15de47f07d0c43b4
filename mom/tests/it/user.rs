//! Jobs run as their user: a real user created with `useradd -m` (root only).

use crate::support::{launch, root_or_skip, Harness};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// useradd/userdel lock /etc/passwd: concurrent calls fail, so they are serialized.
static USER_DB: Mutex<()> = Mutex::new(());
static NEXT_USER: AtomicU32 = AtomicU32::new(0);

/// A user that exists for the test's lifetime (`userdel -r` on drop).
struct TestUser {
    name: String,
}

impl TestUser {
    fn create() -> TestUser {
        let name = format!("mpt{}x{}", std::process::id(), NEXT_USER.fetch_add(1, Ordering::Relaxed));
        let _guard = USER_DB.lock().unwrap_or_else(|p| p.into_inner());
        let status = Command::new("useradd").args(["-m", "-s", "/bin/bash", &name]).status().expect("run useradd");
        assert!(status.success(), "useradd {name} failed");
        TestUser { name }
    }

    fn uid(&self) -> u32 {
        nix::unistd::User::from_name(&self.name).unwrap().expect("user exists").uid.as_raw()
    }

    fn home(&self) -> std::path::PathBuf {
        nix::unistd::User::from_name(&self.name).unwrap().expect("user exists").dir
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _guard = USER_DB.lock().unwrap_or_else(|p| p.into_inner());
        let _ = Command::new("userdel").args(["-r", &self.name]).output();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_runs_as_the_user_and_output_is_theirs() {
    if !root_or_skip("job_runs_as_the_user_and_output_is_theirs") {
        return;
    }
    let user = TestUser::create();
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let home = user.home();
    let script = "id -u\necho \"USER=$USER HOME=$HOME\"\npwd\nhead -1 \"$PBS_NODEFILE\"\ntouch \"$TMPDIR/x\" && echo tmpdir-writable\necho reopened > /dev/stderr\n";
    let mut job = launch("30.testserver", script, &home);
    job.user = user.name.clone();
    job.output_path = format!("{}/job.o", home.display());
    job.error_path = format!("{}/job.e", home.display());
    server.run(job).await;
    let obit = server.ended("30.testserver").await;
    assert_eq!(obit.exit_status, 0, "{obit:?}");

    let out_path = home.join("job.o");
    let out = std::fs::read_to_string(&out_path).expect("output delivered");
    let uid = user.uid();
    let expected = format!(
        "{uid}\nUSER={name} HOME={home}\n{home}\nnode1\ntmpdir-writable\n",
        name = user.name,
        home = home.display()
    );
    assert!(out.ends_with(&expected), "got:\n{out}\nexpected to end with:\n{expected}");
    let meta = std::fs::metadata(&out_path).unwrap();
    assert_eq!(meta.uid(), uid, "output file must belong to the user");
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(home.join("job.e")).unwrap().uid(), uid);
    let err = std::fs::read_to_string(home.join("job.e")).unwrap();
    assert!(err.contains("reopened\n"), "the job could not reopen its stderr: {err}");

    // Delivery runs as the user: a destination the user cannot write is not written by root.
    let mut job = launch("31.testserver", "echo hi\n", &home);
    job.user = user.name.clone();
    job.output_path = "/root/should-not-exist.o".into();
    job.error_path = format!("{}/job31.e", home.display());
    server.run(job).await;
    let obit = server.ended("31.testserver").await;
    assert_eq!(obit.exit_status, 0);
    assert!(!std::path::Path::new("/root/should-not-exist.o").exists(), "root wrote for the user");
    let kept = harness.dir.path().join("spool/undelivered/31.testserver.OU");
    assert_eq!(std::fs::read_to_string(&kept).expect("undelivered output kept"), "hi\n");
    assert_eq!(std::fs::metadata(&kept).unwrap().uid(), uid, "kept for the user");
    assert_eq!(obit.undelivered.len(), 1, "the server is told: {obit:?}");
    assert_eq!(obit.undelivered[0].dest, "/root/should-not-exist.o");
    assert_eq!(obit.undelivered[0].kept, kept.display().to_string());
    assert!(obit.undelivered[0].error.ends_with("Permission denied"), "{:?}", obit.undelivered[0].error);

    // A job as root without the server's acl_roots: refused (-10), nothing run.
    let marker = harness.dir.path().join("root-ran");
    let mut job = launch("32.testserver", &format!("touch {}\n", marker.display()), &home);
    job.user = "root".into();
    job.root_allowed = false;
    server.run(job).await;
    assert_eq!(server.ended("32.testserver").await.exit_status, -10);
    assert!(!marker.exists(), "a root job ran without acl_roots");
    harness.stop().await;
}

/// A `pbs_mom` binary running as another user; killed on drop.
struct MomProcess(Child);

impl Drop for MomProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Spawns `command`, retrying while the freshly copied binary is still "text file busy"
/// (another test thread may have forked while the copy's descriptor was open).
fn spawn_retrying_busy(command: &mut Command) -> Child {
    let deadline = std::time::Instant::now() + crate::support::DEADLINE;
    loop {
        match command.spawn() {
            Ok(child) => return child,
            Err(err) if err.raw_os_error() == Some(libc::ETXTBSY) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(err) => panic!("cannot start pbs_mom: {err}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_root_mom_runs_only_its_own_users_jobs() {
    if !root_or_skip("non_root_mom_runs_only_its_own_users_jobs") {
        return;
    }
    let user = TestUser::create();
    let mut harness = Harness::without_server();
    harness.listen();
    std::fs::set_permissions(&harness.socket, std::fs::Permissions::from_mode(0o777)).unwrap();
    let home = user.home();
    let uid = user.uid();
    let gid = nix::unistd::User::from_name(&user.name).unwrap().unwrap().gid.as_raw();
    let spool = home.join("spool");
    let tmp = home.join("tmp");
    // A copy the user can surely execute (the build directory may not be reachable).
    let binary = harness.dir.path().join("pbs_mom");
    std::fs::copy(env!("CARGO_BIN_EXE_pbs_mom"), &binary).unwrap();
    let mut command = Command::new(&binary);
    command
        .arg("--socket")
        .arg(&harness.socket)
        .args([
            "--name",
            "node1",
            "--np",
            "2",
            "--mem",
            "1gb",
            "--gpus",
            "1",
            "--properties",
            "a,b",
            "--heartbeat",
            "1",
        ])
        .arg("--spool")
        .arg(&spool)
        .arg("--tmpdir")
        .arg(&tmp)
        .uid(uid)
        .gid(gid)
        .current_dir(&home)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _mom = MomProcess(spawn_retrying_busy(&mut command));

    let mut server = harness.accept().await;
    let registration = &server.registration;
    assert_eq!((registration.np, registration.mem_bytes, registration.ngpus), (2, 1 << 30, 1));
    assert_eq!(registration.properties, vec!["a", "b"]);

    // Someone else's job (root's) cannot run under this mom.
    server.run(launch("40.testserver", "echo never\n", &home)).await;
    let obit = server.ended("40.testserver").await;
    assert_eq!(obit.exit_status, -10, "{obit:?}");

    let mut own = launch("41.testserver", "id -u\n", &home);
    own.user = user.name.clone();
    own.output_path = format!("{}/own.o", home.display());
    own.error_path = format!("{}/own.e", home.display());
    server.run(own).await;
    assert!(server.started("41.testserver").await > 1);
    assert_eq!(server.ended("41.testserver").await.exit_status, 0);
    let out = std::fs::read_to_string(home.join("own.o")).expect("output delivered");
    assert!(out.ends_with(&format!("{uid}\n")), "{out}");
    assert_eq!(std::fs::metadata(home.join("own.o")).unwrap().uid(), uid);
}
