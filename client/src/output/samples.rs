//! Test fixtures: jobs and nodes as the server sends them (OpenPBS attribute names and order),
//! built from the examples in sections 6.1-6.5 and 8.4 of the PBS reference.
//!
//! Owns: sample data for the formatter tests. Must not: be used outside `#[cfg(test)]`.

use job::Attr;
use proto::{JobStatus, NodeStatus};

/// 2023-11-21 22:26:00 UTC, the time of the reference's JSON example.
pub const T0: i64 = 1_700_605_560;

fn plain(name: &str, value: &str) -> Attr {
    Attr::new(name, value)
}

fn res(name: &str, resource: &str, value: &str) -> Attr {
    Attr::resource(name, resource, value)
}

fn stamp(name: &str, epoch: i64) -> Attr {
    Attr::new(name, epoch.to_string())
}

/// The `Variable_List` qsub builds, with an escaped comma inside one value.
pub fn variable_list() -> String {
    [
        "PBS_O_HOME=/home/alice",
        "PBS_O_LANG=C.UTF-8",
        "PBS_O_LOGNAME=alice",
        "PBS_O_PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin",
        "PBS_O_MAIL=/var/spool/mail/alice",
        "PBS_O_SHELL=/bin/bash",
        "PBS_O_WORKDIR=/home/alice/work",
        "PBS_O_SYSTEM=Linux",
        "OMP_NUM_THREADS=2",
        "MY_LIST=a\\,b\\,c",
        "PBS_O_QUEUE=workq",
        "PBS_O_HOST=login1.example.com",
    ]
    .join(",")
}

/// The attributes every job has up to `Checkpoint`, then `ctime`.
fn head(name: &str, owner: &str, state: &str, queue: &str, used: &[(&str, &str)]) -> Vec<Attr> {
    let mut attrs = vec![plain("Job_Name", name), plain("Job_Owner", owner)];
    attrs.extend(used.iter().map(|(resource, value)| res("resources_used", resource, value)));
    attrs.push(plain("job_state", state));
    attrs.push(plain("queue", queue));
    attrs.push(plain("server", "head"));
    attrs.push(plain("Checkpoint", "u"));
    attrs.push(stamp("ctime", T0));
    attrs
}

/// `123.head`: running on two nodes, the first row of every reference example.
pub fn running_job() -> JobStatus {
    let used = [("cput", "00:00:01"), ("mem", "4312kb"), ("vmem", "12844kb"), ("walltime", "00:12:31"), ("ncpus", "4")];
    let mut attrs = head("myjob", "alice@login1.example.com", "R", "workq", &used);
    attrs.extend([
        plain("Error_Path", "login1.example.com:/home/alice/work/myjob.e123"),
        plain("exec_host", "node1/0*2+node2/0*2"),
        plain("exec_vnode", "(node1:ncpus=2)+(node2:ncpus=2)"),
        plain("Hold_Types", "n"),
        plain("Join_Path", "n"),
        plain("Keep_Files", "n"),
        plain("Mail_Points", "a"),
        stamp("mtime", T0 + 11),
        plain("Output_Path", "login1.example.com:/home/alice/work/myjob.o123"),
        plain("Priority", "0"),
        stamp("qtime", T0),
        plain("Rerunable", "True"),
        res("Resource_List", "mem", "2gb"),
        res("Resource_List", "ncpus", "4"),
        res("Resource_List", "nodect", "2"),
        res("Resource_List", "place", "scatter"),
        res("Resource_List", "select", "2:ncpus=2:mpiprocs=2:mem=1gb"),
        res("Resource_List", "walltime", "01:00:00"),
        stamp("stime", T0 + 10),
        plain("session_id", "24567"),
        plain("Variable_List", &variable_list()),
        plain("comment", "Job run at Tue Nov 21 at 22:26 on (node1:ncpus=2)+(node2:ncpus=2)"),
        stamp("etime", T0),
        plain("run_count", "1"),
        plain("Submit_arguments", "-N myjob -l select=2:ncpus=2:mpiprocs=2:mem=1gb -l walltime=1:00:00 job.sh"),
        plain("project", "_pbs_project_default"),
        plain("Submit_Host", "login1.example.com"),
    ]);
    JobStatus { id: "123.head".into(), attrs }
}

/// The tail shared by jobs that never started.
fn waiting_tail(hold: &str, walltime: &str, comment: &str, args: &str) -> Vec<Attr> {
    vec![
        plain("Error_Path", "login1.example.com:/home/alice/STDIN.e124"),
        plain("Hold_Types", hold),
        plain("Join_Path", "oe"),
        plain("Keep_Files", "n"),
        plain("Mail_Points", "a"),
        stamp("mtime", T0 + 60),
        plain("Output_Path", "login1.example.com:/home/alice/STDIN.o124"),
        plain("Priority", "0"),
        stamp("qtime", T0 + 60),
        plain("Rerunable", "True"),
        res("Resource_List", "ncpus", "1"),
        res("Resource_List", "nodect", "1"),
        res("Resource_List", "place", "pack"),
        res("Resource_List", "select", "1:ncpus=1"),
        res("Resource_List", "walltime", walltime),
        plain("Variable_List", "PBS_O_HOME=/home/alice,PBS_O_QUEUE=workq"),
        plain("comment", comment),
        stamp("etime", T0 + 60),
        plain("Submit_arguments", args),
        plain("project", "_pbs_project_default"),
        plain("Submit_Host", "login1.example.com"),
    ]
}

/// `124.head`: queued, never started (`STDIN`, no session, no memory request).
pub fn queued_job() -> JobStatus {
    let mut attrs = head("STDIN", "alice@login1.example.com", "Q", "workq", &[]);
    let comment = "Not Running: Insufficient amount of resource: ncpus (R: 1 A: 0 T: 4)";
    attrs.extend(waiting_tail("n", "00:10:00", comment, "-l walltime=10:00 -- /bin/sleep 60"));
    JobStatus { id: "124.head".into(), attrs }
}

/// `128.head`: `qsub --pin` from a tree with uncommitted changes (minipbs's `code_*` attributes
/// after the submit host).
pub fn pinned_job() -> JobStatus {
    let mut job = queued_job();
    job.id = "128.head".into();
    job.attrs.push(plain("code_version", "89abcdef0123456789abcdef0123456789abcdef"));
    job.attrs.push(plain("code_version_head", "0123456789abcdef0123456789abcdef01234567"));
    job.attrs.push(plain("code_version_changes", "True"));
    job.attrs.push(plain("code_repository", "/home/alice/proj"));
    job
}

/// `127.head`: queued with a reservation an hour ahead (`estimated.*` between
/// `Submit_arguments` and `project`, as OpenPBS's attribute table orders them).
pub fn planned_job() -> JobStatus {
    let mut attrs = head("big", "bob@login1.example.com", "Q", "workq", &[]);
    let comment = "Not Running: Insufficient amount of resource: ncpus";
    attrs.extend(waiting_tail("n", "00:30:00", comment, "-N big -l select=1:ncpus=4 job.sh"));
    let at = attrs.iter().position(|attr| attr.name == "project").expect("project");
    attrs.insert(at, res("estimated", "start_time", &(T0 + 3600).to_string()));
    attrs.insert(at, res("estimated", "exec_vnode", "(node1:ncpus=4)"));
    JobStatus { id: "127.head".into(), attrs }
}

/// `125.head`: held by its owner, with a name too long for the default display.
pub fn held_job() -> JobStatus {
    let mut attrs = head("a_very_long_job_name", "alice@login1.example.com", "H", "workq", &[]);
    let comment = "job held, too many failed attempts to run";
    attrs.extend(waiting_tail("u", "02:00:00", comment, "-h -N a_very_long_job_name job.sh"));
    JobStatus { id: "125.head".into(), attrs }
}

/// `126.head`: finished after `qdel` killed it with SIGTERM (`Exit_status` 256 + 15).
pub fn finished_job() -> JobStatus {
    let used =
        [("cput", "00:03:12"), ("mem", "1048576kb"), ("vmem", "2097152kb"), ("walltime", "00:05:02"), ("ncpus", "8")];
    let mut attrs = head("mpi_run", "bob@login1.example.com", "F", "workq", &used);
    attrs.extend([
        plain("Error_Path", "login1.example.com:/home/bob/mpi_run.e126"),
        plain("exec_host", "node1.example.com/0*4+node2.example.com/0*4"),
        plain("exec_vnode", "(node1:ncpus=4:mem=1048576kb)+(node2:ncpus=4:mem=1048576kb)"),
        plain("Hold_Types", "n"),
        plain("Join_Path", "oe"),
        plain("Keep_Files", "n"),
        plain("Mail_Points", "a"),
        stamp("mtime", T0 + 400),
        plain("Output_Path", "login1.example.com:/home/bob/mpi_run.o126"),
        plain("Priority", "0"),
        stamp("qtime", T0 + 5),
        plain("Rerunable", "False"),
        res("Resource_List", "mem", "16384mb"),
        res("Resource_List", "ncpus", "8"),
        res("Resource_List", "nodect", "2"),
        res("Resource_List", "place", "scatter:excl"),
        res("Resource_List", "select", "2:ncpus=4:mpiprocs=4:mem=8gb"),
        res("Resource_List", "walltime", "100:00:00"),
        stamp("stime", T0 + 90),
        plain("session_id", "31337"),
        plain("Variable_List", "PBS_O_HOME=/home/bob,PBS_O_QUEUE=workq"),
        plain("comment", "Job run at Tue Nov 21 at 22:27 on (node1:ncpus=4)+(node2:ncpus=4) and finished"),
        stamp("etime", T0 + 5),
        plain("run_count", "1"),
        plain("Exit_status", "271"),
        plain("Submit_arguments", "-N mpi_run job.sh"),
        plain("project", "_pbs_project_default"),
        plain("Submit_Host", "login1.example.com"),
        stamp("obittime", T0 + 392),
    ]);
    JobStatus { id: "126.head".into(), attrs }
}

/// A running job whose id, name, owner, used time and queue are all too long for their
/// columns, running on many nodes (folding of `-n` and `-f`).
pub fn long_names_job() -> JobStatus {
    let exec_host: Vec<String> = (1..=12).map(|n| format!("compute-node-{n:02}.cluster.example.com/0*8")).collect();
    let exec_vnode: Vec<String> = (1..=12).map(|n| format!("(compute-node-{n:02}:ncpus=8)")).collect();
    let used = [("cput", "1234:56:07"), ("walltime", "154:19:00")];
    let mut attrs =
        head("exactly_sixteen_", "averyveryverylongusername@login1", "R", "long_queue_name_exceeding", &used);
    attrs.extend([
        plain("exec_host", &exec_host.join("+")),
        plain("exec_vnode", &exec_vnode.join("+")),
        res("Resource_List", "mem", "123456789kb"),
        res("Resource_List", "ncpus", "1024"),
        res("Resource_List", "nodect", "1000"),
        res("Resource_List", "walltime", "200:00:00"),
        plain("session_id", "4194303"),
        plain("Output_Path", &format!("login1:/home/averyveryverylongusername/{}/out", "x".repeat(150))),
    ]);
    JobStatus { id: "1234567[].head-node.example.com".into(), attrs }
}

/// The three jobs of the reference's default-display example (123 R, 124 Q, 125 H).
pub fn reference_jobs() -> Vec<JobStatus> {
    vec![running_job(), queued_job(), held_job()]
}

/// Every sample job.
pub fn all_jobs() -> Vec<JobStatus> {
    vec![running_job(), queued_job(), held_job(), finished_job(), long_names_job()]
}

/// `node1` exactly as in the OpenPBS `pbsnodes` example of section 8.4.
pub fn reference_node() -> NodeStatus {
    let attrs = vec![
        plain("Mom", "node1.example.com"),
        plain("ntype", "PBS"),
        plain("state", "job-busy"),
        plain("pcpus", "4"),
        plain("jobs", "123.head/0, 123.head/1, 124.head/2"),
        res("resources_available", "host", "node1"),
        res("resources_available", "mem", "16gb"),
        res("resources_available", "ncpus", "4"),
        res("resources_available", "ngpus", "2"),
        res("resources_assigned", "ncpus", "3"),
        plain("sharing", "default_shared"),
    ];
    NodeStatus { name: "node1".into(), attrs }
}

/// Two nodes in the order and with the attributes our server sends.
pub fn server_nodes() -> Vec<NodeStatus> {
    let busy = vec![
        plain("Mom", "node1.example.com"),
        plain("ntype", "PBS"),
        plain("state", "job-exclusive"),
        plain("pcpus", "4"),
        plain("jobs", "123.head/0, 123.head/1, 123.head/2, 123.head/3"),
        res("resources_available", "host", "node1"),
        res("resources_available", "mem", "16gb"),
        res("resources_available", "ncpus", "4"),
        res("resources_available", "ngpus", "2"),
        res("resources_assigned", "mem", "2gb"),
        res("resources_assigned", "ncpus", "4"),
        res("resources_assigned", "ngpus", "0"),
        plain("properties", "gpu,blue"),
        stamp("last_state_change_time", T0 + 10),
    ];
    let down = vec![
        plain("Mom", "node2.example.com"),
        plain("ntype", "PBS"),
        plain("state", "down,offline"),
        plain("pcpus", "4"),
        res("resources_available", "host", "node2"),
        res("resources_available", "mem", "16gb"),
        res("resources_available", "ncpus", "4"),
        res("resources_available", "ngpus", "0"),
        res("resources_assigned", "mem", "0kb"),
        res("resources_assigned", "ncpus", "0"),
        res("resources_assigned", "ngpus", "0"),
        plain("comment", "node down: communication closed"),
        stamp("last_state_change_time", 1_698_796_800),
    ];
    vec![NodeStatus { name: "node1".into(), attrs: busy }, NodeStatus { name: "node2".into(), attrs: down }]
}

/// `123.head.example.com` as a TORQUE server shows it: running on two nodes, 12:31 into its
/// hour (`Walltime.Remaining` 2849 s).
pub fn torque_running_job() -> JobStatus {
    let used = [("cput", "00:00:01"), ("mem", "4312kb"), ("vmem", "12844kb"), ("walltime", "00:12:31")];
    let mut attrs = head("myjob", "alice@login1.example.com", "R", "batch", &used);
    attrs.extend([
        plain("Error_Path", "login1.example.com:/home/alice/work/myjob.e123"),
        plain("exec_host", "node1/0-1+node2/0-1"),
        plain("Hold_Types", "n"),
        plain("Join_Path", "n"),
        plain("Keep_Files", "n"),
        plain("Mail_Points", "a"),
        stamp("mtime", T0 + 11),
        plain("Output_Path", "login1.example.com:/home/alice/work/myjob.o123"),
        plain("Priority", "0"),
        stamp("qtime", T0),
        plain("Rerunable", "True"),
        res("Resource_List", "mem", "2gb"),
        res("Resource_List", "ncpus", "4"),
        res("Resource_List", "nodect", "2"),
        res("Resource_List", "nodes", "2:ppn=2"),
        res("Resource_List", "walltime", "01:00:00"),
        plain("session_id", "24567"),
        plain("Variable_List", &variable_list()),
        plain("euser", "alice"),
        plain("egroup", "users"),
        plain("queue_type", "E"),
        stamp("etime", T0),
        plain("submit_args", "-N myjob -l nodes=2:ppn=2,walltime=1:00:00 job.sh"),
        stamp("start_time", T0 + 10),
        res("Walltime", "Remaining", "2849"),
        plain("start_count", "1"),
        plain("fault_tolerant", "False"),
        plain("job_radix", "0"),
        plain("submit_host", "login1.example.com"),
        plain("init_work_dir", "/home/alice/work"),
        plain("request_version", "1"),
    ]);
    JobStatus { id: "123.head.example.com".into(), attrs }
}

/// `124.head.example.com`: completed (`C`) with `exit_status` 0 and a comment full of
/// characters XML must escape.
pub fn torque_completed_job() -> JobStatus {
    let used = [("cput", "00:00:00"), ("mem", "0kb"), ("vmem", "0kb"), ("walltime", "00:00:05")];
    let mut attrs = head("STDIN", "alice@login1.example.com", "C", "batch", &used);
    attrs.extend([
        plain("Error_Path", "login1.example.com:/home/alice/STDIN.e124"),
        plain("exec_host", "node1/2"),
        plain("Hold_Types", "n"),
        plain("Join_Path", "oe"),
        plain("Keep_Files", "n"),
        plain("Mail_Points", "a"),
        stamp("mtime", T0 + 70),
        plain("Output_Path", "login1.example.com:/home/alice/STDIN.o124"),
        plain("Priority", "0"),
        stamp("qtime", T0 + 60),
        plain("Rerunable", "True"),
        res("Resource_List", "ncpus", "1"),
        res("Resource_List", "nodect", "1"),
        res("Resource_List", "nodes", "1"),
        res("Resource_List", "walltime", "00:10:00"),
        plain("session_id", "31337"),
        plain("Variable_List", "PBS_O_HOME=/home/alice,PBS_O_QUEUE=batch,A=x<y&z>\"q\""),
        plain("comment", "ran on <node1> & finished 'fine'"),
        plain("euser", "alice"),
        plain("egroup", "users"),
        plain("queue_type", "E"),
        stamp("etime", T0 + 60),
        plain("exit_status", "0"),
        plain("submit_args", "-l walltime=10:00"),
        stamp("start_time", T0 + 65),
        plain("start_count", "1"),
        plain("fault_tolerant", "False"),
        stamp("comp_time", T0 + 70),
        plain("job_radix", "0"),
        plain("total_runtime", "5.000000"),
        plain("submit_host", "login1.example.com"),
        plain("init_work_dir", "/home/alice"),
        plain("request_version", "1"),
    ]);
    JobStatus { id: "124.head.example.com".into(), attrs }
}

/// `125.head.example.com`: queued, with a name too long for the default display.
pub fn torque_queued_job() -> JobStatus {
    let mut attrs = head("a_very_long_job_name_for_torque", "bob@login1.example.com", "Q", "batch", &[]);
    attrs.extend([
        plain("Hold_Types", "n"),
        res("Resource_List", "nodect", "1"),
        res("Resource_List", "nodes", "1:ppn=8"),
        res("Resource_List", "pmem", "1gb"),
        res("Resource_List", "walltime", "02:00:00"),
        plain("euser", "bob"),
        plain("egroup", "users"),
        plain("queue_type", "E"),
        stamp("etime", T0 + 90),
        plain("submit_args", "-N a_very_long_job_name_for_torque job.sh"),
        plain("start_count", "0"),
        plain("submit_host", "login1.example.com"),
    ]);
    JobStatus { id: "125.head.example.com".into(), attrs }
}

/// `126.head.example.com`: running past its walltime (`Walltime.Remaining` negative).
pub fn torque_overrun_job() -> JobStatus {
    let mut attrs = head("overrun", "carol@login1.example.com", "R", "batch", &[("walltime", "00:01:03")]);
    attrs.extend([
        plain("exec_host", "node2/3"),
        res("Resource_List", "nodect", "1"),
        res("Resource_List", "nodes", "1"),
        res("Resource_List", "walltime", "00:01:00"),
        plain("session_id", "4242"),
        plain("euser", "carol"),
        stamp("start_time", T0 + 100),
        res("Walltime", "Remaining", "-3"),
        plain("start_count", "1"),
    ]);
    JobStatus { id: "126.head.example.com".into(), attrs }
}

/// The two jobs of the reference's TORQUE default-display example (123 R, 124 C).
pub fn torque_reference_jobs() -> Vec<JobStatus> {
    vec![torque_running_job(), torque_completed_job()]
}

/// Every TORQUE sample job.
pub fn torque_jobs() -> Vec<JobStatus> {
    vec![torque_running_job(), torque_completed_job(), torque_queued_job(), torque_overrun_job()]
}
