//! Builds the attribute lists that qstat and pbsnodes display, in OpenPBS's attribute order
//! (pbs-reference sections 6.4 and 8.4). Pure: state in, `proto` status records out.

use crate::config::Flavor;
use crate::state::{Job, Node};
use job::duration::format_hms;
use job::{Attr, JobState};
use proto::{JobStatus, NodeStatus};

/// The status record of one job, with every attribute.
pub fn job_status(job: &Job, server_name: &str, flavor: Flavor) -> JobStatus {
    job_status_filtered(job, server_name, flavor, None)
}

/// The status record of one job with only the attributes named in `wanted` (full names such
/// as `job_state` or `Resource_List.walltime`, or a group name such as `Resource_List`);
/// `None` = all. Values not wanted are never formatted.
pub fn job_status_filtered(job: &Job, server_name: &str, flavor: Flavor, wanted: Option<&Wanted>) -> JobStatus {
    let mut out = Builder { wanted, attrs: Vec::new() };
    out.add("Job_Name", || job.spec.name.clone());
    out.add("Job_Owner", || format!("{}@{}", job.owner, job.spec.submit_host));
    if job.times.stime.is_some() {
        let used = &job.used;
        out.add_res("resources_used", "cput", || format_hms(used.cput_secs));
        out.add_res("resources_used", "mem", || format!("{}kb", used.mem_kb));
        out.add_res("resources_used", "ncpus", || used.ncpus.to_string());
        out.add_res("resources_used", "vmem", || format!("{}kb", used.vmem_kb));
        out.add_res("resources_used", "walltime", || format_hms(used.walltime_secs));
    }
    out.add("job_state", || job.state.letter().to_string());
    out.add("queue", || job.queue.clone());
    out.add("server", || server_name.to_string());
    out.add("Checkpoint", || "u".to_string());
    out.add("ctime", || job.times.ctime.to_string());
    out.add("Error_Path", || job.error_path.clone());
    if !job.exec.is_empty() {
        out.add("exec_host", || job.exec_host().unwrap_or_default());
        out.add("exec_vnode", || job.exec_vnode().unwrap_or_default());
    }
    out.add("Hold_Types", || job.hold_types.clone());
    if job.spec.interactive.is_some() {
        // Only the flag: where qsub listens and its secret stay out of every listing.
        out.add("interactive", || "True".to_string());
    }
    out.add("Join_Path", || job.spec.join.as_str().to_string());
    out.add("Keep_Files", || job.spec.keep.clone());
    out.add("Mail_Points", || job.spec.mail_points.clone());
    out.add("mtime", || job.times.mtime.to_string());
    out.add("Output_Path", || job.output_path.clone());
    out.add("Priority", || job.spec.priority.to_string());
    out.add("qtime", || job.times.qtime.to_string());
    out.add("Rerunable", || if job.spec.rerunnable { "True" } else { "False" }.to_string());
    for (name, value) in &job.request.display {
        out.add_res("Resource_List", name, || value.to_string());
    }
    if let Some(stime) = job.times.stime {
        out.add("stime", || stime.to_string());
    }
    if let Some(session) = job.session_id {
        out.add("session_id", || session.to_string());
    }
    out.add("Variable_List", || variable_list(&job.spec.variables));
    if let Some(comment) = &job.comment {
        out.add("comment", || comment.clone());
    }
    out.add("etime", || job.times.etime.to_string());
    out.add("run_count", || job.run_count.to_string());
    if let Some(status) = job.exit_status.filter(|_| job.state == JobState::Finished) {
        let name = if flavor == Flavor::Torque { "exit_status" } else { "Exit_status" };
        out.add(name, || status.to_string());
    }
    out.add("Submit_arguments", || job.spec.submit_args.clone());
    out.add("project", || "_pbs_project_default".to_string());
    out.add("Submit_Host", || job.spec.submit_host.clone());
    if let Some(obittime) = job.times.obittime {
        out.add("obittime", || obittime.to_string());
    }
    JobStatus { id: job.id.to_string(), attrs: out.attrs }
}

/// The attributes a status request asks for, split once into name and resource so a listing
/// of many jobs does not re-parse them per attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    items: Vec<(String, Option<String>)>,
}

impl Wanted {
    /// From full names (`job_state`, `Resource_List.walltime`) or group names (`Resource_List`).
    pub fn new(names: &[String]) -> Wanted {
        let items = names
            .iter()
            .map(|name| match name.split_once('.') {
                Some((group, resource)) => (group.to_string(), Some(resource.to_string())),
                None => (name.clone(), None),
            })
            .collect();
        Wanted { items }
    }

    fn wants(&self, name: &str, resource: Option<&str>) -> bool {
        self.items.iter().any(|(group, res)| {
            group == name
                && match (res, resource) {
                    (None, _) => true,
                    (Some(res), Some(resource)) => res == resource,
                    (Some(_), None) => false,
                }
        })
    }
}

/// Collects the wanted attributes.
struct Builder<'a> {
    wanted: Option<&'a Wanted>,
    attrs: Vec<Attr>,
}

impl Builder<'_> {
    fn wants(&self, name: &str, resource: Option<&str>) -> bool {
        self.wanted.is_none_or(|wanted| wanted.wants(name, resource))
    }

    fn add(&mut self, name: &str, value: impl FnOnce() -> String) {
        if self.wants(name, None) {
            self.attrs.push(Attr::new(name, value()));
        }
    }

    fn add_res(&mut self, name: &str, resource: &str, value: impl FnOnce() -> String) {
        if self.wants(name, Some(resource)) {
            self.attrs.push(Attr::resource(name, resource, value()));
        }
    }
}

/// `Variable_List` value: `NAME=value` joined by commas, commas inside values escaped.
pub fn variable_list(variables: &job::PairList) -> String {
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
        .filter_map(|(slot, owner)| owner.map(|key| format!("{}/{slot}", job::JobId::from_key(key, server_name))))
        .collect();
    items.join(", ")
}
