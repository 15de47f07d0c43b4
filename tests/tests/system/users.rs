//! Jobs run as the user who submitted them, and other users cannot touch them. Needs root
//! (creates users); prints why it did nothing otherwise.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::time::Duration;
use tests::{Cluster, Shape};

/// A user created for one test and removed afterwards.
pub(crate) struct TestUser {
    pub(crate) name: String,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

impl TestUser {
    pub(crate) fn create(tag: &str) -> TestUser {
        let name = format!("mp{}{}", tag, std::process::id() % 100000);
        let status = std::process::Command::new("useradd")
            .args(["-m", "-s", "/bin/bash", &name])
            .status()
            .expect("useradd runs");
        assert!(status.success(), "useradd {name} failed");
        let user = uzers::get_user_by_name(&name).expect("user exists");
        TestUser { name, uid: user.uid(), gid: user.primary_group_id() }
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = std::process::Command::new("pkill").args(["-9", "-u", &self.name]).status();
        let _ = std::process::Command::new("userdel").args(["-r", &self.name]).output();
    }
}

pub(crate) fn as_user(cluster: &Cluster, user: &TestUser, program: &str) -> std::process::Command {
    let mut command = cluster.command(program);
    command.uid(user.uid).gid(user.gid).env("HOME", format!("/home/{}", user.name)).env("USER", &user.name);
    command
}

#[test]
fn job_runs_as_its_owner_and_others_cannot_delete_it() {
    if !tests::root_or_skip("job_runs_as_its_owner_and_others_cannot_delete_it", "to create users") {
        return;
    }
    let alice = TestUser::create("a");
    let bob = TestUser::create("b");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let flag = cluster.work.path().join("release");
    let script =
        cluster.script("whoami.sh", &format!("id -u\nwhile [ ! -e {} ]; do sleep 0.1; done\n", flag.display()));
    let output = as_user(&cluster, &alice, "qsub").arg(&script).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(
        cluster.job_attr(&id, "Job_Owner").map(|owner| owner.starts_with(&format!("{}@", alice.name))),
        Some(true)
    );

    let output = as_user(&cluster, &bob, "qdel").arg(&id).output().unwrap();
    assert_eq!(output.status.code(), Some(159));
    assert_eq!(String::from_utf8_lossy(&output.stderr), format!("qdel: Unauthorized Request  {id}\n"));

    std::fs::write(&flag, "").unwrap();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let out_path = cluster.work.path().join(format!("whoami.sh.o{seq}"));
    let text = tests::wait_for(Duration::from_secs(10), "output", || std::fs::read_to_string(&out_path).ok());
    assert_eq!(text.trim(), alice.uid.to_string(), "the job ran as its owner");
    assert_eq!(std::fs::metadata(&out_path).unwrap().uid(), alice.uid, "output owned by the job's owner");

    // Without -S (or PBS_SHELL) the job runs through the owner's login shell from passwd.
    let script = cluster.script("shell.sh", "echo \"$(tr '\\0' ' ' < /proc/$PPID/cmdline)$HOME $USER\"\n");
    let output = as_user(&cluster, &alice, "qsub").env_remove("PBS_SHELL").arg(&script).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(30)), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let out_path = cluster.work.path().join(format!("shell.sh.o{seq}"));
    let text = tests::wait_for(Duration::from_secs(10), "output", || std::fs::read_to_string(&out_path).ok());
    assert_eq!(text, format!("-bash /home/{0} {0}\n", alice.name));
}

#[test]
fn a_spool_directory_someone_else_controls_is_refused() {
    if !tests::root_or_skip("a_spool_directory_someone_else_controls_is_refused", "to create users") {
        return;
    }
    let mallory = TestUser::create("m");
    let state = tempfile::Builder::new().prefix("minipbs-state-").tempdir().unwrap();
    let spool = state.path().join("mom/node1");
    std::fs::create_dir_all(&spool).unwrap();
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = state.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    // Mallory owns the spool and plants links where the mom would write job files.
    std::os::unix::fs::symlink(&victim, spool.join("1.testsrv.OU")).unwrap();
    std::os::unix::fs::lchown(spool.join("1.testsrv.OU"), Some(mallory.uid), Some(mallory.gid)).unwrap();
    std::os::unix::fs::chown(&spool, Some(mallory.uid), Some(mallory.gid)).unwrap();
    let bin = tests::bin_dir();
    let output = std::process::Command::new(bin.join("minipbs"))
        .args(["up", "--nodes", "1", "--server-name", "testsrv", "--state-dir"])
        .arg(state.path())
        .output()
        .unwrap();
    let _ = std::process::Command::new(bin.join("minipbs")).args(["down", "--state-dir"]).arg(state.path()).output();
    assert!(!output.status.success(), "a cluster came up on a spool owned by another user");
    let log = std::fs::read_to_string(state.path().join("logs/node1.log")).unwrap_or_default();
    assert!(log.contains("must belong to uid 0"), "the mom says why: {log}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
}

#[test]
fn interactive_job_runs_as_its_owner_on_a_terminal_they_own() {
    if !tests::root_or_skip("interactive_job_runs_as_its_owner_on_a_terminal_they_own", "to create users") {
        return;
    }
    let alice = TestUser::create("i");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let mut command = as_user(&cluster, &alice, "qsub");
    command.arg("-I");
    let mut qsub = rexpect::session::spawn_command(command, Some(30_000)).expect("qsub -I starts on a pty");
    qsub.exp_regex(r"qsub: job \S+ ready").expect("the job starts");
    qsub.send_line(r#"echo "U$(id -u)U"; echo "O$(stat -c %U "$(tty)")O"; echo "D$(pwd)D""#).unwrap();
    qsub.exp_string(&format!("U{}U", alice.uid)).expect("runs as alice");
    qsub.exp_string(&format!("O{}O", alice.name)).expect("on a terminal alice owns");
    qsub.exp_string(&format!("D/home/{}D", alice.name)).expect("in alice's home");
    qsub.send_line("exit 5").unwrap();
    qsub.exp_eof().expect("qsub ends");
    let status = qsub.process().wait().expect("qsub is waited for");
    assert!(matches!(status, rexpect::process::WaitStatus::Exited(_, 5)), "{status:?}");
}
