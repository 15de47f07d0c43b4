//! Running jobs: output delivery, the environment, node and GPU files, exit statuses, joins,
//! failures to start.

use crate::support::{host, launch, within, Harness};
use job::spec::Join;
use std::fs;

const ENV_SCRIPT: &str = r#"
echo "JOBID=$PBS_JOBID"
echo "NAME=$PBS_JOBNAME"
echo "NUM_NODES=$PBS_NUM_NODES"
echo "NP=$PBS_NP"
echo "CUDA=$CUDA_VISIBLE_DEVICES"
echo "ORDER=$CUDA_DEVICE_ORDER"
echo "ENVIRONMENT=$PBS_ENVIRONMENT"
echo "FORGED=$PBS_QUEUE"
echo "MYVAR=$MYVAR"
echo "LOGIN_SHELL=$(tr '\0' ' ' < /proc/$PPID/cmdline)"
head -c 5 >/dev/null
echo "STDIN_DID_NOT_EAT_THE_SCRIPT"
echo "PWD=$(pwd)"
echo "UMASK=$(umask)"
test -d "$TMPDIR" && echo "TMPDIR_MODE=$(stat -c %a "$TMPDIR")"
echo "TMPDIR=$TMPDIR"
echo "--nodefile"
cat "$PBS_NODEFILE"
echo "--gpufile"
cat "$PBS_GPUFILE"
echo "--end"
echo "to stderr" >&2
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_sees_its_environment_and_files() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;
    assert_eq!(server.registration.node, "node1");
    assert_eq!((server.registration.np, server.registration.ngpus), (4, 4));
    assert!(server.registration.jobs.is_empty());

    let mut job = launch("1.testserver", ENV_SCRIPT, &harness.out());
    job.hosts = vec![host("node1", 2, &[1, 3]), host("node2", 1, &[0])];
    job.variables.push("MYVAR", "mine");
    job.variables.push("PBS_QUEUE", "forged");
    server.run(job).await;
    let session_id = server.started("1.testserver").await;
    assert!(session_id > 1);
    let obit = server.ended("1.testserver").await;
    assert_eq!(obit.exit_status, 0, "{obit:?}");
    assert_eq!(obit.session_id, session_id);
    assert_eq!(obit.used.ncpus, 3);

    let out = fs::read_to_string(harness.out().join("1.testserver.o")).expect("stdout delivered");
    let home = nix::unistd::User::from_uid(nix::unistd::geteuid()).unwrap().unwrap().dir.display().to_string();
    let tmpdir = harness.dir.path().join("tmp/pbs.1.testserver");
    for line in [
        "JOBID=1.testserver".to_string(),
        "NAME=testjob".into(),
        "NUM_NODES=2".into(),
        "NP=3".into(),
        "CUDA=1,3".into(),
        "ORDER=PCI_BUS_ID".into(),
        "ENVIRONMENT=PBS_BATCH".into(),
        "FORGED=workq".into(),
        // A root job takes only allow-listed variables (issue 12, item 9).
        if nix::unistd::geteuid().is_root() { "MYVAR=" } else { "MYVAR=mine" }.into(),
        "LOGIN_SHELL=-sh ".into(),
        "STDIN_DID_NOT_EAT_THE_SCRIPT".into(),
        format!("PWD={home}"),
        "UMASK=0077".into(),
        "TMPDIR_MODE=700".into(),
        format!("TMPDIR={}", tmpdir.display()),
    ] {
        assert!(out.lines().any(|l| l == line), "missing {line:?} in:\n{out}");
    }
    let nodefile = "--nodefile\nnode1\nnode1\nnode2\n--gpufile\nnode1-gpu1\nnode1-gpu3\nnode2-gpu0\n--end\n";
    assert!(out.contains(nodefile), "node/gpu files wrong in:\n{out}");
    let err = fs::read_to_string(harness.out().join("1.testserver.e")).expect("stderr delivered");
    assert!(err.contains("to stderr"), "{err}");

    // Everything the job had on the mom is gone.
    assert!(!tmpdir.exists(), "TMPDIR left behind");
    let spool = harness.dir.path().join("spool");
    let mut left: Vec<_> = fs::read_dir(&spool).unwrap().flatten().map(|e| e.file_name()).collect();
    left.sort();
    assert_eq!(left, vec![std::ffi::OsString::from("aux"), "sessions".into(), "task.sock".into()], "spool not cleaned");
    assert_eq!(fs::metadata(spool.join("sessions")).unwrap().len(), 0, "the session log is empty with no job left");
    assert_eq!(fs::read_dir(spool.join("aux")).unwrap().count(), 0, "aux not cleaned");

    server.send(proto::mom::ServerToMom::ObitAck { job_id: "1.testserver".into() }).await;
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_status_and_joined_output() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;

    server.run(launch("2.testserver", "echo out\necho err >&2\nexit 3\n", &harness.out())).await;
    let obit = server.ended("2.testserver").await;
    assert_eq!(obit.exit_status, 3);

    let mut joined = launch("3.testserver", "echo out\necho err >&2\n", &harness.out());
    joined.join = Join::OutErr;
    server.run(joined).await;
    assert_eq!(server.ended("3.testserver").await.exit_status, 0);
    let out = fs::read_to_string(harness.out().join("3.testserver.o")).unwrap();
    assert!(out.contains("out\n") && out.contains("err\n"), "{out}");
    assert!(!harness.out().join("3.testserver.e").exists(), "no separate stderr file with -j oe");

    let mut no_gpus = launch(
        "4.testserver",
        "echo \"CUDA=${CUDA_VISIBLE_DEVICES-unset}\"\necho \"GPUFILE=${PBS_GPUFILE-unset}\"\n",
        &harness.out(),
    );
    no_gpus.shell = Some("/bin/sh".into());
    server.run(no_gpus).await;
    assert_eq!(server.ended("4.testserver").await.exit_status, 0);
    let out = fs::read_to_string(harness.out().join("4.testserver.o")).unwrap();
    assert!(out.contains("CUDA=\nGPUFILE=unset\n"), "no GPU here: CUDA sees none; {out}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_that_cannot_start_end_negative() {
    let harness = Harness::start().await;
    let mut server = harness.accept().await;

    let mut unknown_user = launch("5.testserver", "true\n", &harness.out());
    unknown_user.user = "no-such-user-minipbs".into();
    server.run(unknown_user).await;
    assert_eq!(within(server.ended("5.testserver")).await.exit_status, -1);

    let mut missing_shell = launch("6.testserver", "true\n", &harness.out());
    missing_shell.shell = Some("/no/such/shell".into());
    server.run(missing_shell).await;
    assert_eq!(server.ended("6.testserver").await.exit_status, -1);

    let mut bad_dir = launch("7.testserver", "true\n", &harness.out());
    bad_dir.init_dir = Some("/no/such/dir".into());
    server.run(bad_dir).await;
    assert_eq!(server.ended("7.testserver").await.exit_status, -2);

    let bad_id = launch("../8.testserver", "true\n", &harness.out());
    server.run(bad_id).await;
    assert_eq!(server.ended("../8.testserver").await.exit_status, -1);

    // The mom is still fine.
    server.run(launch("9.testserver", "exit 0\n", &harness.out())).await;
    assert_eq!(server.ended("9.testserver").await.exit_status, 0);
    harness.stop().await;
}
