//! Rows of the `jobs` table and their hand-written mapping to and from `state::Job`.
//! These types never leave `store/`: the rest of the server sees only `Job`. `spec_json` holds
//! the spec with an empty script (the `script` column has it, written at insert only).
//!
//! Invariant: every conversion is checked. Unsigned numbers that do not fit `i64` are refused
//! on the way in (`Unstorable`), and negative or oversized numbers, unknown state letters,
//! garbled `exec_hosts` or spec JSON are refused on the way out (`CorruptRow`); nothing wraps
//! and nothing panics.

use diesel::prelude::*;
use job::id::ArrayPart;
use job::JobKey;
use job::{Chunk, JobId, JobSpec, JobState, Placement, ResourceError, ResourceRequest};
use proto::mom::ResourcesUsed;
use std::sync::Arc;

use super::error::StoreError;
use super::exec_hosts;
use super::schema::jobs;
use crate::state::records::JobProgress;
use crate::state::{Job, JobTimes, StdPath};

/// A full `jobs` row: the key (`JobId::key`, in the column named `seq`), every mutable column
/// and the spec. Inserted with every column bound (never `DEFAULT`), so the insert's SQL is
/// fixed and diesel keeps it prepared on PostgreSQL too.
#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = jobs, treat_none_as_default_value = false, check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg))]
pub(super) struct JobRow {
    pub seq: i64,
    #[diesel(embed)]
    pub columns: JobColumns,
    pub spec_json: String,
}

/// The columns `UpdateJob` rewrites: all but the key and the spec. `None` writes NULL, in an
/// update and in an insert (not `DEFAULT`, which is NULL for these columns): a statement whose
/// SQL does not depend on the values is one diesel keeps prepared (`update.rs`).
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = jobs,
    treat_none_as_null = true,
    treat_none_as_default_value = false,
    check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg)
)]
pub(super) struct JobColumns {
    pub owner: String,
    pub owner_uid: i64,
    pub grp: String,
    pub queue: String,
    pub ctime: i64,
    pub output_path: String,
    pub error_path: String,
    pub script_bytes: i64,
    #[diesel(embed)]
    pub progress: ProgressColumns,
}

/// The columns `UpdateProgress` rewrites ([`JobProgress`]): what holds, runs and ends change.
#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = jobs,
    treat_none_as_null = true,
    treat_none_as_default_value = false,
    check_for_backend(diesel::sqlite::Sqlite, diesel::pg::Pg)
)]
pub(super) struct ProgressColumns {
    pub state: String,
    pub hold_types: String,
    pub qtime: i64,
    pub mtime: i64,
    pub etime: i64,
    pub stime: Option<i64>,
    pub obittime: Option<i64>,
    pub exec_hosts: String,
    pub session_id: Option<i32>,
    pub exit_status: Option<i32>,
    pub used_cput: i64,
    pub used_mem_kb: i64,
    pub used_vmem_kb: i64,
    pub used_walltime: i64,
    pub used_ncpus: i64,
    pub run_count: i64,
    pub comment: Option<String>,
    pub delete_requested: bool,
    pub rerun_requested: bool,
    /// [`SchedColumns`] as JSON.
    pub sched_state: String,
}

/// A job's scheduling state, stored as one JSON column (`sched_state`; the table is at
/// diesel's 32 columns). Every key is optional: `{}` is a job never eligible, never preempted.
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct SchedColumns {
    #[serde(default, skip_serializing_if = "is_zero")]
    eligible_time: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    eligible_since: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sched_preempted: Option<i64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    shares_released: bool,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// Parses a job's `-l` pairs into its request; `ResourceRequest::from_list` in production.
pub(super) type RequestParser<'a> = &'a dyn Fn(&[(String, String)]) -> Result<ResourceRequest, ResourceError>;

/// The key column's value for a job (`JobId::key`; the column is named `seq` for history).
/// Refuses sequence numbers whose key would not fit.
pub(super) fn key_column(id: &JobId) -> Result<i64, StoreError> {
    if id.seq >= 1 << 31 {
        return Err(StoreError::Unstorable {
            seq: id.seq,
            message: format!("seq {} is too large for a job key", id.seq),
        });
    }
    to_column(id.seq, id.key().raw(), "seq")
}

/// The key column's value for a job known by its key (one in the state: its seq fits).
pub(super) fn key_value(key: JobKey) -> Result<i64, StoreError> {
    to_column(key.seq(), key.raw(), "seq")
}

impl JobRow {
    /// Maps a job to the row that stores it.
    pub(super) fn from_job(job: &Job) -> Result<JobRow, StoreError> {
        // A subjob's spec is its parent's: stored once, on the parent's row.
        Self::build(job, !matches!(job.id.array, Some(ArrayPart::Sub(_))))
    }

    /// Maps a job to its row with its spec, also for a subjob: one that started before its
    /// array was altered keeps the spec it ran with (`UpdateJobSpec`).
    pub(super) fn with_spec(job: &Job) -> Result<JobRow, StoreError> {
        Self::build(job, true)
    }

    fn build(job: &Job, with_spec: bool) -> Result<JobRow, StoreError> {
        let seq = job.id.seq;
        let spec_json = if !with_spec {
            String::new()
        } else {
            spec_json_without_script(&job.spec)
                .map_err(|err| StoreError::Unstorable { seq, message: format!("spec: {err}") })?
        };
        Ok(JobRow { seq: key_column(&job.id)?, columns: JobColumns::from_job(job)?, spec_json })
    }

    /// Maps a row back to a job of server `server_name`. The request is recomputed from the
    /// spec with `parse`; if that fails the job still loads, with [`fallback_request`].
    /// A subjob's row has no spec: it shares `parent`'s spec and request (the row loaded just
    /// before it with the same seq, if that is an array parent); one that kept its own spec
    /// (started before its array was altered) loads with it. A job whose spec has an array
    /// and whose key has no index is the array parent.
    pub(super) fn into_job(
        self,
        server_name: &str,
        parse: RequestParser<'_>,
        parent: Option<&Job>,
    ) -> Result<Job, StoreError> {
        let row_seq = self.seq;
        let key = JobKey::from_raw(from_column(row_seq, "seq", self.seq)?);
        let mut id = key.to_id(server_name);
        if let Some(ArrayPart::Sub(_)) = id.array {
            let parent = parent
                .filter(|parent| parent.id.key() == JobId::parent_key(key) && parent.id.array.is_some())
                .ok_or_else(|| corrupt(row_seq, "seq", "a subjob without its array parent".to_string()))?;
            if self.spec_json.is_empty() {
                let mut job = self.columns.into_job(row_seq, id, Arc::clone(&parent.spec))?;
                job.request = parent.request.clone();
                share_parents_paths(&mut job, parent);
                return Ok(job);
            }
        }
        let spec: JobSpec =
            serde_json::from_str(&self.spec_json).map_err(|err| corrupt(row_seq, "spec_json", err.to_string()))?;
        if spec.array.is_some() && id.array.is_none() {
            id.array = Some(ArrayPart::Parent);
        }
        let mut job = self.columns.into_job(row_seq, id, Arc::new(spec))?;
        job.spec_bytes = self.spec_json.len() as u64;
        job.request = match parse(&job.spec.resources) {
            Ok(request) => request.into(),
            Err(err) => {
                tracing::warn!(job_id = %job.id, error = %err, "stored resource list no longer parses; loading the job with a one-cpu request");
                fallback_request(&job.spec).into()
            }
        };
        Ok(job)
    }
}

/// A loaded subjob takes its parent's path text when its own paths are the ones derived from
/// the parent's (they are, unless a qalter of the array came after the subjob started).
fn share_parents_paths(job: &mut Job, parent: &Job) {
    let Some(ArrayPart::Sub(index)) = job.id.array else { return };
    for (own, parents) in [(&mut job.output_path, &parent.output_path), (&mut job.error_path, &parent.error_path)] {
        let derived = StdPath::of_subjob(parents, index);
        if derived == *own {
            *own = derived;
        }
    }
}

impl JobColumns {
    /// Maps everything but the key and the spec.
    pub(super) fn from_job(job: &Job) -> Result<JobColumns, StoreError> {
        let seq = job.id.seq;
        Ok(JobColumns {
            owner: job.owner.to_string(),
            owner_uid: i64::from(job.owner_uid),
            grp: job.group.to_string(),
            queue: job.queue.to_string(),
            ctime: job.times.ctime,
            output_path: job.output_path.text().into_owned(),
            error_path: job.error_path.text().into_owned(),
            script_bytes: to_column(seq, job.script_bytes, "script_bytes")?,
            progress: ProgressColumns::from_progress(&JobProgress::of(job))?,
        })
    }

    /// Maps the columns back; the request is left as the fallback for the caller to replace.
    fn into_job(self, row_seq: i64, id: JobId, spec: Arc<JobSpec>) -> Result<Job, StoreError> {
        let progress = self.progress;
        let state = parse_state(&progress.state)
            .ok_or_else(|| corrupt(row_seq, "state", format!("{:?} is not a job state", progress.state)))?;
        let exec =
            exec_hosts::decode(&progress.exec_hosts).map_err(|err| corrupt(row_seq, "exec_hosts", err.to_string()))?;
        let used = ResourcesUsed {
            cput_secs: from_column(row_seq, "used_cput", progress.used_cput)?,
            mem_kb: from_column(row_seq, "used_mem_kb", progress.used_mem_kb)?,
            vmem_kb: from_column(row_seq, "used_vmem_kb", progress.used_vmem_kb)?,
            walltime_secs: from_column(row_seq, "used_walltime", progress.used_walltime)?,
            ncpus: from_column(row_seq, "used_ncpus", progress.used_ncpus)?,
        };
        let request = fallback_request(&spec);
        let mut job = Job::new(id, spec, request, state);
        job.owner = self.owner.into();
        job.owner_uid = from_column(row_seq, "owner_uid", self.owner_uid)?;
        job.group = self.grp.into();
        job.queue = self.queue.into();
        job.hold_types = progress.hold_types.into();
        job.times = JobTimes {
            ctime: self.ctime,
            qtime: progress.qtime,
            mtime: progress.mtime,
            etime: progress.etime,
            stime: progress.stime,
            obittime: progress.obittime,
        };
        job.exec = exec;
        job.session_id = progress.session_id;
        job.exit_status = progress.exit_status;
        job.used = used;
        job.run_count = from_column(row_seq, "run_count", progress.run_count)?;
        job.comment = progress.comment;
        job.output_path = StdPath::of_stored(&self.output_path, job.id.seq);
        job.error_path = StdPath::of_stored(&self.error_path, job.id.seq);
        job.delete_requested = progress.delete_requested;
        job.rerun_requested = progress.rerun_requested;
        job.script_bytes = from_column(row_seq, "script_bytes", self.script_bytes)?;
        let sched: SchedColumns = serde_json::from_str(&progress.sched_state)
            .map_err(|err| corrupt(row_seq, "sched_state", err.to_string()))?;
        job.sched_preempted = sched.sched_preempted;
        job.shares_released = sched.shares_released;
        job.eligible = crate::state::EligibleClock { accrued: sched.eligible_time.max(0), since: sched.eligible_since };
        Ok(job)
    }
}

impl ProgressColumns {
    /// Maps a job's progress to its columns, refusing numbers beyond `i64`.
    pub(super) fn from_progress(progress: &JobProgress) -> Result<ProgressColumns, StoreError> {
        let seq = progress.key.seq();
        let exec_hosts = exec_hosts::encode(&progress.exec)
            .map_err(|err| StoreError::Unstorable { seq, message: format!("exec: {err}") })?;
        let used = &progress.used;
        Ok(ProgressColumns {
            state: progress.state.letter().to_string(),
            hold_types: progress.hold_types.to_string(),
            qtime: progress.times.qtime,
            mtime: progress.times.mtime,
            etime: progress.times.etime,
            stime: progress.times.stime,
            obittime: progress.times.obittime,
            exec_hosts,
            session_id: progress.session_id,
            exit_status: progress.exit_status,
            used_cput: to_column(seq, used.cput_secs, "used_cput")?,
            used_mem_kb: to_column(seq, used.mem_kb, "used_mem_kb")?,
            used_vmem_kb: to_column(seq, used.vmem_kb, "used_vmem_kb")?,
            used_walltime: to_column(seq, used.walltime_secs, "used_walltime")?,
            used_ncpus: i64::from(used.ncpus),
            run_count: i64::from(progress.run_count),
            comment: progress.comment.clone(),
            delete_requested: progress.delete_requested,
            rerun_requested: progress.rerun_requested,
            sched_state: serde_json::to_string(&SchedColumns {
                eligible_time: progress.eligible.accrued,
                eligible_since: progress.eligible.since,
                sched_preempted: progress.sched_preempted,
                shares_released: progress.shares_released,
            })
            .expect("plain numbers and booleans serialize"),
        })
    }
}

/// The request a job gets when its stored resource list no longer parses: one chunk of one
/// cpu, no limits, the list shown as it was given. Enough for `qstat` and to finish or delete
/// the job; the scheduler may place it as a one-cpu job.
pub(super) fn fallback_request(spec: &JobSpec) -> ResourceRequest {
    let mut display = spec.resources.clone();
    display.sort();
    ResourceRequest {
        chunks: vec![Chunk {
            count: 1,
            ncpus: 1,
            ngpus: 0,
            mem: None,
            mpiprocs: 1,
            host: None,
            properties: Vec::new(),
            mps: None,
            amounts: Vec::new(),
        }],
        place: Placement::Free,
        exclusive: false,
        walltime: None,
        cput: None,
        first_ppn: 1,
        display: display.into(),
    }
}

/// A spec as stored in `spec_json`: with an empty script, which has a column of its own
/// (`script`, written once at insert and read only to start the job).
fn spec_json_without_script(spec: &JobSpec) -> serde_json::Result<String> {
    if spec.script.is_empty() {
        return serde_json::to_string(spec);
    }
    let mut value = serde_json::to_value(spec)?;
    if let Some(script) = value.get_mut("script") {
        *script = serde_json::Value::String(String::new());
    }
    serde_json::to_string(&value)
}

/// A state column holds exactly one letter from `JobState::letter`.
fn parse_state(text: &str) -> Option<JobState> {
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(letter), None) => JobState::from_letter(letter),
        _ => None,
    }
}

/// An unsigned value into a BIGINT column, refusing values beyond `i64::MAX`.
fn to_column(seq: u64, value: u64, column: &str) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::Unstorable {
        seq,
        message: format!("{column} = {value} does not fit a BIGINT column"),
    })
}

/// A BIGINT column back into the job's unsigned type, refusing negative or oversized values.
fn from_column<T: TryFrom<i64>>(row_seq: i64, column: &'static str, value: i64) -> Result<T, StoreError> {
    T::try_from(value).map_err(|_| corrupt(row_seq, column, format!("{value} is out of range")))
}

/// A `CorruptRow` error for `column` of the row keyed `row_key` (reported by job seq).
fn corrupt(row_key: i64, column: &'static str, message: String) -> StoreError {
    StoreError::CorruptRow { seq: row_key >> 32, column, message }
}
