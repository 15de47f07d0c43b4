//! One job on the mother superior, from launch to outcome: set up (identity, files, stage-in, a
//! `qsub --pin` checkout, for an interactive job the waiting qsub and a pty, spawn), supervise
//! (`supervise.rs`: kill requests, walltime, an interactive qsub hanging up), finish (leftover
//! processes, the last terminal output and exit status to qsub, the checkout, delivery of a batch
//! job's output, clean-up).
//!
//! Owns: the order of those steps and the exit status chosen. Must not: panic or return
//! early without an outcome: a job that cannot start still ends, with a negative status.

use super::clock::WalltimeClock;
use super::contain;
use super::deliver::deliver_and_clean;
use super::env::{job_environment, total_slots, EnvInput};
use super::files::{job_id_is_safe, JobFiles, Streams};
use super::interactive::{self, Terminal};
use super::kill;
use super::pin;
use super::reap::{self, Reaped};
use super::spawn::{spawn_shell, ShellSpec, ShellStdio};
use super::stage;
use super::supervise::{wait_hangup, KillRequest, Supervision};
use super::user::{self, JobUser};
use super::{ExecContext, StartError, DEFAULT_UMASK};
use crate::cgroup::JobCgroup;
use nix::sys::signal::Signal;
use proto::exit_status::{JOB_EXEC_FAIL1, JOB_EXEC_FAIL2, JOB_EXEC_KILL_WALLTIME, JOB_EXEC_RERUN};
use proto::mom::{JobLaunch, ResourcesUsed, Undelivered};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// How long leftover processes get to die after SIGKILL before the mom gives up on them.
const LEFTOVER_PATIENCE: Duration = Duration::from_secs(10);

/// How a job ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutcome {
    /// PBS exit status (pbs-reference 7.2).
    pub exit_status: i32,
    /// 0 when the job never started.
    pub session_id: i32,
    /// `resources_used.*` of the top shell.
    pub used: ResourcesUsed,
    /// Output that could not be delivered, and where it is kept.
    pub undelivered: Vec<Undelivered>,
    /// Why its `-W stagein` failed (the job did not start).
    pub stagein_failed: Option<String>,
    /// The kernel OOM-killed a process in the job's cgroup.
    pub mem_exceeded: bool,
}

impl JobOutcome {
    /// The outcome of a job whose shell never ran.
    pub fn not_started(exit_status: i32, ncpus: u32) -> JobOutcome {
        JobOutcome {
            exit_status,
            session_id: 0,
            used: ResourcesUsed { ncpus, ..Default::default() },
            undelivered: Vec::new(),
            stagein_failed: None,
            mem_exceeded: false,
        }
    }
}

/// A job that could not start, and what became of the output it had already written.
struct NotStarted {
    error: StartError,
    undelivered: Vec<Undelivered>,
}

impl From<StartError> for NotStarted {
    fn from(error: StartError) -> NotStarted {
        NotStarted { error, undelivered: Vec::new() }
    }
}

/// A started job.
struct Started {
    sid: i32,
    user: JobUser,
    files: JobFiles,
    at: Instant,
    /// An interactive job's relay to its qsub.
    terminal: Option<Terminal>,
    /// Fires when an interactive job's qsub hangs up.
    hangup: Option<oneshot::Receiver<()>>,
    /// Its cgroup here (`None`: uncontained).
    cgroup: Option<JobCgroup>,
}

/// How supervision ended.
struct Ending {
    reaped: Option<Reaped>,
    walltime_exceeded: bool,
    /// Killed for a rerun: the output is discarded, not delivered.
    rerun: bool,
    /// Time run, suspensions excluded.
    walltime_used: Duration,
}

/// Runs `launch` to its end. `gpu_variables` are what its GPUs here add to its environment
/// (gpu/board.rs); `on_started` gets the session id once the shell runs; `kills` delivers kill
/// requests. Never fails: failures become negative exit statuses.
pub async fn run_job(
    launch: Box<JobLaunch>,
    context: Arc<ExecContext>,
    gpu_variables: Vec<(String, String)>,
    kills: mpsc::UnboundedReceiver<KillRequest>,
    on_started: impl FnOnce(i32),
) -> JobOutcome {
    let launch: Arc<JobLaunch> = Arc::from(launch);
    let ncpus = total_slots(&launch);
    let setup = {
        let (launch, context) = (launch.clone(), context.clone());
        tokio::task::spawn_blocking(move || start(&launch, &context, &gpu_variables)).await
    };
    let mut started = match setup {
        Ok(Ok(started)) => started,
        Ok(Err(NotStarted { error, undelivered })) => {
            tracing::error!(exit_status = error.exit_status(), "job cannot start: {error}");
            let stagein_failed = match &error {
                StartError::StageIn(reason) => Some(reason.clone()),
                _ => None,
            };
            return JobOutcome { undelivered, stagein_failed, ..JobOutcome::not_started(error.exit_status(), ncpus) };
        }
        Err(err) => {
            tracing::error!("job set-up crashed: {err}");
            return JobOutcome::not_started(JOB_EXEC_FAIL1, ncpus);
        }
    };
    tracing::info!(session_id = started.sid, user = %started.user.name, "job started");
    on_started(started.sid);
    let hangup = started.hangup.take();
    let ending = supervise(&launch, &context, &started, kills, hangup).await;
    finish(launch, context, started, ending, ncpus).await
}

/// Resolves the user, writes the files and spawns the shell (blocking).
fn start(launch: &JobLaunch, context: &ExecContext, gpu_variables: &[(String, String)]) -> Result<Started, NotStarted> {
    if !job_id_is_safe(&launch.job_id) {
        return Err(StartError::BadJobId(launch.job_id.clone()).into());
    }
    let user = user::resolve_for(&launch.user, launch.group.as_deref(), user::Groups::for_mom(context.mom_uid))?;
    user::may_run(context.mom_uid, &user, launch.root_allowed)?;
    let shell = launch.shell.as_ref().map(PathBuf::from).unwrap_or_else(|| user.login_shell.clone());
    if !is_executable_file(&shell) {
        return Err(StartError::ShellMissing(shell).into());
    }
    let cgroup = contain::create(launch, context)?;
    let started = set_up(launch, context, user, &shell, gpu_variables, cgroup.as_ref());
    match (started, cgroup) {
        (Ok(started), cgroup) => Ok(Started { cgroup, ..started }),
        (Err(not_started), cgroup) => {
            if let Some(cgroup) = cgroup {
                cgroup.remove();
            }
            Err(not_started)
        }
    }
}

/// Writes the files, stages in and spawns the shell (in `cgroup` when there is one).
fn set_up(
    launch: &JobLaunch,
    context: &ExecContext,
    user: JobUser,
    shell: &Path,
    gpu_variables: &[(String, String)],
    cgroup: Option<&JobCgroup>,
) -> Result<Started, NotStarted> {
    let files = JobFiles::new(&context.spool_dir, &context.tmpdir_base, launch);
    let streams = match files.create(launch, &user, context.mom_uid == 0) {
        Ok(streams) => streams,
        Err(err) => {
            files.remove();
            return Err(StartError::Files(err).into());
        }
    };
    if launch.interactive.is_none() {
        if let Err(reason) = stage::before_job(launch, &context.node, &as_user(launch, context, &user)) {
            files.remove();
            return Err(StartError::StageIn(reason).into());
        }
    }
    if let Some(dir) = code_dir(launch, context, &user, &files) {
        if let Err(reason) = pin::check_out(launch, &dir, &as_user(launch, context, &user)) {
            // The job's error file says why it never ran.
            if let Err(err) = files.append_to_stderr(&format!("=>> PBS: job not started: {reason}")) {
                tracing::warn!("cannot write to the job's stderr: {err}");
            }
            let undelivered = deliver_and_clean(launch, context, &user, &files);
            stage::discard(launch, &as_user(launch, context, &user));
            return Err(NotStarted { error: StartError::Pin(reason), undelivered });
        }
    }
    match spawn(launch, context, (&user, shell), (&files, streams), gpu_variables, cgroup) {
        Ok((sid, terminal)) => {
            if let Err(err) = context.sessions.started(&launch.job_id, sid) {
                tracing::warn!(sid, "cannot record the job's session: {err}");
            }
            let (terminal, hangup) = terminal.unzip();
            Ok(Started { sid, user, files, at: Instant::now(), terminal, hangup, cgroup: None })
        }
        Err(error @ StartError::Spawn { .. }) if launch.interactive.is_none() => {
            // The child wrote why (`PBS: chdir to ... failed`) on the job's stderr: deliver it.
            discard_checkout(launch, context, &user, &files);
            let undelivered = deliver_and_clean(launch, context, &user, &files);
            stage::discard(launch, &as_user(launch, context, &user));
            Err(NotStarted { error, undelivered })
        }
        Err(err) => {
            discard_checkout(launch, context, &user, &files);
            files.remove();
            if launch.interactive.is_none() {
                stage::discard(launch, &as_user(launch, context, &user));
            }
            Err(err.into())
        }
    }
}

/// An interactive job's relay to qsub, and what fires when qsub hangs up.
type Relay = (Terminal, oneshot::Receiver<()>);

/// Spawns the shell: a batch job's on its script and spool files; an interactive job's, once
/// its qsub accepted it, on a pty whose relay to qsub is returned.
fn spawn(
    launch: &JobLaunch,
    context: &ExecContext,
    (user, shell): (&JobUser, &Path),
    (files, streams): (&JobFiles, Option<Streams>),
    gpu_variables: &[(String, String)],
    cgroup: Option<&JobCgroup>,
) -> Result<(i32, Option<Relay>), StartError> {
    let (stdio, accepted) = match (&launch.interactive, streams) {
        (None, Some(streams)) => {
            let stdio =
                JobFiles::open_stdio(streams, &launch.script, &launch.script_args).map_err(StartError::Stdio)?;
            (ShellStdio::Batch(stdio), None)
        }
        (None, None) => {
            let missing = std::io::Error::other("the spool streams of a batch job were not made");
            return Err(StartError::Stdio(missing));
        }
        (Some(target), _) => {
            let peer = interactive::Peer { owner_uid: user.uid, munge_socket: context.munge_socket.as_deref() };
            let accepted = interactive::connect(launch, target, peer)?;
            let (master, slave) = interactive::open_pty(&accepted).map_err(StartError::Pty)?;
            if context.mom_uid == 0 {
                // The user's terminal, as login makes it.
                std::os::unix::fs::fchown(&slave, Some(user.uid), None).map_err(StartError::Pty)?;
            }
            (ShellStdio::Terminal(slave), Some((accepted, master)))
        }
    };
    let env = job_environment(&EnvInput {
        launch,
        user,
        node: &context.node,
        nodefile: &files.nodefile,
        gpufile: files.gpufile.as_deref(),
        tmpdir: &files.tmpdir,
        term: accepted.as_ref().and_then(|(accepted, _)| accepted.term.as_deref()),
        gpu_variables,
        defaults: &context.job_defaults,
        launcher: &context.launcher,
        master_port: super::launch_env::free_port(),
    });
    // A relative `-d` directory is taken from the home directory; without it a job of
    // `sandbox=PRIVATE` starts in its own directory (`PBS_JOBDIR`), others in the home.
    let private = stage::job_dir(launch, &user.home).filter(|_| launch.interactive.is_none());
    let job_dir = private.unwrap_or_else(|| user.home.clone());
    // A `qsub --pin` job starts in its checkout (`-d` still wins: the user named a directory).
    let code = code_dir(launch, context, user, files);
    let start = code.clone().unwrap_or_else(|| job_dir.clone());
    let start_dir = launch.init_dir.as_ref().map_or(start, |dir| user.home.join(dir));
    let mut env = env;
    env.push(("PBS_JOBDIR".to_string(), job_dir.display().to_string()));
    if let Some(code) = code {
        env.push(("MINIPBS_CODE_DIR".to_string(), code.display().to_string()));
    }
    let spec = ShellSpec {
        shell,
        user,
        change_identity: context.mom_uid == 0,
        env: &env,
        start_dir: &start_dir,
        umask: launch.exec.umask.unwrap_or(DEFAULT_UMASK),
        stdio,
        cgroup_fds: match cgroup {
            Some(cgroup) => {
                cgroup.attach_fds().map_err(|err| StartError::Cgroup(contain::attach_error(launch, err)))?
            }
            None => Vec::new(),
        },
    };
    let sid = spawn_shell(spec).map_err(|source| StartError::Spawn {
        shell: shell.to_path_buf(),
        dir: start_dir.clone(),
        source,
    })?;
    let Some((accepted, master)) = accepted else { return Ok((sid, None)) };
    match Terminal::start(accepted, master) {
        Ok(relay) => Ok((sid, Some(relay))),
        Err(err) => {
            // The shell runs but nobody can reach it: end it rather than leave it unattended,
            // and collect it.
            kill::signal_session(sid, Signal::SIGKILL);
            drop(reap::watch(sid));
            Err(StartError::Pty(err))
        }
    }
}

/// Waits for the top shell while serving kill, rerun, signal and walltime requests and the
/// walltime limit.
async fn supervise(
    launch: &JobLaunch,
    context: &ExecContext,
    started: &Started,
    mut kills: mpsc::UnboundedReceiver<KillRequest>,
    mut hangup: Option<oneshot::Receiver<()>>,
) -> Ending {
    let mut reaper = reap::watch(started.sid);
    let delay = if launch.kill_delay > 0 { Duration::from_secs(launch.kill_delay) } else { context.default_kill_delay };
    let mut job = Supervision {
        cgroup: started.cgroup.clone(),
        sid: started.sid,
        delay,
        clock: WalltimeClock::new(started.at, launch.walltime),
        killer: None,
        rerun: false,
        // A terminal's session leader ignores SIGTERM; it is hung up first, as a closed terminal is.
        hang_up: started.terminal.is_some(),
    };
    let walltime_timer = tokio::time::sleep_until(job.clock.deadline());
    tokio::pin!(walltime_timer);
    let (mut walltime_exceeded, mut kills_open) = (false, true);
    let reaped = loop {
        tokio::select! {
            result = &mut reaper => break result,
            request = kills.recv(), if kills_open => match request {
                Some(request) => {
                    job.on_request(request);
                    walltime_timer.as_mut().reset(job.clock.deadline());
                }
                None => kills_open = false,
            },
            gone = wait_hangup(&mut hangup), if hangup.is_some() => {
                hangup = None;
                if gone {
                    tracing::info!("the interactive qsub is gone: ending the job");
                    contain::start_kill(&mut job.killer, (job.sid, job.cgroup.clone()), job.delay, job.hang_up);
                }
            },
            () = &mut walltime_timer, if job.clock.limit.is_some() && !walltime_exceeded => {
                walltime_exceeded = true;
                let (used, limit) = (job.clock.used(Instant::now()).as_secs(), job.clock.limit.unwrap_or_default());
                tracing::info!(used, limit, "walltime exceeded: killing the job");
                notify(started, &format!("=>> PBS: job killed: walltime {used} exceeded limit {limit}"));
                contain::start_kill(&mut job.killer, (started.sid, job.cgroup.clone()), delay, job.hang_up);
            }
        }
    };
    if let Some(killer) = job.killer {
        killer.abort();
    }
    let reaped = match reaped {
        Ok(Ok(reaped)) => Some(reaped),
        Ok(Err(err)) => {
            tracing::error!("cannot collect the job's shell: {err}");
            None
        }
        Err(_) => None,
    };
    Ending { reaped, walltime_exceeded, rerun: job.rerun, walltime_used: job.clock.used(Instant::now()) }
}

/// Kills leftovers, delivers output, removes the files and computes the outcome.
async fn finish(
    launch: Arc<JobLaunch>,
    context: Arc<ExecContext>,
    mut started: Started,
    ending: Ending,
    ncpus: u32,
) -> JobOutcome {
    let sid = started.sid;
    let (empty, usage, oom) = contain::end(started.cgroup.take(), sid, LEFTOVER_PATIENCE).await;
    if !empty {
        tracing::error!(sid, "processes of the job survived SIGKILL");
    }
    if oom {
        tracing::info!("{}", contain::MEM_EXCEEDED);
        notify(&started, &format!("{}: the kernel killed a process of the job", contain::MEM_EXCEEDED));
    }
    let walltime_secs = ending.walltime_used.as_secs();
    let exit_status = match (&ending.reaped, ending.walltime_exceeded) {
        _ if ending.rerun => JOB_EXEC_RERUN,
        (_, true) => JOB_EXEC_KILL_WALLTIME,
        (Some(reaped), false) => reaped.exit_status,
        (None, false) => JOB_EXEC_FAIL2,
    };
    if let Some(terminal) = started.terminal.take() {
        if let Err(err) = tokio::task::spawn_blocking(move || terminal.finish(exit_status)).await {
            tracing::error!("closing the job's terminal crashed: {err}");
        }
    }
    let rerun = ending.rerun;
    let cleanup = tokio::task::spawn_blocking(move || {
        let undelivered = if rerun {
            // The aborted run's output is discarded (pbs-reference 10.4), its checkout too.
            discard_checkout(&launch, &context, &started.user, &started.files);
            started.files.remove();
            stage::discard(&launch, &as_user(&launch, &context, &started.user));
            Vec::new()
        } else {
            // Before delivery: a checkout in TMPDIR goes with it.
            if let Some(dir) = code_dir(&launch, &context, &started.user, &started.files) {
                let keep = job::pin::keeps_checkout(&launch.keep);
                pin::remove(&launch, &dir, &as_user(&launch, &context, &started.user), keep);
            }
            let mut undelivered = deliver_and_clean(&launch, &context, &started.user, &started.files);
            let as_user = as_user(&launch, &context, &started.user);
            for failure in stage::after_job(&launch, &context.node, &as_user) {
                tracing::warn!(local = %failure.local.display(), "stageout failed: {}", failure.error);
                let (spool, kept) = (failure.local.display().to_string(), failure.local.display().to_string());
                undelivered.push(Undelivered { spool, dest: failure.other, error: failure.error, kept });
            }
            undelivered
        };
        // Its files are gone: a restarted mom has nothing of it left to end.
        if let Err(err) = context.sessions.ended(&launch.job_id) {
            tracing::warn!("cannot record the job's end in the session log: {err}");
        }
        undelivered
    });
    let undelivered = cleanup.await.unwrap_or_else(|err| {
        tracing::error!("output delivery crashed: {err}");
        Vec::new()
    });
    let (cput_secs, mem_kb) = ending.reaped.map_or((0, 0), |r| (r.cput_secs, r.maxrss_kb));
    let used = contain::resources_used(cput_secs, mem_kb, usage, walltime_secs, ncpus);
    tracing::info!(exit_status, walltime_secs, "job ended");
    JobOutcome { exit_status, session_id: sid, used, undelivered, stagein_failed: None, mem_exceeded: oom }
}

/// Writes `line` where the job's owner reads it: its terminal, else its stderr file.
fn notify(started: &Started, line: &str) {
    match &started.terminal {
        Some(terminal) => terminal.notice(line),
        None => {
            if let Err(err) = started.files.append_to_stderr(line) {
                tracing::warn!("cannot write {line:?} to the job's stderr: {err}");
            }
        }
    }
}

/// Where a `qsub --pin` job's checkout is (`None`: not pinned).
fn code_dir(launch: &JobLaunch, context: &ExecContext, user: &JobUser, files: &JobFiles) -> Option<PathBuf> {
    pin::checkout_dir(launch, context.code_dir.as_deref(), &files.tmpdir, &user.home)
}

/// Removes a `qsub --pin` job's checkout whatever `-k` says (the job did not run, or reruns).
fn discard_checkout(launch: &JobLaunch, context: &ExecContext, user: &JobUser, files: &JobFiles) {
    if let Some(dir) = code_dir(launch, context, user, files) {
        pin::remove(launch, &dir, &as_user(launch, context, user), false);
    }
}

/// How the stage steps run commands as the job's user.
fn as_user<'a>(launch: &JobLaunch, context: &ExecContext, user: &'a JobUser) -> stage::AsUser<'a> {
    stage::AsUser { user, change_identity: context.mom_uid == 0, umask: launch.exec.umask.unwrap_or(DEFAULT_UMASK) }
}

fn is_executable_file(path: &Path) -> bool {
    path.is_absolute()
        && std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
