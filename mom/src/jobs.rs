//! The mom's job table: which jobs run here as mother superior, which hold a sister share, and
//! which ended with an obit the server has not acknowledged yet.
//!
//! Owns: the decisions taken on each server message ([`JobTable::on_message`] returns
//! [`Action`]s). Pure: no I/O, no processes, no channels; the daemon carries actions out.
//! Invariant: a job is in at most one of "running" and "unacknowledged obit".

use proto::mom::{JobLaunch, JobObit, ServerToMom};
use std::collections::BTreeMap;

/// What this node holds of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// This node runs the job's top shell.
    Mother,
    /// This node holds a share for a job whose mother superior is elsewhere.
    Sister,
}

/// Something the daemon must do after a server message.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Start the job here as mother superior.
    Start(Box<JobLaunch>),
    /// Hold this node's share of the job as a sister (claim its GPUs here).
    Join(Box<JobLaunch>),
    /// The sister share is over (release its GPUs here).
    Leave { job_id: String },
    /// Kill the running job's processes (it then ends with an obit as usual).
    Kill { job_id: String },
    /// Kill the running job and discard its output (qrerun); it ends with an obit as usual.
    Rerun { job_id: String },
    /// Send a signal to the running job's session (qsig); `suspend`: the server's
    /// suspend/resume, which also pauses/resumes the walltime clock.
    Signal { job_id: String, signal: i32, suspend: bool },
    /// Change the running job's walltime limit (qalter by a manager).
    Walltime { job_id: String, walltime: Option<u64> },
}

/// The table. Created empty at start; the mom does not (yet) recover jobs across its own
/// restarts.
#[derive(Debug, Default)]
pub struct JobTable {
    running: BTreeMap<String, Share>,
    unacked: BTreeMap<String, JobObit>,
    /// The session id and run of each mother-superior job that started, while it runs.
    started: BTreeMap<String, (i32, u32)>,
}

impl JobTable {
    /// An empty table.
    pub fn new() -> JobTable {
        JobTable::default()
    }

    /// Applies one server message and says what to do about it.
    pub fn on_message(&mut self, message: ServerToMom) -> Vec<Action> {
        match message {
            ServerToMom::Registered { stale_jobs, .. } => {
                stale_jobs.iter().filter_map(|id| self.on_stale(id)).collect()
            }
            ServerToMom::Refused { .. } | ServerToMom::Heartbeat => Vec::new(),
            ServerToMom::RunJob(launch) => self.on_run(launch).into_iter().collect(),
            ServerToMom::JoinJob(launch) => self.on_join(launch).into_iter().collect(),
            ServerToMom::KillJob { job_id } => self.kill_if_mother(&job_id).into_iter().collect(),
            ServerToMom::EndJob { job_id } => self.on_end(&job_id).into_iter().collect(),
            ServerToMom::ObitAck { job_id } => {
                self.unacked.remove(&job_id);
                Vec::new()
            }
            // Sisters hold no processes of a job: only the mother superior acts.
            ServerToMom::RerunJob { job_id } => {
                self.kill_if_mother(&job_id).map(|_| Action::Rerun { job_id }).into_iter().collect()
            }
            ServerToMom::SignalJob { job_id, signal, suspend } => {
                self.kill_if_mother(&job_id).map(|_| Action::Signal { job_id, signal, suspend }).into_iter().collect()
            }
            ServerToMom::SetWalltime { job_id, walltime } => {
                self.kill_if_mother(&job_id).map(|_| Action::Walltime { job_id, walltime }).into_iter().collect()
            }
        }
    }

    /// Records that a mother-superior job ended: it leaves the running set and its obit is
    /// kept until [`ServerToMom::ObitAck`].
    pub fn on_job_ended(&mut self, obit: JobObit) {
        self.running.remove(&obit.job_id);
        self.started.remove(&obit.job_id);
        self.unacked.insert(obit.job_id.clone(), obit);
    }

    /// Ids to list in `Registration::jobs`: jobs running here or holding a share, and jobs
    /// that ended but whose end the server has not acknowledged (their obit is resent right
    /// after registering; without them the server would take the job for lost and requeue it).
    pub fn registered_jobs(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.running.keys().chain(self.unacked.keys()).cloned().collect();
        ids.sort();
        ids.dedup();
        ids
    }

    /// Records that a mother-superior job's top shell started as session `session_id` (run
    /// `run_count`); reported again after every registration ([`JobTable::started_jobs`]).
    pub fn on_job_started(&mut self, job_id: &str, session_id: i32, run_count: u32) {
        if self.running.get(job_id) == Some(&Share::Mother) {
            self.started.insert(job_id.to_string(), (session_id, run_count));
        }
    }

    /// `(job id, session id, run)` of the running jobs that started, to report again after a
    /// registration: the server (maybe another head) may never have committed the first report.
    pub fn started_jobs(&self) -> Vec<(String, i32, u32)> {
        self.started.iter().map(|(id, (session, run))| (id.clone(), *session, *run)).collect()
    }

    /// Obits to resend after a reconnect, in job id order.
    pub fn unacked_obits(&self) -> Vec<JobObit> {
        self.unacked.values().cloned().collect()
    }

    /// What this node holds of `job_id`, if it is running here.
    pub fn share(&self, job_id: &str) -> Option<Share> {
        self.running.get(job_id).copied()
    }

    /// Ids of the jobs running here (mother superior or sister), with their share.
    pub fn running_jobs(&self) -> Vec<(String, Share)> {
        self.running.iter().map(|(id, share)| (id.clone(), *share)).collect()
    }

    /// Jobs that ended here whose end the server has not acknowledged yet.
    pub fn unacked_count(&self) -> usize {
        self.unacked.len()
    }

    /// Ids of the mother-superior jobs still running.
    pub fn mother_jobs(&self) -> Vec<String> {
        let mothers = self.running.iter().filter(|(_, share)| **share == Share::Mother);
        mothers.map(|(id, _)| id.clone()).collect()
    }

    fn on_run(&mut self, launch: Box<JobLaunch>) -> Option<Action> {
        let known = self.running.contains_key(&launch.job_id) || self.unacked.contains_key(&launch.job_id);
        if known {
            tracing::warn!(job_id = %launch.job_id, "RunJob for a job this mom already has: ignored");
            return None;
        }
        self.running.insert(launch.job_id.clone(), Share::Mother);
        Some(Action::Start(launch))
    }

    fn on_join(&mut self, launch: Box<JobLaunch>) -> Option<Action> {
        if self.running.contains_key(&launch.job_id) {
            return None;
        }
        self.running.insert(launch.job_id.clone(), Share::Sister);
        Some(Action::Join(launch))
    }

    /// A stale job (the server does not think it runs here): kill it or drop the share.
    fn on_stale(&mut self, job_id: &str) -> Option<Action> {
        tracing::info!(job_id, "server reports the job as stale here");
        self.on_end(job_id)
    }

    /// The job is over as far as the server is concerned. A sister drops its share; a
    /// mother superior that still runs it kills it, so nothing outlives the job.
    fn on_end(&mut self, job_id: &str) -> Option<Action> {
        match self.running.get(job_id) {
            Some(Share::Sister) => {
                self.running.remove(job_id);
                Some(Action::Leave { job_id: job_id.to_string() })
            }
            Some(Share::Mother) => self.kill_if_mother(job_id),
            None => None,
        }
    }

    fn kill_if_mother(&self, job_id: &str) -> Option<Action> {
        let is_mother = self.running.get(job_id) == Some(&Share::Mother);
        is_mother.then(|| Action::Kill { job_id: job_id.to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(id: &str) -> Box<JobLaunch> {
        crate::test_support::launch(id, Vec::new())
    }

    fn obit(id: &str) -> JobObit {
        JobObit { job_id: id.into(), exit_status: 0, session_id: 5, ..Default::default() }
    }

    #[test]
    fn run_starts_once() {
        let mut table = JobTable::new();
        assert_eq!(table.on_message(ServerToMom::RunJob(launch("1.s"))), vec![Action::Start(launch("1.s"))]);
        assert!(table.on_message(ServerToMom::RunJob(launch("1.s"))).is_empty());
        assert_eq!(table.registered_jobs(), vec!["1.s"]);
        assert_eq!(table.share("1.s"), Some(Share::Mother));
    }

    #[test]
    fn kill_only_for_mothers() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        table.on_message(ServerToMom::JoinJob(launch("2.s")));
        let kill = |id: &str| ServerToMom::KillJob { job_id: id.into() };
        assert_eq!(table.on_message(kill("1.s")), vec![Action::Kill { job_id: "1.s".into() }]);
        assert!(table.on_message(kill("2.s")).is_empty());
        assert!(table.on_message(kill("3.s")).is_empty());
        assert_eq!(table.registered_jobs(), vec!["1.s", "2.s"]);
    }

    #[test]
    fn rerun_signal_and_walltime_only_for_mothers() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        table.on_message(ServerToMom::JoinJob(launch("2.s")));
        let rerun = |id: &str| ServerToMom::RerunJob { job_id: id.into() };
        let signal = |id: &str| ServerToMom::SignalJob { job_id: id.into(), signal: 10, suspend: false };
        assert_eq!(table.on_message(rerun("1.s")), vec![Action::Rerun { job_id: "1.s".into() }]);
        assert_eq!(
            table.on_message(signal("1.s")),
            vec![Action::Signal { job_id: "1.s".into(), signal: 10, suspend: false }]
        );
        let walltime = |id: &str| ServerToMom::SetWalltime { job_id: id.into(), walltime: Some(5) };
        assert_eq!(
            table.on_message(walltime("1.s")),
            vec![Action::Walltime { job_id: "1.s".into(), walltime: Some(5) }]
        );
        for id in ["2.s", "3.s"] {
            assert!(table.on_message(rerun(id)).is_empty());
            assert!(table.on_message(signal(id)).is_empty());
            assert!(table.on_message(walltime(id)).is_empty());
        }
    }

    #[test]
    fn end_drops_sister_and_kills_mother() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        assert_eq!(table.on_message(ServerToMom::JoinJob(launch("2.s"))), vec![Action::Join(launch("2.s"))]);
        assert!(table.on_message(ServerToMom::JoinJob(launch("2.s"))).is_empty(), "joined once");
        let leave = table.on_message(ServerToMom::EndJob { job_id: "2.s".into() });
        assert_eq!(leave, vec![Action::Leave { job_id: "2.s".into() }]);
        assert_eq!(table.registered_jobs(), vec!["1.s"]);
        let actions = table.on_message(ServerToMom::EndJob { job_id: "1.s".into() });
        assert_eq!(actions, vec![Action::Kill { job_id: "1.s".into() }]);
    }

    #[test]
    fn starts_of_running_mother_jobs_are_kept_to_report_again() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        table.on_message(ServerToMom::JoinJob(launch("2.s")));
        table.on_job_started("1.s", 41, 1);
        table.on_job_started("2.s", 42, 1);
        table.on_job_started("9.s", 49, 1);
        assert_eq!(table.started_jobs(), vec![("1.s".to_string(), 41, 1)], "mother superior jobs it runs only");
        table.on_job_ended(obit("1.s"));
        assert!(table.started_jobs().is_empty(), "the end is reported instead");
    }

    #[test]
    fn obit_kept_until_ack() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        table.on_job_ended(obit("1.s"));
        assert_eq!(table.registered_jobs(), vec!["1.s"], "an unacknowledged end is still reported");
        assert_eq!(table.unacked_obits(), vec![obit("1.s")]);
        assert!(table.on_message(ServerToMom::RunJob(launch("1.s"))).is_empty(), "duplicate run while obit pending");
        table.on_message(ServerToMom::ObitAck { job_id: "1.s".into() });
        assert!(table.unacked_obits().is_empty());
        assert!(table.registered_jobs().is_empty());
    }

    #[test]
    fn stale_jobs_are_killed_or_dropped() {
        let mut table = JobTable::new();
        table.on_message(ServerToMom::RunJob(launch("1.s")));
        table.on_message(ServerToMom::JoinJob(launch("2.s")));
        table.on_message(ServerToMom::RunJob(launch("3.s")));
        let registered = ServerToMom::Registered {
            server_name: "s".into(),
            stale_jobs: vec!["1.s".into(), "2.s".into(), "9.s".into()],
        };
        let actions = table.on_message(registered);
        assert_eq!(actions, vec![Action::Kill { job_id: "1.s".into() }, Action::Leave { job_id: "2.s".into() }]);
        assert_eq!(table.registered_jobs(), vec!["1.s", "3.s"]);
        assert_eq!(table.mother_jobs(), vec!["1.s", "3.s"]);
    }
}
