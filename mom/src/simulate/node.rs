//! One simulated node's daemon: the real mom's job table decides on each server message
//! (`jobs.rs`), as in `daemon.rs`, but a start is a clock (`job.rs`) instead of a process; it
//! reports the start at once and the end (an obit kept in the table until acknowledged) as a
//! real mom does. A sister share holds nothing here: joins and leaves are only recorded.
//!
//! Owns: the simulated jobs of one node and their request channels. Must not: fork, signal,
//! touch files, or read or write the socket (the real `link.rs` does, one per node).

use super::job::{self, SimEnd};
use super::script::work_millis;
use crate::exec::KillRequest;
use crate::jobs::{Action, JobTable};
use crate::link::lock;
use proto::mom::{JobLaunch, JobObit, MomToServer, ResourcesUsed, ServerToMom};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// What a finished job task returns.
struct Finished {
    job_id: String,
    run_count: u32,
    session_id: i32,
    ncpus: u32,
    end: SimEnd,
}

/// The state of one simulated node.
pub struct SimNode {
    table: Arc<Mutex<JobTable>>,
    outbound: mpsc::UnboundedSender<MomToServer>,
    requests: HashMap<String, mpsc::UnboundedSender<KillRequest>>,
    tasks: JoinSet<Finished>,
    /// The next fake session id (the server shows it; nothing is signalled through it).
    next_session: i32,
}

impl SimNode {
    /// A node without jobs, sharing `table` with its link.
    pub fn new(table: Arc<Mutex<JobTable>>, outbound: mpsc::UnboundedSender<MomToServer>) -> SimNode {
        SimNode { table, outbound, requests: HashMap::new(), tasks: JoinSet::new(), next_session: 1 }
    }

    /// Serves the link's messages until it is gone (its jobs vanish with the node).
    pub async fn serve(mut self, mut inbound: mpsc::UnboundedReceiver<ServerToMom>) {
        loop {
            tokio::select! {
                message = inbound.recv() => match message {
                    Some(message) => self.on_server_message(message),
                    None => return,
                },
                Some(done) = self.tasks.join_next(), if !self.tasks.is_empty() => match done {
                    Ok(finished) => self.on_job_done(finished),
                    Err(error) => tracing::error!("simulated job task failed: {error}"),
                },
            }
        }
    }

    fn on_server_message(&mut self, message: ServerToMom) {
        let actions = lock(&self.table).on_message(message);
        for action in actions {
            match action {
                Action::Start(launch) => self.start(&launch),
                // A sister share of a simulated job uses nothing.
                Action::Join(_) | Action::Leave { .. } => {}
                Action::Kill { job_id } => self.request(&job_id, KillRequest::Kill),
                Action::Rerun { job_id } => self.request(&job_id, KillRequest::Rerun),
                Action::Signal { job_id, signal, suspend } => {
                    self.request(&job_id, KillRequest::Signal { number: signal, suspend })
                }
                Action::Walltime { job_id, walltime } => self.request(&job_id, KillRequest::Walltime(walltime)),
            }
        }
    }

    /// Starts a simulated job and reports its start at once (table first, as `daemon.rs`).
    fn start(&mut self, launch: &JobLaunch) {
        let (job_id, run_count) = (launch.job_id.clone(), launch.run_count);
        let work = Duration::from_millis(work_millis(&launch.script, launch.walltime));
        let ncpus = crate::exec::env::total_slots(launch);
        let (sender, receiver) = mpsc::unbounded_channel();
        self.requests.insert(job_id.clone(), sender);
        let session_id = self.next_session;
        self.next_session = self.next_session.checked_add(1).unwrap_or(1);
        lock(&self.table).on_job_started(&job_id, session_id, run_count);
        let _ = self.outbound.send(MomToServer::JobStarted { job_id: job_id.clone(), session_id, run_count });
        let walltime = launch.walltime;
        self.tasks.spawn(async move {
            let end = job::run(work, walltime, receiver).await;
            Finished { job_id, run_count, session_id, ncpus, end }
        });
    }

    fn request(&mut self, job_id: &str, request: KillRequest) {
        match self.requests.get(job_id) {
            Some(sender) => {
                let _ = sender.send(request);
            }
            None => tracing::warn!(job_id, ?request, "request for a simulated job that is not running"),
        }
    }

    /// Reports an end; in the table before it is sent, so a reconnect resends it.
    fn on_job_done(&mut self, Finished { job_id, run_count, session_id, ncpus, end }: Finished) {
        self.requests.remove(&job_id);
        let used = ResourcesUsed { walltime_secs: end.walltime.as_secs(), ncpus, ..Default::default() };
        let obit = JobObit { job_id, exit_status: end.exit_status, session_id, used, run_count, ..Default::default() };
        lock(&self.table).on_job_ended(obit.clone());
        let _ = self.outbound.send(MomToServer::JobEnded(obit));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(id: &str, script: &str) -> Box<JobLaunch> {
        let mut launch = crate::test_support::launch(id, Vec::new());
        launch.script = script.to_string();
        launch
    }

    #[tokio::test(start_paused = true)]
    async fn a_job_starts_then_ends_with_zero_until_acknowledged() {
        let table = Arc::new(Mutex::new(JobTable::new()));
        let (outbound, mut sent) = mpsc::unbounded_channel();
        let (inbound, received) = mpsc::unbounded_channel();
        tokio::spawn(SimNode::new(table.clone(), outbound).serve(received));
        inbound.send(ServerToMom::RunJob(launch("1.s", "sleep 3\n"))).unwrap();
        let started = tokio::time::Instant::now();
        let first = sent.recv().await.unwrap();
        assert_eq!(first, MomToServer::JobStarted { job_id: "1.s".into(), session_id: 1, run_count: 1 });
        let Some(MomToServer::JobEnded(obit)) = sent.recv().await else { panic!("no end") };
        assert_eq!(tokio::time::Instant::now() - started, Duration::from_secs(3));
        assert_eq!((obit.job_id.as_str(), obit.exit_status, obit.session_id), ("1.s", 0, 1));
        assert_eq!((obit.used.walltime_secs, obit.run_count), (3, 1));
        assert_eq!(lock(&table).unacked_obits(), vec![obit]);
        inbound.send(ServerToMom::ObitAck { job_id: "1.s".into() }).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert!(lock(&table).registered_jobs().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_kill_ends_a_job_early() {
        let table = Arc::new(Mutex::new(JobTable::new()));
        let (outbound, mut sent) = mpsc::unbounded_channel();
        let (inbound, received) = mpsc::unbounded_channel();
        tokio::spawn(SimNode::new(table, outbound).serve(received));
        inbound.send(ServerToMom::RunJob(launch("2.s", "sleep 100\n"))).unwrap();
        sent.recv().await.unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        inbound.send(ServerToMom::KillJob { job_id: "2.s".into() }).unwrap();
        let Some(MomToServer::JobEnded(obit)) = sent.recv().await else { panic!("no end") };
        assert_eq!((obit.exit_status, obit.used.walltime_secs), (job::SIGTERMED, 2));
    }
}
