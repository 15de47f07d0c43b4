//! Privilege safety of the mom (issue 4 item 5): a normal user cannot make the root mom write
//! where they may not (`-o /etc/...`, `-o` into a link to a root file, `-d` into a directory
//! they cannot enter), their output is kept where only they can read it and they are told
//! (job comment, mail), `-v` cannot override what the mom sets, the job has the user's
//! supplementary groups, and a job as root needs `acl_roots`. Needs root (creates users);
//! prints why it did nothing otherwise.

use crate::accounting::{mails, recording_sendmail};
use crate::users::{as_user, TestUser};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn needs_root(test: &str) -> bool {
    tests::root_or_skip(test, "to create users")
}

/// Submits `script` as `user` with `args`; returns the job id.
fn qsub_as(cluster: &Cluster, user: &TestUser, script: &Path, args: &[&str]) -> String {
    let output = as_user(cluster, user, "qsub").args(args).arg(script).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "qsub {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// Waits for the job's comment to name its kept output; returns the kept file.
fn kept_output(cluster: &Cluster, id: &str) -> PathBuf {
    let prefix = "Post job file processing error; output retained on node1 in: ";
    let comment = wait_for(LIMIT, "the undelivered comment", || {
        cluster.job_attr(id, "comment").filter(|comment| comment.starts_with(prefix))
    });
    PathBuf::from(comment.trim_start_matches(prefix))
}

/// The kept file is the user's alone, in a directory others cannot list, and has the output.
fn assert_private(kept: &Path, user: &TestUser, text: &str) {
    let meta = std::fs::metadata(kept).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (user.uid, 0o600), "{}", kept.display());
    let dir = std::fs::metadata(kept.parent().unwrap()).unwrap();
    assert_eq!(dir.mode() & 0o777, 0o711, "the undelivered directory is not listable by others");
    assert_eq!(std::fs::read_to_string(kept).unwrap(), text);
}

#[test]
fn output_the_user_may_not_write_is_kept_for_them_and_they_are_told() {
    if !needs_root("output_the_user_may_not_write_is_kept_for_them_and_they_are_told") {
        return;
    }
    let alice = TestUser::create("o");
    let mailbox = tempfile::tempdir().unwrap();
    let sendmail = recording_sendmail(mailbox.path());
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--sendmail", sendmail.to_str().unwrap()]);
    let script = cluster.script("secret.sh", "echo secret output\n");

    // -o /etc/...: the copy runs as alice and fails; root never writes there.
    let evil = PathBuf::from(format!("/etc/evil.minipbs{}", std::process::id()));
    let id = qsub_as(&cluster, &alice, &script, &["-o", evil.to_str().unwrap()]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let kept = kept_output(&cluster, &id);
    assert!(!evil.exists(), "{} was created", evil.display());
    assert_private(&kept, &alice, "secret output\n");
    let read = std::process::Command::new("cat").arg(&kept).uid(alice.uid).gid(alice.gid).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&read.stdout), "secret output\n", "alice can read her output");
    let seen = as_user(&cluster, &alice, "qstat").args(["-x", "-f", "-1", &id]).output().unwrap();
    assert!(String::from_utf8_lossy(&seen.stdout).contains(&kept.display().to_string()), "alice sees the comment");
    let mail = wait_for(LIMIT, "the mail", || mails(mailbox.path()).into_iter().next());
    for part in [
        format!("argv: -f adm -- {}@", alice.name),
        "An error has occurred processing your job, see below.\nPost job file processing error; job ".to_string(),
        format!("Unable to copy file {}", cluster.state.path().join(format!("mom/node1/{id}.OU")).display()),
        format!(" to {}\n*** error from copy\n", evil.display()),
        format!("Permission denied\n*** end error output\nOutput retained on that host in: {}", kept.display()),
    ] {
        assert!(mail.contains(&part), "{part:?} not in\n{mail}");
    }
    let mom_log = std::fs::read_to_string(cluster.state.path().join("logs/node1.log")).unwrap();
    assert!(mom_log.contains("undelivered output kept"), "{mom_log}");

    // -o into a link alice planted towards a root file: the file is unchanged, the output kept.
    let root_dir = tempfile::Builder::new().prefix("minipbs-rootfile-").tempdir().unwrap();
    std::fs::set_permissions(root_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = root_dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    let link = PathBuf::from(format!("/home/{}/out.link", alice.name));
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(alice.uid), Some(alice.gid)).unwrap();
    let id = qsub_as(&cluster, &alice, &script, &["-o", link.to_str().unwrap()]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let kept = kept_output(&cluster, &id);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "the root file is unchanged");
    assert_eq!(std::fs::metadata(&victim).unwrap().uid(), 0);
    assert_private(&kept, &alice, "secret output\n");

    // A root job's output into that link (issue 12, item 9): the root mom copies it itself and
    // follows no link; the output is kept.
    let id = cluster.qsub(&script, &["-o", link.to_str().unwrap()]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let kept = kept_output(&cluster, &id);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "a root job's output followed a link");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "secret output\n");
}

#[test]
fn identity_start_directory_and_environment_are_the_moms_to_set() {
    if !needs_root("identity_start_directory_and_environment_are_the_moms_to_set") {
        return;
    }
    let alice = TestUser::create("e");
    let group = format!("mpg{}", std::process::id() % 100000);
    assert!(std::process::Command::new("groupadd").arg(&group).status().unwrap().success());
    let _group = scopeguard(&group);
    let added = std::process::Command::new("usermod").args(["-aG", &group, &alice.name]).status().unwrap();
    assert!(added.success());
    let gid = uzers::get_group_by_name(&group).unwrap().gid();
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let out = |id: &str, name: &str| {
        let path = cluster.work.path().join(format!("{name}.o{}", id.split('.').next().unwrap()));
        wait_for(LIMIT, "the output", || std::fs::read_to_string(&path).ok())
    };

    // The user's uid, primary gid and supplementary groups (initgroups).
    let script = cluster.script("ids.sh", "id -u; id -g; id -G\n");
    let id = qsub_as(&cluster, &alice, &script, &[]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let text = out(&id, "ids.sh");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[..2], [alice.uid.to_string(), alice.gid.to_string()], "{text}");
    assert!(lines[2].split(' ').any(|g| g == gid.to_string()), "group {gid} missing from `id -G`: {text}");

    // -d into a directory alice cannot enter: the job fails (-2) and says why on its stderr.
    let script = cluster.script("cd.sh", "echo started\n");
    let id = qsub_as(&cluster, &alice, &script, &["-d", "/root"]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), -2, "{}", cluster.logs());
    let err = cluster.work.path().join(format!("cd.sh.e{}", id.split('.').next().unwrap()));
    let text = wait_for(LIMIT, "the error file", || std::fs::read_to_string(&err).ok());
    assert_eq!(text, "PBS: chdir to '/root' failed: Permission denied\n");
    let spool = cluster.state.path().join("mom/node1");
    let left: Vec<String> = std::fs::read_dir(&spool)
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(id.as_str()))
        .collect();
    assert!(left.is_empty(), "files left in the spool: {left:?}");

    // -v cannot override what the mom sets; loader variables reach alice's own job only.
    let script = cluster.script(
        "env.sh",
        "echo \"id=$PBS_JOBID home=$HOME user=$USER mine=$MINE\"\necho \"preload=${LD_PRELOAD:-none}\"\n",
    );
    let vars = "PBS_JOBID=x,HOME=/,USER=root,MINE=kept,LD_PRELOAD=/tmp/x.so";
    let id = qsub_as(&cluster, &alice, &script, &["-v", vars]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let text = out(&id, "env.sh");
    let expected = format!("id={id} home=/home/{0} user={0} mine=kept\npreload=/tmp/x.so\n", alice.name);
    assert_eq!(text, expected);
    // A root job (acl_roots allows root in a personal cluster) never gets them, nor any
    // variable off its allow-list (issue 12, item 9).
    let id = cluster.qsub(&script, &["-v", vars]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    assert_eq!(out(&id, "env.sh"), format!("id={id} home=/root user=root mine=\npreload=none\n"));
}

#[test]
fn a_root_job_needs_acl_roots() {
    if !needs_root("a_root_job_needs_acl_roots") {
        return;
    }
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--acl-roots", ""]);
    let script = cluster.script("root.sh", "id -u\n");
    let output = cluster.command("qsub").arg(&script).stdin(Stdio::null()).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stderr), "qsub: Bad UID for job execution\n");
    assert_eq!(output.status.code(), Some(15023 % 256));
    let listed = cluster.run("qstat", &["-x"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "", "nothing was queued");

    let set = cluster.run("qmgr", &["-c", "set server acl_roots = root"]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    let id = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{}", cluster.logs());
    let print = cluster.run("qmgr", &["-c", "print server"]);
    assert!(String::from_utf8_lossy(&print.stdout).contains("set server acl_roots = root\n"));
}

/// Removes the group when dropped.
struct GroupGuard(String);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        let _ = std::process::Command::new("groupdel").arg(&self.0).output();
    }
}

fn scopeguard(group: &str) -> GroupGuard {
    GroupGuard(group.to_string())
}
