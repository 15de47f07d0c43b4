//! The read-only SQL views (docs/sql.md): jobs, nodes and queues committed through
//! `Store::commit` read back from `jobs`, `job_history`, `job_hosts`, `nodes` and `queues`
//! exactly, with the same values and types on both stores. `view_columns.rs` checks their
//! columns and what they never show; `guard.rs` the write guard.

use std::sync::Arc;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Integer, Nullable, Text};
use job::array::ArraySpec;
use job::{JobId, JobState};

use super::view_columns::{Name, JOB_COLUMNS, JOB_HOST_COLUMNS, NODE_COLUMNS, QUEUE_COLUMNS};
use super::{fresh_store, full_job, load, queued_job, revert_down_to, SERVER};
use crate::state::{Job, NodeShare};
use crate::store::{Store, StoreOp, StoredNode, StoredQueue};

/// A row of `jobs` or `job_history`, every column (aliased to snake case for diesel).
#[derive(Debug, Clone, PartialEq, QueryableByName)]
struct JobView {
    #[diesel(sql_type = Text)]
    job_id: String,
    #[diesel(sql_type = Nullable<Text>)]
    job_name: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    job_owner: Option<String>,
    #[diesel(sql_type = Text)]
    job_state: String,
    #[diesel(sql_type = Text)]
    queue: String,
    #[diesel(sql_type = BigInt)]
    ctime: i64,
    #[diesel(sql_type = BigInt)]
    qtime: i64,
    #[diesel(sql_type = BigInt)]
    mtime: i64,
    #[diesel(sql_type = BigInt)]
    etime: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    stime: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    obittime: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    exec_host: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_select: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_nodes: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_ncpus: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_ngpus: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_mem: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    resource_list_walltime: Option<String>,
    #[diesel(sql_type = BigInt)]
    resources_used_cput: i64,
    #[diesel(sql_type = BigInt)]
    resources_used_walltime: i64,
    #[diesel(sql_type = BigInt)]
    resources_used_mem: i64,
    #[diesel(sql_type = BigInt)]
    resources_used_ncpus: i64,
    #[diesel(sql_type = Nullable<Integer>)]
    exit_status: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    comment: Option<String>,
    #[diesel(sql_type = BigInt)]
    run_count: i64,
    #[diesel(sql_type = Text)]
    hold_types: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    priority: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    account_name: Option<String>,
    #[diesel(sql_type = Text)]
    euser: String,
    #[diesel(sql_type = Text)]
    egroup: String,
}

#[derive(Debug, Clone, PartialEq, QueryableByName)]
struct NodeView {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = BigInt)]
    resources_available_ncpus: i64,
    #[diesel(sql_type = BigInt)]
    resources_available_mem: i64,
    #[diesel(sql_type = BigInt)]
    resources_available_ngpus: i64,
    #[diesel(sql_type = Text)]
    properties: String,
    #[diesel(sql_type = Bool)]
    offline: bool,
    #[diesel(sql_type = Nullable<Text>)]
    comment: Option<String>,
    #[diesel(sql_type = BigInt)]
    resources_assigned_ncpus: i64,
    #[diesel(sql_type = BigInt)]
    resources_assigned_ngpus: i64,
    #[diesel(sql_type = Nullable<Text>)]
    jobs: Option<String>,
}

#[derive(Debug, Clone, PartialEq, QueryableByName)]
struct JobHostView {
    #[diesel(sql_type = Text)]
    job_id: String,
    #[diesel(sql_type = Text)]
    node: String,
    #[diesel(sql_type = BigInt)]
    ncpus: i64,
    #[diesel(sql_type = BigInt)]
    ngpus: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    mem: Option<i64>,
}

/// A row of `queues`: its priority and counts (`queue_attrs` reads the text attributes).
#[derive(Debug, Clone, PartialEq, QueryableByName)]
struct QueueView {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    priority: Option<i64>,
    #[diesel(sql_type = BigInt)]
    total_jobs: i64,
    #[diesel(sql_type = Text)]
    state_count: String,
}

#[derive(QueryableByName)]
struct QueueAttr {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
}

/// Every text attribute `queues` shows set, as (queue, column, value), sorted.
fn queue_attrs(store: &mut Store) -> Vec<(String, String, String)> {
    let mut set = Vec::new();
    let text_columns =
        QUEUE_COLUMNS.iter().filter(|column| !["name", "Priority", "total_jobs", "state_count"].contains(column));
    for column in text_columns {
        let rows: Vec<QueueAttr> = diesel::sql_query(format!("SELECT name, \"{column}\" AS value FROM queues"))
            .load(store.connection())
            .unwrap();
        set.extend(rows.into_iter().filter_map(|row| Some((row.name, column.to_string(), row.value?))));
    }
    sorted(set)
}

/// `SELECT "Col.Name" AS col_name, ...` for `columns` of `view`.
fn select(view: &str, columns: &[&str]) -> String {
    let list: Vec<String> =
        columns.iter().map(|column| format!("\"{column}\" AS {}", column.to_lowercase().replace('.', "_"))).collect();
    format!("SELECT {} FROM {view}", list.join(", "))
}

fn rows<T>(store: &mut Store, view: &str, columns: &[&str]) -> Vec<T>
where
    T: QueryableByName<<crate::store::db::Db as Connection>::Backend> + 'static,
{
    diesel::sql_query(select(view, columns)).load(store.connection()).unwrap()
}

fn share(node: &str, slots: Vec<u32>, gpus: Vec<u32>, mem_bytes: u64) -> NodeShare {
    NodeShare { node: node.into(), slots, gpus, mem_bytes, mpiprocs: 1, mps: None, amounts: Vec::new() }
}

fn node(name: &str, np: u32, mem_bytes: u64, ngpus: u32) -> StoredNode {
    StoredNode { name: name.into(), np, mem_bytes, ngpus, properties: Vec::new(), offline: false, comment: None }
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
}

/// The sample the tests commit: queued job 1, running job 2 (on n1 and n2.cluster), finished
/// job 3, array 5 (parent begun, `5[1]` expired, `5[2]` running on n1); three nodes; two
/// queues. Returns the jobs.
pub(super) fn commit_sample(store: &mut Store) -> Vec<Job> {
    let queued = queued_job(1);
    let mut running = full_job(2);
    running.set_state_for_test(JobState::Running);
    let mut finished = full_job(3);
    finished.set_state_for_test(JobState::Finished);
    let mut parent = queued_job(5);
    Arc::make_mut(&mut parent.spec).array = Some(ArraySpec { indices: "1-2".into(), limit: None });
    parent.id = JobId::parent(5, SERVER);
    parent.set_state_for_test(JobState::Begun);
    let mut expired = parent.clone();
    expired.id = JobId::sub(5, 1, SERVER);
    expired.set_state_for_test(JobState::Expired);
    let mut sub = parent.clone();
    sub.id = JobId::sub(5, 2, SERVER);
    sub.set_state_for_test(JobState::Running);
    sub.exec = vec![share("n1", vec![2], vec![1], 0)];
    let jobs = vec![queued, running, finished, parent, expired, sub];
    let n1 = StoredNode { properties: vec!["gpu".into(), "fast".into()], ..node("n1", 4, 8 << 30, 2) };
    let n2 = StoredNode { offline: true, comment: Some("fan | broken".into()), ..node("n2.cluster", 8, 0, 0) };
    let batch = StoredQueue {
        name: "batch".into(),
        attrs: pairs(&[
            ("queue_type", "Execution"),
            ("Priority", "10"),
            ("max_run", "[u:PBS_GENERIC=2]"),
            ("resources_max.walltime", "24:00:00"),
            ("resources_default.ncpus", "1"),
            ("acl_user_enable", "True"),
            ("acl_users", "alice,bob"),
            ("enabled", "True"),
            ("started", "True"),
        ]),
    };
    let idle = StoredQueue {
        name: "idle".into(),
        attrs: pairs(&[("queue_type", "Execution"), ("enabled", "False"), ("started", "False")]),
    };
    let mut ops: Vec<StoreOp> = jobs.iter().map(|job| StoreOp::InsertJob(Box::new(job.clone()))).collect();
    ops.push(StoreOp::SetNodes(vec![n1, n2, node("n3", 1, 0, 0)]));
    ops.extend([StoreOp::PutQueue(batch), StoreOp::PutQueue(idle)]);
    store.commit(&ops).unwrap();
    jobs
}

/// What a job's row must show, given its id and exec_host as qstat prints them.
fn expected(job: &Job, id: &str, exec_host: Option<&str>) -> JobView {
    JobView {
        job_id: id.to_string(),
        job_name: Some(job.spec.name.clone()),
        job_owner: Some(format!("{}@login", job.owner)),
        job_state: job.state().letter().to_string(),
        queue: job.queue.to_string(),
        ctime: job.times.ctime,
        qtime: job.times.qtime,
        mtime: job.times.mtime,
        etime: job.times.etime,
        stime: job.times.stime,
        obittime: job.times.obittime,
        exec_host: exec_host.map(str::to_string),
        resource_list: Some("nodes=2:ppn=2:gpus=1:fast,walltime=1:00:00".into()),
        resource_list_select: None,
        resource_list_nodes: Some("2:ppn=2:gpus=1:fast".into()),
        resource_list_ncpus: None,
        resource_list_ngpus: None,
        resource_list_mem: None,
        resource_list_walltime: Some("1:00:00".into()),
        resources_used_cput: job.used.cput_secs as i64,
        resources_used_walltime: job.used.walltime_secs as i64,
        resources_used_mem: job.used.mem_kb as i64,
        resources_used_ncpus: i64::from(job.used.ncpus),
        exit_status: job.exit_status,
        comment: job.comment.clone(),
        run_count: i64::from(job.run_count),
        hold_types: job.hold_types.to_string(),
        priority: Some(-17),
        account_name: Some("proj-1".into()),
        euser: "alice".into(),
        egroup: "users".into(),
    }
}

fn sorted<T: Ord>(mut items: Vec<T>) -> Vec<T> {
    items.sort();
    items
}

#[test]
fn the_job_views_show_each_job_as_qstat_names_it() {
    let (_dir, _location, mut store) = fresh_store();
    let jobs = commit_sample(&mut store);
    load(&mut store); // stores the server name shown in ids
    let mut active: Vec<JobView> = rows(&mut store, "jobs", JOB_COLUMNS);
    active.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    let want = vec![
        expected(&jobs[0], "1.head", None),
        expected(&jobs[1], "2.head", Some("n1/0*2+n2.cluster/4*2")),
        expected(&jobs[5], "5[2].head", Some("n1/2")),
        expected(&jobs[3], "5[].head", None),
    ];
    assert_eq!(active, want);
    let mut history: Vec<JobView> = rows(&mut store, "job_history", JOB_COLUMNS);
    history.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    let want = vec![expected(&jobs[2], "3.head", Some("n1/0*2+n2.cluster/4*2")), expected(&jobs[4], "5[1].head", None)];
    assert_eq!(history, want);
}

#[test]
fn job_hosts_nodes_and_queues_show_what_was_committed() {
    let (_dir, _location, mut store) = fresh_store();
    commit_sample(&mut store);
    load(&mut store);
    let hosts: Vec<JobHostView> = rows(&mut store, "job_hosts", JOB_HOST_COLUMNS);
    let hosts: Vec<_> = sorted(hosts.into_iter().map(|h| (h.job_id, h.node, h.ncpus, h.ngpus, h.mem)).collect());
    let host = |id: &str, node: &str, ncpus, ngpus, mem| (id.to_string(), node.to_string(), ncpus, ngpus, Some(mem));
    assert_eq!(
        hosts,
        [
            host("2.head", "n1", 2, 1, 1 << 30),
            host("2.head", "n2.cluster", 2, 0, 0),
            host("3.head", "n1", 2, 1, 1 << 30),
            host("3.head", "n2.cluster", 2, 0, 0),
            host("5[2].head", "n1", 1, 1, 0),
        ]
    );
    let mut nodes: Vec<NodeView> = rows(&mut store, "nodes", NODE_COLUMNS);
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let view = |name: &str, ncpus, mem, ngpus, assigned: (i64, i64), jobs: Option<&str>| NodeView {
        name: name.into(),
        resources_available_ncpus: ncpus,
        resources_available_mem: mem,
        resources_available_ngpus: ngpus,
        properties: String::new(),
        offline: false,
        comment: None,
        resources_assigned_ncpus: assigned.0,
        resources_assigned_ngpus: assigned.1,
        jobs: jobs.map(str::to_string),
    };
    let n1 = NodeView { properties: "gpu,fast".into(), ..view("n1", 4, 8 << 30, 2, (3, 2), Some("2.head, 5[2].head")) };
    let n2 = NodeView {
        offline: true,
        comment: Some("fan | broken".into()),
        ..view("n2.cluster", 8, 0, 0, (2, 0), Some("2.head"))
    };
    assert_eq!(nodes, [n1, n2, view("n3", 1, 0, 0, (0, 0), None)]);
    let mut queues: Vec<QueueView> = rows(&mut store, "queues", &["name", "Priority", "total_jobs", "state_count"]);
    queues.sort_by(|a, b| a.name.cmp(&b.name));
    let batch = QueueView {
        name: "batch".into(),
        priority: Some(10),
        total_jobs: 3,
        state_count: "Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0 Begun:0 ".into(),
    };
    let idle = QueueView {
        name: "idle".into(),
        priority: None,
        total_jobs: 0,
        state_count: "Transit:0 Queued:0 Held:0 Waiting:0 Running:0 Exiting:0 Begun:0 ".into(),
    };
    let attr = |queue: &str, name: &str, value: &str| (queue.to_string(), name.to_string(), value.to_string());
    let attrs = vec![
        attr("batch", "acl_user_enable", "True"),
        attr("batch", "acl_users", "alice,bob"),
        attr("batch", "enabled", "True"),
        attr("batch", "max_run", "[u:PBS_GENERIC=2]"),
        attr("batch", "queue_type", "Execution"),
        attr("batch", "resources_default.ncpus", "1"),
        attr("batch", "resources_max.walltime", "24:00:00"),
        attr("batch", "started", "True"),
        attr("idle", "enabled", "False"),
        attr("idle", "queue_type", "Execution"),
        attr("idle", "started", "False"),
    ];
    assert_eq!(queue_attrs(&mut store), attrs, "every attribute column, NULL where unset");
    assert_eq!(queues, [batch, idle]);
}

#[test]
fn a_store_from_before_the_views_shows_its_nodes_after_a_start() {
    let (_dir, location, mut store) = fresh_store();
    revert_down_to(&mut store, "20261126100000");
    // The node list as a release before the views stored it: in `meta` only.
    diesel::sql_query("INSERT INTO meta (key, value) VALUES ('nodes', 'old|2|0|0||0|')")
        .execute(store.connection())
        .unwrap();
    drop(store);
    let mut store = Store::open(&location).unwrap();
    load(&mut store);
    let names: Vec<Name> = diesel::sql_query("SELECT name FROM nodes").load(store.connection()).unwrap();
    assert_eq!(names.into_iter().map(|name| name.name).collect::<Vec<_>>(), ["old"]);
}

super::on_postgresql!(
    the_job_views_show_each_job_as_qstat_names_it,
    job_hosts_nodes_and_queues_show_what_was_committed,
    a_store_from_before_the_views_shows_its_nodes_after_a_start,
);
