//! qsub's options beyond the core spec (issue 13, pbs-reference 2.2): `-P`, `-u`, `-c`, `-a`,
//! the `-W` attributes stored as given, TORQUE's `-F`, `-D`, `-w` and `-n`, and the options
//! accepted but ignored with a warning on stderr (`-b`, `-x`, `-f`, `-X` with `-I`, `-W pwd`).
//! `-W block=true` is stored here and waited for by `qsub_block.rs`. Errors are OpenPBS's `illegal -<letter> value` with exit 2.

use crate::directives::QsubOpts;
use crate::exit;
use crate::submit::{execution_time, fail, Failure};
use job::options::{self, JobOptions};

/// The `-W` names read here or elsewhere and never stored by this module: `depend` (qsub.rs),
/// `group_list`, `umask`, `sandbox`, `stagein`, `stageout` (their own handling), the flags OpenPBS's qsub
/// sets itself (`interactive`, `x`), `suppress_email`, and `pwd` (a password: never stored).
const W_NOT_STORED: [&str; 10] =
    ["depend", "group_list", "umask", "sandbox", "stagein", "stageout", "interactive", "x", "suppress_email", "pwd"];

/// What the options of this module make of the job: its [`JobOptions`] and the warnings to print.
pub fn job_options(opts: &QsubOpts, now: i64) -> Result<(JobOptions, Vec<String>), Failure> {
    let illegal =
        |letter: char, error: options::OptionError| fail(exit::USAGE, format!("illegal -{letter} value: {error}"));
    let mut job = JobOptions::default();
    if let Some(project) = &opts.project {
        options::check_project(project).map_err(|error| illegal('P', error))?;
        job.project = Some(project.clone());
    }
    if let Some(list) = &opts.user_list {
        job.user_list = options::parse_user_list(list).map_err(|error| illegal('u', error))?;
    }
    if let Some(checkpoint) = &opts.checkpoint {
        options::check_checkpoint(checkpoint).map_err(|error| illegal('c', error))?;
        job.checkpoint = Some(checkpoint.clone());
    }
    if let Some(text) = &opts.execution_time {
        job.execution_time = Some(execution_time(text, now).ok_or_else(|| fail(exit::USAGE, "illegal -a value"))?);
    }
    if let Some(text) = &opts.script_args {
        job.script_args = options::parse_script_args(text).map_err(|error| illegal('F', error))?;
    }
    let mut warnings = ignored(opts);
    for item in &opts.extra {
        let Some((name, value)) = item.split_once('=') else { continue };
        let name = name.trim();
        if name == "pwd" {
            warnings.push("-W pwd: minipbs keeps no passwords; ignored".to_string());
        }
        if W_NOT_STORED.contains(&name) {
            continue;
        }
        if let Some(canonical) = options::check_w_attr(name, value).map_err(|error| illegal('W', error))? {
            job.set_w_attr(name, canonical);
        }
    }
    // What the server checks again: a value no single option's check covers (the year past 9999).
    job.check().map_err(|error| fail(exit::USAGE, format!("illegal value: {error}")))?;
    Ok((job, warnings))
}

/// The warnings for options accepted and ignored.
fn ignored(opts: &QsubOpts) -> Vec<String> {
    let mut warnings = Vec::new();
    if opts.retry_secs.is_some() {
        warnings.push("-b: minipbs does not retry reaching the server; ignored".to_string());
    }
    if opts.script_in_interactive {
        warnings.push("-x: a script does not run inside an interactive job; ignored".to_string());
    }
    if opts.fault_tolerant {
        warnings.push("-f: jobs are not made fault tolerant, and there is no qsub daemon; ignored".to_string());
    }
    if opts.x11 && opts.interactive {
        warnings.push("-X: minipbs does not forward X11; ignored".to_string());
    }
    warnings
}

/// `-n`: node-exclusive, `place=excl` added to the resources (kept if already there).
pub fn node_exclusive(resources: &mut Vec<(String, String)>) {
    match resources.iter_mut().find(|(name, _)| name == "place") {
        Some((_, value)) if value.split(':').any(|part| part == "excl") => {}
        Some((_, value)) => value.push_str(":excl"),
        None => resources.push(("place".to_string(), "excl".to_string())),
    }
}

/// Longest `-D` or `-w` path, in bytes (Linux's `PATH_MAX`).
pub const MAX_DIR: usize = 4096;

/// `-D path` sets `PBS_O_ROOTDIR`, `-w path` replaces `PBS_O_WORKDIR` (TORQUE); relative paths
/// are joined to qsub's directory `cwd`. A path longer than [`MAX_DIR`] or holding a control
/// character is refused.
pub fn torque_dirs(
    opts: &QsubOpts,
    cwd: &std::path::Path,
    variables: &mut Vec<(String, String)>,
) -> Result<(), Failure> {
    for (letter, given, name) in [('D', &opts.root_dir, "PBS_O_ROOTDIR"), ('w', &opts.work_dir, "PBS_O_WORKDIR")] {
        let Some(given) = given else { continue };
        let path = crate::submit::absolute(cwd, given).to_string_lossy().into_owned();
        if given.is_empty() || path.len() > MAX_DIR || path.chars().any(char::is_control) {
            return Err(fail(
                exit::USAGE,
                format!("illegal -{letter} value: a path of 1 to {MAX_DIR} bytes without control characters"),
            ));
        }
        variables.retain(|(variable, _)| variable != name);
        variables.push((name.to_string(), path));
    }
    Ok(())
}

#[cfg(test)]
#[path = "qsub_options_tests.rs"]
mod tests;
