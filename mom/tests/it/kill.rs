//! Killing jobs: qdel (KillJob), the walltime limit, and stale jobs after a reconnect.

use crate::support::{is_alive, launch, live_session_members, poll_until, Harness};
use proto::mom::ServerToMom;
use std::fs;
use std::time::Instant;

/// A job with a background child and a foreground one; it records the background pid.
fn two_sleeps(pid_file: &std::path::Path) -> String {
    format!("sleep 1000 &\necho $! > {}\nsleep 1000\n", pid_file.display())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_job_ends_271_and_leaves_nothing() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let pid_file = harness.out().join("bg.pid");
    server.run(launch("10.testserver", &two_sleeps(&pid_file), &harness.out())).await;
    let sid = server.started("10.testserver").await;
    poll_until("the background pid", || fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))).await;
    let background: i32 = fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(is_alive(background));
    assert!(live_session_members(sid).len() >= 2, "job should have a shell and two sleeps");

    server.send(ServerToMom::KillJob { job_id: "10.testserver".into() }).await;
    let obit = server.ended("10.testserver").await;
    assert_eq!(obit.exit_status, 271, "{obit:?}");
    assert!(!is_alive(background), "background child survived");
    assert_eq!(live_session_members(sid), Vec::<i32>::new(), "processes of the session remain");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_escalates_to_sigkill_when_sigterm_is_ignored() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let ready = harness.out().join("ready");
    // The job's top shell itself ignores SIGTERM (an ignored signal stays ignored across exec),
    // and so does the script it runs.
    let shell = harness.out().join("stubborn-sh");
    fs::write(&shell, "#!/bin/sh\ntrap '' TERM\nexec /bin/sh \"$@\"\n").unwrap();
    fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = format!("trap '' TERM\ntouch {}\nwhile :; do sleep 0.1; done\n", ready.display());
    let mut job = launch("11.testserver", &script, &harness.out());
    job.shell = Some(shell.display().to_string());
    job.kill_delay = 1;
    server.run(job).await;
    let sid = server.started("11.testserver").await;
    poll_until("the trap to be set", || ready.exists()).await;
    server.send(ServerToMom::KillJob { job_id: "11.testserver".into() }).await;
    let obit = server.ended("11.testserver").await;
    assert_eq!(obit.exit_status, 265, "{obit:?}");
    assert_eq!(live_session_members(sid), Vec::<i32>::new());
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walltime_kills_with_minus_29_and_a_message() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let mut job = launch("12.testserver", "sleep 100\n", &harness.out());
    job.walltime = Some(2);
    let begin = Instant::now();
    server.run(job).await;
    let sid = server.started("12.testserver").await;
    let obit = server.ended("12.testserver").await;
    assert_eq!(obit.exit_status, -29, "{obit:?}");
    assert!(begin.elapsed().as_secs() < 10, "took {:?}", begin.elapsed());
    assert!(obit.used.walltime_secs >= 2, "{obit:?}");
    assert_eq!(live_session_members(sid), Vec::<i32>::new());
    let err = fs::read_to_string(harness.out().join("12.testserver.e")).unwrap();
    let line = err.lines().find(|l| l.starts_with("=>> PBS: job killed: walltime ")).unwrap_or_else(|| panic!("{err}"));
    assert!(line.ends_with(" exceeded limit 2"), "{line}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sister_share_and_kill_of_unknown_jobs_are_harmless() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    server.send(ServerToMom::JoinJob(Box::new(launch("13.testserver", "", &harness.out())))).await;
    server.send(ServerToMom::KillJob { job_id: "13.testserver".into() }).await;
    server.send(ServerToMom::KillJob { job_id: "99.testserver".into() }).await;
    server.send(ServerToMom::EndJob { job_id: "99.testserver".into() }).await;
    // Messages are handled in order: once this job ends, the ones before were handled.
    server.run(launch("14.testserver", "exit 5\n", &harness.out())).await;
    assert_eq!(server.ended("14.testserver").await.exit_status, 5);
    drop(server);
    // The share is still held: it is listed on re-registration, until EndJob.
    let mut server = harness.accept().await;
    // (14 ended but is not acknowledged, so it is listed too.)
    assert_eq!(server.registration.jobs, vec!["13.testserver", "14.testserver"]);
    server.send(ServerToMom::EndJob { job_id: "13.testserver".into() }).await;
    server.run(launch("15.testserver", "exit 0\n", &harness.out())).await;
    server.ended("15.testserver").await;
    drop(server);
    let server = harness.accept().await;
    assert!(!server.registration.jobs.contains(&"13.testserver".to_string()), "{:?}", server.registration.jobs);
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leftovers_in_other_process_groups_die_with_the_job() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let pid_file = harness.out().join("left.pid");
    // `set -m` puts the background job into its own process group (same session).
    let script = format!("set -m\nsleep 1000 &\necho $! > {}\nexit 0\n", pid_file.display());
    server.run(launch("16.testserver", &script, &harness.out())).await;
    let sid = server.started("16.testserver").await;
    let obit = server.ended("16.testserver").await;
    assert_eq!(obit.exit_status, 0, "{obit:?}");
    let left: i32 = fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    assert!(!is_alive(left), "a process outlived its job");
    assert_eq!(live_session_members(sid), Vec::<i32>::new());
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerun_kills_with_minus_11_and_discards_the_output() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let ready = harness.out().join("ready");
    let script = format!("echo first run\ntouch {}\nsleep 1000\n", ready.display());
    server.run(launch("12.testserver", &script, &harness.out())).await;
    let sid = server.started("12.testserver").await;
    poll_until("the job to start", || ready.exists()).await;
    server.send(ServerToMom::RerunJob { job_id: "12.testserver".into() }).await;
    let obit = server.ended("12.testserver").await;
    assert_eq!(obit.exit_status, -11, "{obit:?}");
    assert_eq!(live_session_members(sid), Vec::<i32>::new());
    assert!(!harness.out().join("12.testserver.o").exists(), "the aborted run's output was delivered");
    assert!(!harness.out().join("12.testserver.e").exists());
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_reaches_every_process_of_the_session_once() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let (ready, got) = (harness.out().join("ready"), harness.out().join("got"));
    // The top shell traps USR1 too (the signal goes to the whole session) and lives on.
    let shell = harness.out().join("patient-sh");
    fs::write(&shell, "#!/bin/sh\ntrap : USR1\nread -r script\n\"$script\"\n").unwrap();
    fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = format!(
        "trap 'echo USR1 >> {got}; done=1' USR1\ntouch {ready}\nwhile [ -z \"$done\" ]; do sleep 0.1; done\nexit 3\n",
        got = got.display(),
        ready = ready.display()
    );
    let mut job = launch("13.testserver", &script, &harness.out());
    job.shell = Some(shell.display().to_string());
    server.run(job).await;
    server.started("13.testserver").await;
    poll_until("the trap to be set", || ready.exists()).await;
    server.send(ServerToMom::SignalJob { job_id: "13.testserver".into(), signal: libc::SIGUSR1, suspend: false }).await;
    let obit = server.ended("13.testserver").await;
    assert_eq!(obit.exit_status, 3, "the job went on after its trap: {obit:?}");
    assert_eq!(fs::read_to_string(&got).unwrap(), "USR1\n", "the script's trap ran once");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lowered_walltime_ends_a_running_job_with_minus_29() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    let ready = harness.out().join("ready");
    let script = format!("touch {}\nsleep 1000\n", ready.display());
    let mut job = launch("14.testserver", &script, &harness.out());
    job.walltime = Some(3600);
    server.run(job).await;
    server.started("14.testserver").await;
    poll_until("the job to start", || ready.exists()).await;
    let started = Instant::now();
    server.send(ServerToMom::SetWalltime { job_id: "14.testserver".into(), walltime: Some(1) }).await;
    let obit = server.ended("14.testserver").await;
    assert_eq!(obit.exit_status, -29, "{obit:?}");
    assert!(started.elapsed().as_secs() < 60, "the new limit, not the old one, ended the job");
    harness.stop().await;
}
