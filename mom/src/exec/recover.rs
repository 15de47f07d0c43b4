//! What a previous mom process left behind: jobs still running from before a crash or restart
//! (live in its session log, sessions.rs; an older mom left a `<jobid>.SID` record per job in
//! the spool instead). The new mom does not know them, so the server will requeue or end them
//! when it registers; their processes must not run on unsupervised beside a second copy. They
//! are killed, their output kept under `undelivered/`, their files removed. A record from an
//! earlier boot names no live process and is only cleaned up.
//!
//! Owns: the scan at start-up. Must not: run after the mom has registered (by then the job
//! table is the truth).

use super::kill;
use super::sessions::{self, LiveSession};
use std::path::Path;

/// Ends the jobs recorded in `spool` and cleans up after them. Returns their ids.
pub fn end_leftover_jobs(spool: &Path, tmpdir_base: &Path) -> Vec<String> {
    let mut leftovers = sessions::read_live(spool);
    leftovers.extend(older_records(spool));
    let boot = super::files::boot_id();
    let mut ended = Vec::new();
    for LiveSession { job_id, sid, boot: recorded_boot } in leftovers {
        if recorded_boot == boot && !boot.is_empty() {
            let members = kill::signal_session(sid, nix::sys::signal::Signal::SIGKILL);
            tracing::warn!(job_id, sid, members, "killed a job left running by a previous mom");
        }
        clean_up(spool, tmpdir_base, &job_id);
        if !ended.contains(&job_id) {
            ended.push(job_id);
        }
    }
    ended
}

/// The `<jobid>.SID` records an older mom left, one per job (`<sid> <boot>`). One that cannot
/// be read names no session, and its job is only cleaned up.
fn older_records(spool: &Path) -> Vec<LiveSession> {
    let Ok(entries) = std::fs::read_dir(spool) else { return Vec::new() };
    let mut records = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(job_id) = name.strip_suffix(".SID").filter(|id| super::files::job_id_is_safe(id)) else { continue };
        let record = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let mut fields = record.split_whitespace();
        let sid = fields.next().and_then(|sid| sid.parse::<i32>().ok()).unwrap_or(0);
        let boot = fields.next().filter(|_| sid > 0).unwrap_or_default().to_string();
        records.push(LiveSession { job_id: job_id.to_string(), sid, boot });
    }
    records
}

/// Keeps the job's output under `undelivered/` and removes the rest of its files.
fn clean_up(spool: &Path, tmpdir_base: &Path, job_id: &str) {
    for stream in ["OU", "ER"] {
        let path = spool.join(format!("{job_id}.{stream}"));
        if path.exists() {
            if let Err(err) = super::deliver::keep_undelivered(&path, &super::deliver::undelivered_dir(spool), None) {
                tracing::warn!(job_id, "cannot keep {}: {err}", path.display());
            }
        }
    }
    for path in [
        spool.join(format!("{job_id}.SC")),
        spool.join(format!("{job_id}.SID")),
        spool.join("aux").join(job_id),
        spool.join("aux").join(format!("{job_id}gpu")),
    ] {
        let _ = std::fs::remove_file(path);
    }
    let tmpdir = tmpdir_base.join(format!("pbs.{job_id}"));
    if std::fs::symlink_metadata(&tmpdir).is_ok_and(|meta| meta.is_dir()) {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_recorded_session_is_killed_and_its_files_cleaned() {
        let (_dir, spool, tmp) = spool_and_tmpdir_of_7();
        let mut child = sleeper();
        let sid = child.id() as i32;
        // An older mom's records, one file per job.
        std::fs::write(spool.join("7.s.SID"), format!("{sid} {}\n", super::super::files::boot_id())).unwrap();
        std::fs::write(spool.join("7.s.OU"), "partial output\n").unwrap();
        std::fs::write(spool.join("7.s.SC"), "sleep 1000\n").unwrap();
        std::fs::write(spool.join("8.s.SID"), "999999 some-earlier-boot\n").unwrap();
        let mut ended = end_leftover_jobs(&spool, &tmp);
        ended.sort();
        assert_eq!(ended, vec!["7.s", "8.s"]);
        let status = child.wait().unwrap();
        assert!(!status.success(), "the leftover job was killed");
        assert!(!spool.join("7.s.SC").exists() && !spool.join("7.s.SID").exists() && !tmp.join("pbs.7.s").exists());
        assert_eq!(std::fs::read_to_string(spool.join("undelivered/7.s.OU")).unwrap(), "partial output\n");
    }

    /// A spool (with `aux/`) and a TMPDIR base holding job 7.s's TMPDIR, in a temporary directory.
    fn spool_and_tmpdir_of_7() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let (spool, tmp) = (dir.path().join("spool"), dir.path().join("tmp"));
        std::fs::create_dir_all(spool.join("aux")).unwrap();
        std::fs::create_dir_all(tmp.join("pbs.7.s")).unwrap();
        (dir, spool, tmp)
    }

    /// A `sleep 1000` in a session of its own, as a job's shell runs.
    fn sleeper() -> std::process::Child {
        let mut command = std::process::Command::new("sleep");
        command.arg("1000");
        // SAFETY: setsid only.
        unsafe {
            command.pre_exec(|| nix::unistd::setsid().map(drop).map_err(std::io::Error::from));
        }
        command.spawn().unwrap()
    }

    #[test]
    fn a_session_live_in_the_log_is_killed_and_an_ended_one_left_alone() {
        let (_dir, spool, tmp) = spool_and_tmpdir_of_7();
        let (mut live, mut ended_child) = (sleeper(), sleeper());
        let log = sessions::SessionLog::create(&spool).unwrap();
        log.started("7.s", live.id() as i32).unwrap();
        log.started("8.s", ended_child.id() as i32).unwrap();
        log.ended("8.s").unwrap();
        std::fs::write(spool.join("7.s.OU"), "partial output\n").unwrap();
        std::fs::write(spool.join("aux/7.s"), "node\n").unwrap();
        assert_eq!(end_leftover_jobs(&spool, &tmp), vec!["7.s"]);
        assert!(!live.wait().unwrap().success(), "the leftover job was killed");
        assert!(ended_child.try_wait().unwrap().is_none(), "a job logged as ended is not touched");
        ended_child.kill().unwrap();
        ended_child.wait().unwrap();
        assert!(!spool.join("aux/7.s").exists() && !tmp.join("pbs.7.s").exists());
        assert_eq!(std::fs::read_to_string(spool.join("undelivered/7.s.OU")).unwrap(), "partial output\n");
    }
}
