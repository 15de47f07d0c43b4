//! What a scheduling pass tells the scheduler beyond nodes and queued jobs (issue 16): the
//! jobs running now and until when, each queued job's planned walltime, its queue's index and
//! whether it may preempt; and, back from the scheduler, its `waits` turned into the notes
//! `qstat` shows (`state/sched_notes.rs`), with the pass's indices resolved to names.
//!
//! A job without a walltime is planned with its queue's `resources_default.walltime`, else
//! the server's, else [`UNKNOWN_WALLTIME`] (5 years, as OpenPBS plans such jobs). Those
//! defaults are also written into a job at submission (`ServerState::apply_queue_defaults`),
//! so its mom ends it at that walltime and plans hold; the fallback here covers jobs
//! submitted before a default was set.
//!
//! Must not know: policy (`sched`), the store, sockets, comment texts (`sched_text.rs`).

use crate::run_limits::LimitOf;
use crate::state::sched_notes::{PlannedStart, SchedNote, WaitWhy};
use crate::state::{Job, ServerState};
use job::JobKey;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// How long a job without any walltime is planned to run: 5 years, as OpenPBS.
pub const UNKNOWN_WALLTIME: u64 = 5 * 365 * 24 * 3600;

/// One queue as a pass sees it.
#[derive(Debug, Clone, Copy)]
struct QueueFacts {
    /// Index into `ClusterView::queue_depths`.
    index: usize,
    priority: i32,
    /// Its `resources_default.walltime`, seconds.
    walltime: Option<u64>,
    /// Its jobs may preempt (its priority is at least `preempt_queue_prio`).
    preemptor: bool,
}

/// The per-queue and server facts of one pass, read once.
pub struct PassFacts {
    queues: HashMap<String, QueueFacts>,
    /// Per queue index, its own `backfill_depth`.
    pub queue_depths: Vec<Option<u32>>,
    /// The server's `resources_default.walltime`, seconds.
    server_walltime: Option<u64>,
}

fn duration(value: Option<&String>) -> Option<u64> {
    value.and_then(|text| job::duration::parse_duration(text).ok())
}

impl PassFacts {
    pub fn new(state: &ServerState) -> PassFacts {
        let preempt_prio = state.attrs.sched.preempt_queue_prio;
        let mut queues = HashMap::new();
        let mut queue_depths = Vec::new();
        for (index, (name, queue)) in state.queues().iter().enumerate() {
            queue_depths.push(queue.backfill_depth);
            let facts = QueueFacts {
                index,
                priority: queue.priority.unwrap_or(0),
                walltime: duration(queue.resources_default.get("walltime")),
                preemptor: queue.priority.is_some_and(|priority| priority >= preempt_prio),
            };
            queues.insert(name.clone(), facts);
        }
        let server_walltime = duration(state.attrs.resources_default.get("walltime"));
        PassFacts { queues, queue_depths, server_walltime }
    }

    /// What a pass needs of `job`'s queue and walltime, with one look-up.
    pub fn job(&self, job: &Job) -> JobFacts {
        let queue = self.queues.get(job.queue.as_str());
        JobFacts {
            queue: queue.map_or(usize::MAX, |queue| queue.index),
            queue_priority: queue.map_or(0, |queue| queue.priority),
            walltime: job
                .request
                .walltime
                .or_else(|| queue.and_then(|queue| queue.walltime))
                .or(self.server_walltime)
                .unwrap_or(UNKNOWN_WALLTIME),
            preemptor: queue.is_some_and(|queue| queue.preemptor),
        }
    }
}

/// One job as a pass sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobFacts {
    /// Index of its queue in `PassFacts::queue_depths` (`usize::MAX` when it has none).
    pub queue: usize,
    pub queue_priority: i32,
    /// The seconds it is planned to run (see the module header).
    pub walltime: u64,
    /// It may preempt lower jobs (never when no queue reaches `preempt_queue_prio`).
    pub preemptor: bool,
}

/// Every job holding node shares now (running, exiting or suspended on them), with the time
/// it is expected to give them back. `node_index` maps node names to the view's indices.
pub fn running_jobs(
    state: &ServerState,
    facts: &PassFacts,
    node_index: &HashMap<&str, usize>,
    now: i64,
) -> Vec<sched::RunningJob> {
    let keys: BTreeSet<JobKey> = state.nodes().values().flat_map(|node| node.jobs.iter().copied()).collect();
    keys.into_iter()
        .filter_map(|key| state.job(key))
        // A job preemption suspended gave its shares back: it is in `suspended`, not here.
        .filter(|job| !job.exec.is_empty() && !job.shares_released)
        .map(|job| running_job(state, facts, node_index, job, now))
        .collect()
}

/// One job with an allocation as the scheduler sees it: its shares (for a job preemption
/// suspended, what it needs to resume), its start and its planned end (start plus walltime,
/// saturating).
pub fn running_job(
    state: &ServerState,
    facts: &PassFacts,
    node_index: &HashMap<&str, usize>,
    job: &Job,
    now: i64,
) -> sched::RunningJob {
    let start = job.times.stime.unwrap_or(now);
    let of = facts.job(job);
    let walltime = i64::try_from(of.walltime).unwrap_or(i64::MAX);
    sched::RunningJob {
        key: job.id.key().raw(),
        start,
        end: start.saturating_add(walltime),
        assignments: assignments(job, node_index),
        exclusive: job.request.exclusive,
        queue_priority: of.queue_priority,
        preempt: crate::state::preempt::preempt_how(state, job, now),
    }
}

/// A job's node shares as the scheduler's assignments (shares on nodes no longer known are
/// left out: nothing can be planned on them).
fn assignments(job: &Job, node_index: &HashMap<&str, usize>) -> Vec<sched::Assignment> {
    job.exec
        .iter()
        .filter_map(|share| {
            Some(sched::Assignment {
                node: *node_index.get(share.node.as_str())?,
                slots: share.slots.clone(),
                gpus: share.gpus.clone(),
                mem: share.mem_bytes,
                mpiprocs: share.mpiprocs,
                mps: share.mps,
                amounts: share.amounts.clone(),
            })
        })
        .collect()
}

/// Turns one pass's waits into notes: counter and pool indices become the names they stand
/// for (`limits`, `pools`: what each index counts), node indices node names. Names are shared
/// between the notes of one pass.
pub struct NoteMaker<'a> {
    pub limits: &'a [LimitOf],
    pub pools: &'a [String],
    pub node_names: &'a [String],
    names: HashMap<String, Arc<str>>,
}

impl<'a> NoteMaker<'a> {
    pub fn new(limits: &'a [LimitOf], pools: &'a [String], node_names: &'a [String]) -> NoteMaker<'a> {
        NoteMaker { limits, pools, node_names, names: HashMap::new() }
    }

    fn name(&mut self, text: &str) -> Arc<str> {
        if let Some(name) = self.names.get(text) {
            return name.clone();
        }
        let name: Arc<str> = Arc::from(text);
        self.names.insert(text.to_string(), name.clone());
        name
    }

    pub fn note(&mut self, wait: &sched::Wait) -> (JobKey, SchedNote) {
        let why = match &wait.reason {
            sched::WaitReason::Resource(name) => WaitWhy::Resource(self.name(name)),
            sched::WaitReason::Backfill => WaitWhy::Backfill,
            sched::WaitReason::StrictOrder => WaitWhy::StrictOrder,
            sched::WaitReason::Limit(index) => match self.limits.get(*index) {
                Some(LimitOf::Queue(queue)) => WaitWhy::QueueLimit { queue: self.name(queue) },
                Some(LimitOf::QueueUser { queue, user }) => {
                    WaitWhy::QueueUserLimit { queue: self.name(queue), user: self.name(user) }
                }
                // The scheduler named a counter the server did not make: say what it can.
                None => WaitWhy::Never,
            },
            sched::WaitReason::Pool(index) => match self.pools.get(*index) {
                Some(pool) => WaitWhy::ServerResource(self.name(pool)),
                None => WaitWhy::Never,
            },
            sched::WaitReason::Never => WaitWhy::Never,
        };
        let estimate = wait.estimate.as_ref().map(|estimate| PlannedStart {
            start: estimate.start,
            exec_vnode: estimate_vnode(&estimate.hosts, self.node_names),
        });
        (JobKey::from_raw(wait.key), SchedNote { why, estimate })
    }
}

/// `estimated.exec_vnode`: `(n1:ncpus=2:mem=1048576kb:ngpus=1)+(n2:ncpus=2)`, in the order and
/// form of `exec_vnode` (`Job::exec_vnode`).
pub fn estimate_vnode(hosts: &[sched::EstimatedHost], node_names: &[String]) -> String {
    let parts: Vec<String> = hosts
        .iter()
        .map(|host| {
            let name = node_names.get(host.node).map_or("?", String::as_str);
            let mut text = format!("({name}:ncpus={}", host.ncpus);
            if host.mem > 0 {
                text.push_str(&format!(":mem={}kb", host.mem / 1024));
            }
            if host.ngpus > 0 {
                text.push_str(&format!(":ngpus={}", host.ngpus));
            }
            text.push(')');
            text
        })
        .collect();
    parts.join("+")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_written_as_exec_vnode() {
        let names = vec!["n1".to_string(), "n2".to_string()];
        let hosts = [
            sched::EstimatedHost { node: 1, ncpus: 2, ngpus: 1, mem: 1 << 30 },
            sched::EstimatedHost { node: 0, ncpus: 4, ngpus: 0, mem: 0 },
        ];
        assert_eq!(estimate_vnode(&hosts, &names), "(n2:ncpus=2:mem=1048576kb:ngpus=1)+(n1:ncpus=4)");
    }

    #[test]
    fn indices_become_names() {
        let limits = [LimitOf::Queue("workq".into()), LimitOf::QueueUser { queue: "gpu".into(), user: "bob".into() }];
        let pools = ["lic".to_string()];
        let names = ["n1".to_string()];
        let mut maker = NoteMaker::new(&limits, &pools, &names);
        let wait = |reason| sched::Wait { key: 7, reason, estimate: None };
        let why = |maker: &mut NoteMaker, reason| maker.note(&wait(reason)).1.why;
        assert_eq!(why(&mut maker, sched::WaitReason::Limit(0)), WaitWhy::QueueLimit { queue: "workq".into() });
        assert_eq!(
            why(&mut maker, sched::WaitReason::Limit(1)),
            WaitWhy::QueueUserLimit { queue: "gpu".into(), user: "bob".into() }
        );
        assert_eq!(why(&mut maker, sched::WaitReason::Limit(2)), WaitWhy::Never, "unknown counter");
        assert_eq!(why(&mut maker, sched::WaitReason::Pool(0)), WaitWhy::ServerResource("lic".into()));
        assert_eq!(why(&mut maker, sched::WaitReason::Pool(9)), WaitWhy::Never);
        let estimate =
            sched::Estimate { start: 500, hosts: vec![sched::EstimatedHost { node: 0, ncpus: 4, ngpus: 0, mem: 0 }] };
        let (key, note) =
            maker.note(&sched::Wait { key: 7, reason: sched::WaitReason::Backfill, estimate: Some(estimate) });
        assert_eq!(key, JobKey::from_raw(7));
        assert_eq!(note.estimate, Some(PlannedStart { start: 500, exec_vnode: "(n1:ncpus=4)".into() }));
    }
}
