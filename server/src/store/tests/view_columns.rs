//! What the read-only SQL views (docs/sql.md) are made of: each has exactly its OpenPBS
//! columns, the same on both stores, and no view shows a script, an environment, a path or an
//! interactive secret, by column name or by content. `views.rs` checks their rows.

use std::sync::Arc;

use diesel::prelude::*;
use diesel::sql_types::{Nullable, Text};
use job::spec::Interactive;
use job::{JobId, JobState};

use super::{fresh_store, full_job, load, SERVER};
use crate::store::migrate::Dialect;
use crate::store::{Store, StoreOp};

/// The columns of `jobs` and `job_history`, in order.
pub(super) const JOB_COLUMNS: &[&str] = &[
    "Job_Id",
    "Job_Name",
    "Job_Owner",
    "job_state",
    "queue",
    "ctime",
    "qtime",
    "mtime",
    "etime",
    "stime",
    "obittime",
    "exec_host",
    "Resource_List",
    "Resource_List.select",
    "Resource_List.nodes",
    "Resource_List.ncpus",
    "Resource_List.ngpus",
    "Resource_List.mem",
    "Resource_List.walltime",
    "resources_used.cput",
    "resources_used.walltime",
    "resources_used.mem",
    "resources_used.ncpus",
    "Exit_status",
    "comment",
    "run_count",
    "Hold_Types",
    "Priority",
    "Account_Name",
    "euser",
    "egroup",
];

/// The columns of `nodes`, in order.
pub(super) const NODE_COLUMNS: &[&str] = &[
    "name",
    "resources_available.ncpus",
    "resources_available.mem",
    "resources_available.ngpus",
    "properties",
    "offline",
    "comment",
    "resources_assigned.ncpus",
    "resources_assigned.ngpus",
    "jobs",
];

/// The columns of `queues`, in order.
pub(super) const QUEUE_COLUMNS: &[&str] = &[
    "name",
    "Priority",
    "queue_type",
    "enabled",
    "started",
    "max_queued",
    "max_run",
    "acl_user_enable",
    "acl_users",
    "backfill_depth",
    "resources_max.ncpus",
    "resources_max.mem",
    "resources_max.ngpus",
    "resources_max.walltime",
    "resources_min.walltime",
    "resources_default.ncpus",
    "resources_default.mem",
    "resources_default.walltime",
    "total_jobs",
    "state_count",
];

/// The columns of `job_hosts`, in order.
pub(super) const JOB_HOST_COLUMNS: &[&str] = &["Job_Id", "node", "ncpus", "ngpus", "mem"];

/// Every public view and its columns.
const VIEWS: &[(&str, &[&str])] = &[
    ("jobs", JOB_COLUMNS),
    ("job_history", JOB_COLUMNS),
    ("job_hosts", JOB_HOST_COLUMNS),
    ("nodes", NODE_COLUMNS),
    ("queues", QUEUE_COLUMNS),
];

#[derive(QueryableByName)]
pub(super) struct Name {
    #[diesel(sql_type = Text)]
    pub(super) name: String,
}

/// The columns of `view`, in order.
fn columns(store: &mut Store, view: &str) -> Vec<String> {
    let query = match store.connection().dialect() {
        Dialect::Sqlite => format!("SELECT name FROM pragma_table_info('{view}') ORDER BY cid"),
        Dialect::Postgresql => format!(
            "SELECT column_name::text AS name FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name = '{view}' ORDER BY ordinal_position"
        ),
    };
    let names: Vec<Name> = diesel::sql_query(query).load(store.connection()).unwrap();
    names.into_iter().map(|name| name.name).collect()
}

#[test]
fn every_view_has_its_openpbs_columns() {
    let (_dir, _location, mut store) = fresh_store();
    for (view, expected) in VIEWS {
        assert_eq!(columns(&mut store, view), *expected, "columns of {view}");
    }
}

/// Text cells of one column of a view.
#[derive(QueryableByName)]
struct Cell {
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
}

#[test]
fn no_view_shows_a_script_an_environment_or_a_secret() {
    const MARKER: &str = "0123456789abcdef0123456789abcdef";
    let (_dir, _location, mut store) = fresh_store();
    let mut job = full_job(9);
    let spec = Arc::make_mut(&mut job.spec);
    spec.script = format!("#!/bin/sh\necho {MARKER}\n");
    spec.variables = vec![("TOKEN".to_string(), MARKER.to_string())].into();
    spec.interactive = Some(Interactive { host: "login".into(), port: 4000, secret: MARKER.into() });
    spec.submit_args = format!("-v TOKEN={MARKER} job.sh");
    job.output_path = crate::state::StdPath::literal(&format!("login:/home/alice/{MARKER}.o9"));
    job.error_path = crate::state::StdPath::literal(&format!("login:/home/alice/{MARKER}.e9"));
    let mut finished = job.clone();
    finished.id = JobId::new(10, SERVER);
    finished.set_state_for_test(JobState::Finished);
    store.commit(&[StoreOp::InsertJob(Box::new(job)), StoreOp::InsertJob(Box::new(finished))]).unwrap();
    load(&mut store);
    let forbidden = ["script", "variable", "environment", "secret", "interactive", "path", "spec", "arguments"];
    for (view, _) in VIEWS {
        for column in columns(&mut store, view) {
            let lower = column.to_lowercase();
            assert!(!forbidden.iter().any(|word| lower.contains(word)), "{view}.{column}");
            let cells: Vec<Cell> = diesel::sql_query(format!("SELECT CAST(\"{column}\" AS TEXT) AS value FROM {view}"))
                .load(store.connection())
                .unwrap();
            for cell in cells.into_iter().filter_map(|cell| cell.value) {
                assert!(!cell.contains(MARKER), "{view}.{column} shows {cell:?}");
            }
        }
    }
}

super::on_postgresql!(every_view_has_its_openpbs_columns, no_view_shows_a_script_an_environment_or_a_secret);
