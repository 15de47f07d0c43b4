//! [`Listed`]: what the `qstat` tables read of a job, its id and attribute values by full
//! name, from a status record ([`proto::JobStatus`]) or from a row of a listing answered in
//! rows ([`RowJob`]: a [`proto::JobRow`] with the names the request asked for, in order), so
//! one table function prints either, byte for byte the same. Pure.

use proto::{JobRow, JobStatus};

/// A job as the tables read it.
pub trait Listed {
    /// The full id (`12.head`).
    fn id(&self) -> &str;
    /// The value of an attribute by full name (`job_state`, `Resource_List.walltime`).
    fn get(&self, full_name: &str) -> Option<&str>;
}

impl Listed for JobStatus {
    fn id(&self) -> &str {
        &self.id
    }

    fn get(&self, full_name: &str) -> Option<&str> {
        JobStatus::get(self, full_name)
    }
}

/// A row of a listing answered in rows, with the attribute names its values are of.
#[derive(Debug, Clone, Copy)]
pub struct RowJob<'a> {
    pub columns: &'a [String],
    pub row: &'a JobRow,
}

impl Listed for RowJob<'_> {
    fn id(&self) -> &str {
        &self.row.id
    }

    fn get(&self, full_name: &str) -> Option<&str> {
        let at = self.columns.iter().position(|column| column == full_name)?;
        self.row.values.get(at)?.as_deref()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::output::samples;

    /// `jobs` as a server answers a listing of `columns` in rows.
    pub(crate) fn as_rows(jobs: &[JobStatus], columns: &[String]) -> Vec<JobRow> {
        let values = |job: &JobStatus| columns.iter().map(|name| job.get(name).map(Into::into)).collect();
        jobs.iter().map(|job| JobRow { id: job.id.as_str().into(), values: values(job) }).collect()
    }

    #[test]
    fn a_row_reads_like_the_record_it_came_from() {
        let columns: Vec<String> = ["queue", "Job_Name", "resources_used.cput", "Resource_List.walltime", "nothing"]
            .map(str::to_string)
            .to_vec();
        let jobs = samples::all_jobs();
        let rows = as_rows(&jobs, &columns);
        for (job, row) in jobs.iter().zip(&rows) {
            let row = RowJob { columns: &columns, row };
            assert_eq!(Listed::id(&row), job.id);
            for name in &columns {
                assert_eq!(Listed::get(&row, name), job.get(name), "{name}");
            }
            assert_eq!(Listed::get(&row, "job_state"), None, "not a column");
        }
    }
}
