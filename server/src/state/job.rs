//! The server's record of one job: the submitted spec plus everything the server decided or
//! learned since (owner, queue, state, allocation, times, exit status, usage).
//!
//! Not serialisable on purpose: the store maps it to rows by hand, and status replies are
//! built as attribute lists (`status.rs`).

use super::StdPath;
use compact_str::CompactString;
use job::state::IllegalTransition;
use job::{JobEvent, JobId, JobSpec, JobState, ResourceRequest};
use proto::mom::ResourcesUsed;
use std::sync::Arc;

/// Epoch seconds of the moments PBS shows (`ctime`, `qtime`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JobTimes {
    /// Created (submitted).
    pub ctime: i64,
    /// Entered its current queue.
    pub qtime: i64,
    /// Last modified.
    pub mtime: i64,
    /// Became eligible to run.
    pub etime: i64,
    /// Started.
    pub stime: Option<i64>,
    /// Ended (obituary received).
    pub obittime: Option<i64>,
}

/// OpenPBS's `eligible_time`: seconds the job could have run but waited (queued, in a started
/// queue, not held, not over a per-user run limit, not before its `-a` time). The scheduling
/// pass starts and stops the clock (`state/eligible.rs`); leaving `Q` stops it
/// (`ServerState::transition`). Stored with the job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EligibleClock {
    /// Seconds accrued up to the last stop.
    pub accrued: i64,
    /// When the clock last started, while it runs.
    pub since: Option<i64>,
}

impl EligibleClock {
    /// Seconds accrued by `now`.
    pub fn seconds(&self, now: i64) -> i64 {
        self.accrued.saturating_add(self.since.map_or(0, |since| now.saturating_sub(since).max(0)))
    }

    /// Starts the clock at `now` (no change if it runs). Returns whether it changed.
    pub fn start(&mut self, now: i64) -> bool {
        if self.since.is_some() {
            return false;
        }
        self.since = Some(now);
        true
    }

    /// Stops the clock at `now`, keeping what it accrued (no change if stopped). Returns
    /// whether it changed.
    pub fn stop(&mut self, now: i64) -> bool {
        if self.since.is_none() {
            return false;
        }
        self.accrued = self.seconds(now);
        self.since = None;
        true
    }
}

/// One node's share of a running job: cpu slot indices, GPU indices and memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeShare {
    pub node: CompactString,
    /// Cpu slot indices on the node (`exec_host` `node/0*2` = slots 0 and 1).
    pub slots: Vec<u32>,
    pub gpus: Vec<u32>,
    pub mem_bytes: u64,
    /// Lines in `PBS_NODEFILE` for this share.
    pub mpiprocs: u32,
    /// An MPS share (percent) of the single GPU in `gpus`; `None` for whole GPUs.
    pub mps: Option<u8>,
    /// Host-level consumable site resources held here, by name, in counted units
    /// (`ResourceDef::amount`); what `resources_assigned.NAME` of the node adds up.
    pub amounts: Vec<(String, u64)>,
}

/// A job as the server keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: JobId,
    /// Shared by an array's parent and all its subjobs (10,000 subjobs, one script).
    pub spec: Arc<JobSpec>,
    /// Parsed from `spec.resources`; recomputed when loading from the store. Shared like the
    /// spec (an array's subjobs, equal submissions: `spec_share.rs`); changed by replacing it.
    pub request: Arc<ResourceRequest>,
    /// Invariant: written only in `state/` (by `ServerState::transition`, and by the
    /// constructors below for a job not yet in the state); read with [`Job::state`].
    pub(in crate::state) state: JobState,
    /// Owner's user name and uid, from the submitting connection's credentials. The short
    /// strings here are `CompactString`s: a name up to 24 bytes needs no allocation per job.
    pub owner: CompactString,
    pub owner_uid: u32,
    /// Execution group (the owner's primary group).
    pub group: CompactString,
    pub queue: CompactString,
    /// `Hold_Types`: `n` or the set hold letters in OpenPBS order (`s`, `o`, `u`, `p`).
    pub hold_types: CompactString,
    pub times: JobTimes,
    /// Where the job runs, mother superior first; empty unless running or exiting.
    pub exec: Vec<NodeShare>,
    pub session_id: Option<i32>,
    pub exit_status: Option<i32>,
    pub used: ResourcesUsed,
    pub run_count: u32,
    /// Scheduler or server comment shown by `qstat -f` / `-s`.
    pub comment: Option<String>,
    /// Resolved `Output_Path` / `Error_Path` (`host:/abs/path`), their text shared between
    /// jobs where it can be (`std_path.rs`).
    pub output_path: StdPath,
    pub error_path: StdPath,
    /// A qdel arrived while running: the end is recorded as a deletion.
    pub delete_requested: bool,
    /// A qrerun is pending: the end report of the killed run queues the job again.
    pub rerun_requested: bool,
    /// OpenPBS `sched_preempted`: when the scheduler last preempted the job (kept after it
    /// resumes or is requeued).
    pub sched_preempted: Option<i64>,
    /// The job is active but its node shares are given back (`exec` kept): suspended by the
    /// scheduler (OpenPBS substate 45, resumed by the scheduler on the same shares), or
    /// preempted by requeue and being killed. Only `state/preempt.rs` sets it; releasing the
    /// job's nodes clears it.
    pub shares_released: bool,
    /// Size of the script this job keeps in the store (0 for a subjob, which runs its
    /// parent's). The script itself is not in memory: `spec.script` is empty once the job is
    /// stored, and the store reads it when the job starts (`shared.rs`).
    pub script_bytes: u64,
    /// Size of the rest of the spec (its stored JSON), which the state keeps in memory; 0 for
    /// a subjob sharing its parent's. Not stored: recomputed at load and after qalter.
    pub spec_bytes: u64,
    /// `eligible_time`.
    pub eligible: EligibleClock,
}

impl Job {
    /// A job in its first state (`Q` or `W` for a submission, the stored one when loading),
    /// with no owner, queue, times or run yet: the caller fills in the public fields.
    pub fn new(id: JobId, spec: Arc<JobSpec>, request: ResourceRequest, state: JobState) -> Job {
        Job {
            id,
            spec,
            request: Arc::new(request),
            state,
            owner: CompactString::default(),
            owner_uid: 0,
            group: CompactString::default(),
            queue: CompactString::default(),
            hold_types: CompactString::const_new("n"),
            times: JobTimes::default(),
            exec: Vec::new(),
            session_id: None,
            exit_status: None,
            used: ResourcesUsed::default(),
            run_count: 0,
            comment: None,
            output_path: StdPath::default(),
            error_path: StdPath::default(),
            delete_requested: false,
            rerun_requested: false,
            sched_preempted: None,
            shares_released: false,
            script_bytes: 0,
            spec_bytes: 0,
            eligible: EligibleClock::default(),
        }
    }

    /// The job's state (`qstat`'s `job_state`). Outside `state/` it can only be read: only
    /// `ServerState::transition` changes it.
    ///
    /// ```
    /// fn read(job: &server::state::Job) -> job::JobState {
    ///     job.state()
    /// }
    /// ```
    ///
    /// ```compile_fail
    /// fn bypass(job: &mut server::state::Job) {
    ///     job.state = job::JobState::Finished;
    /// }
    /// ```
    pub fn state(&self) -> JobState {
        self.state
    }

    /// Applies `event` to a job being built that is not in the state yet (a submission held
    /// for its dependencies). Takes the job by value, so it is no way around
    /// `ServerState::transition` for a job the state holds.
    pub fn with_event(mut self, event: JobEvent) -> Result<Job, IllegalTransition> {
        self.state = self.state.apply(event)?;
        Ok(self)
    }

    /// Takes every field of `altered` (a qalter'd copy of this job) but the state, which only
    /// `ServerState::transition` changes.
    pub(super) fn replace_keeping_state(&mut self, altered: Job) {
        let state = self.state;
        *self = altered;
        self.state = state;
    }

    /// Sets the state of a job built by a test (not one in a `ServerState`, whose indexes
    /// would go out of step).
    #[cfg(test)]
    pub fn set_state_for_test(&mut self, state: JobState) {
        self.state = state;
    }

    /// What the job costs its owner against `max_user_kept_bytes`: its script (in the store)
    /// and the rest of its spec (in memory).
    pub fn kept_bytes(&self) -> u64 {
        self.script_bytes.saturating_add(self.spec_bytes)
    }

    /// The size of a spec as the state keeps it, without its script (the caller takes the
    /// script out first): the length of its JSON, an upper bound of what it holds.
    pub fn spec_size(spec: &JobSpec) -> u64 {
        serde_json::to_vec(spec).map_or(u64::MAX, |text| text.len() as u64)
    }
    /// OpenPBS's `eligible_time` by `now`, seconds.
    pub fn eligible_seconds(&self, now: i64) -> i64 {
        self.eligible.seconds(now)
    }

    /// Forgets the run a requeue ended (after its notice): no allocation, no start.
    pub fn forget_run(&mut self) {
        self.exec.clear();
        self.times.stime = None;
    }

    /// Whether a mom's report about this job (start, end) belongs to its current run: it comes
    /// from the current run's mother superior and names this run. A report without a run
    /// number (`run_count` 0: a mom that predates them) is judged by its node alone.
    pub fn is_current_run_of(&self, node: &str, run_count: u32) -> bool {
        self.state.is_active()
            && self.exec.first().is_some_and(|mother| mother.node == node)
            && (run_count == 0 || run_count == self.run_count)
    }

    /// Whether a sister's report (`ShareRefused`) belongs to this job's current run there.
    pub fn is_current_share_of(&self, node: &str, run_count: u32) -> bool {
        self.state.is_active()
            && self.exec.iter().skip(1).any(|share| share.node == node)
            && (run_count == 0 || run_count == self.run_count)
    }

    /// `exec_host` in OpenPBS form: `node1/0*2+node2/0*2` (`*N` omitted when N is 1).
    pub fn exec_host(&self) -> Option<String> {
        if self.exec.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .exec
            .iter()
            .map(|share| {
                let first = share.slots.first().copied().unwrap_or(0);
                match share.slots.len() {
                    0 | 1 => format!("{}/{}", share.node, first),
                    n => format!("{}/{}*{}", share.node, first, n),
                }
            })
            .collect();
        Some(parts.join("+"))
    }

    /// `exec_host` in TORQUE form: `node1/0-1+node2/0,2-3` (slot ranges).
    pub fn exec_host_torque(&self) -> Option<String> {
        if self.exec.is_empty() {
            return None;
        }
        let parts: Vec<String> =
            self.exec.iter().map(|share| format!("{}/{}", share.node, slot_ranges(&share.slots))).collect();
        Some(parts.join("+"))
    }

    /// `exec_vnode` in OpenPBS form: `(node1:ncpus=2:ngpus=1)+(node2:ncpus=2)`.
    pub fn exec_vnode(&self) -> Option<String> {
        if self.exec.is_empty() {
            return None;
        }
        let parts: Vec<String> = self
            .exec
            .iter()
            .map(|share| {
                let mut text = format!("({}:ncpus={}", share.node, share.slots.len());
                if share.mem_bytes > 0 {
                    text.push_str(&format!(":mem={}kb", share.mem_bytes / 1024));
                }
                if !share.gpus.is_empty() {
                    text.push_str(&format!(":ngpus={}", share.gpus.len()));
                }
                if let Some(percent) = share.mps {
                    text.push_str(&format!(":mps={percent}"));
                }
                text.push(')');
                text
            })
            .collect();
        Some(parts.join("+"))
    }
}

/// Slot indices as TORQUE writes them: sorted, runs as `a-b`, joined by commas (`0,2-5`).
fn slot_ranges(slots: &[u32]) -> String {
    let mut sorted = slots.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for slot in sorted {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == slot => *end = slot,
            _ => runs.push((slot, slot)),
        }
    }
    let texts: Vec<String> = runs
        .iter()
        .map(|(start, end)| if start == end { start.to_string() } else { format!("{start}-{end}") })
        .collect();
    if texts.is_empty() {
        "0".to_string()
    } else {
        texts.join(",")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn slot_ranges_are_torque_style() {
        assert_eq!(super::slot_ranges(&[0, 1]), "0-1");
        assert_eq!(super::slot_ranges(&[5, 0, 2, 3, 4]), "0,2-5");
        assert_eq!(super::slot_ranges(&[3]), "3");
        assert_eq!(super::slot_ranges(&[]), "0");
    }
}
