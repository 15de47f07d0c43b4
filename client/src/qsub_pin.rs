//! `qsub --pin` (a minipbs extension; `job::pin` says why it is command line only): records
//! the commit the job will run. In the submit directory's repository, as the user: the top
//! level (`rev-parse --show-toplevel`), `HEAD` (`rev-parse --verify HEAD^{commit}`), a commit
//! of the uncommitted changes to tracked files (`stash create`: the user's tree, index and
//! stash list are left alone; untracked files are not included), and `update-ref
//! refs/minipbs/<commit>` so that `git gc` never drops it while the job waits.
//!
//! git runs with a sanitised environment: only `PATH`, `HOME` and `XDG_CONFIG_HOME` (the
//! user's own git configuration applies), so `GIT_DIR`, `GIT_WORK_TREE` and `GIT_INDEX_FILE`
//! of the submitting shell are ignored on purpose: the repository is the one the submit
//! directory is in, the one `PBS_O_WORKDIR` names. Each call is bounded by `timeout` (coreutils,
//! as the mom's copies) and its output by [`MAX_OUTPUT`].
//!
//! Owns: the git calls at submit and their one-line errors. Must not: talk to the server.

use crate::exit;
use crate::submit::{fail, Failure};
use job::pin::CodePin;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

/// Seconds one git call may take.
const GIT_TIMEOUT_SECS: &str = "60";
/// Most bytes read of one git call's stdout (and of its stderr): ids and a path fit easily.
const MAX_OUTPUT: u64 = 64 * 1024;

/// Why pinning failed; `qsub: --pin: <text>`.
#[derive(Debug, thiserror::Error)]
pub enum PinFailure {
    #[error("{0} is not in a git repository")]
    NotARepository(String),
    #[error("{0} has no commit yet: commit something before --pin")]
    NoCommit(String),
    #[error("git {args} in {dir}: {reason}")]
    Git { args: String, dir: String, reason: String },
}

/// The pin of the repository `dir` is in, its changes committed aside and kept reachable.
pub fn record(dir: &Path) -> Result<CodePin, Failure> {
    pin(dir).map_err(|failure| fail(exit::FAILURE, format!("--pin: {failure}")))
}

fn pin(dir: &Path) -> Result<CodePin, PinFailure> {
    let shown = dir.display().to_string();
    let repo = git(dir, &["rev-parse", "--show-toplevel"])
        .map_err(|failure| match failure {
            PinFailure::Git { ref reason, .. } if reason.contains("not a git repository") => {
                PinFailure::NotARepository(shown.clone())
            }
            other => other,
        })?
        .trim_end_matches('\n')
        .to_string();
    let head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .map_err(|_| PinFailure::NoCommit(repo.clone()))?
        .trim()
        .to_string();
    let stash = git(dir, &["stash", "create", "minipbs --pin"])?.trim().to_string();
    let changes = !stash.is_empty();
    let commit = if changes { stash } else { head.clone() };
    let pin = CodePin { repo, commit, head, changes };
    pin.check().map_err(|error| PinFailure::Git { args: "rev-parse".into(), dir: shown, reason: error.to_string() })?;
    git(Path::new(&pin.repo), &["update-ref", &pin.ref_name(), &pin.commit])?;
    Ok(pin)
}

/// Runs `git -C dir args...` (sanitised, under `timeout`); its stdout, or why it failed.
fn git(dir: &Path, args: &[&str]) -> Result<String, PinFailure> {
    let failure = |reason: String| PinFailure::Git { args: args.join(" "), dir: dir.display().to_string(), reason };
    let mut command = Command::new("timeout");
    command.arg(GIT_TIMEOUT_SECS).arg("git").arg("-C").arg(dir).args(args).env_clear();
    for name in ["PATH", "HOME", "XDG_CONFIG_HOME"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.env("LC_ALL", "C").env("GIT_TERMINAL_PROMPT", "0");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| failure(format!("cannot run git: {error}")))?;
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let stderr = child.stderr.take();
    // stderr is drained on its own thread so a chatty git never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        if let Some(stderr) = stderr {
            let _ = stderr.take(MAX_OUTPUT).read_to_end(&mut err);
        }
        err
    });
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(MAX_OUTPUT).read_to_end(&mut out);
    }
    let status = child.wait().map_err(|error| failure(error.to_string()))?;
    let err = reader.join().unwrap_or_default();
    if status.code() == Some(124) {
        return Err(failure(format!("took more than {GIT_TIMEOUT_SECS} seconds")));
    }
    if !status.success() {
        let text = String::from_utf8_lossy(&err);
        let line = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("failed").trim();
        return Err(failure(line.strip_prefix("fatal: ").unwrap_or(line).to_string()));
    }
    String::from_utf8(out).map_err(|_| failure("output is not UTF-8".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let status = Command::new("git").arg("-C").arg(dir).args(args).stdout(Stdio::null()).status().unwrap();
        assert!(status.success(), "git {args:?}");
    }

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        run(dir.path(), &["init", "-q"]);
        run(dir.path(), &["config", "user.email", "t@example.org"]);
        run(dir.path(), &["config", "user.name", "t"]);
        dir
    }

    #[test]
    fn a_directory_outside_any_repository_is_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let failure = record(dir.path()).err().unwrap();
        assert_eq!(failure.message, format!("--pin: {} is not in a git repository", dir.path().display()));
        assert_eq!(failure.code, exit::FAILURE);
    }

    #[test]
    fn a_repository_without_commits_is_refused() {
        let dir = repo();
        let message = record(dir.path()).err().unwrap().message;
        assert!(message.contains("has no commit yet"), "{message}");
    }

    #[test]
    fn a_clean_tree_pins_head_and_a_changed_one_a_commit_of_its_changes() {
        let dir = repo();
        std::fs::write(dir.path().join("run.sh"), "A\n").unwrap();
        run(dir.path(), &["add", "run.sh"]);
        run(dir.path(), &["commit", "-qm", "a"]);
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let clean = record(&dir.path().join("sub")).ok().unwrap();
        assert_eq!((clean.commit == clean.head, clean.changes), (true, false));
        assert_eq!(Path::new(&clean.repo), dir.path().canonicalize().unwrap());
        std::fs::write(dir.path().join("run.sh"), "C\n").unwrap();
        let changed = record(dir.path()).ok().unwrap();
        assert!(changed.changes && changed.commit != changed.head && changed.head == clean.head);
        assert_eq!(std::fs::read_to_string(dir.path().join("run.sh")).unwrap(), "C\n", "the tree is untouched");
        let kept = Command::new("git").arg("-C").arg(dir.path()).args(["show-ref", "-s", &changed.ref_name()]).output();
        let kept = String::from_utf8(kept.unwrap().stdout).unwrap();
        assert_eq!(kept.trim(), changed.commit, "the ref keeps the commit reachable");
    }
}
