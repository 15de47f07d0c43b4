//! Builds the attribute lists that qstat and pbsnodes display, in OpenPBS's attribute order
//! (pbs-reference sections 6.4 and 8.4). Pure: state in, `proto` status records out.

use crate::config::Flavor;
use crate::state::{Job, Node};
use job::duration::format_hms;
use job::{Attr, JobState};
use proto::{JobStatus, NodeStatus};

/// The status record of one job.
pub fn job_status(job: &Job, server_name: &str, flavor: Flavor) -> JobStatus {
    let mut attrs = vec![
        Attr::new("Job_Name", &job.spec.name),
        Attr::new("Job_Owner", format!("{}@{}", job.owner, job.spec.submit_host)),
    ];
    if job.times.stime.is_some() {
        let used = &job.used;
        attrs.push(Attr::resource("resources_used", "cput", format_hms(used.cput_secs)));
        attrs.push(Attr::resource("resources_used", "mem", format!("{}kb", used.mem_kb)));
        attrs.push(Attr::resource("resources_used", "ncpus", used.ncpus.to_string()));
        attrs.push(Attr::resource("resources_used", "vmem", format!("{}kb", used.vmem_kb)));
        attrs.push(Attr::resource("resources_used", "walltime", format_hms(used.walltime_secs)));
    }
    attrs.push(Attr::new("job_state", job.state.letter().to_string()));
    attrs.push(Attr::new("queue", &job.queue));
    attrs.push(Attr::new("server", server_name));
    attrs.push(Attr::new("Checkpoint", "u"));
    attrs.push(Attr::new("ctime", job.times.ctime.to_string()));
    attrs.push(Attr::new("Error_Path", &job.error_path));
    if let (Some(host), Some(vnode)) = (job.exec_host(), job.exec_vnode()) {
        attrs.push(Attr::new("exec_host", host));
        attrs.push(Attr::new("exec_vnode", vnode));
    }
    attrs.push(Attr::new("Hold_Types", &job.hold_types));
    attrs.push(Attr::new("Join_Path", job.spec.join.as_str()));
    attrs.push(Attr::new("Keep_Files", &job.spec.keep));
    attrs.push(Attr::new("Mail_Points", &job.spec.mail_points));
    attrs.push(Attr::new("mtime", job.times.mtime.to_string()));
    attrs.push(Attr::new("Output_Path", &job.output_path));
    attrs.push(Attr::new("Priority", job.spec.priority.to_string()));
    attrs.push(Attr::new("qtime", job.times.qtime.to_string()));
    attrs.push(Attr::new("Rerunable", if job.spec.rerunnable { "True" } else { "False" }));
    for (name, value) in &job.request.display {
        attrs.push(Attr::resource("Resource_List", name, value));
    }
    if let Some(stime) = job.times.stime {
        attrs.push(Attr::new("stime", stime.to_string()));
    }
    if let Some(session) = job.session_id {
        attrs.push(Attr::new("session_id", session.to_string()));
    }
    attrs.push(Attr::new("Variable_List", variable_list(&job.spec.variables)));
    if let Some(comment) = &job.comment {
        attrs.push(Attr::new("comment", comment));
    }
    attrs.push(Attr::new("etime", job.times.etime.to_string()));
    attrs.push(Attr::new("run_count", job.run_count.to_string()));
    if let Some(status) = job.exit_status.filter(|_| job.state == JobState::Finished) {
        let name = if flavor == Flavor::Torque { "exit_status" } else { "Exit_status" };
        attrs.push(Attr::new(name, status.to_string()));
    }
    attrs.push(Attr::new("Submit_arguments", &job.spec.submit_args));
    attrs.push(Attr::new("project", "_pbs_project_default"));
    attrs.push(Attr::new("Submit_Host", &job.spec.submit_host));
    if let Some(obittime) = job.times.obittime {
        attrs.push(Attr::new("obittime", obittime.to_string()));
    }
    JobStatus { id: job.id.to_string(), attrs }
}

/// `Variable_List` value: `NAME=value` joined by commas, commas inside values escaped.
pub fn variable_list(variables: &[(String, String)]) -> String {
    let items: Vec<String> =
        variables.iter().map(|(name, value)| format!("{}={}", name, value.replace(',', "\\,"))).collect();
    items.join(",")
}

/// The status record of one node (OpenPBS style).
pub fn node_status(node: &Node, server_name: &str) -> NodeStatus {
    let mut attrs = vec![
        Attr::new("Mom", &node.name),
        Attr::new("ntype", "PBS"),
        Attr::new("state", node.state_text()),
        Attr::new("pcpus", node.np.to_string()),
    ];
    let jobs = node_jobs(node, server_name);
    if !jobs.is_empty() {
        attrs.push(Attr::new("jobs", jobs));
    }
    attrs.push(Attr::resource("resources_available", "host", &node.name));
    attrs.push(Attr::resource("resources_available", "mem", format!("{}kb", node.mem_bytes / 1024)));
    attrs.push(Attr::resource("resources_available", "ncpus", node.np.to_string()));
    attrs.push(Attr::resource("resources_available", "ngpus", node.ngpus.to_string()));
    let assigned_cpus = node.slot_owner.iter().filter(|owner| owner.is_some()).count();
    let assigned_gpus = node.gpu_owner.iter().filter(|owner| owner.is_some()).count();
    attrs.push(Attr::resource("resources_assigned", "mem", format!("{}kb", node.mem_used / 1024)));
    attrs.push(Attr::resource("resources_assigned", "ncpus", assigned_cpus.to_string()));
    attrs.push(Attr::resource("resources_assigned", "ngpus", assigned_gpus.to_string()));
    if !node.properties.is_empty() {
        attrs.push(Attr::new("properties", node.properties.join(",")));
    }
    if let Some(comment) = &node.comment {
        attrs.push(Attr::new("comment", comment));
    }
    attrs.push(Attr::new("last_state_change_time", node.last_state_change.to_string()));
    NodeStatus { name: node.name.clone(), attrs }
}

/// OpenPBS `jobs` of a node: `12.head/0, 12.head/1, 13.head/2`.
fn node_jobs(node: &Node, server_name: &str) -> String {
    let items: Vec<String> = node
        .slot_owner
        .iter()
        .enumerate()
        .filter_map(|(slot, owner)| owner.map(|seq| format!("{seq}.{server_name}/{slot}")))
        .collect();
    items.join(", ")
}
