//! The server's configuration in its state: server attributes (with `default_queue` and
//! `flavor` kept in step), queue and server status attribute lists, loading the stored
//! configuration, and the queue checks a job passes at `qsub` and `qmove` (enabled, user ACL,
//! resource defaults, minimum and maximum, `max_queued` in total and per user).
//!
//! Must not know: sockets, the store's tables (it sees `StoredQueue` and pairs only).

use super::queue::QueueCounts;
use super::server_attrs::{flavor_name, names, parse_flavor, shown_only_when_set};
use super::values::unknown_attribute;
use super::{Queue, Requester, ServerState};
use job::resources::site::{ResourceDef, SiteResources};
use job::{Attr, JobState, ResourceRequest};
use proto::error::{ErrorCode, RequestError};
use proto::manage::AttrOp;
use proto::Flavor;
use std::collections::BTreeMap;

impl ServerState {
    /// Takes the configured defaults (`unset` returns to them) at start-up.
    pub fn configure_defaults(&mut self, job_history_duration: i64, flavor: Flavor) {
        self.flavor = flavor;
        self.attrs.defaults.flavor = flavor;
        self.attrs.defaults.job_history_duration = job_history_duration;
        self.attrs.job_history_duration = job_history_duration;
    }

    /// Takes the `managers` and `operators` of the configuration (`pbs_server --managers`,
    /// `--operators`), checked as qmgr checks them; they hold beside qmgr's lists.
    pub fn configure_admins(&mut self, managers: &[String], operators: &[String]) -> Result<(), RequestError> {
        for (name, list) in [("managers", managers), ("operators", operators)] {
            let mut given = Vec::new();
            if !list.is_empty() {
                let attr = AttrOp {
                    name: name.to_string(),
                    resource: None,
                    op: proto::manage::SetOp::Set,
                    value: list.join(","),
                };
                super::server_attrs::check_admin_entries(&attr, false)?;
                super::values::list_op(&mut given, &attr, false)?;
            }
            match name {
                "managers" => self.attrs.defaults.managers = given,
                _ => self.attrs.defaults.operators = given,
            }
        }
        Ok(())
    }

    /// TORQUE `keep_completed`: seconds a finished job stays in plain listings (torque flavor;
    /// `crate::flavor::recently_completed`). Read from the server attribute, so the two never
    /// disagree (a refused qmgr used to restore one and not the other).
    pub fn keep_completed(&self) -> u64 {
        u64::try_from(self.attrs.keep_completed).unwrap_or(0)
    }

    /// Takes `pbs_server --acl-roots` as `acl_roots` until qmgr sets it (`unset` returns to it).
    pub fn configure_acl_roots(&mut self, acl_roots: &[String]) {
        self.attrs.defaults.acl_roots = acl_roots.to_vec();
        self.attrs.acl_roots = acl_roots.to_vec();
    }

    /// Applies `set server`/`unset server` attribute operations, all or none: on the first
    /// refused one the server's attributes, default queue and flavor are as before.
    pub fn apply_server_attrs(&mut self, attrs: &[AttrOp], unset: bool) -> Result<(), RequestError> {
        let before = (self.attrs.clone(), self.default_queue.clone(), self.flavor);
        for attr in attrs {
            if let Err(error) = self.apply_server_attr(attr, unset) {
                (self.attrs, self.default_queue, self.flavor) = before;
                return Err(error);
            }
        }
        Ok(())
    }

    /// Applies one `set server`/`unset server` attribute operation.
    pub fn apply_server_attr(&mut self, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
        if attr.resource.is_some() && attr.name.eq_ignore_ascii_case("resources_available") {
            return self.set_server_resource(attr, unset);
        }
        if let (Some(resource), true) = (&attr.resource, attr.name.eq_ignore_ascii_case("resources_default")) {
            let map = &mut self.attrs.resources_default;
            return super::values::set_resource(map, attr, resource, attr.value.trim(), unset, &self.resources);
        }
        if self.attrs.apply(attr, unset)?.is_some() {
            return Ok(());
        }
        match attr.name.to_ascii_lowercase().as_str() {
            "default_queue" => {
                if unset {
                    self.default_queue.clear();
                } else {
                    let name = attr.value.trim();
                    if !self.queues.contains_key(name) {
                        return Err(RequestError::with_detail(ErrorCode::UnknownQueue, name));
                    }
                    self.default_queue = name.to_string();
                }
                self.attrs.mark("default_queue", unset);
            }
            "flavor" => {
                self.flavor = if unset { self.attrs.defaults.flavor } else { parse_flavor(attr)? };
                self.attrs.mark("flavor", unset);
            }
            _ => return Err(unknown_attribute(attr)),
        }
        Ok(())
    }

    /// The explicitly set server attributes as (name, value), as stored and printed.
    pub fn server_attr_pairs(&self) -> Vec<(String, String)> {
        names()
            .filter(|name| self.attrs.set.contains(name))
            .map(|name| (name.to_string(), self.attrs.value(name, &self.default_queue, self.flavor)))
            .chain(
                self.attrs
                    .resources_available
                    .iter()
                    .map(|(name, value)| (format!("resources_available.{name}"), value.clone())),
            )
            .chain(
                self.attrs
                    .resources_default
                    .iter()
                    .map(|(name, value)| (format!("resources_default.{name}"), value.clone())),
            )
            .collect()
    }

    /// Replaces the configuration with the stored one (at start-up).
    pub fn load_config(
        &mut self,
        queues: &[crate::state::records::StoredQueue],
        server_attrs: &[(String, String)],
    ) -> Result<(), RequestError> {
        self.queues.clear();
        for stored in queues {
            self.queues.insert(stored.name.clone(), Queue::from_pairs(&stored.name, &stored.attrs, &self.resources)?);
        }
        self.default_queue.clear();
        self.attrs.set.clear();
        for (name, value) in server_attrs {
            // `resources_available.lic` is stored under its full name.
            let (name, resource) = match name.split_once('.') {
                Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
                None => (name.clone(), None),
            };
            let attr = AttrOp { name, resource, op: proto::manage::SetOp::Set, value: value.clone() };
            self.apply_server_attr(&attr, false)?;
        }
        Ok(())
    }

    /// Job counts per queue, and the cpus its running jobs hold.
    pub fn queue_counts(&self) -> BTreeMap<&str, (QueueCounts, u32)> {
        let mut counts: BTreeMap<&str, (QueueCounts, u32)> =
            self.queues.keys().map(|name| (name.as_str(), Default::default())).collect();
        for job in self.jobs.values() {
            let Some((count, ncpus)) = counts.get_mut(job.queue.as_str()) else { continue };
            match job.state {
                JobState::Queued => count.queued += 1,
                JobState::Held => count.held += 1,
                JobState::Running | JobState::Suspended => {
                    count.running += 1;
                    *ncpus += job.request.total_ncpus();
                }
                // An array parent that has begun: its subjobs are counted by their own states.
                JobState::Begun => {}
                JobState::Exiting => count.exiting += 1,
                JobState::Waiting => count.waiting += 1,
                JobState::Finished | JobState::Expired => {}
            }
        }
        counts
    }

    /// `qstat -Bf` / `qmgr list server`: the server's attributes with its job counts.
    pub fn server_status(&self) -> Vec<Attr> {
        let mut total = QueueCounts::default();
        for (count, _) in self.queue_counts().values() {
            total.queued += count.queued;
            total.held += count.held;
            total.waiting += count.waiting;
            total.running += count.running;
            total.exiting += count.exiting;
        }
        let mut attrs = vec![
            Attr::new("server_state", "Active"),
            Attr::new("server_host", self.server_name.clone()),
            Attr::new("scheduling", self.attrs.value("scheduling", "", self.flavor)),
            Attr::new("total_jobs", total.total().to_string()),
            Attr::new("state_count", total.state_count()),
        ];
        for name in names().skip(1) {
            let value = self.attrs.shown_value(name, &self.default_queue, self.flavor);
            let hidden = shown_only_when_set(name) && !self.attrs.set.contains(name);
            if !value.is_empty() && !hidden {
                attrs.push(Attr::new(name, value));
            }
        }
        attrs.extend(self.server_resource_status());
        attrs.push(Attr::new("job_history_enable", "True"));
        attrs.push(Attr::new("pbs_version", concat!("minipbs-", env!("CARGO_PKG_VERSION"))));
        attrs
    }

    /// `qstat -Qf` / `qmgr list queue` of every queue named (all when empty); unknown names
    /// come back as errors.
    pub fn queue_statuses(&self, names: &[String]) -> (Vec<proto::ObjectStatus>, Vec<RequestError>) {
        let counts = self.queue_counts();
        let status = |queue: &Queue| {
            let (count, ncpus) = counts.get(queue.name.as_str()).copied().unwrap_or_default();
            proto::ObjectStatus { name: queue.name.clone(), attrs: queue.status(&count, ncpus) }
        };
        if names.is_empty() {
            return (self.queues.values().map(status).collect(), Vec::new());
        }
        let mut found = Vec::new();
        let mut errors = Vec::new();
        for name in names {
            let name = name.split('@').next().unwrap_or_default();
            match self.queues.get(name) {
                Some(queue) => found.push(status(queue)),
                None => errors.push(RequestError::with_detail(ErrorCode::UnknownQueue, name)),
            }
        }
        (found, errors)
    }

    /// Fills the resources the job does not ask for from the queue's `resources_default`,
    /// then from the server's (OpenPBS applies both at submission, the queue's first).
    /// Chunk resources are not added to a job that gives `nodes=` or `select=`.
    pub fn apply_queue_defaults(&self, queue: &str, resources: &mut Vec<(String, String)>) {
        if let Some(queue) = self.queues.get(queue) {
            self.apply_defaults(&queue.resources_default, resources);
        }
        self.apply_defaults(&self.attrs.resources_default, resources);
    }

    fn apply_defaults(&self, defaults: &BTreeMap<String, String>, resources: &mut Vec<(String, String)>) {
        let has = |resources: &Vec<(String, String)>, name: &str| resources.iter().any(|(given, _)| given == name);
        let chunked = has(resources, "nodes") || has(resources, "select");
        for (name, value) in defaults {
            let chunk_resource =
                matches!(name.as_str(), "ncpus" | "mem" | "ngpus" | "nodes" | "select" | "nodect" | "place")
                    || self.resources.get(name).is_some_and(|def| def.flags.host);
            if has(resources, name) || (chunked && chunk_resource) {
                continue;
            }
            resources.push((name.clone(), value.clone()));
        }
    }

    /// The checks a job passes to enter `queue` (qsub and qmove): enabled, user ACL,
    /// `resources_min`/`resources_max`, and `max_queued` in total and per user. `moving` is
    /// the key of a job already counted somewhere (qmove), not counted against the limits.
    pub fn check_admission(
        &self,
        queue: &str,
        requester: &Requester,
        owner: &str,
        request: &ResourceRequest,
        moving: Option<::job::JobKey>,
    ) -> Result<(), RequestError> {
        self.check_admission_of(queue, requester, owner, request, moving, 1)
    }

    /// [`ServerState::check_admission`] for `count` jobs at once: an array counts as its
    /// subjobs (its parent is not counted), so `-J` cannot slip past `max_queued`.
    pub fn check_admission_of(
        &self,
        queue: &str,
        requester: &Requester,
        owner: &str,
        request: &ResourceRequest,
        moving: Option<::job::JobKey>,
        count: u32,
    ) -> Result<(), RequestError> {
        let queue = self.queues.get(queue).ok_or_else(|| RequestError::with_detail(ErrorCode::UnknownQueue, queue))?;
        if !queue.enabled {
            return Err(RequestError::new(ErrorCode::QueueNotEnabled, ErrorCode::QueueNotEnabled.text()));
        }
        if !queue.user_allowed(owner) && !self.is_manager(requester) {
            return Err(RequestError::new(ErrorCode::PermissionDenied, ErrorCode::PermissionDenied.text()));
        }
        check_resource_limits(queue, request, &self.resources)?;
        if queue.queued.total.is_none() && queue.queued.per_user.is_none() {
            return Ok(());
        }
        let (mut total, mut mine) = (0u32, 0u32);
        for job in self.jobs.values() {
            let counted = job.queue == queue.name && super::tally::is_live(job);
            if counted && Some(job.id.key()) != moving {
                total += 1;
                mine += u32::from(job.owner == owner);
            }
        }
        let over = |queued: u32, max: u32| queued.saturating_add(count) > max;
        if queue.queued.total.is_some_and(|max| over(total, max)) {
            return Err(RequestError::new(ErrorCode::MaxQueued, ErrorCode::MaxQueued.text()));
        }
        if queue.queued.per_user.is_some_and(|max| over(mine, max)) {
            return Err(RequestError::new(ErrorCode::UserLimit, ErrorCode::UserLimit.text()));
        }
        Ok(())
    }

    /// The server-wide bounds on what one user keeps, for `count` new jobs that take
    /// `new_bytes` (qsub: the script and the rest of the spec): the server's `max_queued` (jobs
    /// queued or running, in total and per user; an array counts as its subjobs) and
    /// `max_user_kept_bytes` (`Job::kept_bytes` of every job of the user the server keeps,
    /// history included).
    pub fn check_user_quota(&self, owner: &str, count: u32, new_bytes: u64) -> Result<(), RequestError> {
        // From the tally (`tally.rs`), not a walk of every job: a submission costs the same
        // whatever the queue and the history hold.
        let (total, mine) = self.tally(owner);
        let limits = &self.attrs.max_queued;
        if limits.total.is_some_and(|max| total.saturating_add(count) > max) {
            return Err(RequestError::new(ErrorCode::MaxQueued, "Maximum number of jobs already in complex"));
        }
        if limits.per_user.is_some_and(|max| mine.live.saturating_add(count) > max) {
            return Err(RequestError::new(ErrorCode::UserLimit, "would exceed complex's per-user limit"));
        }
        self.kept_bytes_allow(mine.kept, new_bytes)
    }

    /// `max_user_kept_bytes`: refuses `new_bytes` more for `owner` (a new job at qsub, a spec
    /// grown by qalter) over the bytes all the owner's jobs keep, history included.
    pub fn check_kept_bytes(&self, owner: &str, new_bytes: u64) -> Result<(), RequestError> {
        self.kept_bytes_allow(self.tally(owner).1.kept, new_bytes)
    }

    /// Whether `new_bytes` more fit in `max_user_kept_bytes` over the `kept` bytes of a user.
    fn kept_bytes_allow(&self, kept: u64, new_bytes: u64) -> Result<(), RequestError> {
        let max_bytes = self.attrs.max_user_kept_bytes;
        if kept.saturating_add(new_bytes) > max_bytes {
            let message = format!(
                "would exceed complex's per-user limit of kept job bytes (max_user_kept_bytes = {max_bytes}b, kept {kept}b, this job {new_bytes}b)"
            );
            return Err(RequestError::new(ErrorCode::UserLimit, message));
        }
        Ok(())
    }

    /// `query_other_jobs = False`: who may see which jobs in qstat. Returns the owner filter
    /// to list with (the requester alone for users who are not operators); asking for
    /// another user's job by id, or for another user's jobs with `-u`, is refused.
    pub fn query_filter(
        &self,
        requester: &Requester,
        selectors: &[String],
        users: &[String],
    ) -> Result<Vec<String>, RequestError> {
        if self.attrs.query_other_jobs || self.is_operator(requester) {
            return Ok(users.to_vec());
        }
        let refuse = |what: &str| RequestError::with_detail(ErrorCode::PermissionDenied, what);
        if let Some(other) = users.iter().find(|user| **user != requester.user) {
            return Err(refuse(other));
        }
        for selector in selectors.iter().filter(|text| text.starts_with(|c: char| c.is_ascii_digit())) {
            if let Ok(key) = self.find_job(selector) {
                let job = &self.jobs[&key];
                if job.owner != requester.user {
                    return Err(refuse(&job.id.to_string()));
                }
            }
        }
        Ok(vec![requester.user.clone()])
    }

    /// The server's `flavor` as text.
    pub fn flavor_name(&self) -> &'static str {
        flavor_name(self.flavor)
    }
}

/// `resources_max` / `resources_min` against what the job asks for (resources it does not
/// ask for are not checked).
fn check_resource_limits(queue: &Queue, request: &ResourceRequest, site: &SiteResources) -> Result<(), RequestError> {
    for (bound, map) in [("resources_max", &queue.resources_max), ("resources_min", &queue.resources_min)] {
        for (resource, limit) in map {
            let measured = match site.get(resource) {
                Some(def) => measure_site(request, def, limit),
                None => measure(request, resource, limit),
            };
            let Some((asked, limit_value)) = measured else { continue };
            let violated = if bound == "resources_max" { asked > limit_value } else { asked < limit_value };
            if violated {
                let message = format!(
                    "{} ({resource} over {bound}.{resource} = {limit} of queue {})",
                    ErrorCode::ExceedsLimits.text(),
                    queue.name
                );
                let message = if bound == "resources_min" { message.replace(" over ", " under ") } else { message };
                return Err(RequestError::new(ErrorCode::ExceedsLimits, message));
            }
        }
    }
    Ok(())
}

/// [`measure`] for a numeric site resource: the job-wide value, else the sum over the chunks
/// (count times the amount per place); strings and booleans are not measured.
fn measure_site(request: &ResourceRequest, def: &ResourceDef, limit: &str) -> Option<(u64, u64)> {
    let limit = def.amount(limit)?;
    if let Some(shown) = request.display_value(&def.name) {
        return Some((def.amount(shown)?, limit));
    }
    let amounts = request.chunks.iter().flat_map(|chunk| {
        let count = u64::from(chunk.count);
        chunk.amounts.iter().filter(|(name, _)| *name == def.name).map(move |(_, amount)| amount.saturating_mul(count))
    });
    let mut asked = amounts.peekable();
    asked.peek()?;
    Some((asked.fold(0, u64::saturating_add), limit))
}

/// What the request asks of `resource` and the limit, as comparable numbers; `None` when the
/// job does not ask for it or the resource is not measured.
fn measure(request: &ResourceRequest, resource: &str, limit: &str) -> Option<(u64, u64)> {
    match resource {
        "walltime" => Some((request.walltime?, job::duration::parse_duration(limit).ok()?)),
        "cput" => Some((request.cput?, job::duration::parse_duration(limit).ok()?)),
        "ncpus" => Some((request.total_ncpus().into(), limit.parse().ok()?)),
        "ngpus" => Some((request.total_ngpus().into(), limit.parse().ok()?)),
        "nodect" => Some((request.nodect().into(), limit.parse().ok()?)),
        "mem" => {
            let asked: u64 = request
                .chunks
                .iter()
                .filter_map(|chunk| chunk.mem.map(|mem| mem.saturating_mul(chunk.count.into())))
                .fold(0, u64::saturating_add);
            (asked > 0).then_some(())?;
            Some((asked, job::size::Size::parse(limit).ok()?.bytes()))
        }
        _ => None,
    }
}
