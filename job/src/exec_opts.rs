//! The `-W` items the mom acts on: `umask`, `group_list`, `sandbox`, `stagein` and `stageout`
//! (OpenPBS `qsub(1B)`), their grammars, bounds and the text `qstat -f` shows for them; and
//! the commit `qsub --pin` pinned (`crate::pin`, checked with the rest).
//!
//! Every value here is the user's and reaches the root mom, so each is bounded (counts and
//! lengths) and refused whole when malformed; the mom still does everything as the user.
//!
//! Owns: [`ExecOptions`] and its parsers. Must not: look users or groups up (the server and the
//! mom do, each on its own host).

use serde::{Deserialize, Serialize};

/// At most this many `group_list` entries.
pub const MAX_GROUPS: usize = 16;
/// At most this many bytes in a group or host name.
pub const MAX_NAME: usize = 255;
/// At most this many files in `stagein` (and, separately, in `stageout`).
pub const MAX_STAGE_ITEMS: usize = 64;
/// At most this many bytes in one path of a stage item (PATH_MAX).
pub const MAX_STAGE_PATH: usize = 4095;

/// What the mom is told to do besides running the script. Stored in the job's spec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOptions {
    /// `-W umask=NNN` (octal, at most 0777).
    #[serde(default)]
    pub umask: Option<u32>,
    /// `-W group_list=g[@host][,...]`, as given.
    #[serde(default)]
    pub group_list: Vec<GroupEntry>,
    /// `-W sandbox=HOME|PRIVATE`.
    #[serde(default)]
    pub sandbox: Option<Sandbox>,
    /// `-W stagein=local@host:remote[,...]`: copied remote -> local before the job starts.
    #[serde(default)]
    pub stagein: Vec<StageItem>,
    /// `-W stageout=local@host:remote[,...]`: copied local -> remote after the job ends.
    #[serde(default)]
    pub stageout: Vec<StageItem>,
    /// `qsub --pin` (a minipbs extension, `crate::pin`): the commit the mom checks out and
    /// starts the script in. Left out of frames when absent, so other jobs' frames are unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<crate::pin::CodePin>,
}

/// One `group_list` entry: a group, for one host or (no host) for any.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupEntry {
    pub group: String,
    #[serde(default)]
    pub host: Option<String>,
}

/// Where the job runs: the user's home (OpenPBS's default) or a fresh per-job directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Sandbox {
    Home,
    Private,
}

/// One staged file: `local` on the execution host (relative: to the job's directory), `host`
/// and `remote` where it comes from or goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageItem {
    pub local: String,
    pub host: String,
    pub remote: String,
}

/// A malformed `-W` value; the text names the item and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{item}: {reason}")]
pub struct ExecOptionError {
    pub item: &'static str,
    pub reason: String,
}

fn error(item: &'static str, reason: impl Into<String>) -> ExecOptionError {
    ExecOptionError { item, reason: reason.into() }
}

/// `umask=NNN`: one to four octal digits, at most 0777.
pub fn parse_umask(value: &str) -> Result<u32, ExecOptionError> {
    let value = value.trim();
    if value.is_empty() || value.len() > 4 || !value.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return Err(error("umask", format!("{value:?} is not an octal number of at most 4 digits")));
    }
    let mask = u32::from_str_radix(value, 8).map_err(|e| error("umask", e.to_string()))?;
    if mask > 0o777 {
        return Err(error("umask", format!("{value} is more than 0777")));
    }
    Ok(mask)
}

/// How `qstat -f` shows a umask: its octal digits without a leading zero, as OpenPBS stores
/// `-W umask=022` (a long read as decimal digits: `umask = 22`).
pub fn show_umask(mask: u32) -> String {
    format!("{mask:o}")
}

/// Whether `name` can be a group or host name: 1..=255 bytes of letters, digits, `._-`, not
/// starting with `-` (never an option of anything).
fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('-')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// `group_list=g[@host][,g[@host]...]`: at most [`MAX_GROUPS`] entries, at most one without a
/// host (OpenPBS: one default).
pub fn parse_group_list(value: &str) -> Result<Vec<GroupEntry>, ExecOptionError> {
    let mut entries = Vec::new();
    for item in value.split(',') {
        let (group, host) = match item.trim().split_once('@') {
            Some((group, host)) => (group, Some(host)),
            None => (item.trim(), None),
        };
        if !is_name(group) || host.is_some_and(|host| !is_name(host)) {
            return Err(error("group_list", format!("{:?} is not group[@host]", item.trim())));
        }
        entries.push(GroupEntry { group: group.to_string(), host: host.map(str::to_string) });
    }
    if entries.len() > MAX_GROUPS {
        return Err(error("group_list", format!("more than {MAX_GROUPS} entries")));
    }
    if entries.iter().filter(|entry| entry.host.is_none()).count() > 1 {
        return Err(error("group_list", "more than one group without a host"));
    }
    Ok(entries)
}

/// The group of `entries` for `host` (short names compared): the entry naming it, else the
/// one without a host (OpenPBS `set_objexid`).
pub fn group_for_host<'a>(entries: &'a [GroupEntry], host: &str) -> Option<&'a str> {
    let short = |name: &str| name.split('.').next().unwrap_or(name).to_string();
    let named = entries.iter().find(|entry| entry.host.as_deref().is_some_and(|h| short(h) == short(host)));
    named.or_else(|| entries.iter().find(|entry| entry.host.is_none())).map(|entry| entry.group.as_str())
}

/// How `qstat -f` shows `group_list`: as given.
pub fn show_group_list(entries: &[GroupEntry]) -> String {
    let text: Vec<String> = entries
        .iter()
        .map(|entry| match &entry.host {
            Some(host) => format!("{}@{host}", entry.group),
            None => entry.group.clone(),
        })
        .collect();
    text.join(",")
}

/// `sandbox=HOME|PRIVATE` (case-insensitive, as OpenPBS).
pub fn parse_sandbox(value: &str) -> Result<Sandbox, ExecOptionError> {
    match value.trim().to_ascii_uppercase().as_str() {
        "HOME" => Ok(Sandbox::Home),
        "PRIVATE" => Ok(Sandbox::Private),
        _ => Err(error("sandbox", format!("{:?} is neither HOME nor PRIVATE", value.trim()))),
    }
}

/// How `qstat -f` shows `sandbox`.
pub fn show_sandbox(sandbox: Sandbox) -> &'static str {
    match sandbox {
        Sandbox::Home => "HOME",
        Sandbox::Private => "PRIVATE",
    }
}

/// Whether `path` can be a staged path: 1..=[`MAX_STAGE_PATH`] bytes, no NUL or line break,
/// not starting with `-`, no `..` component (a local path stays inside the job's directory;
/// the remote one is opened as the user anyway).
fn is_stage_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= MAX_STAGE_PATH
        && !path.starts_with('-')
        && !path.contains(['\0', '\n', '\r'])
        && !path.split('/').any(|part| part == "..")
}

/// `stagein=`/`stageout=` (`item` says which): `local@host:remote[,...]`, at most
/// [`MAX_STAGE_ITEMS`] items.
pub fn parse_stage_list(item: &'static str, value: &str) -> Result<Vec<StageItem>, ExecOptionError> {
    let mut items = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        let bad = || error(item, format!("{part:?} is not local_file@host:remote_file"));
        let (local, rest) = part.split_once('@').ok_or_else(bad)?;
        let (host, remote) = rest.split_once(':').ok_or_else(bad)?;
        if !is_name(host) || !is_stage_path(local) || !is_stage_path(remote) {
            return Err(bad());
        }
        items.push(StageItem { local: local.to_string(), host: host.to_string(), remote: remote.to_string() });
        if items.len() > MAX_STAGE_ITEMS {
            return Err(error(item, format!("more than {MAX_STAGE_ITEMS} files")));
        }
    }
    Ok(items)
}

/// How `qstat -f` shows `stagein`/`stageout`: as given.
pub fn show_stage_list(items: &[StageItem]) -> String {
    let text: Vec<String> = items.iter().map(|i| format!("{}@{}:{}", i.local, i.host, i.remote)).collect();
    text.join(",")
}

impl ExecOptions {
    /// Reads the `-W name=value` items this module owns (the last of each wins, as getopt's),
    /// leaving the others alone.
    pub fn from_w_items<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<ExecOptions, ExecOptionError> {
        let mut options = ExecOptions::default();
        for item in items {
            let Some((name, value)) = item.split_once('=') else { continue };
            match name.trim() {
                "umask" => options.umask = Some(parse_umask(value)?),
                "group_list" => options.group_list = parse_group_list(value)?,
                "sandbox" => options.sandbox = Some(parse_sandbox(value)?),
                "stagein" => options.stagein = parse_stage_list("stagein", value)?,
                "stageout" => options.stageout = parse_stage_list("stageout", value)?,
                _ => {}
            }
        }
        Ok(options)
    }

    /// Checks stored or received options against the same bounds (the server never trusts
    /// qsub).
    pub fn check(&self) -> Result<(), ExecOptionError> {
        if self.umask.is_some_and(|mask| mask > 0o777) {
            return Err(error("umask", "more than 0777"));
        }
        if !self.group_list.is_empty() {
            parse_group_list(&show_group_list(&self.group_list))?;
        }
        for (item, list) in [("stagein", &self.stagein), ("stageout", &self.stageout)] {
            if !list.is_empty() && parse_stage_list(item, &show_stage_list(list))? != *list {
                return Err(error(item, "an item does not read back as given"));
            }
        }
        if let Some(pin) = &self.pin {
            pin.check().map_err(|pin_error| error("pin", pin_error.to_string()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "exec_opts_tests.rs"]
mod tests;
