//! What `qalter` asks the server to change in a job (`ClientRequest::AlterJob`). Each field is
//! one qsub option; `None` (or empty) leaves the attribute as it is. The server validates every
//! value again, as at submission, and applies all or nothing.
//!
//! Must not know: how the server stores or schedules jobs.

use job::spec::Join;
use serde::{Deserialize, Serialize};

/// The attributes one `qalter` changes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct JobAlteration {
    /// `-N`: `Job_Name`.
    pub name: Option<String>,
    /// `-l`: pairs merged per resource over the job's `Resource_List`.
    pub resources: Vec<(String, String)>,
    /// `-p`: `Priority`.
    pub priority: Option<i32>,
    /// `-h`: holds to add (`u`, `o`, `s`), or `n` to clear them.
    pub hold_types: Option<String>,
    /// `-A`: `Account_Name`.
    pub account: Option<String>,
    /// `-j`: `Join_Path`.
    pub join: Option<Join>,
    /// `-k`: `Keep_Files`.
    pub keep: Option<String>,
    /// `-m`: `Mail_Points`.
    pub mail_points: Option<String>,
    /// `-M`: `Mail_Users`.
    pub mail_users: Option<Vec<String>>,
    /// `-o`: `Output_Path` as `host:/abs/path` (a trailing `/` names a directory).
    pub output_path: Option<String>,
    /// `-e`: `Error_Path`, like `output_path`.
    pub error_path: Option<String>,
    /// `-r`: `Rerunable`.
    pub rerunnable: Option<bool>,
    /// `-S`: `Shell_Path_List`.
    pub shell: Option<String>,
    /// `-v` (TORQUE): variables set in `Variable_List`.
    pub variables: Vec<(String, String)>,
    /// `-a`: `Execution_Time`, epoch seconds.
    pub execution_time: Option<i64>,
    /// `-c`: `Checkpoint`.
    pub checkpoint: Option<String>,
    /// `-P`: `project`.
    pub project: Option<String>,
}

impl JobAlteration {
    /// The OpenPBS names of the attributes this alteration changes, in option order.
    pub fn attribute_names(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        let mut add = |set: bool, name: &'static str| {
            if set {
                names.push(name);
            }
        };
        add(self.account.is_some(), "Account_Name");
        add(self.checkpoint.is_some(), "Checkpoint");
        add(self.error_path.is_some(), "Error_Path");
        add(self.execution_time.is_some(), "Execution_Time");
        add(self.hold_types.is_some(), "Hold_Types");
        add(self.join.is_some(), "Join_Path");
        add(self.keep.is_some(), "Keep_Files");
        add(!self.resources.is_empty(), "Resource_List");
        add(self.mail_points.is_some(), "Mail_Points");
        add(self.mail_users.is_some(), "Mail_Users");
        add(self.name.is_some(), "Job_Name");
        add(self.output_path.is_some(), "Output_Path");
        add(self.priority.is_some(), "Priority");
        add(self.project.is_some(), "project");
        add(self.rerunnable.is_some(), "Rerunable");
        add(self.shell.is_some(), "Shell_Path_List");
        add(!self.variables.is_empty(), "Variable_List");
        names
    }

    /// Whether nothing would change.
    pub fn is_empty(&self) -> bool {
        self.attribute_names().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_fields_deserialize_as_unchanged() {
        let alteration: JobAlteration = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(alteration.attribute_names(), vec!["Job_Name"]);
        assert!(JobAlteration::default().is_empty());
    }
}
