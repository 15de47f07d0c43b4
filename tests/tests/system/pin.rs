//! `qsub --pin` (issue 18 item 3, a minipbs extension): a job runs the commit that was HEAD
//! (plus uncommitted changes) at submit, whatever happens to the repository before it starts;
//! `qstat -f` shows the commit; the checkout is removed at the end unless `-k` keeps it; each
//! subjob of an array gets its own; a failed checkout ends the job with its reason in the error
//! file; outside a repository qsub refuses. Needs root (creates a user) and git.

use crate::users::{as_user, TestUser};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tests::{Cluster, Shape};

const SCRIPT: &str =
    "#!/bin/sh\ncat data.txt\necho \"code=$MINIPBS_CODE_DIR\"\necho \"pwd=$(pwd)\"\necho \"workdir=$PBS_O_WORKDIR\"\n";

/// Runs `git -C repo args...` as `user`; its stdout.
fn git(user: &TestUser, repo: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .uid(user.uid)
        .gid(user.gid)
        .env("HOME", format!("/home/{}", user.name))
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Writes `name` in `repo` as the user would (the test runs as root: the owner is set back).
fn write_as(user: &TestUser, repo: &Path, name: &str, text: &str) {
    let path = repo.join(name);
    std::fs::write(&path, text).unwrap();
    std::os::unix::fs::chown(&path, Some(user.uid), Some(user.gid)).unwrap();
}

fn write_data(user: &TestUser, repo: &Path, text: &str) {
    write_as(user, repo, "data.txt", text);
}

/// `qsub --pin args... run.sh` as the user from the repository; the id, or the failed output.
fn qsub_pin(cluster: &Cluster, user: &TestUser, dir: &Path, args: &[&str]) -> Result<String, (i32, String)> {
    let output =
        as_user(cluster, user, "qsub").current_dir(dir).env("PWD", dir).arg("--pin").args(args).output().unwrap();
    match output.status.success() {
        true => Ok(String::from_utf8(output.stdout).unwrap().trim().to_string()),
        false => Err((output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())),
    }
}

fn output_of(repo: &Path, file: &str) -> Vec<String> {
    let path = repo.join(file);
    let text = tests::wait_for(Duration::from_secs(20), &format!("{}", path.display()), || {
        std::fs::read_to_string(&path).ok().filter(|text| text.contains("workdir="))
    });
    text.lines().map(str::to_string).collect()
}

fn seq(id: &str) -> &str {
    id.split(['.', '[']).next().unwrap()
}

/// A repository in the user's home with `run.sh` and `data.txt` (`A`) committed.
fn repository(user: &TestUser) -> PathBuf {
    let repo = PathBuf::from(format!("/home/{}/proj", user.name));
    std::fs::create_dir(&repo).unwrap();
    std::os::unix::fs::chown(&repo, Some(user.uid), Some(user.gid)).unwrap();
    git(user, &repo, &["init", "-q"]);
    git(user, &repo, &["config", "user.email", "pin@example.org"]);
    git(user, &repo, &["config", "user.name", "pin"]);
    write_as(user, &repo, "run.sh", SCRIPT);
    write_data(user, &repo, "A\n");
    git(user, &repo, &["add", "run.sh", "data.txt"]);
    git(user, &repo, &["commit", "-qm", "A"]);
    repo
}

#[test]
fn a_pinned_job_runs_the_code_of_its_submit_time() {
    if !tests::root_or_skip("a_pinned_job_runs_the_code_of_its_submit_time", "to create users") {
        return;
    }
    let user = TestUser::create("pin");
    let repo = repository(&user);
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let commit_a = git(&user, &repo, &["rev-parse", "HEAD"]).trim().to_string();
    let clean = qsub_pin(&cluster, &user, &repo, &["-h", "run.sh"]).expect("pinned clean");
    write_data(&user, &repo, "B\n");
    git(&user, &repo, &["commit", "-qam", "B"]);
    let commit_b = git(&user, &repo, &["rev-parse", "HEAD"]).trim().to_string();
    write_data(&user, &repo, "C\n");
    let changed = qsub_pin(&cluster, &user, &repo, &["-h", "-k", "oe", "run.sh"]).expect("pinned with changes");
    git(&user, &repo, &["checkout", "-q", "data.txt"]);
    let array = qsub_pin(&cluster, &user, &repo, &["-h", "-J", "1-2", "run.sh"]).expect("pinned array");
    write_data(&user, &repo, "D\n");
    git(&user, &repo, &["commit", "-qam", "D"]);

    assert_eq!(cluster.job_attr(&clean, "code_version"), Some(commit_a.clone()));
    assert_eq!(cluster.job_attr(&clean, "code_version_changes").as_deref(), Some("False"));
    assert_eq!(cluster.job_attr(&clean, "code_repository"), Some(repo.display().to_string()));
    let stash = cluster.job_attr(&changed, "code_version").expect("shown");
    assert_ne!(stash, commit_b);
    assert_eq!(cluster.job_attr(&changed, "code_version_head"), Some(commit_b.clone()));
    assert_eq!(cluster.job_attr(&changed, "code_version_changes").as_deref(), Some("True"));
    assert_eq!(git(&user, &repo, &["rev-parse", &format!("refs/minipbs/{stash}")]).trim(), stash);

    let released = as_user(&cluster, &user, "qrls").args([&clean, &changed, &array]).output().unwrap();
    assert!(released.status.success(), "{}", String::from_utf8_lossy(&released.stderr));
    let subjobs: Vec<String> = [1, 2].iter().map(|i| array.replace("[]", &format!("[{i}]"))).collect();
    for id in [&clean, &changed] {
        let status = cluster.wait_finished(id, Duration::from_secs(60));
        let errors = std::fs::read_to_string(repo.join(format!("run.sh.e{}", seq(id)))).unwrap_or_default();
        assert_eq!(status, 0, "{id}: {errors}\n{}", cluster.logs());
    }
    cluster.wait_finished(&array, Duration::from_secs(60));
    for id in &subjobs {
        assert_eq!(cluster.job_attr(id, "Exit_status").as_deref(), Some("0"), "{id} (subjobs end in X)");
    }

    let lines = output_of(&repo, &format!("run.sh.o{}", seq(&clean)));
    assert_eq!(lines[0], "A", "the commit of submit time ran: {lines:?}");
    let code = lines[1].strip_prefix("code=").unwrap();
    assert!(code.ends_with(&format!("pbs.{clean}/code")), "in the job's TMPDIR: {lines:?}");
    assert_eq!(lines[2], format!("pwd={code}"), "the script starts in the checkout");
    assert_eq!(lines[3], format!("workdir={}", repo.display()), "PBS_O_WORKDIR is the submit directory");
    assert!(!Path::new(code).exists(), "the checkout is removed");

    let lines = output_of(&repo, &format!("run.sh.o{}", seq(&changed)));
    assert_eq!(lines[0], "C", "the uncommitted change ran: {lines:?}");
    let kept = format!("/home/{}/pbs.{changed}.code", user.name);
    assert_eq!(lines[1], format!("code={kept}"), "-k oe keeps it in the home directory");
    assert_eq!(std::fs::read_to_string(Path::new(&kept).join("data.txt")).unwrap(), "C\n", "kept");

    for index in [1, 2] {
        let lines = output_of(&repo, &format!("run.sh.o{}.{index}", seq(&array)));
        assert_eq!(lines[0], "B", "subjob {index}: {lines:?}");
    }
    let worktrees = git(&user, &repo, &["worktree", "list", "--porcelain"]);
    let listed: Vec<&str> = worktrees.lines().filter_map(|line| line.strip_prefix("worktree ")).collect();
    assert_eq!(listed, [repo.display().to_string(), kept], "only the kept checkout is still registered");
    assert_eq!(std::fs::read_to_string(repo.join("data.txt")).unwrap(), "D\n", "the user's tree is untouched");
}

#[test]
fn pin_refusals_and_a_failed_checkout() {
    if !tests::root_or_skip("pin_refusals_and_a_failed_checkout", "to create users") {
        return;
    }
    let user = TestUser::create("pno");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let outside = cluster.work.path();
    std::fs::write(outside.join("run.sh"), SCRIPT).unwrap();
    let (code, stderr) = qsub_pin(&cluster, &user, outside, &["run.sh"]).expect_err("not in a repository");
    assert_eq!((code, stderr), (1, format!("qsub: --pin: {} is not in a git repository\n", outside.display())));
    let listed = cluster.run("qselect", &[]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "", "nothing was submitted");
    let repo = repository(&user);
    // The repository is gone when the job starts: it does not run and says why.
    let id = qsub_pin(&cluster, &user, &repo, &["-h", "run.sh"]).expect("pinned");
    std::fs::rename(repo.join(".git"), repo.join("moved.git")).unwrap();
    as_user(&cluster, &user, "qrls").arg(&id).status().unwrap();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), -1, "JOB_EXEC_FAIL1\n{}", cluster.logs());
    let path = repo.join(format!("run.sh.e{}", seq(&id)));
    let text = tests::wait_for(Duration::from_secs(20), "the error file", || std::fs::read_to_string(&path).ok());
    assert!(text.starts_with("=>> PBS: job not started: --pin: cannot check out "), "{text}");
}

#[test]
fn a_site_code_dir_holds_the_checkout_and_a_planted_one_is_refused() {
    if !tests::root_or_skip("a_site_code_dir_holds_the_checkout_and_a_planted_one_is_refused", "to create users") {
        return;
    }
    let user = TestUser::create("pcd");
    let repo = repository(&user);
    let site = tempfile::Builder::new().prefix("minipbs-code-").tempdir().unwrap();
    std::fs::set_permissions(site.path(), std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    let flag = format!("--mom-arg=--code-dir={}", site.path().display());
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &[&flag]);
    let id = qsub_pin(&cluster, &user, &repo, &["run.sh"]).expect("pinned");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), 0, "{}", cluster.logs());
    let lines = output_of(&repo, &format!("run.sh.o{}", seq(&id)));
    let code = site.path().join(&id);
    assert_eq!((lines[0].as_str(), lines[1].clone()), ("A", format!("code={}", code.display())));
    assert!(!code.exists(), "removed after the job");

    // Someone made the next job's directory in the shared place first: the job does not run.
    let held = qsub_pin(&cluster, &user, &repo, &["-h", "run.sh"]).expect("pinned");
    std::fs::create_dir(site.path().join(&held)).unwrap();
    as_user(&cluster, &user, "qrls").arg(&held).status().unwrap();
    assert_eq!(cluster.wait_finished(&held, Duration::from_secs(60)), -1, "{}", cluster.logs());
    let path = repo.join(format!("run.sh.e{}", seq(&held)));
    let text = tests::wait_for(Duration::from_secs(20), "the error file", || std::fs::read_to_string(&path).ok());
    assert!(text.contains("--pin: cannot create "), "{text}");
}
