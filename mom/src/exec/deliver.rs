//! Output delivery: copying a job's spool files to their `-o`/`-e` destinations **as the
//! user**. A mom running as that user copies directly; a root mom runs the copy in a child
//! that has dropped to the user's groups, gid and uid, so root never creates or truncates a
//! file in a user's directory (a user cannot make root write to a path of their choosing).
//!
//! Owns: destination paths and the copy. Must not: delete spool files (the caller does, after
//! a successful copy) or follow a destination as root.

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
        // Non-blocking open and a type check: a FIFO or device as `-o` must not hang the mom.
        let mut target = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NONBLOCK)
            .open(dest)
            .map_err(io_error)?;
        if !target.metadata().map_err(io_error)?.is_file() {
            return Err(io_error(io::Error::other("destination is not a regular file")));
        }
        return io::copy(&mut source, &mut target).map(drop).map_err(io_error);
    }
    copy_as_user(source, dest, user)
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
    Err(as_user_error(format!("{} ({stderr})", output.status)))
}

/// Moves an undeliverable spool file to `<spool>/undelivered/` so the output is not lost.
pub fn keep_undelivered(spool_file: &Path, spool_dir: &Path) -> io::Result<PathBuf> {
    let dir = spool_dir.join("undelivered");
    std::fs::create_dir_all(&dir)?;
    let name = spool_file.file_name().ok_or_else(|| io::Error::other("spool file without a name"))?;
    let kept = dir.join(name);
    std::fs::rename(spool_file, &kept)?;
    Ok(kept)
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
