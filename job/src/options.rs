//! The submit options beyond the core spec (issue 13): OpenPBS `-P` project, `-u` `User_List`,
//! `-c` `Checkpoint`, `-a` `Execution_Time`, the `-W` attributes stored as they are
//! (`sandbox`, `run_count`, `block`, `release_nodes_on_stageout`, `tolerate_node_failures`) and
//! TORQUE's `-F` script arguments. Each value's grammar and bound, checked by qsub and again by
//! the server (it never trusts the client). Pure.

use serde::{Deserialize, Serialize};

/// Longest `project` name, in bytes.
pub const MAX_PROJECT: usize = 255;
/// Most `user[@host]` entries in `-u`.
pub const MAX_USERS: usize = 64;
/// Longest user name in `-u`, and longest host name.
pub const MAX_USER_NAME: usize = 32;
pub const MAX_HOST_NAME: usize = 255;
/// Longest `-c` value, in bytes.
pub const MAX_CHECKPOINT: usize = 64;
/// Most `-F` arguments, and their total size in bytes.
pub const MAX_SCRIPT_ARGS: usize = 256;
pub const MAX_SCRIPT_ARG_BYTES: usize = 64 * 1024;
/// Latest `Execution_Time`: 9999-12-31 23:59:59 UTC, so every display can show it.
pub const MAX_EXECUTION_TIME: i64 = 253_402_300_799;
/// Largest initial `-W run_count`.
pub const MAX_RUN_COUNT: u32 = 10_000;
/// The `-W` attributes kept as given (after [`check_w_attr`] made them canonical) and shown by qstat.
/// (`sandbox` is the mom's, with the other `-W` items it acts on: `exec_opts.rs`.)
pub const STORED_W_ATTRS: [&str; 4] = ["run_count", "block", "release_nodes_on_stageout", "tolerate_node_failures"];

/// The options of this module as submitted. Every field is optional in a stored spec: rows
/// written before these options existed load with the defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOptions {
    /// `-P` (OpenPBS): `project`; `None` shows `_pbs_project_default`.
    #[serde(default)]
    pub project: Option<String>,
    /// `-u`: `User_List`, `user[@host]` entries. The server refuses any user but the owner.
    #[serde(default)]
    pub user_list: Vec<String>,
    /// `-c`: `Checkpoint`; `None` shows `u`.
    #[serde(default)]
    pub checkpoint: Option<String>,
    /// `-a`: `Execution_Time`, seconds since the epoch; the job waits (`W`) until then.
    #[serde(default)]
    pub execution_time: Option<i64>,
    /// `-W name=value` items of [`STORED_W_ATTRS`], canonical values, in the order given (a
    /// later one of the same name replaced the earlier).
    #[serde(default)]
    pub w_attrs: Vec<(String, String)>,
    /// `-F` (TORQUE): the script's arguments (`$1`...), passed as words, never through a shell.
    #[serde(default)]
    pub script_args: Vec<String>,
}

/// Why an option's value is refused: the attribute's name and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{attr}: {reason}")]
pub struct OptionError {
    pub attr: &'static str,
    pub reason: String,
}

fn error(attr: &'static str, reason: impl Into<String>) -> OptionError {
    OptionError { attr, reason: reason.into() }
}

impl JobOptions {
    /// Checks every value against its grammar and bound.
    pub fn check(&self) -> Result<(), OptionError> {
        if let Some(project) = &self.project {
            check_project(project)?;
        }
        check_user_list(&self.user_list)?;
        if let Some(checkpoint) = &self.checkpoint {
            check_checkpoint(checkpoint)?;
        }
        if self.execution_time.is_some_and(|time| !(0..=MAX_EXECUTION_TIME).contains(&time)) {
            return Err(error("Execution_Time", "before 1970 or after 9999"));
        }
        if self.w_attrs.len() > STORED_W_ATTRS.len() {
            return Err(error("-W", "an attribute is given twice"));
        }
        for (name, value) in &self.w_attrs {
            if check_w_attr(name, value)?.as_deref() != Some(value.as_str()) {
                return Err(error("-W", format!("{name}={value} is not in canonical form")));
            }
        }
        check_script_args(&self.script_args)
    }

    /// The stored `-W` value of `name`, if given.
    pub fn w_attr(&self, name: &str) -> Option<&str> {
        self.w_attrs.iter().find(|(given, _)| given == name).map(|(_, value)| value.as_str())
    }

    /// Sets a `-W` attribute (already checked), replacing an earlier value.
    pub fn set_w_attr(&mut self, name: &str, value: String) {
        self.w_attrs.retain(|(given, _)| given != name);
        self.w_attrs.push((name.to_string(), value));
    }

    /// `-W run_count=N`: where the job's run count starts.
    pub fn initial_run_count(&self) -> u32 {
        self.w_attr("run_count").and_then(|value| value.parse().ok()).unwrap_or(0)
    }
}

/// `-P`: 1 to [`MAX_PROJECT`] characters from `A-Z a-z 0-9 . _ + - @ / :`.
pub fn check_project(project: &str) -> Result<(), OptionError> {
    if project.is_empty() || project.len() > MAX_PROJECT {
        return Err(error("project", format!("must be 1 to {MAX_PROJECT} characters")));
    }
    if let Some(bad) = project.chars().find(|c| !(c.is_ascii_alphanumeric() || "._+-@/:".contains(*c))) {
        return Err(error("project", format!("{bad:?} is not allowed (A-Z a-z 0-9 . _ + - @ / :)")));
    }
    Ok(())
}

/// Whether `name` is a user or host name of our rule: ASCII letters, digits, `.`, `_`, `-`,
/// not starting with `-`.
fn plain_name(name: &str, most: usize) -> bool {
    !name.is_empty()
        && name.len() <= most
        && !name.starts_with('-')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// `-u user[@host][,user[@host]...]`, split into entries.
pub fn parse_user_list(text: &str) -> Result<Vec<String>, OptionError> {
    let users: Vec<String> = text.split(',').map(|entry| entry.trim().to_string()).collect();
    check_user_list(&users)?;
    Ok(users)
}

/// Every entry is `user[@host]`, at most [`MAX_USERS`] of them.
pub fn check_user_list(users: &[String]) -> Result<(), OptionError> {
    if users.len() > MAX_USERS {
        return Err(error("User_List", format!("more than {MAX_USERS} users")));
    }
    for entry in users {
        let (user, host) = match entry.split_once('@') {
            Some((user, host)) => (user, Some(host)),
            None => (entry.as_str(), None),
        };
        if !plain_name(user, MAX_USER_NAME) || host.is_some_and(|host| !plain_name(host, MAX_HOST_NAME)) {
            return Err(error("User_List", format!("{entry:?} is not user[@host]")));
        }
    }
    Ok(())
}

/// The user names of a `User_List` (hosts dropped).
pub fn users_of(list: &[String]) -> impl Iterator<Item = &str> {
    list.iter().map(|entry| entry.split('@').next().unwrap_or(entry))
}

/// `-c`: OpenPBS's `n`, `s`, `u`, `c`, `c=minutes`, `w`, `w=minutes`, or TORQUE's comma list of
/// `none`, `enabled`, `shutdown`, `periodic`, `interval=minutes`, `depth=N`.
pub fn check_checkpoint(text: &str) -> Result<(), OptionError> {
    let minutes = |value: &str| !value.is_empty() && value.len() <= 9 && value.chars().all(|c| c.is_ascii_digit());
    let openpbs = match text.split_once('=') {
        None => matches!(text, "n" | "s" | "u" | "c" | "w"),
        Some(("c" | "w", value)) => minutes(value),
        _ => false,
    };
    let torque = || {
        text.len() <= MAX_CHECKPOINT
            && text.split(',').all(|item| match item.split_once('=') {
                None => matches!(item, "none" | "enabled" | "shutdown" | "periodic"),
                Some(("interval" | "depth", value)) => minutes(value),
                _ => false,
            })
    };
    if openpbs || torque() {
        Ok(())
    } else {
        Err(error("Checkpoint", format!("{text:?} is not n, s, u, c[=minutes] or w[=minutes]")))
    }
}

/// A `-W name=value` item of [`STORED_W_ATTRS`]: its canonical value (`Some`), or `None` for a
/// name this module does not store. A malformed value is an error.
pub fn check_w_attr(name: &str, value: &str) -> Result<Option<String>, OptionError> {
    let boolean = |attr: &'static str| match value.to_ascii_lowercase().as_str() {
        "true" | "t" | "y" | "1" => Ok(Some("True".to_string())),
        "false" | "f" | "n" | "0" => Ok(Some("False".to_string())),
        _ => Err(error(attr, format!("{value:?} is not true or false"))),
    };
    match name {
        "run_count" => match value.parse::<u32>() {
            Ok(count) if count <= MAX_RUN_COUNT && value.chars().all(|c| c.is_ascii_digit()) => {
                Ok(Some(count.to_string()))
            }
            _ => Err(error("run_count", format!("{value:?} is not a number from 0 to {MAX_RUN_COUNT}"))),
        },
        "block" => boolean("block"),
        "release_nodes_on_stageout" => boolean("release_nodes_on_stageout"),
        "tolerate_node_failures" => match value {
            "all" | "job_start" | "none" => Ok(Some(value.to_string())),
            _ => Err(error("tolerate_node_failures", format!("{value:?} is not all, job_start or none"))),
        },
        _ => Ok(None),
    }
}

/// `-F "args"` (TORQUE): the words of the string, split on blanks.
pub fn parse_script_args(text: &str) -> Result<Vec<String>, OptionError> {
    let args: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    check_script_args(&args)?;
    Ok(args)
}

/// At most [`MAX_SCRIPT_ARGS`] words of [`MAX_SCRIPT_ARG_BYTES`] in all, none empty and none
/// holding a control character.
pub fn check_script_args(args: &[String]) -> Result<(), OptionError> {
    if args.len() > MAX_SCRIPT_ARGS {
        return Err(error("job_arguments", format!("more than {MAX_SCRIPT_ARGS} arguments")));
    }
    if args.iter().map(String::len).sum::<usize>() > MAX_SCRIPT_ARG_BYTES {
        return Err(error("job_arguments", format!("more than {MAX_SCRIPT_ARG_BYTES} bytes")));
    }
    if args.iter().any(|arg| arg.is_empty() || arg.chars().any(char::is_control)) {
        return Err(error("job_arguments", "an argument is empty or holds a control character"));
    }
    Ok(())
}

#[cfg(test)]
#[path = "options_tests.rs"]
mod tests;
