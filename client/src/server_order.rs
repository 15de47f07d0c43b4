//! Which configured head a command tries first when failover is configured (`PBS_PRIMARY`,
//! `PBS_SECONDARY`; pbs-reference section 13): the one that answered last, as OpenPBS's
//! commands do with their `.pbsrc.USER` file, so that once the primary is down (its host off, or
//! it stopped without closing its port) only the first command waits for it.
//!
//! The memory is one line in `~/.minipbs/last-server`: the address (as `ServerAddr` displays
//! it) of the head that answered when that was not the primary; the file is removed when the
//! primary answers again. It only reorders the configured addresses: a line naming anything
//! else is ignored, so the file cannot send a command anywhere new.
//!
//! Owns: that file. Kept only in a directory the caller's effective uid owns and nobody else
//! may write (a root command run with another user's `HOME` keeps nothing there), never read
//! or written through a symlink, at most [`MAX_MEMORY_BYTES`] read. Failing to keep it costs
//! time, never correctness, so its errors are ignored.

use crate::conf::ServerAddr;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// At most this much of the memory file is read.
pub const MAX_MEMORY_BYTES: u64 = 1024;

/// The file holding the head that answered last.
#[derive(Debug, Clone)]
pub struct Memory {
    path: PathBuf,
}

impl Memory {
    /// A memory kept in `path` (tests).
    pub fn at(path: impl Into<PathBuf>) -> Memory {
        Memory { path: path.into() }
    }

    /// `~/.minipbs/last-server`, when `~/.minipbs` is the caller's own (created, mode 0700,
    /// when `HOME` is).
    pub fn for_user() -> Option<Memory> {
        let home = PathBuf::from(std::env::var_os("HOME")?);
        let dir = home.join(".minipbs");
        if !dir.exists() && owned_by_me(&home) {
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
        }
        private_dir(&dir).then(|| Memory::at(dir.join("last-server")))
    }

    /// The address remembered, if any.
    pub fn recall(&self) -> Option<String> {
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&self.path).ok()?;
        let mut text = String::new();
        file.take(MAX_MEMORY_BYTES).read_to_string(&mut text).ok()?;
        Some(text.lines().next()?.trim().to_string()).filter(|line| !line.is_empty())
    }

    /// Records that `answered` answered, given what was `recalled` and which head is the
    /// `primary`: the file changes only when the answer differs from the memory.
    pub fn update(&self, recalled: Option<&str>, answered: &ServerAddr, primary: &ServerAddr) {
        let now = (answered != primary).then(|| answered.to_string());
        if now.as_deref() == recalled {
            return;
        }
        match now {
            None => {
                let _ = std::fs::remove_file(&self.path);
            }
            Some(line) => {
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(&self.path);
                if let Ok(mut file) = file {
                    let _ = writeln!(file, "{line}");
                }
            }
        }
    }
}

/// `addresses` (primary first) with the one named `last` moved to the front.
pub fn ordered<'a>(addresses: Vec<&'a ServerAddr>, last: Option<&str>) -> Vec<&'a ServerAddr> {
    let Some(last) = last else { return addresses };
    let (first, rest): (Vec<_>, Vec<_>) = addresses.into_iter().partition(|address| address.to_string() == last);
    first.into_iter().chain(rest).collect()
}

fn owned_by_me(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.uid() == nix::unistd::geteuid().as_raw())
}

/// A real directory (not a symlink to one) of the effective uid that nobody else can write.
fn private_dir(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|meta| meta.is_dir() && meta.uid() == nix::unistd::geteuid().as_raw() && meta.mode() & 0o022 == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tcp(host: &str) -> ServerAddr {
        ServerAddr::Tcp { host: host.into(), port: 15001, munge_socket: "/m".into() }
    }

    #[test]
    fn the_last_head_goes_first() {
        let (primary, secondary) = (tcp("h1"), tcp("h2"));
        let both = || vec![&primary, &secondary];
        assert_eq!(ordered(both(), None), both());
        assert_eq!(ordered(both(), Some("h2:15001")), vec![&secondary, &primary]);
        assert_eq!(ordered(both(), Some("h1:15001")), both());
        assert_eq!(ordered(both(), Some("evil:1")), both(), "only configured heads are reordered");
    }

    #[test]
    fn remembers_the_secondary_and_forgets_it_when_the_primary_answers() {
        let dir = tempfile::tempdir().unwrap();
        let memory = Memory::at(dir.path().join("last-server"));
        let (primary, secondary) = (tcp("h1"), tcp("h2"));
        assert_eq!(memory.recall(), None);
        memory.update(None, &primary, &primary);
        assert!(!dir.path().join("last-server").exists(), "the primary answering writes nothing");
        memory.update(None, &secondary, &primary);
        assert_eq!(memory.recall().as_deref(), Some("h2:15001"));
        let mode = std::fs::metadata(dir.path().join("last-server")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        memory.update(Some("h2:15001"), &primary, &primary);
        assert_eq!(memory.recall(), None);
    }

    #[test]
    fn the_memory_is_bounded_and_never_followed_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("last-server");
        std::fs::write(&path, "x".repeat(MAX_MEMORY_BYTES as usize * 4)).unwrap();
        assert_eq!(Memory::at(&path).recall().map(|line| line.len()), Some(MAX_MEMORY_BYTES as usize));
        std::fs::remove_file(&path).unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "h2:15001\n").unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let memory = Memory::at(&path);
        assert_eq!(memory.recall(), None, "a symlink is not read");
        memory.update(None, &tcp("h2"), &tcp("h1"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "h2:15001\n", "nor written through");
    }

    #[test]
    fn only_a_private_directory_of_ours_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        assert!(private_dir(dir.path()));
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!private_dir(dir.path()), "a directory others can write");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(!private_dir(&link), "a symlink to a directory");
        assert!(!private_dir(&dir.path().join("absent")));
    }
}
