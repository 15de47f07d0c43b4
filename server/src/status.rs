//! Builds the attribute lists that qstat and pbsnodes display, in OpenPBS's attribute order,
//! or TORQUE's names and order in the torque flavor (pbs-reference sections 6.4 and 8.4).
//! Records are collected by a [`Builder`] (`status/builder.rs`): named attributes, or a row of
//! the values a listing named. Pure: state in, `proto` status records out.

mod builder;
mod options;
mod wanted;

pub use builder::{Builder, Columns, Hidden, MANAGER_ONLY, PRIVATE};
pub use wanted::Wanted;

use crate::config::Flavor;
use crate::flavor;
use crate::state::sched_notes::SchedNote;
use crate::state::{Job, Node};
use job::duration::format_hms;
use job::resources::site::SiteResources;
use job::Attr;
use proto::{JobStatus, NodeStatus};

/// The status record of one job, with every attribute, as shown at `now`.
pub fn job_status(job: &Job, server_name: &str, flavor: Flavor, now: i64) -> JobStatus {
    job_status_filtered(job, server_name, flavor, now, None)
}

/// The status record of one job with only the attributes named in `wanted` (full names such
/// as `job_state` or `Resource_List.walltime`, or a group name such as `Resource_List`);
/// `None` = all. Values not wanted are never formatted. Names, order and shown values follow
/// the flavor (pbs-reference 6.4); `now` is for TORQUE's `Walltime.Remaining`.
pub fn job_status_filtered(
    job: &Job,
    server_name: &str,
    flavor: Flavor,
    now: i64,
    wanted: Option<&Wanted>,
) -> JobStatus {
    job_status_with_array(job, server_name, flavor, now, wanted, None, None)
}

/// What `qstat -f` shows of an array parent: its subjobs' counts and the indices not started.
pub struct ArrayView<'a> {
    pub counts: &'a crate::state::ArrayCounts,
    /// Lazily listed: only `array_indices_remaining` needs them.
    pub remaining: &'a dyn Fn() -> Vec<u32>,
}

/// [`job_status_filtered`] plus the array attributes (OpenPBS names): a parent's `array`,
/// `array_state_count`, `array_indices_submitted`, `array_indices_remaining` and
/// `max_run_subjobs` (from `array`), a subjob's `array_id` and `array_index`; and the
/// scheduler's `note` on a queued job: its `comment` (instead of the stored one, as OpenPBS's
/// scheduler overwrites the comment of the queued jobs it looks at) and, in the OpenPBS
/// flavor, `estimated.exec_vnode` and `estimated.start_time` (TORQUE has neither).
pub fn job_status_with_array(
    job: &Job,
    server_name: &str,
    flavor: Flavor,
    now: i64,
    wanted: Option<&Wanted>,
    array: Option<&ArrayView<'_>>,
    note: Option<&SchedNote>,
) -> JobStatus {
    let mut out = Builder::attrs(wanted, Hidden::NOTHING);
    fill(&mut out, job, server_name, flavor, now, array, note);
    JobStatus { id: job.id.text(), attrs: out.into_attrs() }
}

/// Adds what [`job_status_with_array`] shows of `job` to `out`, in order.
pub fn fill(
    out: &mut Builder<'_>,
    job: &Job,
    server_name: &str,
    flavor: Flavor,
    now: i64,
    array: Option<&ArrayView<'_>>,
    note: Option<&SchedNote>,
) {
    out.add("Job_Name", || job.spec.name.clone());
    out.add("Job_Owner", || [job.owner.as_str(), "@", &job.spec.submit_host].concat());
    if job.times.stime.is_some() {
        let used = &job.used;
        out.add_res("resources_used", "cput", || format_hms(used.cput_secs));
        out.add_res("resources_used", "mem", || format!("{}kb", used.mem_kb));
        out.add_res("resources_used", "ncpus", || used.ncpus.to_string());
        out.add_res("resources_used", "vmem", || format!("{}kb", used.vmem_kb));
        out.add_res("resources_used", "walltime", || format_hms(used.walltime_secs));
    }
    out.add("job_state", || flavor::state_letter(flavor, job.state()).to_string());
    out.add("queue", || job.queue.to_string());
    out.add("server", || server_name.to_string());
    if let Some(account) = &job.spec.account {
        out.add("Account_Name", || account.clone());
    }
    out.add("Checkpoint", || options::checkpoint(job));
    out.add("ctime", || job.times.ctime.to_string());
    out.add("Error_Path", || job.error_path.text().into_owned());
    if !job.exec.is_empty() {
        match flavor {
            Flavor::OpenPbs => {
                out.add("exec_host", || job.exec_host().unwrap_or_default());
                out.add("exec_vnode", || job.exec_vnode().unwrap_or_default());
            }
            Flavor::Torque => out.add("exec_host", || job.exec_host_torque().unwrap_or_default()),
        }
        out.add_some("exec_gpus", || crate::status_gpus::exec_gpus(job));
    }
    options::add_before_hold(out, job);
    options::add_group_list(out, job);
    out.add("Hold_Types", || job.hold_types.to_string());
    if job.spec.interactive.is_some() {
        // Only the flag: where qsub listens and its secret stay out of every listing.
        out.add("interactive", || "True".to_string());
    }
    out.add("Join_Path", || job.spec.join.as_str().to_string());
    out.add("Keep_Files", || job.spec.keep.clone());
    out.add("Mail_Points", || job.spec.mail_points.clone());
    if !job.spec.mail_users.is_empty() {
        out.add("Mail_Users", || job.spec.mail_users.join(","));
    }
    out.add("mtime", || job.times.mtime.to_string());
    out.add("Output_Path", || job.output_path.text().into_owned());
    out.add("Priority", || job.spec.priority.to_string());
    out.add("qtime", || job.times.qtime.to_string());
    out.add("Rerunable", || if job.spec.rerunnable { "True" } else { "False" }.to_string());
    if out.wants_group("Resource_List") {
        for (name, value) in crate::flavor::shown_resources(flavor, job) {
            out.add_res("Resource_List", name, || value.to_string());
        }
    }
    if flavor == Flavor::OpenPbs {
        // Managers only ([`MANAGER_ONLY`]); looked up only when wanted and seen.
        out.add_some("schedselect", || job.request.display_value("select").map(job::resources::schedselect));
    }
    if let (Some(stime), Flavor::OpenPbs) = (job.times.stime, flavor) {
        out.add("stime", || stime.to_string());
    }
    if let Some(session) = job.session_id {
        out.add("session_id", || session.to_string());
    }
    if let Some(shell) = &job.spec.shell {
        out.add("Shell_Path_List", || shell.clone());
    }
    options::add_before_variables(out, job);
    options::add_stage_lists(out, job);
    out.add("Variable_List", || variable_list(&job.spec.variables));
    match (note, &job.comment) {
        (Some(note), _) => out.add("comment", || crate::sched_text::wait_comment(&note.why)),
        (None, Some(comment)) => out.add("comment", || comment.clone()),
        (None, None) => {}
    }
    match flavor {
        Flavor::OpenPbs => openpbs_tail(out, job, array, note),
        Flavor::Torque => {
            torque_tail(out, job, now);
            add_array_attrs(out, job, array);
        }
    }
}

/// The attributes after `comment` in OpenPBS: `etime run_count Exit_status Submit_arguments
/// estimated project Submit_Host obittime` (`estimated` where OpenPBS's attribute table has
/// it, between the arguments and the project).
fn openpbs_tail(out: &mut Builder, job: &Job, array: Option<&ArrayView<'_>>, note: Option<&SchedNote>) {
    out.add("etime", || job.times.etime.to_string());
    out.add("run_count", || job.run_count.to_string());
    add_exit_status(out, job, Flavor::OpenPbs);
    options::add_umask_sandbox(out, job, Flavor::OpenPbs);
    out.add("Submit_arguments", || job.spec.submit_args.clone());
    if let Some(estimate) = note.and_then(|note| note.estimate.as_ref()) {
        out.add_res("estimated", "exec_vnode", || estimate.exec_vnode.clone());
        out.add_res("estimated", "start_time", || estimate.start.to_string());
    }
    out.add("project", || options::project(job));
    out.add("Submit_Host", || job.spec.submit_host.clone());
    options::add_after_submit_host(out, job);
    add_array_attrs(out, job, array);
    if let Some(obittime) = job.times.obittime {
        out.add("obittime", || obittime.to_string());
    }
}

/// The attributes after `comment` in TORQUE: `euser egroup queue_type etime exit_status
/// submit_args start_time Walltime.Remaining start_count fault_tolerant comp_time job_radix
/// total_runtime submit_host init_work_dir request_version`.
fn torque_tail(out: &mut Builder, job: &Job, now: i64) {
    out.add("euser", || job.owner.to_string());
    out.add("egroup", || job.group.to_string());
    out.add("queue_type", || "E".to_string());
    out.add("etime", || job.times.etime.to_string());
    add_exit_status(out, job, Flavor::Torque);
    out.add("submit_args", || job.spec.submit_args.clone());
    if let Some(stime) = job.times.stime {
        out.add("start_time", || stime.to_string());
    }
    if let (Some(stime), Some(walltime), true) = (job.times.stime, job.request.walltime, job.state().is_active()) {
        let limit = i64::try_from(walltime).unwrap_or(i64::MAX);
        out.add_res("Walltime", "Remaining", || limit.saturating_sub(now.saturating_sub(stime)).to_string());
    }
    out.add("start_count", || job.run_count.to_string());
    out.add("fault_tolerant", || "False".to_string());
    let ended = job.times.obittime.filter(|_| job.state().is_finished());
    if let Some(comp_time) = ended {
        out.add("comp_time", || comp_time.to_string());
    }
    out.add("job_radix", || "0".to_string());
    if let (Some(comp_time), Some(stime)) = (ended, job.times.stime) {
        out.add("total_runtime", || format!("{}.000000", comp_time.saturating_sub(stime).max(0)));
    }
    out.add("submit_host", || job.spec.submit_host.clone());
    options::add_after_submit_host(out, job);
    out.add_some("init_work_dir", || job.spec.init_dir.as_deref().or(job.spec.workdir()).map(str::to_string));
    out.add("request_version", || "1".to_string());
    options::add_umask_sandbox(out, job, Flavor::Torque);
}

/// The exit status of a finished job, named and valued as the flavor shows it.
fn add_exit_status(out: &mut Builder, job: &Job, flavor: Flavor) {
    if let Some(status) = job.exit_status.filter(|_| job.state().is_finished()) {
        out.add(flavor::exit_status_name(flavor), || flavor::shown_exit_status(flavor, status).to_string());
    }
}

/// Adds `depend` where OpenPBS shows it (after `ctime`, before `Error_Path`), if wanted and the
/// job has one. Apart from [`fill`] because its value depends on other jobs
/// (`server/src/state/depend.rs`); `value` is called only when wanted.
pub fn add_depend(out: &mut Builder<'_>, value: impl FnOnce() -> Option<String>) {
    const EARLIER: [&str; 8] =
        ["Job_Name", "Job_Owner", "resources_used", "job_state", "queue", "server", "Checkpoint", "ctime"];
    let at = |attrs: &[Attr]| {
        attrs.iter().rposition(|attr| EARLIER.contains(&attr.name.as_str())).map_or(0, |index| index + 1)
    };
    out.insert("depend", value, at);
}

fn add_array_attrs(out: &mut Builder<'_>, job: &Job, array: Option<&ArrayView<'_>>) {
    match (job.id.array, &job.spec.array) {
        (Some(job::id::ArrayPart::Parent), Some(spec)) => {
            out.add("array", || "True".to_string());
            if let Some(view) = array {
                out.add("array_state_count", || view.counts.state_count_text());
            }
            out.add("array_indices_submitted", || spec.indices.clone());
            if let Some(view) = array {
                out.add("array_indices_remaining", || {
                    let text = job::array::format_indices(&(view.remaining)(), spec.step());
                    if text.is_empty() {
                        "-".to_string()
                    } else {
                        text
                    }
                });
            }
            if let Some(limit) = spec.limit {
                out.add("max_run_subjobs", || limit.to_string());
            }
        }
        (Some(job::id::ArrayPart::Sub(index)), _) => {
            out.add("array_id", || job.id.to_parent().to_string());
            out.add("array_index", || index.to_string());
        }
        _ => {}
    }
}

/// Adds OpenPBS's `eligible_time` (`HH:MM:SS`, after `run_count`) to a job's status record,
/// if wanted; the caller checks `eligible_time_enable` (OpenPBS shows it only then).
pub fn add_eligible_time(out: &mut Builder<'_>, job: &Job, now: i64) {
    let value = || Some(format_hms(job.eligible_seconds(now).max(0) as u64));
    let at = |attrs: &[Attr]| attrs.iter().position(|attr| attr.name == "run_count").map_or(attrs.len(), |at| at + 1);
    out.insert("eligible_time", value, at);
}

/// `Variable_List` value: `NAME=value` joined by commas, commas inside values escaped.
pub fn variable_list(variables: &job::PairList) -> String {
    let items: Vec<String> =
        variables.iter().map(|(name, value)| format!("{}={}", name, value.replace(',', "\\,"))).collect();
    items.join(",")
}

/// The status record of one node (OpenPBS style).
pub fn node_status(node: &Node, server_name: &str, site: &SiteResources) -> NodeStatus {
    let mut attrs = vec![Attr::new("Mom", node.mom_addr.as_deref().unwrap_or(&node.name))];
    if node.mom_port != 0 {
        attrs.push(Attr::new("Port", node.mom_port.to_string()));
    }
    attrs.extend([
        Attr::new("ntype", "PBS"),
        Attr::new("state", node.state_text()),
        Attr::new("pcpus", node.np.to_string()),
    ]);
    let jobs = node_jobs(node, server_name);
    if !jobs.is_empty() {
        attrs.push(Attr::new("jobs", jobs));
    }
    // OpenPBS lists a node's resources by name; the site's are merged in (`state/site.rs`).
    let mut available: Vec<(&str, String)> = vec![
        ("host", node.name.clone()),
        ("mem", format!("{}kb", node.mem_bytes / 1024)),
        ("ncpus", node.np.to_string()),
        ("ngpus", node.ngpus.to_string()),
        ("vnode", node.name.clone()),
    ];
    available.extend(node.site.iter().map(|(name, value)| (name.as_str(), value.clone())));
    available.sort_by(|a, b| a.0.cmp(b.0));
    for (name, value) in available {
        attrs.push(Attr::resource("resources_available", name, value));
    }
    let assigned_cpus = node.slot_owner.iter().filter(|owner| owner.is_some()).count();
    let shared_gpus = node.gpus.iter().filter(|gpu| gpu.mps.is_some()).count();
    let assigned_gpus = node.gpu_owner.iter().filter(|owner| owner.is_some()).count() + shared_gpus;
    let mut assigned = vec![
        Attr::resource("resources_assigned", "mem", format!("{}kb", node.mem_used / 1024)),
        Attr::resource("resources_assigned", "ncpus", assigned_cpus.to_string()),
        Attr::resource("resources_assigned", "ngpus", assigned_gpus.to_string()),
    ];
    assigned.extend(assigned_site(node, site));
    // By name, as OpenPBS lists a node's resources.
    assigned.sort_by(|a, b| a.resource.cmp(&b.resource));
    attrs.extend(assigned);
    if let Some(gpu_status) = crate::status_gpus::gpu_status(node, server_name) {
        attrs.push(Attr::new("gpu_status", gpu_status));
    }
    if !node.properties.is_empty() {
        attrs.push(Attr::new("properties", node.properties.join(",")));
    }
    if let Some(comment) = node.operator_comment.as_ref().or(node.comment.as_ref()) {
        attrs.push(Attr::new("comment", comment));
    }
    attrs.push(Attr::new("last_state_change_time", node.last_state_change.to_string()));
    NodeStatus { name: node.name.clone(), attrs }
}

/// `resources_assigned.NAME` of the host-level consumable site resources the node has (0 when
/// no job holds any; OpenPBS shows them from the first job on).
fn assigned_site(node: &Node, site: &SiteResources) -> Vec<Attr> {
    let consumable = node.site.keys().filter_map(|name| site.get(name));
    consumable
        .filter(|def| def.flags.host && !def.is_host_match())
        .map(|def| {
            let held = node.site_assigned.get(&def.name).copied().unwrap_or(0);
            Attr::resource("resources_assigned", &def.name, def.show_amount(held))
        })
        .collect()
}

/// OpenPBS `jobs` of a node: `12.head/0, 12.head/1, 13.head/2`.
fn node_jobs(node: &Node, server_name: &str) -> String {
    let items: Vec<String> = node
        .slot_owner
        .iter()
        .enumerate()
        .filter_map(|(slot, owner)| owner.map(|key| format!("{}/{slot}", key.to_id(server_name))))
        .collect();
    items.join(", ")
}
