//! `qsub --pin` on the mother superior (a minipbs extension, `job::pin`): before the script,
//! the pinned commit is checked out and the script starts there (`MINIPBS_CODE_DIR`;
//! `PBS_O_WORKDIR` stays the submit directory); after the job the checkout is removed unless
//! the job's `-k` keeps it (`job::pin::keeps_checkout`).
//!
//! How: `git -C <repo> worktree add --detach <dir> <commit>`, **as the user** (git reads the
//! user's configuration and may run the repository's hooks: fine as the user, never as root),
//! from `/`, with an empty environment but `PATH` and `HOME`, under `timeout`
//! (`stage::AsUser`). A worktree shares the repository's objects (no copy, and the stash commit
//! of uncommitted changes is there), and the job can run git in it; it needs the repository
//! (its `.git`) reachable and writable by the user on this host, and leaves an entry in
//! `.git/worktrees` that `worktree remove` (or, for a kept checkout the user deletes, `git
//! worktree prune`) clears. `git archive | tar` would need neither but gives no repository.
//!
//! Where: `<--code-dir>/<jobid>` when the site gives a directory (it must be writable by users,
//! as `/tmp` is: mode 1777; a shared one lets the job's other nodes see the checkout), else
//! `$TMPDIR/code`, or for a job that keeps it `$HOME/pbs.<jobid>.code` (TMPDIR goes with the
//! job; `-k` keeps files in the home directory on the execution host, as PBS does). Each subjob
//! of an array gets its own checkout (its own TMPDIR or job id): subjobs run anywhere, at any
//! time, and may write into their checkout. Interactive jobs are never pinned.
//!
//! The checkout directory is made by the user (`mkdir -m 700`), which fails on anything already
//! there, so nobody else can own it or have planted a link in its place (job ids are guessable).
//!
//! Owns: the checkout's place, creation and removal. Must not: decide what a failure does to the
//! job (run.rs does: the job does not start, `JOB_EXEC_FAIL1`, the reason in its error file).

use super::stage::AsUser;
use proto::mom::JobLaunch;
use std::path::{Path, PathBuf};

/// Seconds a checkout (or its removal) may take.
const GIT_TIMEOUT: &str = "600";

/// Where the job's checkout goes, or `None` when it is not pinned (or interactive).
pub fn checkout_dir(launch: &JobLaunch, site_dir: Option<&Path>, tmpdir: &Path, home: &Path) -> Option<PathBuf> {
    launch.exec.pin.as_ref().filter(|_| launch.interactive.is_none())?;
    Some(match site_dir {
        Some(site) => site.join(&launch.job_id),
        None if job::pin::keeps_checkout(&launch.keep) => home.join(format!("pbs.{}.code", launch.job_id)),
        None => tmpdir.join("code"),
    })
}

/// Checks the pinned commit out into `dir`; `Err`: why, for the job's error file.
pub fn check_out(launch: &JobLaunch, dir: &Path, as_user: &AsUser<'_>) -> Result<(), String> {
    let Some(pin) = &launch.exec.pin else { return Ok(()) };
    // Made first, by the user, mode 0700, and never taken over: in a shared `--code-dir`
    // another user could have made `<jobid>` in advance to swap the job's files.
    as_user.create_dir(dir).map_err(|error| format!("--pin: cannot create {}: {error}", dir.display()))?;
    let args = ["-C".as_ref(), pin.repo.as_ref(), "worktree".as_ref(), "add".as_ref(), "--detach".as_ref()];
    let args: Vec<&std::ffi::OsStr> = args.into_iter().chain([dir.as_os_str(), pin.commit.as_ref()]).collect();
    let mut attempt = 0;
    loop {
        let Err(error) = as_user.run_for(GIT_TIMEOUT, "git", &args) else { return Ok(()) };
        attempt += 1;
        if attempt == CHECKOUT_ATTEMPTS {
            let error = error.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("failed").trim().to_string();
            return Err(format!(
                "--pin: cannot check out {} of {} into {}: {error}",
                pin.commit,
                pin.repo,
                dir.display()
            ));
        }
        // Two `worktree add` on one repository at once can fail (git reads the other's
        // half-made `.git/worktrees/<name>`: "failed to read .../commondir"), as when the
        // jobs of one sweep start together: try again after a short, jittered pause.
        let mut jitter = [0u8; 1];
        let _ = getrandom::fill(&mut jitter);
        std::thread::sleep(std::time::Duration::from_millis(100 * attempt + u64::from(jitter[0])));
    }
}

/// How many times `git worktree add` is tried before the job fails.
const CHECKOUT_ATTEMPTS: u64 = 5;

/// Removes the checkout (`keep` false: always, as after a rerun) and its worktree entry.
pub fn remove(launch: &JobLaunch, dir: &Path, as_user: &AsUser<'_>, keep: bool) {
    let Some(pin) = &launch.exec.pin else { return };
    if keep {
        return;
    }
    let git = |args: &[&str]| {
        let mut all: Vec<&std::ffi::OsStr> = vec!["-C".as_ref(), pin.repo.as_ref()];
        all.extend(args.iter().map(std::ffi::OsStr::new));
        as_user.run_for(GIT_TIMEOUT, "git", &all)
    };
    let dir_text = dir.to_string_lossy();
    if git(&["worktree", "remove", "--force", "--force", &dir_text]).is_err() {
        // Gone already, or the repository is: remove the files, then forget the entry.
        if let Err(error) = as_user.remove_dir(dir) {
            tracing::warn!(dir = %dir.display(), "cannot remove the job's checkout: {error}");
        }
        let _ = git(&["worktree", "prune"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use job::pin::CodePin;

    #[test]
    fn the_checkout_goes_to_the_site_dir_tmpdir_or_a_kept_home_dir() {
        let mut launch = *crate::test_support::launch("1.head", Vec::new());
        let (tmp, home) = (Path::new("/var/tmp/pbs.1.head"), Path::new("/home/alice"));
        assert_eq!(checkout_dir(&launch, None, tmp, home), None, "not pinned");
        let commit = "a".repeat(40);
        launch.exec.pin = Some(CodePin { repo: "/r".into(), commit: commit.clone(), head: commit, changes: false });
        assert_eq!(checkout_dir(&launch, None, tmp, home), Some(tmp.join("code")));
        let site = Path::new("/scratch/code");
        assert_eq!(checkout_dir(&launch, Some(site), tmp, home), Some(site.join(&launch.job_id)));
        launch.keep = "oe".into();
        let kept = home.join(format!("pbs.{}.code", launch.job_id));
        assert_eq!(checkout_dir(&launch, None, tmp, home), Some(kept));
        launch.interactive = Some(job::spec::Interactive { host: "h".into(), port: 1, secret: "0".repeat(32) });
        assert_eq!(checkout_dir(&launch, None, tmp, home), None, "an interactive job is never pinned");
    }

    #[test]
    fn a_directory_already_in_place_is_never_taken_over() {
        let mut launch = *crate::test_support::launch("1.head", Vec::new());
        let commit = "a".repeat(40);
        launch.exec.pin =
            Some(CodePin { repo: "/nonexistent".into(), commit: commit.clone(), head: commit, changes: false });
        let site = tempfile::tempdir().unwrap();
        let planted = site.path().join("1.head");
        std::fs::create_dir(&planted).unwrap();
        let user = crate::test_support::alice();
        let as_user = AsUser { user: &user, change_identity: false, umask: 0o077 };
        let error = check_out(&launch, &planted, &as_user).unwrap_err();
        assert!(error.starts_with(&format!("--pin: cannot create {}: ", planted.display())), "{error}");
        std::os::unix::fs::symlink("/etc", site.path().join("2.head")).unwrap();
        assert!(check_out(&launch, &site.path().join("2.head"), &as_user).is_err(), "a link is not followed");
        let fresh = site.path().join("3.head");
        let error = check_out(&launch, &fresh, &as_user).unwrap_err();
        assert!(error.contains("cannot check out") && error.contains("/nonexistent"), "{error}");
    }
}
