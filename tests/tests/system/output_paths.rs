//! Issue 13 items 6 and 7 and the `-W` items the mom acts on, end to end as a real user:
//! `-o /dev/null -e /dev/null` ends cleanly, `-o logs/` keeps the directory and the mom names
//! the file in it (as the user: a link planted there towards a root file is not followed),
//! `-W umask` sets the job's and its output's umask, `-W group_list` gives a group only to its
//! members, bad values are refused. Needs root (creates users and groups); prints why it did
//! nothing otherwise.

use crate::users::{as_user, TestUser};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn qsub_as(cluster: &Cluster, user: &TestUser, script: &Path, args: &[&str]) -> Output {
    as_user(cluster, user, "qsub").args(args).arg(script).stdin(Stdio::null()).output().unwrap()
}

fn submitted(output: Output) -> String {
    assert!(output.status.success(), "qsub: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A directory of `user`'s own in their home.
fn user_dir(user: &TestUser, name: &str) -> PathBuf {
    let dir = PathBuf::from(format!("/home/{}/{name}", user.name));
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid)).unwrap();
    dir
}

fn undelivered(cluster: &Cluster, id: &str) -> Vec<String> {
    let dir = cluster.state.path().join("mom/node1/undelivered");
    let names = std::fs::read_dir(dir).map(|entries| entries.flatten().collect::<Vec<_>>()).unwrap_or_default();
    names.iter().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with(id)).collect()
}

#[test]
fn dev_null_and_directory_outputs_are_delivered_as_the_user() {
    if !tests::root_or_skip("dev_null_and_directory_outputs_are_delivered_as_the_user", "to create users") {
        return;
    }
    let alice = TestUser::create("d");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("out.sh", "echo out\necho err >&2\numask\n");

    // psij-python's -o /dev/null -e /dev/null: no comment, nothing kept.
    let id = submitted(qsub_as(&cluster, &alice, &script, &["-o", "/dev/null", "-e", "/dev/null"]));
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    // No undelivered-output comment: only the one every start writes.
    assert!(cluster.job_attr(&id, "comment").is_none_or(|comment| comment.starts_with("Job run at ")));
    assert_eq!(undelivered(&cluster, &id), Vec::<String>::new());

    // -o logs/ (and -e of an existing directory): kept as a directory, the mom names the files.
    let logs = user_dir(&alice, "logs");
    let args = ["-N", "named", "-W", "umask=022", "-o", "logs/", "-e", logs.to_str().unwrap()];
    let home = logs.parent().unwrap();
    let id = submitted(as_user(&cluster, &alice, "qsub").current_dir(home).args(args).arg(&script).output().unwrap());
    let shown = cluster.job_attr(&id, "Output_Path").unwrap();
    assert!(shown.ends_with(&format!(":{}/", logs.display())), "{shown}");
    assert_eq!(cluster.job_attr(&id, "umask").as_deref(), Some("22"));
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let out = logs.join(format!("named.o{seq}"));
    let text = wait_for(LIMIT, "the output", || std::fs::read_to_string(&out).ok());
    assert_eq!(text, "out\n0022\n", "the job ran with umask 022");
    let err = logs.join(format!("named.e{seq}"));
    assert_eq!(std::fs::read_to_string(&err).unwrap(), "err\n");
    for file in [&out, &err] {
        let meta = std::fs::metadata(file).unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (alice.uid, 0o644), "{}", file.display());
    }
    // No undelivered-output comment: only the one every start writes.
    assert!(cluster.job_attr(&id, "comment").is_none_or(|comment| comment.starts_with("Job run at ")));
}

#[test]
fn a_link_planted_in_an_output_directory_is_followed_only_as_the_user() {
    if !tests::root_or_skip("a_link_planted_in_an_output_directory_is_followed_only_as_the_user", "to create users") {
        return;
    }
    let alice = TestUser::create("l");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("leak.sh", "echo overwritten\n");
    let root_dir = tempfile::Builder::new().prefix("minipbs-rootfile-").tempdir().unwrap();
    std::fs::set_permissions(root_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = root_dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let logs = user_dir(&alice, "logs");
    let logs_arg = format!("{}/", logs.display());
    let id = submitted(qsub_as(&cluster, &alice, &script, &["-h", "-j", "oe", "-N", "leak", "-o", &logs_arg]));
    let seq = id.split('.').next().unwrap();
    let link = logs.join(format!("leak.o{seq}"));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(alice.uid), Some(alice.gid)).unwrap();
    assert!(as_user(&cluster, &alice, "qrls").arg(&id).status().unwrap().success());
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let comment = wait_for(LIMIT, "the comment", || cluster.job_attr(&id, "comment"));
    assert!(comment.starts_with("Post job file processing error"), "{comment}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "root's file was written");
}

#[test]
fn group_list_gives_a_group_only_to_its_members() {
    if !tests::root_or_skip("group_list_gives_a_group_only_to_its_members", "to create users and groups") {
        return;
    }
    let alice = TestUser::create("g");
    let group = format!("mpgl{}", std::process::id() % 100000);
    assert!(std::process::Command::new("groupadd").arg(&group).status().unwrap().success());
    let _cleanup = Cleanup(group.clone());
    let gid = uzers::get_group_by_name(&group).unwrap().gid();
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let dir = user_dir(&alice, "g");
    let script = cluster.script("gid.sh", "id -g\n");
    let out = format!("{}/", dir.display());

    for wanted in [group.as_str(), "root"] {
        let item = format!("group_list={wanted}");
        let refused = qsub_as(&cluster, &alice, &script, &["-W", &item, "-o", &out]);
        assert_eq!(refused.status.code(), Some(15024 % 256), "{wanted}: {refused:?}");
        assert!(String::from_utf8_lossy(&refused.stderr).contains("Bad GID for job execution"), "{refused:?}");
    }

    assert!(std::process::Command::new("usermod").args(["-aG", &group, &alice.name]).status().unwrap().success());
    let item = format!("group_list={group}");
    let id = submitted(qsub_as(&cluster, &alice, &script, &["-N", "gid", "-W", &item, "-o", &out]));
    assert_eq!(cluster.job_attr(&id, "group_list").as_deref(), Some(group.as_str()));
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let text = wait_for(LIMIT, "the output", || std::fs::read_to_string(dir.join(format!("gid.o{seq}"))).ok());
    assert_eq!(text.trim(), gid.to_string(), "the job ran with the group it asked for");
}

/// `sandbox=PRIVATE` with `stagein`/`stageout` on this host: the job runs in
/// `$HOME/pbs.<jobid>.x8z` with its input there, its result is copied out and the directory
/// removed; files the user may not read or write are neither read nor written for them.
#[test]
fn sandbox_and_staging_run_as_the_user() {
    if !tests::root_or_skip("sandbox_and_staging_run_as_the_user", "to create users") {
        return;
    }
    let alice = TestUser::create("s");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let home = PathBuf::from(format!("/home/{}", alice.name));
    let data = user_dir(&alice, "data");
    std::fs::write(data.join("in.txt"), "input\n").unwrap();
    std::os::unix::fs::chown(data.join("in.txt"), Some(alice.uid), Some(alice.gid)).unwrap();
    let script =
        cluster.script("stage.sh", "pwd\necho \"$PBS_JOBDIR\"\ncat in.txt > result.txt\necho more >> result.txt\n");
    let out = format!("{}/", data.display());
    let stagein = format!("stagein=in.txt@localhost:{}/in.txt", data.display());
    let stageout = format!("stageout=result.txt@localhost:{}/result.txt", data.display());
    let args = ["-N", "st", "-j", "oe", "-o", &out, "-W", "sandbox=PRIVATE", "-W", &stagein, "-W", &stageout];
    let id = submitted(qsub_as(&cluster, &alice, &script, &args));
    assert_eq!(cluster.job_attr(&id, "sandbox").as_deref(), Some("PRIVATE"));
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    let text = wait_for(LIMIT, "the output", || std::fs::read_to_string(data.join(format!("st.o{seq}"))).ok());
    let job_dir = home.join(format!("pbs.{id}.x8z"));
    assert_eq!(text, format!("{0}\n{0}\n", job_dir.display()), "ran in its own directory");
    let result = wait_for(LIMIT, "the staged-out file", || std::fs::read_to_string(data.join("result.txt")).ok());
    assert_eq!(result, "input\nmore\n");
    assert_eq!(std::fs::metadata(data.join("result.txt")).unwrap().uid(), alice.uid);
    wait_for(LIMIT, "the job directory removed", || (!job_dir.exists()).then_some(()));
    // No undelivered-output comment: only the one every start writes.
    assert!(cluster.job_attr(&id, "comment").is_none_or(|comment| comment.starts_with("Job run at ")));

    // A root-only file is not staged in for her: the job waits on a user hold, nothing is read.
    let secret = tempfile::Builder::new().prefix("minipbs-secret-").tempdir().unwrap();
    std::fs::write(secret.path().join("s"), "root only\n").unwrap();
    std::fs::set_permissions(secret.path().join("s"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let stolen = format!("stagein=stolen@localhost:{}/s", secret.path().display());
    let id = submitted(qsub_as(&cluster, &alice, &script, &["-W", &stolen, "-o", &out]));
    let comment = wait_for(LIMIT, "the stagein comment", || {
        cluster.job_attr(&id, "comment").filter(|comment| comment.starts_with("Job held: stagein failed on node1"))
    });
    assert!(comment.contains("Permission denied"), "{comment}");
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("H"));
    assert_eq!(cluster.job_attr(&id, "Hold_Types").as_deref(), Some("u"));
    assert!(!home.join("stolen").exists(), "a root file was copied for the user");
    assert!(as_user(&cluster, &alice, "qdel").arg(&id).status().unwrap().success());

    // Staged out where she may not write: nothing written there, the job says so, the file kept.
    let root_dir = tempfile::Builder::new().prefix("minipbs-rootdir-").tempdir().unwrap();
    std::fs::set_permissions(root_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let denied = format!("stageout=result.txt@localhost:{}/r", root_dir.path().display());
    let args = ["-W", "sandbox=PRIVATE", "-W", &stagein, "-W", &denied, "-o", &out];
    let id = submitted(qsub_as(&cluster, &alice, &script, &args));
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let comment = wait_for(LIMIT, "the comment", || cluster.job_attr(&id, "comment"));
    assert!(comment.starts_with("Post job file processing error"), "{comment}");
    assert!(!root_dir.path().join("r").exists());
    assert!(home.join(format!("pbs.{id}.x8z/result.txt")).exists(), "the file is kept in the job directory");
}

#[test]
fn bad_exec_options_are_refused_at_submit() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("x.sh", "true\n");
    for item in ["umask=999", "umask=10000", "stagein=-rf@h:/x", "stageout=a@h:-o", "sandbox=TMP", "group_list=-g"] {
        let output = cluster.command("qsub").args(["-W", item]).arg(&script).output().unwrap();
        assert_eq!(output.status.code(), Some(15014 % 256), "{item}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("Illegal attribute or resource value"), "{item}: {stderr}");
    }
}

struct Cleanup(String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = std::process::Command::new("groupdel").arg(&self.0).output();
    }
}
