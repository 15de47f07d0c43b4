//! A job's files on the mother superior: the stdout and stderr spool files (`.OU`, `.ER`),
//! `PBS_NODEFILE` (`aux/<jobid>`), `PBS_GPUFILE` (`aux/<jobid>gpu`) and the private TMPDIR
//! (`<base>/pbs.<jobid>`). The job's session goes to the mom's one log (sessions.rs), and the
//! script is no file: the shell reads it from an in-memory file (`open_stdio`); a `<jobid>.SC`
//! of an older mom is removed (an older mom's `<jobid>.SID` records, by recover.rs).
//!
//! Cost: every file created costs an inode allocation (the largest part of a mom's CPU per job
//! after the fork), so a job creates only what it needs, each with one `open(O_CREAT|O_EXCL)`
//! (a leftover of that name is removed only when the open finds one), `aux/` is made only when
//! the node file finds it missing, and the boot id is read once per mom.
//!
//! Owns: their names, contents (pure functions, unit-tested), creation with the right modes
//! and owners, and removal. Must not: write into a user's directory (delivery does that, as
//! the user) or spawn processes.

use super::user::JobUser;
use job::spec::Join;
use proto::mom::{HostAlloc, JobLaunch};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Host names of an allocation, each once, in allocation order (mother superior first).
pub fn distinct_hosts(hosts: &[HostAlloc]) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    for host in hosts {
        if !names.contains(&host.node.as_str()) {
            names.push(&host.node);
        }
    }
    names
}

/// GPU indices allocated on `node`. When no entry names this node (a node-name mismatch), the
/// first entry is taken: the allocation lists the mother superior first.
pub fn local_gpus(hosts: &[HostAlloc], node: &str) -> Vec<u32> {
    // Only this node's own entries: another node's indices would name someone else's GPUs.
    hosts.iter().filter(|h| h.node == node).flat_map(|h| h.gpus.iter().copied()).collect()
}

/// `PBS_NODEFILE`: one line per slot (`mpiprocs` lines per host), grouped by host in
/// allocation order.
pub fn nodefile_contents(hosts: &[HostAlloc]) -> String {
    let mut text = String::new();
    for name in distinct_hosts(hosts) {
        let lines: u32 = hosts.iter().filter(|h| h.node == name).map(|h| h.mpiprocs).sum();
        for _ in 0..lines {
            text.push_str(name);
            text.push('\n');
        }
    }
    text
}

/// `PBS_GPUFILE`: `<host>-gpu<index>` for every GPU of every host, or `None` when the job
/// has no GPUs.
pub fn gpufile_contents(hosts: &[HostAlloc]) -> Option<String> {
    let mut text = String::new();
    for name in distinct_hosts(hosts) {
        for index in hosts.iter().filter(|h| h.node == name).flat_map(|h| &h.gpus) {
            text.push_str(&format!("{name}-gpu{index}\n"));
        }
    }
    (!text.is_empty()).then_some(text)
}

/// Whether `job_id` can safely name files: no path separators, no leading dot, only
/// characters job ids use (`123.head`, `123[4].head`).
pub fn job_id_is_safe(job_id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._-[]".contains(c);
    !job_id.is_empty() && !job_id.starts_with('.') && job_id.chars().all(allowed)
}

/// The paths of one job's files. `stdout`/`stderr` are where the job's streams go: with
/// `-j oe` both are the `.OU` file, with `-j eo` both are the `.ER` file.
#[derive(Debug, Clone)]
pub struct JobFiles {
    /// `<spool>/<jobid>.SC`: written by older moms only, removed with the rest.
    pub script: PathBuf,
    /// Where the job's stdout goes.
    pub stdout: PathBuf,
    /// Where the job's stderr goes.
    pub stderr: PathBuf,
    /// `<spool>/aux/<jobid>`.
    pub nodefile: PathBuf,
    /// `<spool>/aux/<jobid>gpu`, when the job has GPUs.
    pub gpufile: Option<PathBuf>,
    /// `<base>/pbs.<jobid>`.
    pub tmpdir: PathBuf,
    join: Join,
}

/// The three standard streams of the job's top shell.
#[derive(Debug)]
pub struct JobStdio {
    /// The script, in memory; the shell runs it by the path `/proc/self/fd/<fd>` (OpenPBS
    /// writes the script's path to the shell's stdin: `#!` lines work, and commands in the
    /// script that read stdin do not eat the rest of it).
    pub script: File,
    /// The shell's stdin: the one line naming the script.
    pub stdin: File,
    /// The stdout spool file.
    pub stdout: File,
    /// The stderr spool file (the same file when joined).
    pub stderr: File,
}

/// A batch job's spool streams as [`JobFiles::create`] made them, open for appending.
#[derive(Debug)]
pub struct Streams {
    pub stdout: File,
    pub stderr: File,
}

impl JobFiles {
    /// Names the files of `launch` (pure).
    pub fn new(spool: &Path, tmpdir_base: &Path, launch: &JobLaunch) -> JobFiles {
        let id = &launch.job_id;
        let out = spool.join(format!("{id}.OU"));
        let err = spool.join(format!("{id}.ER"));
        let (stdout, stderr) = match launch.join {
            Join::No => (out, err),
            Join::OutErr => (out.clone(), out),
            Join::ErrOut => (err.clone(), err),
        };
        let has_gpus = launch.hosts.iter().any(|h| !h.gpus.is_empty());
        JobFiles {
            script: spool.join(format!("{id}.SC")),
            stdout,
            stderr,
            nodefile: spool.join("aux").join(id),
            gpufile: has_gpus.then(|| spool.join("aux").join(format!("{id}gpu"))),
            tmpdir: tmpdir_base.join(format!("pbs.{id}")),
            join: launch.join,
        }
    }

    /// Creates every file. On error some may exist: call [`JobFiles::remove`].
    /// `chown` hands TMPDIR and the stdout/stderr spool files to the user (only root can), so
    /// the job can reopen its own streams (`echo x > /dev/stderr`). An interactive job runs no
    /// script and its streams are its terminal: it gets neither the script nor the spool files.
    /// Returns a batch job's spool streams, opened for appending as they were created, for
    /// [`JobFiles::open_stdio`] (not opened again by name).
    pub fn create(&self, launch: &JobLaunch, user: &JobUser, chown: bool) -> io::Result<Option<Streams>> {
        let batch = launch.interactive.is_none();
        let nodefile = nodefile_contents(&launch.hosts);
        match write_file(&self.nodefile, nodefile.as_bytes(), 0o644) {
            // The spool's `aux/` is made once, by the first job that needs it.
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                if let Some(aux) = self.nodefile.parent() {
                    fs::create_dir_all(aux)?;
                }
                write_file(&self.nodefile, nodefile.as_bytes(), 0o644)?;
            }
            written => drop(written?),
        }
        if let (Some(path), Some(text)) = (&self.gpufile, gpufile_contents(&launch.hosts)) {
            write_file(path, text.as_bytes(), 0o644)?;
        }
        let streams = if batch { Some(self.create_streams(user, chown)?) } else { None };
        self.create_tmpdir(user, chown)?;
        Ok(streams)
    }

    /// Creates the stdout and stderr spool files (one file when joined), the user's if `chown`.
    fn create_streams(&self, user: &JobUser, chown: bool) -> io::Result<Streams> {
        let create = |path: &Path| -> io::Result<File> {
            let file = create_file(path, 0o600, true)?;
            if chown {
                // On the descriptor: a path could have been swapped for a link meanwhile.
                std::os::unix::fs::fchown(&file, Some(user.uid), Some(user.gid))?;
            }
            Ok(file)
        };
        let stdout = create(&self.stdout)?;
        let stderr = if self.stderr == self.stdout { stdout.try_clone()? } else { create(&self.stderr)? };
        Ok(Streams { stdout, stderr })
    }

    /// The top shell's stdio: the script and the command naming it in memory, and `streams`
    /// (from [`JobFiles::create`]: stdout and stderr in append mode, shared when joined).
    /// `args` (`qsub -F`, TORQUE) follow the script on the command the shell reads, each
    /// single-quoted: the shell passes them as `$1`... and expands nothing in them.
    pub fn open_stdio(streams: Streams, script_text: &str, args: &[String]) -> io::Result<JobStdio> {
        use std::os::fd::AsRawFd;
        let script = memory_file("pbs_script", script_text.as_bytes(), true)?;
        let command = script_command(script.as_raw_fd(), args);
        let stdin = memory_file("pbs_command", command.as_bytes(), false)?;
        Ok(JobStdio { script, stdin, stdout: streams.stdout, stderr: streams.stderr })
    }

    /// Appends a line to the file the job's stderr goes to (limit-kill messages).
    pub fn append_to_stderr(&self, line: &str) -> io::Result<()> {
        let mut file = open_append(&self.stderr)?;
        writeln!(file, "{line}")
    }

    /// Spool files to deliver, where (`-o`/`-e` destinations as given by the server) and the
    /// name each takes in a directory destination (the server's, else `<jobid>.OU`/`.ER`).
    pub fn deliveries(&self, launch: &JobLaunch) -> Vec<Delivery> {
        let name = |given: &str, suffix: &str| {
            if given.is_empty() {
                format!("{}.{suffix}", launch.job_id)
            } else {
                given.to_string()
            }
        };
        let out = Delivery {
            spool: self.stdout.clone(),
            dest: launch.output_path.clone(),
            file_name: name(&launch.output_name, "OU"),
        };
        let err = Delivery {
            spool: self.stderr.clone(),
            dest: launch.error_path.clone(),
            file_name: name(&launch.error_name, "ER"),
        };
        match self.join {
            Join::No => vec![out, err],
            Join::OutErr => vec![out],
            Join::ErrOut => vec![err],
        }
    }

    /// Removes every file and TMPDIR; missing ones are fine, other failures are logged.
    pub fn remove(&self) {
        let mut files = vec![&self.script, &self.stdout, &self.stderr, &self.nodefile];
        files.extend(&self.gpufile);
        for path in files {
            if let Err(err) = fs::remove_file(path) {
                if err.kind() != io::ErrorKind::NotFound {
                    tracing::warn!(path = %path.display(), "cannot remove job file: {err}");
                }
            }
        }
        remove_any(&self.tmpdir);
    }

    /// A sister's TMPDIR, so the tasks started there (an `orted`, a proxy) have the one their
    /// environment names. Moms that share a TMPDIR base (a local cluster on one machine) share
    /// it with the mother superior: a directory already there that is the user's, mode 0700 and
    /// not a link is kept; anything else under that name is replaced.
    pub fn create_sister_tmpdir(&self, user: &JobUser, chown: bool) -> io::Result<()> {
        if self.tmpdir_is_the_users(user, chown) {
            return Ok(());
        }
        if fs::symlink_metadata(&self.tmpdir).is_err() {
            // Nothing there: made without removing first, so a mother superior that made it
            // meanwhile keeps hers (`create_tmpdir` accepts that).
            return self.create_tmpdir_in_place(user, chown);
        }
        self.create_tmpdir(user, chown)
    }

    /// Whether TMPDIR is a directory (not a link) of the user's, mode 0700.
    fn tmpdir_is_the_users(&self, user: &JobUser, chown: bool) -> bool {
        use std::os::unix::fs::MetadataExt;
        fs::symlink_metadata(&self.tmpdir).is_ok_and(|meta| {
            let owner_ok = !chown || (meta.uid() == user.uid && meta.gid() == user.gid);
            meta.is_dir() && owner_ok && meta.mode() & 0o7777 == 0o700
        })
    }

    /// Creates TMPDIR afresh (mode 0700). Whatever had that name is removed first without
    /// following symbolic links, so a user cannot point it elsewhere.
    fn create_tmpdir(&self, user: &JobUser, chown: bool) -> io::Result<()> {
        match fs::DirBuilder::new().mode(0o700).create(&self.tmpdir) {
            Ok(()) => self.own_tmpdir(user, chown),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
                remove_any(&self.tmpdir);
                self.create_tmpdir_in_place(user, chown)
            }
            Err(error) => Err(error),
        }
    }

    /// Creates TMPDIR (mode 0700, the user's); one made meanwhile for the same job by a mom
    /// sharing the base is accepted.
    fn create_tmpdir_in_place(&self, user: &JobUser, chown: bool) -> io::Result<()> {
        match fs::DirBuilder::new().mode(0o700).create(&self.tmpdir) {
            // A sister mom sharing the TMPDIR base made it for the same job meanwhile.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists && self.tmpdir_is_the_users(user, chown) => {
                return Ok(())
            }
            created => created?,
        }
        self.own_tmpdir(user, chown)
    }

    /// Gives the TMPDIR just made mode 0700 whatever the umask, and to the user.
    fn own_tmpdir(&self, user: &JobUser, chown: bool) -> io::Result<()> {
        fs::set_permissions(&self.tmpdir, fs::Permissions::from_mode(0o700))?;
        if chown {
            std::os::unix::fs::chown(&self.tmpdir, Some(user.uid), Some(user.gid))?;
        }
        Ok(())
    }
}

/// A sister's `PBS_NODEFILE` at `path` (the lines the mother superior's has), so the tasks
/// started there find it.
pub fn write_nodefile(path: &Path, launch: &JobLaunch) -> io::Result<()> {
    if !job_id_is_safe(&launch.job_id) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "the job id cannot name a spool file"));
    }
    write_file(path, nodefile_contents(&launch.hosts).as_bytes(), 0o644).map(drop)
}

/// Creates `path` afresh and writes it, with `mode` regardless of the umask.
fn write_file(path: &Path, contents: &[u8], mode: u32) -> io::Result<File> {
    let mut file = create_file(path, mode, false)?;
    if !contents.is_empty() {
        file.write_all(contents)?;
    }
    Ok(file)
}

/// Creates `path` afresh for writing (`append`: in append mode), with `mode` regardless of the
/// umask. The file is created exclusively without following links (whatever had the name is
/// removed and the creation tried again), so a planted symbolic link cannot make the mom write
/// elsewhere.
fn create_file(path: &Path, mode: u32, append: bool) -> io::Result<File> {
    let create = || {
        OpenOptions::new()
            .write(true)
            .append(append)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(mode)
            .open(path)
    };
    let file = match create() {
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            remove_any(path);
            create()?
        }
        created => created?,
    };
    // Always, even where the umask would leave `mode` whole: a default ACL on the directory
    // replaces the umask (and could take the job's read of its nodefile away).
    file.set_permissions(fs::Permissions::from_mode(mode))?;
    Ok(file)
}

/// An anonymous in-memory file (close-on-exec) holding `contents`, positioned at its start.
/// `executable`: created with `MFD_EXEC` where the kernel knows it, so a `#!` script can be run
/// from it even where new memory files default to no-exec.
fn memory_file(name: &str, contents: &[u8], executable: bool) -> io::Result<File> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::FromRawFd;
    const MFD_EXEC: libc::c_uint = 0x10;
    let name = std::ffi::CString::new(name).map_err(|_| io::Error::other("memory file name with NUL"))?;
    let flags = libc::MFD_CLOEXEC | if executable { MFD_EXEC } else { 0 };
    // SAFETY: a plain system call with a valid C string.
    let mut fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    if fd < 0 && executable && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above; kernels before 6.3 do not know MFD_EXEC.
        fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    }
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nothing else.
    let mut file = unsafe { File::from_raw_fd(fd) };
    file.write_all(contents)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// Opens a spool stream for appending, refusing a symbolic link.
fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().append(true).custom_flags(libc::O_NOFOLLOW).open(path)
}

/// Removes a file, symlink or directory tree at `path` (never following symlinks).
pub fn remove_any(path: &Path) {
    let result = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => return,
    };
    if let Err(err) = result {
        tracing::warn!(path = %path.display(), "cannot remove: {err}");
    }
}

/// The line the job's shell reads: the script's descriptor path, then `args` single-quoted.
pub(crate) fn script_command(fd: i32, args: &[String]) -> String {
    let mut line = format!("/proc/self/fd/{fd}");
    for arg in args {
        line.push_str(&format!(" '{}'", arg.replace('\'', "'\\''")));
    }
    line.push('\n');
    line
}

/// One spool file to deliver: where to (`-o`/`-e` as the server sent it, without its host),
/// and the name it takes when that is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub spool: PathBuf,
    pub dest: String,
    /// `<jobname>.o<seq>` (`JobLaunch.output_name`); one path component, checked by [`deliver`].
    pub file_name: String,
}

/// Whether `name` can name a file inside a directory destination: one path component, not
/// `.`/`..`, no NUL, at most 255 bytes (NAME_MAX).
pub fn file_name_is_safe(name: &str) -> bool {
    !name.is_empty() && name.len() <= 255 && name != "." && name != ".." && !name.contains(['/', '\0'])
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`), empty if unreadable: the session
/// log names it (sessions.rs), so a mom after a reboot knows the recorded sessions are gone.
/// Read once: it does not change while the mom runs.
pub fn boot_id() -> String {
    static BOOT_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT_ID
        .get_or_init(|| {
            std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
                .map(|id| id.trim().to_string())
                .unwrap_or_default()
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(node: &str, mpiprocs: u32, gpus: &[u32]) -> HostAlloc {
        HostAlloc {
            node: node.into(),
            ncpus: mpiprocs,
            mpiprocs,
            gpus: gpus.to_vec(),
            mem_bytes: None,
            gpu_uuids: Vec::new(),
            mps: None,
            mom_addr: None,
        }
    }

    #[test]
    fn nodefile_one_line_per_slot_grouped_mother_first() {
        let hosts = [host("node2", 2, &[]), host("node1", 1, &[]), host("node2", 1, &[])];
        assert_eq!(nodefile_contents(&hosts), "node2\nnode2\nnode2\nnode1\n");
        assert_eq!(nodefile_contents(&[host("n", 0, &[])]), "");
    }

    #[test]
    fn gpufile_lists_every_gpu_of_every_host() {
        let hosts = [host("node1", 1, &[0, 1]), host("node2", 1, &[3])];
        assert_eq!(gpufile_contents(&hosts).as_deref(), Some("node1-gpu0\nnode1-gpu1\nnode2-gpu3\n"));
        assert_eq!(gpufile_contents(&[host("node1", 1, &[])]), None);
    }

    #[test]
    fn local_gpus_by_node_name() {
        let hosts = [host("node1", 1, &[0, 1]), host("node2", 1, &[3]), host("node1", 1, &[2])];
        assert_eq!(local_gpus(&hosts, "node1"), vec![0, 1, 2]);
        assert_eq!(local_gpus(&hosts, "node2"), vec![3]);
        assert!(local_gpus(&hosts, "elsewhere").is_empty(), "never another node's GPUs");
    }

    #[test]
    fn script_arguments_reach_the_shell_as_words_and_expand_nothing() {
        assert_eq!(script_command(7, &[]), "/proc/self/fd/7\n");
        let args: Vec<String> =
            ["a b", "it's", "$(id)", "`x`", "*", "\\n", "-e"].iter().map(|a| a.to_string()).collect();
        let line = script_command(7, &args);
        let rest = line.trim_end().strip_prefix("/proc/self/fd/7").unwrap();
        let output = std::process::Command::new("sh").arg("-c").arg(format!("printf '%s|' {rest}")).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stdout), "a b|it's|$(id)|`x`|*|\\n|-e|");
    }

    #[test]
    fn a_sister_keeps_a_tmpdir_made_for_the_job_and_replaces_anything_else() {
        let base = tempfile::tempdir().unwrap();
        let launch = crate::test_support::launch("7.s", vec![host("n1", 1, &[])]);
        let files = JobFiles::new(base.path(), base.path(), &launch);
        let me = super::super::user::resolve(
            &nix::unistd::User::from_uid(nix::unistd::geteuid()).unwrap().unwrap().name,
            None,
        )
        .unwrap();
        files.create_tmpdir(&me, false).unwrap();
        fs::write(files.tmpdir.join("mother.txt"), "kept").unwrap();
        files.create_sister_tmpdir(&me, false).unwrap();
        assert!(files.tmpdir.join("mother.txt").exists(), "the mother superior's TMPDIR is kept");
        remove_any(&files.tmpdir);
        std::os::unix::fs::symlink("/etc", &files.tmpdir).unwrap();
        files.create_sister_tmpdir(&me, false).unwrap();
        let meta = fs::symlink_metadata(&files.tmpdir).unwrap();
        assert!(meta.is_dir() && meta.permissions().mode() & 0o7777 == 0o700, "a planted link is replaced");
        files.create_tmpdir(&me, false).unwrap();
        assert!(!files.tmpdir.join("mother.txt").exists());
    }

    #[test]
    fn job_ids_that_name_files() {
        assert!(job_id_is_safe("12.head"));
        assert!(job_id_is_safe("12[3].head-1_x"));
        for bad in ["", "../x", "a/b", ".hidden", "1 2", "x\0"] {
            assert!(!job_id_is_safe(bad), "{bad:?}");
        }
    }
}
