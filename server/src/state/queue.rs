//! A queue and its attributes (OpenPBS `pbs_queue_attributes(7B)`, TORQUE names accepted too):
//! type, enabled/started, priority, run and queue limits (total and per user), resource
//! defaults and limits, the user ACL and `backfill_depth` (the queue's own reservations). Owns setting attributes from qmgr text and the
//! canonical text form (`pairs`) that `qmgr print`, `qstat -Qf` and the store all use.
//!
//! Must not know: jobs (counts come from the caller), the store's tables, sockets.

use super::values::{self, bad_value, limit_value, list_op, parse_bool, show_bool, Limits};
use job::resources::site::SiteResources;
use job::Attr;
use proto::error::{ErrorCode, RequestError};
use proto::manage::{AttrOp, SetOp};
use std::collections::BTreeMap;

/// A queue's type. Only execution queues exist here (routing queues are not supported).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueType {
    Execution,
}

/// One queue. A new queue is neither enabled nor started and has no type, as in OpenPBS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Queue {
    pub name: String,
    pub queue_type: Option<QueueType>,
    /// Accepts new jobs.
    pub enabled: bool,
    /// Its jobs may start.
    pub started: bool,
    /// Higher goes first in the scheduler.
    pub priority: Option<i32>,
    /// `max_run` (`[o:PBS_ALL=N]`, TORQUE `max_running`) and its per-user part
    /// (`[u:PBS_GENERIC=N]`, `max_user_run`).
    pub run: Limits,
    /// `max_queued` (TORQUE `max_queuable`) and its per-user part (`max_user_queued`,
    /// TORQUE `max_user_queuable`): jobs queued or running in the queue.
    pub queued: Limits,
    pub resources_default: BTreeMap<String, String>,
    pub resources_max: BTreeMap<String, String>,
    pub resources_min: BTreeMap<String, String>,
    pub acl_user_enable: Option<bool>,
    pub acl_users: Vec<String>,
    /// OpenPBS `backfill_depth` of a queue: its jobs get this many reservations of their own
    /// instead of sharing the server's (`None`: they share; at most
    /// `sched_attrs::MAX_BACKFILL_DEPTH`).
    pub backfill_depth: Option<u32>,
}

/// Job counts of a queue, for its status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub queued: u32,
    pub held: u32,
    pub waiting: u32,
    pub running: u32,
    pub exiting: u32,
}

impl QueueCounts {
    pub fn total(&self) -> u32 {
        self.queued + self.held + self.waiting + self.running + self.exiting
    }

    /// `state_count` as OpenPBS prints it.
    pub fn state_count(&self) -> String {
        format!(
            "Transit:0 Queued:{} Held:{} Waiting:{} Running:{} Exiting:{} Begun:0 ",
            self.queued, self.held, self.waiting, self.running, self.exiting
        )
    }
}

impl Queue {
    /// A queue as `create queue <name>` makes it.
    pub fn new(name: &str) -> Queue {
        Queue { name: name.to_string(), ..Queue::default() }
    }

    /// The queue a fresh server has: an enabled, started execution queue.
    pub fn default_queue(name: &str) -> Queue {
        Queue { queue_type: Some(QueueType::Execution), enabled: true, started: true, ..Queue::new(name) }
    }

    /// Applies one qmgr attribute operation (`unset` when `unset` is true).
    pub fn apply(&mut self, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
        self.apply_with(attr, unset, &SiteResources::default())
    }

    /// [`Queue::apply`] knowing the site's resources (`resources_max.scratch` and the like).
    pub fn apply_with(&mut self, attr: &AttrOp, unset: bool, site: &SiteResources) -> Result<(), RequestError> {
        let lower = attr.name.to_ascii_lowercase();
        let value = attr.value.trim();
        if let Some(map) = self.resource_map(&lower) {
            let Some(resource) = &attr.resource else { return Err(bad_value(attr, "a resource name is missing")) };
            return values::set_resource(map, attr, resource, value, unset, site);
        }
        if attr.resource.is_some() {
            return Err(values::unknown_attribute(attr));
        }
        match lower.as_str() {
            "queue_type" => {
                self.queue_type = if unset {
                    None
                } else {
                    match value.to_ascii_lowercase().as_str() {
                        "e" | "execution" => Some(QueueType::Execution),
                        _ => return Err(bad_value(attr, "only Execution queues are supported")),
                    }
                }
            }
            "enabled" | "started" => {
                let on = if unset { false } else { parse_bool(attr, value)? };
                *(if lower == "enabled" { &mut self.enabled } else { &mut self.started }) = on;
            }
            "priority" => {
                self.priority = if unset {
                    None
                } else {
                    let priority: i32 = value.parse().map_err(|_| bad_value(attr, "not an integer"))?;
                    if !(-1024..=1023).contains(&priority) {
                        return Err(bad_value(attr, "outside -1024..1023"));
                    }
                    Some(priority)
                }
            }
            "max_run" => self.run.apply_entlim(attr, unset)?,
            "max_running" => self.run.total = limit_value(attr, unset)?,
            "max_user_run" => self.run.per_user = limit_value(attr, unset)?,
            "max_queued" => self.queued.apply_entlim(attr, unset)?,
            "max_queuable" => self.queued.total = limit_value(attr, unset)?,
            "max_user_queued" | "max_user_queuable" => self.queued.per_user = limit_value(attr, unset)?,
            "acl_user_enable" => self.acl_user_enable = if unset { None } else { Some(parse_bool(attr, value)?) },
            "acl_users" => list_op(&mut self.acl_users, attr, unset)?,
            "backfill_depth" => {
                self.backfill_depth = if unset {
                    None
                } else {
                    let max = super::sched_attrs::MAX_BACKFILL_DEPTH;
                    match value.parse::<u32>() {
                        Ok(depth) if depth <= max => Some(depth),
                        _ => return Err(bad_value(attr, &format!("expected an integer from 0 to {max}"))),
                    }
                }
            }
            "total_jobs" | "state_count" | "resources_assigned" | "hasnodes" => {
                return Err(RequestError::new(
                    ErrorCode::ReadOnlyAttribute,
                    format!("{} {}", ErrorCode::ReadOnlyAttribute.text(), attr.full_name()),
                ))
            }
            _ => return Err(values::unknown_attribute(attr)),
        }
        Ok(())
    }

    /// A queue without a type can be neither enabled nor started (checked after all the
    /// attributes of one command are applied, so their order does not matter).
    pub fn check_complete(&self) -> Result<(), RequestError> {
        if (self.enabled || self.started) && self.queue_type.is_none() {
            return Err(RequestError::new(
                ErrorCode::QueueIncomplete,
                format!("{} (queue {} has no queue_type)", ErrorCode::QueueIncomplete.text(), self.name),
            ));
        }
        Ok(())
    }

    fn resource_map(&mut self, lower_name: &str) -> Option<&mut BTreeMap<String, String>> {
        match lower_name {
            "resources_default" => Some(&mut self.resources_default),
            "resources_max" => Some(&mut self.resources_max),
            "resources_min" => Some(&mut self.resources_min),
            _ => None,
        }
    }

    /// The attributes that are set, as `qmgr print` writes them and the store keeps them:
    /// (full name, value), in OpenPBS's order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut pairs = Vec::new();
        if let Some(QueueType::Execution) = self.queue_type {
            pairs.push(("queue_type".to_string(), "Execution".to_string()));
        }
        if let Some(priority) = self.priority {
            pairs.push(("Priority".to_string(), priority.to_string()));
        }
        if let Some(enable) = self.acl_user_enable {
            pairs.push(("acl_user_enable".to_string(), show_bool(enable).to_string()));
        }
        if !self.acl_users.is_empty() {
            pairs.push(("acl_users".to_string(), self.acl_users.join(",")));
        }
        if let Some(text) = self.queued.entlim() {
            pairs.push(("max_queued".to_string(), text));
        }
        if let Some(text) = self.run.entlim() {
            pairs.push(("max_run".to_string(), text));
        }
        if let Some(depth) = self.backfill_depth {
            pairs.push(("backfill_depth".to_string(), depth.to_string()));
        }
        for (prefix, map) in [
            ("resources_max", &self.resources_max),
            ("resources_min", &self.resources_min),
            ("resources_default", &self.resources_default),
        ] {
            pairs.extend(map.iter().map(|(resource, value)| (format!("{prefix}.{resource}"), value.clone())));
        }
        pairs.push(("enabled".to_string(), show_bool(self.enabled).to_string()));
        pairs.push(("started".to_string(), show_bool(self.started).to_string()));
        pairs
    }

    /// The full status (`qstat -Qf`, `qmgr list queue`): the set attributes plus the job counts.
    pub fn status(&self, counts: &QueueCounts, ncpus_assigned: u32) -> Vec<Attr> {
        let mut attrs: Vec<Attr> = Vec::new();
        let mut pairs = self.pairs().into_iter().peekable();
        // queue_type and Priority first, then the counts, then the rest.
        while let Some((name, _)) = pairs.peek() {
            if name != "queue_type" && name != "Priority" {
                break;
            }
            let (name, value) = pairs.next().expect("peeked");
            attrs.push(Attr::new(name, value));
        }
        attrs.push(Attr::new("total_jobs", counts.total().to_string()));
        attrs.push(Attr::new("state_count", counts.state_count()));
        for (name, value) in pairs {
            if name == "enabled" {
                attrs.push(Attr::resource("resources_assigned", "ncpus", ncpus_assigned.to_string()));
            }
            match name.split_once('.') {
                Some((name, resource)) => attrs.push(Attr::resource(name, resource, value)),
                None => attrs.push(Attr::new(name, value)),
            }
        }
        attrs
    }

    /// Loads a queue from its stored pairs (the form [`Queue::pairs`] writes).
    pub fn from_pairs(name: &str, pairs: &[(String, String)], site: &SiteResources) -> Result<Queue, RequestError> {
        let mut queue = Queue::new(name);
        for (full_name, value) in pairs {
            let (name, resource) = match full_name.split_once('.') {
                Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
                None => (full_name.clone(), None),
            };
            queue.apply_with(&AttrOp { name, resource, op: SetOp::Set, value: value.clone() }, false, site)?;
        }
        queue.check_complete()?;
        Ok(queue)
    }

    /// Whether `user` may submit here (`acl_users` when `acl_user_enable` is on).
    pub fn user_allowed(&self, user: &str) -> bool {
        self.acl_user_enable != Some(true) || self.acl_users.iter().any(|entry| values::user_matches(entry, user))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(queue: &mut Queue, name: &str, value: &str) -> Result<(), RequestError> {
        let (name, resource) = match name.split_once('.') {
            Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
            None => (name.to_string(), None),
        };
        queue.apply(&AttrOp { name, resource, op: SetOp::Set, value: value.into() }, false)
    }

    #[test]
    fn torque_and_openpbs_names_mean_the_same_limits() {
        let mut queue = Queue::default_queue("q");
        set(&mut queue, "max_running", "10").unwrap();
        set(&mut queue, "MAX_USER_RUN", "2").unwrap();
        set(&mut queue, "max_queuable", "100").unwrap();
        set(&mut queue, "max_user_queuable", "5").unwrap();
        let mut openpbs = Queue::default_queue("q");
        set(&mut openpbs, "max_run", "[o:PBS_ALL=10],[u:PBS_GENERIC=2]").unwrap();
        set(&mut openpbs, "max_queued", "[o:PBS_ALL=100], [u:PBS_GENERIC=5]").unwrap();
        assert_eq!(queue, openpbs);
    }

    #[test]
    fn pairs_round_trip_and_refusals() {
        let mut queue = Queue::default_queue("q");
        for (name, value) in [
            ("Priority", "-5"),
            ("resources_max.walltime", "1:00:00"),
            ("resources_default.mem", "2GB"),
            ("resources_min.ncpus", "2"),
            ("acl_user_enable", "t"),
            ("acl_users", "alice,bob@*"),
            ("max_run", "[u:PBS_GENERIC=2]"),
            ("backfill_depth", "3"),
        ] {
            set(&mut queue, name, value).unwrap();
        }
        assert_eq!(Queue::from_pairs("q", &queue.pairs(), &SiteResources::default()).unwrap(), queue);
        assert_eq!(queue.resources_max["walltime"], "01:00:00", "durations normalised");
        assert!(queue.user_allowed("bob") && !queue.user_allowed("carol"));
        let refused = [
            ("Priority", "2000"),
            ("resources_max.widgets", "1"),
            ("resources_max.walltime", "soon"),
            ("queue_type", "route"),
            ("total_jobs", "3"),
            ("enabled", "perhaps"),
            ("backfill_depth", "-1"),
            ("backfill_depth", "100001"),
        ];
        for (name, value) in refused {
            let before = queue.clone();
            assert!(set(&mut queue, name, value).is_err(), "{name} = {value}");
            assert_eq!(queue, before);
        }
    }
}
