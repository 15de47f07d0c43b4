//! `qsub --pin` (a minipbs extension, issue 18 item 3): the code a job runs, pinned at submit.
//! qsub records the git repository its submit directory is in, the commit of `HEAD` and, when
//! the tree had uncommitted changes, the commit `git stash create` made of them; the mother
//! superior checks the commit that runs out (as the user) and starts the script there.
//!
//! Command line only, never a directive: OpenPBS's and TORQUE's qsub refuse an option or `-W`
//! attribute they do not know (`-W pin=git`: `Undefined attribute`, PBSE_NOATTR), so a script
//! holding one would no longer run on a real PBS cluster; the command line is the submitter's.
//!
//! Owns: [`CodePin`], its bounds (a hostile client can send any frame, not only our qsub), the
//! ref that keeps its commit reachable and the text `qstat -f` shows. Must not: run git (qsub
//! and the mom do, each as the user).

use serde::{Deserialize, Serialize};

/// Longest repository path, in bytes (PATH_MAX).
pub const MAX_REPO_PATH: usize = 4095;

/// Where qsub keeps pinned commits reachable: `refs/minipbs/<commit>` (one per commit, so
/// pinning the same commit twice is the same ref). Users prune them with
/// `git for-each-ref --format='%(refname)' refs/minipbs/ | xargs -rn1 git update-ref -d`.
pub const REF_PREFIX: &str = "refs/minipbs/";

/// The code a job runs. Stored with its spec (`exec_opts::ExecOptions::pin`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodePin {
    /// The repository's top level on the submit host (`git rev-parse --show-toplevel`).
    pub repo: String,
    /// The commit checked out for the job: `head`, or the commit of the uncommitted changes.
    pub commit: String,
    /// The commit of `HEAD` at submit.
    pub head: String,
    /// Whether `commit` holds uncommitted changes (tracked files only) on top of `head`.
    pub changes: bool,
}

/// Why a pin is refused; the text names what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    #[error("code_version: {0:?} is not a commit id (40 or 64 lowercase hex digits)")]
    Commit(String),
    #[error(
        "code_repository: not an absolute path of at most {MAX_REPO_PATH} bytes without control characters or `..`"
    )]
    Repo,
    #[error("code_version: the commit differs from HEAD exactly when uncommitted changes are included")]
    Changes,
}

/// Whether `id` is a full commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits.
pub fn is_commit_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl CodePin {
    /// Checks every field: commit ids, an absolute bounded path, and `changes` agreeing with
    /// whether `commit` is `head`.
    pub fn check(&self) -> Result<(), PinError> {
        for id in [&self.commit, &self.head] {
            if !is_commit_id(id) {
                return Err(PinError::Commit(id.chars().take(80).collect()));
            }
        }
        let repo = &self.repo;
        let path_ok = repo.starts_with('/')
            && repo.len() <= MAX_REPO_PATH
            && !repo.chars().any(char::is_control)
            && !repo.split('/').any(|part| part == "..");
        if !path_ok {
            return Err(PinError::Repo);
        }
        if self.changes == (self.commit == self.head) {
            return Err(PinError::Changes);
        }
        Ok(())
    }

    /// The ref that keeps `commit` reachable in the repository.
    pub fn ref_name(&self) -> String {
        format!("{REF_PREFIX}{}", self.commit)
    }

    /// `qstat -f`'s `code_version_changes`: `True` or `False`, as PBS booleans are shown.
    pub fn show_changes(&self) -> &'static str {
        if self.changes {
            "True"
        } else {
            "False"
        }
    }
}

/// Whether a job's `Keep_Files` (`-k`) keeps its checkout: it names `o` or `e` (output kept on
/// the execution host); `n` and `d` (direct write) do not.
pub fn keeps_checkout(keep: &str) -> bool {
    keep.contains(['o', 'e'])
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    fn pin() -> CodePin {
        CodePin { repo: "/home/u/proj".into(), commit: B.into(), head: A.into(), changes: true }
    }

    #[test]
    fn a_pin_with_or_without_changes_passes() {
        assert_eq!(pin().check(), Ok(()));
        let clean = CodePin { commit: A.into(), changes: false, ..pin() };
        assert_eq!(clean.check(), Ok(()));
        let sha256 = "a".repeat(64);
        assert_eq!(CodePin { commit: sha256.clone(), head: sha256, changes: false, ..pin() }.check(), Ok(()));
        assert_eq!(pin().ref_name(), format!("refs/minipbs/{B}"));
    }

    #[test]
    fn malformed_commits_are_refused() {
        for bad in ["", "abc", &A.to_uppercase(), &format!("{A}0"), &"g".repeat(40), "../../../../etc/passwd"] {
            let error = CodePin { commit: bad.into(), ..pin() }.check();
            assert_eq!(error, Err(PinError::Commit(bad.into())), "{bad:?}");
            assert!(CodePin { head: bad.into(), ..pin() }.check().is_err(), "{bad:?}");
        }
        let long = "z".repeat(10_000);
        let Err(PinError::Commit(shown)) = CodePin { commit: long, ..pin() }.check() else { panic!() };
        assert_eq!(shown.len(), 80, "a long value is cut in the message");
    }

    #[test]
    fn the_repository_path_is_absolute_and_bounded() {
        let at_bound = format!("/{}", "p".repeat(MAX_REPO_PATH - 1));
        assert_eq!(CodePin { repo: at_bound.clone(), ..pin() }.check(), Ok(()));
        for bad in ["", "proj", "./proj", "/a/../b", "/a\nb", &format!("{at_bound}p")] {
            assert_eq!(CodePin { repo: bad.into(), ..pin() }.check(), Err(PinError::Repo), "{bad:?}");
        }
    }

    #[test]
    fn changes_agree_with_the_commits() {
        assert_eq!(CodePin { changes: false, ..pin() }.check(), Err(PinError::Changes));
        assert_eq!(CodePin { commit: A.into(), ..pin() }.check(), Err(PinError::Changes));
    }

    #[test]
    fn keep_files_with_o_or_e_keeps_the_checkout() {
        for (keep, kept) in [("n", false), ("d", false), ("o", true), ("e", true), ("oe", true), ("od", true)] {
            assert_eq!(keeps_checkout(keep), kept, "{keep}");
        }
    }
}
