//! Output delivery: copying a job's spool files to their `-o`/`-e` destinations **as the
//! user**, and keeping what cannot be delivered (pbs-reference 10.5).
//!
//! How "as the user": a mom running as that user copies directly; a root mom runs the copy in
//! a forked child that has taken the user's supplementary groups, gid and uid (in that order)
//! and has an empty environment, so the kernel checks every path component, symbolic link and
//! permission of the destination against the user, never against root: `-o /etc/evil` or a
//! link the user planted towards a root file fails with EACCES, as it would for the user. A
//! child rather than `setfsuid` on a thread: the identity change cannot leak to other threads
//! of the mom, and nothing the user controls (environment, loader variables) reaches a process
//! that still has root's rights.
//!
//! Undeliverable output is moved (not copied) to the undelivered directory, `<spool>/undelivered`
//! (OpenPBS: `$PBS_HOME/undelivered`): inside the spool, which nobody but the mom can write,
//! and on its file system, so the move is one `link` + `unlink` that never replaces a file.
//! The directory is mode 0711 (others may reach a file they know the name of, not list it);
//! each kept file is owned by the user, mode 0600.
//!
//! A root job's output is copied by the root mom itself: it follows no symbolic link at the
//! destination's last component and writes no file with other hard links ([`open_directly`]).
//!
//! Owns: destination paths, the copy and the undelivered directory. Must not: delete spool
//! files (the caller does, after a successful copy) or follow a destination as root.

use super::spawn::Identity;
use super::user::JobUser;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a spool file could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("cannot copy {spool} to {dest}: {source}")]
    Io { spool: PathBuf, dest: PathBuf, source: io::Error },
    #[error("copy to {dest} as the user failed: {message}")]
    AsUser { dest: PathBuf, message: String },
}

impl DeliverError {
    /// What went wrong, without the paths (the copy's own error output, as OpenPBS quotes it
    /// between `*** error from copy` and `*** end error output`).
    pub fn reason(&self) -> String {
        match self {
            DeliverError::Io { source, .. } => source.to_string(),
            DeliverError::AsUser { message, .. } => message.clone(),
        }
    }
}

/// The directory undeliverable output is kept in, under `spool`.
pub fn undelivered_dir(spool: &Path) -> PathBuf {
    spool.join("undelivered")
}

/// The local path of a destination: a leading `host:` is dropped; a relative path is taken
/// from the user's home (as OpenPBS does for `-o host:file`).
pub fn destination(dest: &str, home: &Path) -> PathBuf {
    let path = match dest.split_once(':') {
        Some((host, rest)) if !host.contains('/') => rest,
        _ => dest,
    };
    if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        home.join(path)
    }
}

/// Copies `spool` to `dest`. `as_child` runs the copy in a child process with the user's
/// identity (required when the mom's uid is not the user's).
pub fn deliver(spool: &Path, dest: &Path, user: &JobUser, as_child: bool) -> Result<(), DeliverError> {
    let io_error = |source| DeliverError::Io { spool: spool.to_path_buf(), dest: dest.to_path_buf(), source };
    let mut source = File::open(spool).map_err(io_error)?;
    if !as_child {
        let mut target = open_directly(dest, user.uid == 0).map_err(io_error)?;
        return io::copy(&mut source, &mut target).map(drop).map_err(io_error);
    }
    copy_as_user(source, dest, user)
}

/// Opens `dest` for the copy with the mom's own identity, emptied. Non-blocking and a type
/// check: a FIFO or device as `-o` must not hang the mom. As root (`root`: the job's user is
/// root, so is the mom) it follows no symbolic link at the last component (`O_NOFOLLOW`) and
/// refuses a file with other hard links: a link planted there must not make root write a
/// file of someone else's choosing (issue 12, item 9).
fn open_directly(dest: &Path, root: bool) -> io::Result<File> {
    use std::os::unix::fs::MetadataExt;
    let no_follow = if root { libc::O_NOFOLLOW } else { 0 };
    let target = OpenOptions::new()
        .write(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NONBLOCK | no_follow)
        .open(dest)?;
    let meta = target.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::other("destination is not a regular file"));
    }
    if root && meta.nlink() > 1 {
        return Err(io::Error::other("destination has other hard links"));
    }
    target.set_len(0)?;
    Ok(target)
}

/// The copy run as the user: refuses a destination that exists and is not a regular file (a
/// FIFO would block delivery for ever), and gives up after `timeout` (coreutils) seconds.
const COPY_SCRIPT: &str = "if [ -e \"$1\" ] && [ ! -f \"$1\" ]; then echo \"$1: not a regular file\" >&2; exit 1; fi; \
exec timeout 300 cat > \"$1\"";

/// `sh -c COPY_SCRIPT` with stdin = the spool file, as the user, umask 077.
fn copy_as_user(source: File, dest: &Path, user: &JobUser) -> Result<(), DeliverError> {
    let identity = Identity::of(user);
    let mut command = Command::new("/bin/sh");
    command
        .args(["-c", COPY_SCRIPT, "sh"])
        .arg(dest)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/")
        .stdin(Stdio::from(source))
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: only system calls on data prepared before the fork (see Identity::assume).
    unsafe {
        command.pre_exec(move || {
            super::spawn::close_inherited_descriptors();
            identity.assume()?;
            libc::umask(0o077);
            Ok(())
        });
    }
    let as_user_error = |message: String| DeliverError::AsUser { dest: dest.to_path_buf(), message };
    let output = command.output().map_err(|err| as_user_error(err.to_string()))?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Err(as_user_error(if stderr.is_empty() { output.status.to_string() } else { stderr }))
}

/// Moves an undeliverable spool file into `dir` (created 0711 if missing) under its own name,
/// or `<name>.1`, `<name>.2`, ... when that is taken (a rerun's earlier output), mode 0600,
/// and gives it to `owner` when given (a root mom; the spool file is the user's already).
/// Returns where it is.
pub fn keep_undelivered(spool_file: &Path, dir: &Path, owner: Option<&JobUser>) -> io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o711).create(dir) {
        Err(err) if err.kind() != io::ErrorKind::AlreadyExists => return Err(err),
        _ => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != nix::unistd::geteuid().as_raw() {
        return Err(io::Error::other(format!("{} is not a directory of the mom's own", dir.display())));
    }
    if meta.mode() & 0o7777 != 0o711 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))?;
    }
    let name = spool_file.file_name().ok_or_else(|| io::Error::other("spool file without a name"))?;
    let kept = free_name(dir, name, |candidate| std::fs::hard_link(spool_file, candidate))?;
    std::fs::remove_file(spool_file)?;
    // On a descriptor opened without following links: the name was just created by the mom.
    let file = OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&kept)?;
    if let Some(user) = owner {
        std::os::unix::fs::fchown(&file, Some(user.uid), Some(user.gid))?;
    }
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    Ok(kept)
}

/// Calls `create` with `dir/name`, then `dir/name.1`, `dir/name.2`, ... until it does not fail
/// with "already exists"; returns the name it succeeded with.
fn free_name(
    dir: &Path,
    name: &std::ffi::OsStr,
    mut create: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<PathBuf> {
    for attempt in 0..1000 {
        let mut candidate = name.to_os_string();
        if attempt > 0 {
            candidate.push(format!(".{attempt}"));
        }
        let path = dir.join(candidate);
        match create(&path) {
            Ok(()) => return Ok(path),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::other("no free name in the undelivered directory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        let home = Path::new("/home/alice");
        assert_eq!(destination("login1:/home/alice/x.o1", home), PathBuf::from("/home/alice/x.o1"));
        assert_eq!(destination("/tmp/x.o1", home), PathBuf::from("/tmp/x.o1"));
        assert_eq!(destination("login1:x.o1", home), PathBuf::from("/home/alice/x.o1"));
        assert_eq!(destination("out/x:y", home), PathBuf::from("/home/alice/out/x:y"));
        assert_eq!(destination("/a/b:c", home), PathBuf::from("/a/b:c"));
    }

    #[test]
    fn direct_copy() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("1.OU");
        std::fs::write(&spool, "hello\n").unwrap();
        let dest = dir.path().join("out");
        let user = super::super::user::resolve("root", None).unwrap();
        deliver(&spool, &dest, &user, false).unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "hello\n");
        let missing = deliver(&spool, &dir.path().join("no/such/dir"), &user, false);
        assert!(missing.is_err());
    }

    #[test]
    fn undeliverable_output_is_kept_privately_without_replacing_earlier_output() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let spool = tempfile::tempdir().unwrap();
        let user = super::super::user::resolve("root", None).unwrap();
        let dir = undelivered_dir(spool.path());
        let mut kept = Vec::new();
        for text in ["first\n", "second\n"] {
            let file = spool.path().join("3.s.OU");
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            kept.push(keep_undelivered(&file, &dir, Some(&user)).unwrap());
            assert!(!file.exists(), "moved, not copied");
        }
        assert_eq!(kept, [dir.join("3.s.OU"), dir.join("3.s.OU.1")]);
        assert_eq!(std::fs::read_to_string(&kept[0]).unwrap(), "first\n");
        assert_eq!(std::fs::read_to_string(&kept[1]).unwrap(), "second\n");
        assert_eq!(std::fs::metadata(&kept[1]).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o7777, 0o711, "not listable by others");
    }

    /// Issue 12, item 9: a root job's output (copied by the root mom itself) never follows a
    /// link planted at its destination, nor truncates a file linked from elsewhere.
    #[test]
    fn a_root_jobs_output_follows_no_link() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("1.OU");
        std::fs::write(&spool, "output\n").unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "root's file\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&victim, &hard).unwrap();
        let root = JobUser { uid: 0, ..super::super::user::resolve("root", None).unwrap() };
        assert!(deliver(&spool, &link, &root, false).is_err(), "followed a symbolic link");
        assert!(deliver(&spool, &hard, &root, false).is_err(), "wrote through a hard link");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's file\n");
        deliver(&spool, &dir.path().join("fresh"), &root, false).unwrap();
        std::fs::write(dir.path().join("old"), "a much longer earlier output\n").unwrap();
        deliver(&spool, &dir.path().join("old"), &root, false).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("old")).unwrap(), "output\n", "replaced whole");
    }

    #[test]
    fn a_fifo_destination_fails_instead_of_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let spool = dir.path().join("1.OU");
        std::fs::write(&spool, "hello\n").unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let user = super::super::user::resolve("root", None).unwrap();
        // Without a reader the non-blocking open fails; with one, the type check refuses it.
        assert!(deliver(&spool, &fifo, &user, false).is_err());
        let _reader = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
        assert!(deliver(&spool, &fifo, &user, false).is_err());
    }
}
