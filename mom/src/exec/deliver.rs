//! Output delivery: copying a job's spool files to their `-o`/`-e` destinations **as the
//! user**, and keeping what cannot be delivered (pbs-reference 10.5). A mom running as the
//! user links the spool file into place instead when that gives the same file ([`link_in_place`]).
//!
//! How "as the user": a mom running as that user copies directly; a root mom runs the copy in
//! a child that has taken the user's supplementary groups, gid and uid (in that order) and runs
//! no program (`deliver_child.rs`), so the kernel checks every path component, symbolic link and
//! permission of the destination against the user, never against root: `-o /etc/evil` or a
//! link the user planted towards a root file fails with EACCES, as it would for the user. A
//! child rather than `setfsuid` on a thread: the identity change cannot leak to other threads
//! of the mom.
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
//! Owns: destination paths, the copy, the undelivered directory, and a finished job's
//! deliveries then the removal of its files ([`deliver_and_clean`]). Must not: remove a spool
//! file before its copy or its move to the undelivered directory, or follow a destination as root.

use super::files::{file_name_is_safe, Delivery, JobFiles};
use super::identity::Identity;
use super::user::JobUser;
use super::ExecContext;
use super::DEFAULT_UMASK;
use proto::mom::{JobLaunch, Undelivered};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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

/// Copies `spool` to `dest`, or into it under `file_name` when `dest` is a directory (ends in
/// `/` or is one, as the user sees it). `as_child` runs the copy in a child process with the
/// user's identity (required when the mom's uid is not the user's); `umask` is the one files
/// are created with (the job's `-W umask`, else 077). A character device the user may write
/// (`/dev/null`) is written as any file.
pub fn deliver(
    spool: &Path,
    dest: &Path,
    file_name: &str,
    user: &JobUser,
    as_child: bool,
    umask: u32,
) -> Result<(), DeliverError> {
    let io_error = |source| DeliverError::Io { spool: spool.to_path_buf(), dest: dest.to_path_buf(), source };
    if !file_name_is_safe(file_name) {
        return Err(io_error(io::Error::other(format!("unusable output file name {file_name:?}"))));
    }
    let mut source = File::open(spool).map_err(io_error)?;
    if !as_child {
        let target = if dest.as_os_str().as_encoded_bytes().ends_with(b"/") || dest.is_dir() {
            dest.join(file_name)
        } else {
            dest.to_path_buf()
        };
        if link_in_place(spool, &target, umask) {
            return Ok(());
        }
        let mut target = open_directly(&target, user.uid == 0, umask).map_err(io_error)?;
        return io::copy(&mut source, &mut target).map(drop).map_err(io_error);
    }
    copy_as_user(source, dest, file_name, user, umask)
}

/// Opens `dest` for the copy with the mom's own identity, emptied. Non-blocking and a type
/// check: a FIFO as `-o` must not hang the mom (a character device, `/dev/null`, is fine). As
/// root (`root`: the job's user is root, so is the mom) it follows no symbolic link at the last
/// component (`O_NOFOLLOW`) and refuses a file with other hard links: a link planted there must
/// not make root write a file of someone else's choosing (issue 12, item 9).
fn open_directly(dest: &Path, root: bool, umask: u32) -> io::Result<File> {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let no_follow = if root { libc::O_NOFOLLOW } else { 0 };
    let mode = 0o666 & !umask;
    let mut options = OpenOptions::new();
    options.write(true).mode(mode).custom_flags(libc::O_NONBLOCK | no_follow);
    // A new file gets exactly the job's umask (not also the mom's); an existing one keeps its mode.
    let target = match options.clone().create_new(true).open(dest) {
        Ok(created) => {
            created.set_permissions(std::fs::Permissions::from_mode(mode))?;
            created
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => options.open(dest)?,
        Err(err) => return Err(err),
    };
    let meta = target.metadata()?;
    if meta.file_type().is_char_device() {
        return Ok(target);
    }
    if !meta.is_file() {
        return Err(io::Error::other("destination is not a regular file"));
    }
    if root && meta.nlink() > 1 {
        return Err(io::Error::other("destination has other hard links"));
    }
    target.set_len(0)?;
    Ok(target)
}

/// Delivers by giving the spool file a second name at `target` (a mom running as the user, so
/// the spool file is already theirs): no copy and no new inode, which on a busy mom is most of
/// what a delivery costs. Only where the result is what a copy would make: `target` does not
/// exist (`link` never replaces nor follows anything: an existing file, link or device is left
/// to the copy), is on the spool's file system, and its directory neither is setgid nor has a
/// default ACL (a new file there takes the directory's group or ACL; a link keeps the spool
/// file's). The mode is then set to the one a new copy gets, through the spool's name (the
/// mom's own directory, so no name the user controls is followed). False: nothing was done,
/// and the caller copies.
fn link_in_place(spool: &Path, target: &Path, umask: u32) -> bool {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some(dir) = target.parent().filter(|dir| !dir.as_os_str().is_empty()) else { return false };
    let Ok(dir_meta) = std::fs::metadata(dir) else { return false };
    if dir_meta.mode() & libc::S_ISGID != 0 || has_default_acl(dir) {
        return false;
    }
    if std::fs::hard_link(spool, target).is_err() {
        return false;
    }
    if let Err(err) = std::fs::set_permissions(spool, std::fs::Permissions::from_mode(0o666 & !umask)) {
        tracing::warn!(dest = %target.display(), "delivered output keeps the spool file's mode: {err}");
    }
    true
}

/// Whether `dir` has a default POSIX ACL (`system.posix_acl_default`). A size query through
/// libc's `getxattr`: one call the mom needs, not worth a crate. Unreadable counts as having
/// one, so the copy decides.
fn has_default_acl(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return true };
    // SAFETY: both strings are NUL-terminated and live across the call; a null buffer of size
    // 0 asks only for the value's size, nothing is written.
    let size = unsafe { libc::getxattr(path.as_ptr(), c"system.posix_acl_default".as_ptr(), std::ptr::null_mut(), 0) };
    if size >= 0 {
        return true;
    }
    let errno = io::Error::last_os_error().raw_os_error();
    !matches!(errno, Some(libc::ENODATA) | Some(libc::ENOTSUP))
}

/// The copy as the user, in a child of the mom that runs no program (`deliver_child.rs`).
fn copy_as_user(source: File, dest: &Path, file_name: &str, user: &JobUser, umask: u32) -> Result<(), DeliverError> {
    super::deliver_child::copy(&source, dest, file_name, &Identity::of(user), umask)
        .map_err(|err| DeliverError::AsUser { dest: dest.to_path_buf(), message: err.0 })
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

/// Delivers each spool file as the user (an undeliverable one is kept in the undelivered
/// directory, deliver.rs), then removes the job's files; returns what could not be delivered.
/// An interactive job's output went to its terminal: nothing is delivered (as in OpenPBS).
pub(crate) fn deliver_and_clean(
    launch: &JobLaunch,
    context: &ExecContext,
    user: &JobUser,
    files: &JobFiles,
) -> Vec<Undelivered> {
    let as_child = context.mom_uid != user.uid;
    let deliveries = if launch.interactive.is_some() { Vec::new() } else { files.deliveries(launch) };
    let mut undelivered = Vec::new();
    let umask = launch.exec.umask.unwrap_or(DEFAULT_UMASK);
    for Delivery { spool, dest, file_name } in deliveries {
        let path = destination(&dest, &user.home);
        let Err(err) = deliver(&spool, &path, &file_name, user, as_child, umask) else {
            tracing::debug!(dest = %path.display(), "output delivered");
            continue;
        };
        tracing::warn!(user = %user.name, "{err}");
        let owner = (context.mom_uid == 0).then_some(user);
        let kept = match keep_undelivered(&spool, &undelivered_dir(&context.spool_dir), owner) {
            Ok(kept) => {
                tracing::warn!(kept = %kept.display(), "undelivered output kept");
                kept.display().to_string()
            }
            Err(err) => {
                tracing::error!(spool = %spool.display(), "cannot keep undelivered output: {err}");
                String::new()
            }
        };
        let (spool, dest) = (spool.display().to_string(), path.display().to_string());
        undelivered.push(Undelivered { spool, dest, error: err.reason(), kept });
    }
    files.remove();
    undelivered
}

#[cfg(test)]
#[path = "deliver_tests.rs"]
mod tests;
