//! How qstat shows the options of `job::options` and `job::exec_opts` (issue 13), a child of
//! `status.rs` kept apart for size: each function adds its attributes where OpenPBS's job attribute table
//! puts them (`Checkpoint` after `server`, `Execution_Time` and `group_list` before
//! `Hold_Types`, `User_List` and the stage lists before `Variable_List`, `umask` and `sandbox`
//! after `Exit_status` (TORQUE: at the end), `project` after `Submit_arguments`, the other
//! `-W` attributes, TORQUE's `job_arguments` and `qsub --pin`'s `code_*` after the submit host).
//! Pure.

use super::Builder;
use crate::config::Flavor;
use crate::state::Job;

/// `Checkpoint`: `-c`, else `u`.
pub(crate) fn checkpoint(job: &Job) -> String {
    job.spec.options.checkpoint.clone().unwrap_or_else(|| "u".to_string())
}

/// `project`: `-P`, else OpenPBS's default project.
pub(crate) fn project(job: &Job) -> String {
    job.spec.options.project.clone().unwrap_or_else(|| "_pbs_project_default".to_string())
}

/// `Execution_Time` (epoch seconds; qstat shows it as a time stamp).
pub(crate) fn add_before_hold(out: &mut Builder<'_>, job: &Job) {
    if let Some(at) = job.spec.options.execution_time {
        out.add("Execution_Time", || at.to_string());
    }
}

/// `User_List` (`sandbox` before it is `exec_opts`'s: `status.rs`).
pub(crate) fn add_before_variables(out: &mut Builder<'_>, job: &Job) {
    let options = &job.spec.options;
    if !options.user_list.is_empty() {
        out.add("User_List", || options.user_list.join(","));
    }
}

/// `block`, `release_nodes_on_stageout`, `tolerate_node_failures`, then `job_arguments` (`-F`).
pub(crate) fn add_after_submit_host(out: &mut Builder<'_>, job: &Job) {
    let options = &job.spec.options;
    for name in ["block", "release_nodes_on_stageout", "tolerate_node_failures"] {
        if let Some(value) = options.w_attr(name) {
            out.add(name, || value.to_string());
        }
    }
    if !options.script_args.is_empty() {
        out.add("job_arguments", || options.script_args.join(" "));
    }
    add_code_version(out, job);
}

/// `qsub --pin` (a minipbs extension, `job::pin`), only when pinned: `code_version` (the commit
/// that runs), `code_version_head` (HEAD at submit), `code_version_changes` (`True`: the commit
/// holds uncommitted changes on top of HEAD) and `code_repository`. One value per attribute,
/// so a program reads each from `qstat -f` or `-F json` without parsing prose.
fn add_code_version(out: &mut Builder<'_>, job: &Job) {
    if let Some(pin) = &job.spec.exec.pin {
        out.add("code_version", || pin.commit.clone());
        out.add("code_version_head", || pin.head.clone());
        out.add("code_version_changes", || pin.show_changes().to_string());
        out.add("code_repository", || pin.repo.clone());
    }
}

/// `group_list`, when given.
pub(crate) fn add_group_list(out: &mut Builder<'_>, job: &Job) {
    if !job.spec.exec.group_list.is_empty() {
        out.add("group_list", || job::exec_opts::show_group_list(&job.spec.exec.group_list));
    }
}

/// `stagein` and `stageout`, as given, when the job has them.
pub(crate) fn add_stage_lists(out: &mut Builder, job: &Job) {
    let exec = &job.spec.exec;
    for (name, list) in [("stagein", &exec.stagein), ("stageout", &exec.stageout)] {
        if !list.is_empty() {
            out.add(name, || job::exec_opts::show_stage_list(list));
        }
    }
}

/// `umask` and `sandbox`, when given. OpenPBS shows `-W umask=022` as its digits, `22`
/// (`decode_l`); TORQUE's qsub converts it from octal, `18` (pbs-reference 6.4).
pub(crate) fn add_umask_sandbox(out: &mut Builder, job: &Job, flavor: Flavor) {
    if let Some(mask) = job.spec.exec.umask {
        match flavor {
            Flavor::OpenPbs => out.add("umask", || job::exec_opts::show_umask(mask)),
            Flavor::Torque => out.add("umask", || mask.to_string()),
        }
    }
    if let Some(sandbox) = job.spec.exec.sandbox {
        out.add("sandbox", || job::exec_opts::show_sandbox(sandbox).to_string());
    }
}
