//! The commands' process entry (`client/src/start.rs`) as a caller sees it: a closed standard
//! descriptor is reopened on `/dev/null` (so nothing the command opens takes its number: a
//! socket on fd 1 would receive what the command prints), and SIGPIPE is ignored (a reader
//! that has gone is an error the command sees, not a signal that kills it).

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};

const QSTAT: &str = env!("CARGO_BIN_EXE_qstat");
const QSUB: &str = env!("CARGO_BIN_EXE_qsub");

#[test]
fn a_closed_standard_descriptor_is_reopened_on_dev_null() {
    // qstat with fds 0 and 1 closed connects to a "server" that is this test, which then looks
    // at what the command's fds 0 and 1 are while it waits for the reply: `/dev/null`, not the
    // socket (opened right after them, it would have taken the lowest free number).
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("pbs.conf");
    std::fs::write(&conf, format!("PBS_SERVER=test\nPBS_HOME={}\n", dir.path().display())).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(dir.path().join("server.sock")).unwrap();
    let mut command = Command::new(QSTAT);
    command.env("PBS_CONF_FILE", &conf).stderr(Stdio::null());
    // SAFETY: only close(2) between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::close(0);
            libc::close(1);
            Ok(())
        });
    }
    let mut child = command.spawn().unwrap();
    let (connection, _) = listener.accept().unwrap();
    let fd = |n: u32| {
        let link = std::fs::read_link(format!("/proc/{}/fd/{n}", child.id()));
        link.map_or_else(|_| "<not open>".to_string(), |path| path.display().to_string())
    };
    let (stdin, stdout) = (fd(0), fd(1));
    drop(connection);
    let status = child.wait().unwrap();
    assert_eq!((stdin.as_str(), stdout.as_str()), ("/dev/null", "/dev/null"));
    assert!(!status.success(), "no server answered");
}

#[test]
fn a_reader_that_has_gone_does_not_kill_the_command_by_sigpipe() {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    // qsub's usage error goes to stderr, here a pipe nobody reads.
    let status = Command::new(QSUB).arg("-Z").stdout(Stdio::null()).stderr(Stdio::from(write)).status().unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {status:?}");
    assert!(!status.success());
}
