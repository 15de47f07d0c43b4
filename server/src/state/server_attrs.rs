//! The server's settable attributes (`qmgr set server ...`, OpenPBS
//! `pbs_server_attributes(7B)`): managers, operators, acl_roots, query_other_jobs, scheduling,
//! job_history_duration, node_fail_requeue, keep_completed (TORQUE), flavor, default_queue,
//! `max_queued` (server-wide, default one per user) and `max_user_kept_bytes` (a minipbs
//! extension: the bytes of jobs, scripts included, one user may keep). Owns their text
//! form (`pairs`, which `qmgr print server` and the store share) and which ones were set
//! explicitly. `default_queue` and `flavor` live on `ServerState` itself (older code reads
//! them there); [`ServerState::apply_server_attr`](super::ServerState::apply_server_attr) keeps
//! them in step.
//!
//! Must not know: jobs, queues' contents, the store's tables.

use super::values::{bad_value, list_op, parse_bool, show_bool, unknown_attribute, Limits};
use proto::error::RequestError;
use proto::manage::{AttrOp, SetOp};
use proto::Flavor;
use std::collections::BTreeSet;

/// Server attributes other than `default_queue` and `flavor`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerAttrs {
    /// `user@host` entries allowed to change the configuration (root and the server's own
    /// user always are).
    pub managers: Vec<String>,
    /// `user@host` entries allowed to operate (node state, other users' jobs).
    pub operators: Vec<String>,
    /// `user@host` entries whose jobs may run as root (OpenPBS `acl_roots`; empty: no job
    /// runs as root).
    pub acl_roots: Vec<String>,
    /// Whether users see other users' jobs in qstat.
    pub query_other_jobs: bool,
    /// Whether the scheduler starts jobs at all.
    pub scheduling: bool,
    /// Seconds a finished job stays in history.
    pub job_history_duration: i64,
    /// Seconds a mother superior's node may stay down before its jobs are requeued
    /// (rerunnable) or ended (OpenPBS `node_fail_requeue`, default 310; 0: never).
    pub node_fail_requeue: i64,
    /// TORQUE: seconds a completed job is shown as `C` (default 300).
    pub keep_completed: i64,
    /// `max_queued` of the whole server (OpenPBS): jobs queued or running in all queues, in
    /// total and per user; [`default_max_queued`] unless set.
    pub max_queued: Limits,
    /// minipbs extension: the bytes of jobs one user may keep (scripts in the store, the rest
    /// of the specs in memory; queued, running and in history); [`MAX_USER_KEPT_BYTES`]
    /// unless set.
    pub max_user_kept_bytes: u64,
    /// `resources_available.NAME` of site resources, shown form, by name (what server-level
    /// consumables count from: `state/server_pools.rs`).
    pub resources_available: std::collections::BTreeMap<String, String>,
    /// `resources_default.NAME`, shown form, by name: what a job that asks for none of NAME
    /// gets at submission, after its queue's `resources_default` (OpenPBS). The scheduler
    /// also plans a job without a walltime with `resources_default.walltime`.
    pub resources_default: std::collections::BTreeMap<String, String>,
    /// The attributes that steer the scheduler (`state/sched_attrs.rs`).
    pub sched: super::sched_attrs::SchedAttrs,
    /// What a fresh server has, for `unset`.
    pub defaults: Defaults,
    /// Names set explicitly (printed by `qmgr print server` and stored).
    pub set: BTreeSet<&'static str>,
}

/// Values from the configuration that `unset` goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Defaults {
    pub job_history_duration: i64,
    pub flavor: Flavor,
    pub default_queue: String,
    /// `pbs_server --managers`: in force beside the `managers` qmgr sets, shown with them, not
    /// stored and not removable by qmgr (they come back from the flags at every start).
    pub managers: Vec<String>,
    /// `pbs_server --operators`, as `managers`.
    pub operators: Vec<String>,
    /// `pbs_server --acl-roots` (`minipbs up` passes `root`).
    pub acl_roots: Vec<String>,
}

/// The default per-user `max_queued` of the server: one user cannot fill the server's memory
/// with jobs (twice the largest array, so one array always fits).
pub const MAX_QUEUED_PER_USER: u32 = 20_000;

/// The default `max_user_kept_bytes`: 1 GiB of jobs per user.
pub const MAX_USER_KEPT_BYTES: u64 = 1 << 30;

/// The server's `max_queued` when not set: `[u:PBS_GENERIC=20000]`.
pub fn default_max_queued() -> Limits {
    Limits { total: None, per_user: Some(MAX_QUEUED_PER_USER) }
}

/// Attributes `qstat -Bf` shows only when set explicitly (their defaults are documented), with
/// every scheduling attribute (`sched_attrs::NAMES`): see [`shown_only_when_set`].
pub const SHOWN_WHEN_SET: [&str; 2] = ["max_queued", "max_user_kept_bytes"];

/// Whether `qstat -Bf` shows attribute `name` only when it is set explicitly.
pub fn shown_only_when_set(name: &str) -> bool {
    SHOWN_WHEN_SET.contains(&name) || super::sched_attrs::NAMES.contains(&name)
}

/// OpenPBS's default `node_fail_requeue`, seconds.
pub const NODE_FAIL_REQUEUE: i64 = 310;

/// The attributes kept here, in the order `qstat -Bf` and `qmgr print server` use.
const OWN_NAMES: [&str; 12] = [
    "scheduling",
    "managers",
    "operators",
    "acl_roots",
    "default_queue",
    "query_other_jobs",
    "job_history_duration",
    "node_fail_requeue",
    "keep_completed",
    "flavor",
    "max_queued",
    "max_user_kept_bytes",
];

/// Every server attribute name, in the order `qstat -Bf` and `qmgr print server` use: those kept
/// here, then the scheduling ones (`sched_attrs::NAMES`).
pub fn names() -> impl Iterator<Item = &'static str> {
    OWN_NAMES.into_iter().chain(super::sched_attrs::NAMES)
}

impl ServerAttrs {
    /// A fresh server's attributes: `scheduling`, `default_queue` and `query_other_jobs` set,
    /// as an OpenPBS installation has them.
    pub fn new(defaults: Defaults) -> ServerAttrs {
        ServerAttrs {
            managers: Vec::new(),
            operators: Vec::new(),
            acl_roots: defaults.acl_roots.clone(),
            query_other_jobs: true,
            scheduling: true,
            job_history_duration: defaults.job_history_duration,
            node_fail_requeue: NODE_FAIL_REQUEUE,
            keep_completed: 300,
            max_queued: default_max_queued(),
            max_user_kept_bytes: MAX_USER_KEPT_BYTES,
            resources_available: Default::default(),
            resources_default: Default::default(),
            sched: Default::default(),
            defaults,
            set: ["scheduling", "default_queue", "query_other_jobs"].into_iter().collect(),
        }
    }

    /// Applies one attribute operation to the attributes kept here. Returns the canonical
    /// name, or `Ok(None)` for `default_queue`/`flavor`, which the caller handles.
    pub fn apply(&mut self, attr: &AttrOp, unset: bool) -> Result<Option<&'static str>, RequestError> {
        if attr.resource.is_some() {
            return Err(unknown_attribute(attr));
        }
        let lower = attr.name.to_ascii_lowercase();
        let Some(name) = names().find(|name| *name == lower) else {
            return Err(unknown_attribute(attr));
        };
        if super::sched_attrs::NAMES.contains(&name) {
            self.sched.apply(name, attr, unset)?;
            self.mark(name, unset);
            return Ok(Some(name));
        }
        let value = attr.value.trim();
        if !unset && attr.op != SetOp::Set && !matches!(name, "managers" | "operators" | "acl_roots" | "max_queued") {
            return Err(bad_value(attr, "+= and -= apply to lists only"));
        }
        match name {
            "scheduling" => self.scheduling = if unset { true } else { parse_bool(attr, value)? },
            "query_other_jobs" => self.query_other_jobs = if unset { true } else { parse_bool(attr, value)? },
            "managers" => {
                check_admin_entries(attr, unset)?;
                list_op(&mut self.managers, attr, unset)?
            }
            "operators" => {
                check_admin_entries(attr, unset)?;
                list_op(&mut self.operators, attr, unset)?
            }
            "acl_roots" if unset => self.acl_roots = self.defaults.acl_roots.clone(),
            // Stored even when emptied, so a restart does not bring back `--acl-roots`.
            "acl_roots" if value.is_empty() && attr.op == SetOp::Set => self.acl_roots.clear(),
            "acl_roots" => list_op(&mut self.acl_roots, attr, false)?,
            "job_history_duration" => {
                self.job_history_duration = if unset {
                    self.defaults.job_history_duration
                } else {
                    let seconds = job::duration::parse_duration(value).map_err(|reason| bad_value(attr, &reason))?;
                    i64::try_from(seconds).map_err(|_| bad_value(attr, "too long"))?
                }
            }
            "node_fail_requeue" => {
                self.node_fail_requeue = if unset {
                    NODE_FAIL_REQUEUE
                } else {
                    value.parse::<u32>().map_err(|_| bad_value(attr, "not a number of seconds"))?.into()
                }
            }
            "keep_completed" => {
                self.keep_completed = if unset {
                    300
                } else {
                    value.parse::<u32>().map_err(|_| bad_value(attr, "not a number of seconds"))?.into()
                }
            }
            "max_queued" if unset => self.max_queued = default_max_queued(),
            "max_queued" => self.max_queued.apply_entlim(attr, false)?,
            "max_user_kept_bytes" => {
                self.max_user_kept_bytes = if unset {
                    MAX_USER_KEPT_BYTES
                } else {
                    job::size::Size::parse(value).map_err(|reason| bad_value(attr, &reason))?.bytes()
                }
            }
            _ => return Ok(None),
        }
        self.mark(name, unset);
        Ok(Some(name))
    }

    /// Records whether `name` is set explicitly.
    pub fn mark(&mut self, name: &'static str, unset: bool) {
        let empty_list =
            (name == "managers" && self.managers.is_empty()) || (name == "operators" && self.operators.is_empty());
        if unset || empty_list {
            self.set.remove(name);
        } else {
            self.set.insert(name);
        }
    }

    /// The `managers` or `operators` entries in force: the configured ones, then qmgr's.
    pub fn admins(&self, name: &str) -> impl Iterator<Item = &String> {
        let (configured, set) = match name {
            "managers" => (&self.defaults.managers, &self.managers),
            _ => (&self.defaults.operators, &self.operators),
        };
        configured.iter().chain(set.iter().filter(|entry| !configured.contains(entry)))
    }

    /// The value of attribute `name` as `qstat -Bf` and `qmgr list|print server` show it:
    /// [`ServerAttrs::value`], with the configured managers and operators included.
    pub fn shown_value(&self, name: &str, default_queue: &str, flavor: Flavor) -> String {
        match name {
            "managers" | "operators" => self.admins(name).cloned().collect::<Vec<_>>().join(","),
            _ => self.value(name, default_queue, flavor),
        }
    }

    /// The value of attribute `name` (one of [`names`]) as text, as stored.
    pub fn value(&self, name: &str, default_queue: &str, flavor: Flavor) -> String {
        match name {
            "scheduling" => show_bool(self.scheduling).to_string(),
            "managers" => self.managers.join(","),
            "operators" => self.operators.join(","),
            "acl_roots" => self.acl_roots.join(","),
            "default_queue" => default_queue.to_string(),
            "query_other_jobs" => show_bool(self.query_other_jobs).to_string(),
            "job_history_duration" => job::duration::format_hms(self.job_history_duration.max(0) as u64),
            "node_fail_requeue" => self.node_fail_requeue.to_string(),
            "keep_completed" => self.keep_completed.to_string(),
            "flavor" => flavor_name(flavor).to_string(),
            "max_queued" => self.max_queued.entlim().unwrap_or_default(),
            "max_user_kept_bytes" => format!("{}b", self.max_user_kept_bytes),
            _ => self.sched.value(name),
        }
    }
}

/// A `managers`/`operators` list: `user` or `user@host` entries (`*` wildcards in the host
/// part). The user part names one user: a wildcard there would make everyone an operator or
/// a manager. The host part is not checked against the request (a `Requester` is a uid the
/// kernel or MUNGE vouches for, the same user on every host of the cluster).
pub fn check_admin_entries(attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
    if unset {
        return Ok(());
    }
    for entry in attr.value.split(',').map(str::trim) {
        let (user, host) = entry.split_once('@').map_or((entry, None), |(user, host)| (user, Some(host)));
        if user.is_empty() || host.is_some_and(str::is_empty) {
            return Err(bad_value(attr, &format!("{entry}: expected user@host")));
        }
        if user.contains('*') {
            return Err(bad_value(attr, &format!("{entry}: the user part cannot be a wildcard")));
        }
    }
    Ok(())
}

/// Whether a `managers`/`operators` entry names `user` (see [`check_admin_entries`]).
pub fn admin_matches(entry: &str, user: &str) -> bool {
    entry.split('@').next() == Some(user)
}

/// The text of a flavor (`openpbs`, `torque`).
pub fn flavor_name(flavor: Flavor) -> &'static str {
    match flavor {
        Flavor::OpenPbs => "openpbs",
        Flavor::Torque => "torque",
    }
}

/// Parses a flavor name.
pub fn parse_flavor(attr: &AttrOp) -> Result<Flavor, RequestError> {
    match attr.value.trim().to_ascii_lowercase().as_str() {
        "openpbs" | "pbspro" | "pbs" => Ok(Flavor::OpenPbs),
        "torque" => Ok(Flavor::Torque),
        _ => Err(bad_value(attr, "expected openpbs or torque")),
    }
}
