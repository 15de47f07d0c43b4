//! Tests of output delivery (deliver.rs): destinations, the copy as the mom and as the user,
//! linking into place, devices and FIFOs, root's rules, the undelivered directory.

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
    deliver(&spool, &dest, "x.o1", &user, false, 0o077).unwrap();
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "hello\n");
    let missing = deliver(&spool, &dir.path().join("no/such/dir"), "x.o1", &user, false, 0o077);
    assert!(missing.is_err());
}

/// Issue 13, item 6: `-o logs/` (or an existing directory) gets the file named in it.
#[test]
fn a_directory_destination_gets_the_named_file() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("1.OU");
    std::fs::write(&spool, "hello\n").unwrap();
    let user = super::super::user::resolve("root", None).unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    let with_slash = PathBuf::from(format!("{}/", logs.display()));
    deliver(&spool, &with_slash, "job.o1", &user, false, 0o077).unwrap();
    assert_eq!(std::fs::read_to_string(logs.join("job.o1")).unwrap(), "hello\n");
    deliver(&spool, &logs, "job.e1", &user, false, 0o077).unwrap();
    assert_eq!(std::fs::read_to_string(logs.join("job.e1")).unwrap(), "hello\n");
    let missing = PathBuf::from(format!("{}/", dir.path().join("nodir").display()));
    assert!(deliver(&spool, &missing, "job.o1", &user, false, 0o077).is_err());
    for bad in ["", ".", "..", "a/b", "../x"] {
        assert!(deliver(&spool, &with_slash, bad, &user, false, 0o077).is_err(), "{bad:?}");
    }
}

/// Issue 13, item 7: `-o /dev/null` is delivered (written), not refused.
#[test]
fn a_character_device_destination_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("1.OU");
    std::fs::write(&spool, "hello\n").unwrap();
    let user = super::super::user::resolve("root", None).unwrap();
    deliver(&spool, Path::new("/dev/null"), "x.o1", &user, false, 0o077).unwrap();
    let root = JobUser { uid: 0, ..user };
    deliver(&spool, Path::new("/dev/null"), "x.o1", &root, false, 0o077).unwrap();
}

/// The copy in a child (as root here, the identity change is the same system calls):
/// a directory gets the named file, `/dev/null` is written, a FIFO is refused.
#[test]
fn the_child_copy_names_files_in_directories_and_writes_devices() {
    if !crate::test_support::is_root() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("1.OU");
    std::fs::write(&spool, "hello\n").unwrap();
    let user = super::super::user::resolve("root", None).unwrap();
    let with_slash = PathBuf::from(format!("{}/", dir.path().display()));
    deliver(&spool, &with_slash, "job.o1", &user, true, 0o022).unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("job.o1")).unwrap(), "hello\n");
    deliver(&spool, dir.path(), "job.e1", &user, true, 0o022).unwrap();
    assert!(dir.path().join("job.e1").exists());
    deliver(&spool, Path::new("/dev/null"), "x", &user, true, 0o022).unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let refused = deliver(&spool, &fifo, "x", &user, true, 0o022).unwrap_err();
    assert!(refused.reason().contains("not a regular file"), "{refused}");
}

/// `-W umask`: a delivered file is created with the job's umask.
#[test]
fn output_is_created_with_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("1.OU");
    std::fs::write(&spool, "hello\n").unwrap();
    let user = super::super::user::resolve("root", None).unwrap();
    for (mask, mode) in [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)] {
        let dest = dir.path().join(format!("out{mask:o}"));
        deliver(&spool, &dest, "x", &user, false, mask).unwrap();
        assert_eq!(std::fs::metadata(&dest).unwrap().permissions().mode() & 0o777, mode);
    }
}

/// A mom running as the user links the spool file into place when a copy would give the
/// same file: same inode, the umask's mode; an existing destination, a setgid directory and
/// a directory with a default ACL get a copy (a new inode) instead.
#[test]
fn a_fresh_destination_is_the_spool_file_linked_and_others_are_copied() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let user = super::super::user::resolve("root", None).unwrap();
    let spool_file = |name: &str| {
        let spool = dir.path().join(name);
        std::fs::write(&spool, "hello\n").unwrap();
        spool
    };
    let inode = |path: &Path| std::fs::metadata(path).unwrap().ino();

    let spool = spool_file("1.OU");
    let fresh = dir.path().join("fresh.o1");
    deliver(&spool, &fresh, "x", &user, false, 0o022).unwrap();
    assert_eq!(inode(&fresh), inode(&spool), "linked, not copied");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "hello\n");
    assert_eq!(std::fs::metadata(&fresh).unwrap().mode() & 0o777, 0o644);

    let spool = spool_file("2.OU");
    let existing = dir.path().join("existing.o2");
    std::fs::write(&existing, "an earlier, longer output\n").unwrap();
    deliver(&spool, &existing, "x", &user, false, 0o022).unwrap();
    assert_ne!(inode(&existing), inode(&spool), "an existing file is replaced by a copy");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "hello\n");

    let setgid = dir.path().join("setgid");
    std::fs::create_dir(&setgid).unwrap();
    std::fs::set_permissions(&setgid, std::fs::Permissions::from_mode(0o2775)).unwrap();
    let spool = spool_file("3.OU");
    deliver(&spool, &setgid, "job.o3", &user, false, 0o022).unwrap();
    assert_ne!(inode(&setgid.join("job.o3")), inode(&spool), "a setgid directory gets a copy");

    let acl = dir.path().join("acl");
    std::fs::create_dir(&acl).unwrap();
    set_default_acl(&acl);
    assert!(has_default_acl(&acl) && !has_default_acl(dir.path()));
    let spool = spool_file("4.OU");
    deliver(&spool, &acl, "job.o4", &user, false, 0o022).unwrap();
    assert_ne!(inode(&acl.join("job.o4")), inode(&spool), "a directory with a default ACL gets a copy");
    assert_eq!(std::fs::read_to_string(acl.join("job.o4")).unwrap(), "hello\n");
}

/// Gives `dir` the minimal default ACL (user::rwx, group::r-x, other::r-x) in the kernel's
/// `posix_acl_xattr` layout: a version, then (tag, permissions, id) entries.
fn set_default_acl(dir: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let mut value = 2u32.to_le_bytes().to_vec();
    for (tag, perm) in [(0x01u16, 7u16), (0x04, 5), (0x20, 5)] {
        value.extend(tag.to_le_bytes());
        value.extend(perm.to_le_bytes());
        value.extend(u32::MAX.to_le_bytes());
    }
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
    let name = c"system.posix_acl_default";
    // SAFETY: NUL-terminated strings and a buffer of the given length, all alive for the call.
    let done = unsafe { libc::setxattr(path.as_ptr(), name.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
    assert_eq!(done, 0, "setting a default ACL: {}", io::Error::last_os_error());
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
    assert!(deliver(&spool, &link, "x.o1", &root, false, 0o077).is_err(), "followed a symbolic link");
    assert!(deliver(&spool, &hard, "x.o1", &root, false, 0o077).is_err(), "wrote through a hard link");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's file\n");
    deliver(&spool, &dir.path().join("fresh"), "x.o1", &root, false, 0o077).unwrap();
    std::fs::write(dir.path().join("old"), "a much longer earlier output\n").unwrap();
    deliver(&spool, &dir.path().join("old"), "x.o1", &root, false, 0o077).unwrap();
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
    assert!(deliver(&spool, &fifo, "x.o1", &user, false, 0o077).is_err());
    let _reader = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    assert!(deliver(&spool, &fifo, "x.o1", &user, false, 0o077).is_err());
}
