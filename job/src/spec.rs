//! What qsub submits: the job script and its attributes after directives and the command line
//! were merged. The server validates it again (it never trusts the client) and adds what only
//! it may decide: the id, the owner (from the connection's credentials) and the queue.

use serde::{Deserialize, Serialize};

/// `-j`: whether stderr and stdout are joined, and into which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Join {
    #[default]
    No,
    /// `-j oe`: stderr goes into the stdout file.
    OutErr,
    /// `-j eo`: stdout goes into the stderr file.
    ErrOut,
}

impl Join {
    /// PBS text form: `n`, `oe`, `eo`.
    pub fn as_str(self) -> &'static str {
        match self {
            Join::No => "n",
            Join::OutErr => "oe",
            Join::ErrOut => "eo",
        }
    }
}

/// A job as submitted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobSpec {
    /// `Job_Name`: `-N`, else the script's base name, else `STDIN`.
    pub name: String,
    /// The script text (for `qsub -- cmd args`, a generated script that runs the command).
    pub script: String,
    /// `-q` destination queue; `None` = the server's default queue.
    pub queue: Option<String>,
    /// Merged `-l` pairs as given; the server parses them with `ResourceRequest::from_list`.
    pub resources: Vec<(String, String)>,
    /// `-o` as `host:/abs/path`; `None` = default `<workdir>/<name>.o<seq>`. A path ending in
    /// `/` (or an existing directory, resolved by qsub) is a directory.
    pub output_path: Option<String>,
    /// `-e`, like `output_path`.
    pub error_path: Option<String>,
    pub join: Join,
    /// `-k`: `n`, `o`, `e`, `oe`, `eo`.
    pub keep: String,
    /// `-h`: submit with a user hold.
    pub user_hold: bool,
    /// `-r y|n`.
    pub rerunnable: bool,
    /// `-p`, -1024..=1023.
    pub priority: i32,
    /// `Variable_List`: `PBS_O_*` set by qsub, then `-v`/`-V` variables.
    pub variables: crate::PairList,
    /// `-S` shell path.
    pub shell: Option<String>,
    /// `-d` start directory (absolute), TORQUE `PBS_O_INITDIR`.
    pub init_dir: Option<String>,
    /// `-m` mail points (`a`, `abe`, `n`).
    pub mail_points: String,
    /// `-M` recipients.
    pub mail_users: Vec<String>,
    /// `-A` account.
    pub account: Option<String>,
    /// Host qsub ran on (short name).
    pub submit_host: String,
    /// The qsub arguments as typed (`Submit_arguments`).
    pub submit_args: String,
    /// `-W depend=`: the job's dependencies (ids normalised by the server at submit).
    #[serde(default)]
    pub depend: Vec<crate::depend::DependItem>,
    /// `-J`/`-t`: the job is an array of subjobs sharing this spec.
    #[serde(default)]
    pub array: Option<crate::array::ArraySpec>,
}

impl JobSpec {
    /// The submit directory (`PBS_O_WORKDIR`), from the variable list.
    pub fn workdir(&self) -> Option<&str> {
        self.variables.get("PBS_O_WORKDIR")
    }
}

/// Checks a job name: OpenPBS allows up to 230 characters from `A-Z a-z 0-9 . _ + -`.
pub fn check_job_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("job name is empty".to_string());
    }
    if name.len() > 230 {
        return Err(format!("job name is longer than 230 characters: {name}"));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-".contains(*c))) {
        return Err(format!("job name {name:?} contains {bad:?}; allowed are A-Z a-z 0-9 . _ + -"));
    }
    Ok(())
}
