//! The jobs this node can start tasks for, and their live tasks: a share is added when the
//! job starts here (mother superior) or joins (sister) and ended when the job ends, is killed
//! or the node's share is over. Ending a share kills every task session it still has and
//! returns what its tasks used.
//!
//! A sister's share may be added after the mother superior has started the job (the server
//! sends each mom its part on its own connection): a peer's request for a job not here yet
//! waits for it a while ([`TaskBoard::launch_within`]) before it is refused.
//!
//! Owns: [`TaskBoard`], the per-job task numbers (`PBS_TASKNUM`), the bound on live tasks per
//! job ([`MAX_TASKS_PER_JOB`]) and the tasks' summed usage. Must not: check requests
//! (check.rs) or start processes (spawn.rs); it only signals sessions it recorded.

use crate::exec::kill;
use nix::sys::signal::Signal;
use proto::mom::{JobLaunch, ResourcesUsed};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Live tasks one job may have on one node at once.
pub const MAX_TASKS_PER_JOB: usize = 1024;

/// How long ending a share waits for its killed tasks to be reaped (their usage counted).
const END_PATIENCE: Duration = Duration::from_secs(3);

/// One job's share of this node.
#[derive(Debug)]
struct Share {
    launch: Arc<JobLaunch>,
    /// What its GPUs here add to its environment (gpu/board.rs).
    gpu_variables: Arc<Vec<(String, String)>>,
    /// The next `PBS_TASKNUM` (the mother superior's top shell is 1).
    next_task: u32,
    /// Live tasks: number to session id (0 until started).
    live: BTreeMap<u32, i32>,
    used: ResourcesUsed,
}

/// A task admitted for a job: its number and what starting it needs.
#[derive(Debug, Clone)]
pub struct Admitted {
    pub task: u32,
    pub launch: Arc<JobLaunch>,
    pub gpu_variables: Arc<Vec<(String, String)>>,
}

/// The board, shared by the daemon (shares come and go) and the task server.
#[derive(Debug, Default)]
pub struct TaskBoard {
    jobs: Mutex<HashMap<String, Share>>,
    /// Woken at each share added.
    added: tokio::sync::Notify,
}

impl TaskBoard {
    pub fn new() -> Arc<TaskBoard> {
        Arc::new(TaskBoard::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Share>> {
        pbslog::fatal::lock_or_exit(&self.jobs, "task board")
    }

    /// The job now runs here: as its mother superior (`mother`) or as a sister.
    pub fn add(&self, launch: &JobLaunch, gpu_variables: Vec<(String, String)>, mother: bool) {
        let share = Share {
            launch: Arc::new(launch.clone()),
            gpu_variables: Arc::new(gpu_variables),
            next_task: if mother { 2 } else { 1 },
            live: BTreeMap::new(),
            used: ResourcesUsed::default(),
        };
        self.lock().insert(launch.job_id.clone(), share);
        self.added.notify_waiters();
    }

    /// The job's launch, when it runs here.
    pub fn launch(&self, job_id: &str) -> Option<Arc<JobLaunch>> {
        self.lock().get(job_id).map(|share| share.launch.clone())
    }

    /// The job's launch, waiting up to `patience` for its share to be added.
    pub async fn launch_within(&self, job_id: &str, patience: Duration) -> Option<Arc<JobLaunch>> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            // Listening before looking: a share added in between still wakes this.
            let added = self.added.notified();
            tokio::pin!(added);
            added.as_mut().enable();
            if let Some(launch) = self.launch(job_id) {
                return Some(launch);
            }
            tokio::time::timeout_at(deadline, added).await.ok()?;
        }
    }

    /// Gives the job's next task number, unless it has [`MAX_TASKS_PER_JOB`] live tasks or
    /// no longer runs here.
    pub fn admit(&self, job_id: &str) -> Result<Admitted, AdmitError> {
        let mut jobs = self.lock();
        let share = jobs.get_mut(job_id).ok_or(AdmitError::Gone)?;
        if share.live.len() >= MAX_TASKS_PER_JOB {
            return Err(AdmitError::Full(MAX_TASKS_PER_JOB));
        }
        let task = share.next_task;
        share.next_task += 1;
        share.live.insert(task, 0);
        Ok(Admitted { task, launch: share.launch.clone(), gpu_variables: share.gpu_variables.clone() })
    }

    /// Records the session of a started task. False when the job ended meanwhile (the caller
    /// kills the task).
    pub fn started(&self, job_id: &str, task: u32, sid: i32) -> bool {
        match self.lock().get_mut(job_id).and_then(|share| share.live.get_mut(&task)) {
            Some(slot) => {
                *slot = sid;
                true
            }
            None => false,
        }
    }

    /// A task ended (or never started): it leaves the live set and its usage is counted.
    pub fn ended(&self, job_id: &str, task: u32, used: ResourcesUsed) {
        if let Some(share) = self.lock().get_mut(job_id) {
            share.live.remove(&task);
            share.used.cput_secs += used.cput_secs;
            share.used.mem_kb += used.mem_kb;
        }
    }

    /// Ends the job's share here: kills every live task's session, waits (bounded) for them
    /// to be reaped, forgets the job and returns what its tasks used. `None` when it does not
    /// run here.
    pub async fn end(&self, job_id: &str) -> Option<ResourcesUsed> {
        let sessions: Vec<i32> = self.lock().get(job_id)?.live.values().copied().filter(|sid| *sid > 1).collect();
        for sid in &sessions {
            kill::signal_session(*sid, Signal::SIGKILL);
        }
        let deadline = tokio::time::Instant::now() + END_PATIENCE;
        while tokio::time::Instant::now() < deadline && self.lock().get(job_id).is_some_and(|s| !s.live.is_empty()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let share = self.lock().remove(job_id)?;
        if !share.live.is_empty() {
            tracing::warn!(job_id, tasks = share.live.len(), "tasks not reaped in time; their usage is not counted");
        }
        Some(share.used)
    }
}

/// Why a task was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AdmitError {
    #[error("the job ended")]
    Gone,
    #[error("the job already has {0} tasks on this node")]
    Full(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn numbers_bound_and_usage() {
        let board = TaskBoard::new();
        let launch = crate::test_support::launch("1.s", Vec::new());
        board.add(&launch, Vec::new(), true);
        board.add(&crate::test_support::launch("2.s", Vec::new()), Vec::new(), false);
        assert_eq!(board.admit("1.s").unwrap().task, 2, "the top shell is task 1");
        assert_eq!(board.admit("2.s").unwrap().task, 1, "a sister counts from 1");
        assert_eq!(board.admit("3.s").unwrap_err(), AdmitError::Gone);
        for _ in 1..MAX_TASKS_PER_JOB {
            board.admit("1.s").unwrap();
        }
        assert_eq!(board.admit("1.s").unwrap_err(), AdmitError::Full(MAX_TASKS_PER_JOB));
        board.ended("1.s", 2, ResourcesUsed { cput_secs: 3, mem_kb: 10, ..Default::default() });
        assert_eq!(board.admit("1.s").unwrap().task, 2 + MAX_TASKS_PER_JOB as u32, "one slot freed");
        for task in 3..2 + MAX_TASKS_PER_JOB as u32 + 1 {
            board.ended("1.s", task, ResourcesUsed { cput_secs: 0, mem_kb: 5, ..Default::default() });
        }
        let used = board.end("1.s").await.unwrap();
        assert_eq!((used.cput_secs, used.mem_kb), (3, 10 + 5 * MAX_TASKS_PER_JOB as u64), "summed");
        assert!(board.end("1.s").await.is_none(), "ended once");
        assert!(!board.started("1.s", 9, 5), "a task of an ended job is killed by its starter");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_may_wait_for_its_share_a_bounded_time() {
        let board = TaskBoard::new();
        let waiting = tokio::spawn({
            let board = Arc::clone(&board);
            async move { board.launch_within("1.s", Duration::from_secs(10)).await.map(|launch| launch.job_id.clone()) }
        });
        tokio::time::sleep(Duration::from_secs(3)).await;
        board.add(&crate::test_support::launch("2.s", Vec::new()), Vec::new(), false);
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(!waiting.is_finished(), "another job's share is not this one");
        board.add(&crate::test_support::launch("1.s", Vec::new()), Vec::new(), false);
        let started = tokio::time::Instant::now();
        assert_eq!(waiting.await.unwrap().as_deref(), Some("1.s"));
        assert_eq!(started.elapsed(), Duration::ZERO, "found as soon as it was added");
        let before = tokio::time::Instant::now();
        assert!(board.launch_within("3.s", Duration::from_secs(10)).await.is_none());
        assert_eq!(before.elapsed(), Duration::from_secs(10), "refused after the patience");
    }
}
