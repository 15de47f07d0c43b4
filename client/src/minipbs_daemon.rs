//! How `minipbs up` starts each daemon of a local cluster (the server, the moms, munged,
//! PostgreSQL): detached in a session of its own, stdin closed, its output appended to
//! `<dir>/logs/<name>.log`, its pid recorded in `<dir>/pids/<name>.pid` for `minipbs down`.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts `command` (program, arguments and any identity already set) as daemon `name`.
pub fn spawn_logged(mut command: Command, dir: &Path, name: &str) -> Result<(), String> {
    let log_path = dir.join("logs").join(format!("{name}.log"));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|error| format!("cannot open {}: {error}", log_path.display()))?;
    let log_err = log.try_clone().map_err(|error| error.to_string())?;
    command.stdin(Stdio::null()).stdout(log).stderr(log_err);
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| nix::unistd::setsid().map(|_| ()).map_err(std::io::Error::from));
    }
    let program = command.get_program().to_string_lossy().into_owned();
    let child = command.spawn().map_err(|error| format!("cannot start {program}: {error}"))?;
    std::fs::create_dir_all(dir.join("pids")).map_err(|error| error.to_string())?;
    std::fs::write(dir.join("pids").join(format!("{name}.pid")), child.id().to_string())
        .map_err(|error| error.to_string())?;
    Ok(())
}
