//! The mom's main loop: applies server messages to the job table, carries out the resulting
//! actions (claim a job's GPUs on this node, start a job task, make and remove a sister
//! share's cgroup, forward a kill, rerun or signal), turns finished jobs into obits (their GPUs released first), and on shutdown
//! optionally kills every job.
//!
//! Owns: the job tasks and their kill channels. Must not: read or write the socket (link.rs)
//! or touch processes directly (exec/).

use crate::exec::{self, ExecContext, JobOutcome, KillRequest};
use crate::gpu::GpuBoard;
use crate::jobs::{Action, JobTable};
use crate::link::lock;
use crate::task::TaskServer;
use proto::exit_status::{JOB_EXEC_FAIL2, JOB_EXEC_RETRY};
use proto::mom::{JobLaunch, JobObit, MomToServer, ServerToMom};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinSet};
use tracing::Instrument;

/// The daemon's state.
pub struct Daemon {
    context: Arc<ExecContext>,
    table: Arc<Mutex<JobTable>>,
    outbound: mpsc::UnboundedSender<MomToServer>,
    kill_senders: HashMap<String, mpsc::UnboundedSender<KillRequest>>,
    tasks: JoinSet<(String, JobOutcome)>,
    /// Each task's job and run number (`JobLaunch::run_count`, returned in its reports).
    task_jobs: HashMap<tokio::task::Id, (String, u32)>,
    gpus: Arc<GpuBoard>,
    /// The task server: the jobs this node serves tasks for (added at start and join, ended
    /// with the job or the share).
    task_server: Arc<TaskServer>,
}

impl Daemon {
    /// A daemon with no jobs.
    pub fn new(
        context: Arc<ExecContext>,
        table: Arc<Mutex<JobTable>>,
        outbound: mpsc::UnboundedSender<MomToServer>,
        gpus: Arc<GpuBoard>,
        task_server: Arc<TaskServer>,
    ) -> Daemon {
        // Orphans of jobs come to the mom, so a job's end knows when none is left.
        exec::children::become_subreaper();
        Daemon {
            context,
            table,
            outbound,
            kill_senders: HashMap::new(),
            tasks: JoinSet::new(),
            task_jobs: HashMap::new(),
            gpus,
            task_server,
        }
    }

    /// Serves until `shutdown` completes or the link is gone. With `kill_jobs`, every running
    /// job is then killed and awaited (bounded by `kill_patience`).
    pub async fn run(
        mut self,
        mut inbound: mpsc::UnboundedReceiver<ServerToMom>,
        shutdown: impl Future<Output = ()>,
        kill_jobs: bool,
        kill_patience: Duration,
    ) -> Vec<String> {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                message = inbound.recv() => match message {
                    Some(message) => self.on_server_message(message),
                    None => break,
                },
                Some(done) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => self.on_task_done(done),
            }
        }
        if !kill_jobs {
            return Vec::new();
        }
        let killed = lock(&self.table).mother_jobs();
        self.kill_all(kill_patience).await;
        killed
    }

    fn on_server_message(&mut self, message: ServerToMom) {
        tracing::debug!(message = message_name(&message), "from server");
        let actions = lock(&self.table).on_message(message);
        for action in actions {
            match action {
                Action::Start(launch) => self.start(launch),
                Action::Join(launch) => self.join(&launch),
                Action::Leave { job_id } => self.leave(job_id),
                Action::Kill { job_id } => self.request(&job_id, KillRequest::Kill),
                Action::Rerun { job_id } => self.request(&job_id, KillRequest::Rerun),
                Action::Signal { job_id, signal, suspend } => {
                    self.request(&job_id, KillRequest::Signal { number: signal, suspend })
                }
                Action::Walltime { job_id, walltime } => self.request(&job_id, KillRequest::Walltime(walltime)),
            }
        }
    }

    fn start(&mut self, launch: Box<JobLaunch>) {
        let (job_id, run_count) = (launch.job_id.clone(), launch.run_count);
        let (kill_sender, kills) = mpsc::unbounded_channel();
        self.kill_senders.insert(job_id.clone(), kill_sender);
        let span = tracing::info_span!("job", node = %self.context.node, job_id = %job_id);
        let gpu_claim = span.in_scope(|| self.gpus.claim(&launch, &self.context.node));
        if let Ok(variables) = &gpu_claim {
            self.task_server.board.add(&launch, variables.clone(), true);
        }
        let (context, outbound, id) = (self.context.clone(), self.outbound.clone(), job_id.clone());
        let (tasks, ending, table) = (self.task_server.clone(), launch.clone(), self.table.clone());
        let task = async move {
            let gpu_variables = match gpu_claim {
                Ok(variables) => variables,
                Err(reason) => {
                    tracing::warn!("job not started, the server requeues it: {reason}");
                    let ncpus = exec::env::total_slots(&launch);
                    return (id, JobOutcome::not_started(JOB_EXEC_RETRY, ncpus));
                }
            };
            let on_started = |session_id| {
                // In the table first, so every later registration reports it again.
                lock(&table).on_job_started(&id, session_id, run_count);
                let _ = outbound.send(MomToServer::JobStarted { job_id: id.clone(), session_id, run_count });
            };
            let mut outcome = exec::run_job(launch, context, gpu_variables, kills, on_started).await;
            // The job's tasks on every node end with it; their use counts as the job's.
            let used = tasks.end_job(&ending).await;
            outcome.used.cput_secs += used.cput_secs;
            outcome.used.mem_kb += used.mem_kb;
            outcome.used.vmem_kb += used.vmem_kb;
            (id, outcome)
        };
        let handle = self.tasks.spawn(task.instrument(span));
        self.task_jobs.insert(handle.id(), (job_id, run_count));
    }

    /// Claims a sister share's GPUs and makes its cgroup here (for the tasks started on this
    /// node); when either fails (a cgroup only with `--cgroups required`) the server hears why
    /// and requeues the job.
    fn join(&mut self, launch: &JobLaunch) {
        let claimed = self.gpus.claim(launch, &self.context.node);
        let contained = claimed.and_then(|variables| {
            exec::contain::create(launch, &self.context).map(|_| variables).map_err(|e| e.to_string())
        });
        if let Ok(variables) = &contained {
            let files = exec::files::JobFiles::new(&self.context.spool_dir, &self.context.tmpdir_base, launch);
            if let Err(error) = exec::files::write_nodefile(&files.nodefile, launch) {
                tracing::warn!(job_id = %launch.job_id, "cannot write the job's node file here: {error}");
            }
            if let Err(error) = self.sister_tmpdir(&files, launch) {
                tracing::warn!(job_id = %launch.job_id, "cannot create the job's TMPDIR here: {error}");
            }
            // Last: a task request waiting for the share (task/board.rs) finds its files made.
            self.task_server.board.add(launch, variables.clone(), false);
        }
        if let Err(reason) = contained {
            tracing::warn!(job_id = %launch.job_id, "sister share refused: {reason}");
            let (job_id, run_count) = (launch.job_id.clone(), launch.run_count);
            let _ = self.outbound.send(MomToServer::ShareRefused { job_id, reason, run_count });
        }
    }

    /// Creates the job's TMPDIR on this sister as its owner (tasks started here name it).
    fn sister_tmpdir(&self, files: &exec::files::JobFiles, launch: &JobLaunch) -> std::io::Result<()> {
        if !exec::files::job_id_is_safe(&launch.job_id) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "the job id cannot name a directory"));
        }
        // Its owner and group only: no process is started here.
        let owner = exec::user::resolve_for(&launch.user, launch.group.as_deref(), exec::user::Groups::Unused)
            .map_err(|error| std::io::Error::other(error.to_string()))?;
        files.create_sister_tmpdir(&owner, self.context.mom_uid == 0)
    }

    /// The node's share of a job is over: its GPUs drain, its tasks here are killed, then
    /// everything left in its cgroup (which is removed), its node file and TMPDIR go.
    fn leave(&mut self, job_id: String) {
        self.gpus.release(&job_id);
        let nodefile = self.context.spool_dir.join("aux").join(&job_id);
        let tmpdir = self.context.tmpdir_base.join(format!("pbs.{job_id}"));
        let cgroup = self.context.cgroups.as_ref().and_then(|cgroups| cgroups.job(&job_id).ok());
        let span = tracing::info_span!("job", node = %self.context.node, job_id = %job_id);
        let tasks = self.task_server.clone();
        tokio::spawn(async move {
            tasks.board.end(&job_id).await;
            if let Some(cgroup) = cgroup {
                let emptied = tokio::task::spawn_blocking(move || {
                    let _entered = span.enter();
                    let empty = cgroup.kill_all(Duration::ZERO);
                    cgroup.remove();
                    empty
                });
                if !emptied.await.unwrap_or(false) {
                    tracing::error!(job_id, "processes of the job's share survived SIGKILL");
                }
            }
            // Orphans of its tasks that ended were adopted by the mom (exec/children.rs): reaped.
            // The files go on the blocking pool too: a TMPDIR may hold a job's whole scratch.
            let _ = tokio::task::spawn_blocking(move || {
                exec::children::adopted_orphans();
                if exec::files::job_id_is_safe(&job_id) {
                    let _ = std::fs::remove_file(nodefile);
                    exec::files::remove_any(&tmpdir);
                }
            })
            .await;
        });
    }

    /// Hands a kill, rerun or signal request to the job's task.
    fn request(&mut self, job_id: &str, request: KillRequest) {
        match self.kill_senders.get(job_id) {
            Some(sender) => {
                let _ = sender.send(request);
            }
            None => tracing::warn!(job_id, ?request, "request for a job without a task"),
        }
    }

    fn on_task_done(&mut self, done: Result<(tokio::task::Id, (String, JobOutcome)), JoinError>) {
        let (job_id, run_count, outcome) = match done {
            Ok((task, (job_id, outcome))) => {
                let run_count = self.task_jobs.remove(&task).map_or(0, |(_, run_count)| run_count);
                (job_id, run_count, outcome)
            }
            Err(err) => {
                let Some((job_id, run_count)) = self.task_jobs.remove(&err.id()) else { return };
                tracing::error!(job_id, "job task failed: {err}");
                (job_id, run_count, JobOutcome::not_started(JOB_EXEC_FAIL2, 0))
            }
        };
        self.kill_senders.remove(&job_id);
        // Its processes are gone (the session was reaped): its GPUs drain and come back.
        self.gpus.release(&job_id);
        let obit = JobObit {
            job_id,
            exit_status: outcome.exit_status,
            session_id: outcome.session_id,
            used: outcome.used,
            undelivered: outcome.undelivered,
            run_count,
            stagein_failed: outcome.stagein_failed,
            mem_exceeded: outcome.mem_exceeded,
        };
        // Invariant: the obit is in the table before it is sent, so a reconnect resends it.
        lock(&self.table).on_job_ended(obit.clone());
        let _ = self.outbound.send(MomToServer::JobEnded(obit));
    }

    /// Kills every running job and waits for their tasks (ends included) up to `patience`.
    async fn kill_all(&mut self, patience: Duration) {
        let running: Vec<String> = self.kill_senders.keys().cloned().collect();
        for job_id in &running {
            self.request(job_id, KillRequest::Kill);
        }
        let deadline = tokio::time::Instant::now() + patience;
        while !self.tasks.is_empty() {
            match tokio::time::timeout_at(deadline, self.tasks.join_next_with_id()).await {
                Ok(Some(done)) => self.on_task_done(done),
                Ok(None) => break,
                Err(_) => {
                    tracing::warn!(left = self.tasks.len(), "jobs still ending at shutdown");
                    break;
                }
            }
        }
    }
}

fn message_name(message: &ServerToMom) -> &'static str {
    match message {
        ServerToMom::Registered { .. } => "Registered",
        ServerToMom::Refused { .. } => "Refused",
        ServerToMom::RunJob(_) => "RunJob",
        ServerToMom::JoinJob(_) => "JoinJob",
        ServerToMom::KillJob { .. } => "KillJob",
        ServerToMom::EndJob { .. } => "EndJob",
        ServerToMom::ObitAck { .. } => "ObitAck",
        ServerToMom::RerunJob { .. } => "RerunJob",
        ServerToMom::SignalJob { .. } => "SignalJob",
        ServerToMom::SetWalltime { .. } => "SetWalltime",
        ServerToMom::Heartbeat => "Heartbeat",
    }
}
