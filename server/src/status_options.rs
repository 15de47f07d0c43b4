//! How qstat shows the options of `job::options` (issue 13), kept apart from `status.rs`: each
//! function adds its attributes at the place OpenPBS's job attribute table gives them
//! (`Checkpoint` after `server`, `Execution_Time` after `exec_vnode`, `sandbox` and
//! `User_List` before `Variable_List`, `project` after `Submit_arguments`, the other `-W`
//! attributes and TORQUE's `job_arguments` after the submit host). Pure.

use crate::state::Job;
use crate::status::Builder;

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
}
