//! A task on this node, from its admitted request to `Exited`: the owner's identity, the
//! environment (env.rs), the start (spawn.rs), then the relay on one connection (a launcher's,
//! or a peer mom's that relays for one): `Stdin`/`StdinEof`/`Signal` frames in, `Stdout`/
//! `Stderr` frames out (at most `MAX_CHUNK` bytes each), `Exited` last with the exit code or
//! 128 + signal. A connection that goes away before `Exited` kills the task's session.
//!
//! Owns: the relay and the task's life. Must not: check requests (check.rs) or know how the
//! connection was authenticated.

use super::board::{AdmitError, TaskBoard};
use super::check::Refusal;
use super::env::{task_environment, TaskPlace};
use super::spawn::{self, TaskSpawn};
use crate::exec::env::EnvInput;
use crate::exec::files::JobFiles;
use crate::exec::identity::Identity;
use crate::exec::kill;
use crate::exec::user;
use crate::exec::ExecContext;
use nix::sys::signal::Signal;
use proto::task::{TaskCommand, TaskInput, TaskOutput, TaskRequest, MAX_CHUNK};
use proto::transport::{FrameReader, FrameWriter};
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

/// How long output is still relayed after the task exited while something it left holds
/// its pipes open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);

/// Starts `request` here as task of node `node_num` and relays it to its end; a task that
/// cannot start is refused (`TaskOutput::Refused`, and the refusal returned for the log).
pub async fn run(
    board: &TaskBoard,
    context: Arc<ExecContext>,
    request: TaskRequest,
    node_num: u32,
    reader: FrameReader,
    mut writer: FrameWriter,
) -> Result<(), Refusal> {
    let (job_id, admitted) = (request.job_id.clone(), board.admit(&request.job_id));
    let started = match admitted {
        Ok(admitted) => {
            let task = admitted.task;
            // Off the runtime's threads: the user database, the cgroup and the fork, whose
            // parent waits until the child has entered its directory and run `execve`.
            let start = move || start(&context, &admitted, &request, node_num);
            let started = match tokio::task::spawn_blocking(start).await {
                Ok(started) => started,
                Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
                Err(_) => Err(Refusal::Start("the mom is shutting down".into())),
            };
            started.map(|spawned| (task, spawned)).inspect_err(|_| board.ended(&job_id, task, Default::default()))
        }
        Err(AdmitError::Gone) => Err(Refusal::NotHere(job_id.clone())),
        Err(AdmitError::Full(limit)) => Err(Refusal::TooManyTasks { job_id: job_id.clone(), limit }),
    };
    let (task, spawned) = match started {
        Ok(started) => started,
        Err(refusal) => {
            let _ = writer.write(&TaskOutput::Refused { message: refusal.to_string() }).await;
            return Err(refusal);
        }
    };
    let pid = spawned.pid;
    if !board.started(&job_id, task, pid) {
        kill::signal_session(pid, Signal::SIGKILL);
    }
    let reaper = tokio::spawn(spawn::wait(pid));
    let _ = writer.write(&TaskOutput::Started { task, node_num }).await;
    let (status, used) = relay(spawned, reader, &mut writer, reaper).await;
    board.ended(&job_id, task, used);
    if let Some(status) = status {
        let _ = writer.write(&TaskOutput::Exited { status }).await;
    }
    Ok(())
}

/// Resolves the owner, builds the environment and spawns.
fn start(
    context: &ExecContext,
    admitted: &super::board::Admitted,
    request: &TaskRequest,
    node_num: u32,
) -> Result<spawn::Spawned, Refusal> {
    let launch = &admitted.launch;
    let refuse = |error: &dyn std::fmt::Display| Refusal::Start(error.to_string());
    let groups = user::Groups::for_mom(context.mom_uid);
    let owner = user::resolve_for(&launch.user, launch.group.as_deref(), groups).map_err(|e| refuse(&e))?;
    user::may_run(context.mom_uid, &owner, launch.root_allowed).map_err(|e| refuse(&e))?;
    let files = JobFiles::new(&context.spool_dir, &context.tmpdir_base, launch);
    let job = EnvInput {
        launch,
        user: &owner,
        node: &context.node,
        nodefile: &files.nodefile,
        gpufile: files.gpufile.as_deref(),
        tmpdir: &files.tmpdir,
        term: None,
        gpu_variables: &admitted.gpu_variables,
        defaults: &context.job_defaults,
        launcher: &context.launcher,
        master_port: None,
    };
    let env = task_environment(&job, TaskPlace { task: admitted.task, node_num }, request);
    let argv = match &request.command {
        TaskCommand::Argv(argv) => argv.clone(),
        TaskCommand::Shell(line) => vec![owner.login_shell.display().to_string(), "-c".into(), line.clone()],
    };
    let dirs = request.cwd.iter().map(Into::into).chain([owner.home.clone()]).collect();
    let (stdout, stderr) = if request.output {
        (Stdio::piped(), Stdio::piped())
    } else {
        (job_file(&files.stdout), job_file(&files.stderr))
    };
    // Kept open until the spawn returns: the child writes its pid through them.
    let cgroup_fds = job_cgroup_fds(context, &launch.job_id)?;
    let spec = TaskSpawn {
        argv,
        env,
        dirs,
        identity: (context.mom_uid == 0).then(|| Identity::of(&owner)),
        join_fds: cgroup_fds.iter().map(std::os::fd::AsRawFd::as_raw_fd).collect(),
        stdin: if request.stdin { Stdio::piped() } else { Stdio::null() },
        stdout,
        stderr,
    };
    spawn::spawn(spec).map_err(|error| Refusal::Start(format!("{}: {error}", request_program(request))))
}

/// The `cgroup.procs` descriptors of the job's cgroup here. A job without one (cgroups off, or
/// `auto` and it could not be made) runs its tasks uncontained like its shell; with `required`
/// a task that cannot join is refused.
fn job_cgroup_fds(context: &ExecContext, job_id: &str) -> Result<Vec<std::os::fd::OwnedFd>, Refusal> {
    let Some(cgroups) = &context.cgroups else { return Ok(Vec::new()) };
    let opened =
        cgroups.job(job_id).map_err(|e| e.to_string()).and_then(|cg| cg.attach_fds().map_err(|e| e.to_string()));
    match opened {
        Ok(fds) => Ok(fds),
        Err(reason) if cgroups.required() => Err(Refusal::Start(format!("cannot join the job's cgroup: {reason}"))),
        Err(reason) => {
            tracing::warn!(job_id, "task runs outside the job's cgroup: {reason}");
            Ok(Vec::new())
        }
    }
}

/// The job's spool output file on this node, appended to (the mother superior's; a sister
/// has none and the task's output is discarded, as OpenPBS does without a shared spool).
fn job_file(path: &std::path::Path) -> Stdio {
    match std::fs::OpenOptions::new().append(true).open(path) {
        Ok(file) => Stdio::from(file),
        Err(_) => Stdio::null(),
    }
}

fn request_program(request: &TaskRequest) -> String {
    match &request.command {
        TaskCommand::Argv(argv) => argv.first().cloned().unwrap_or_default(),
        TaskCommand::Shell(_) => "the user's shell".into(),
    }
}

/// Relays until the task is reaped. Returns its status (`None` when the connection went
/// away and the task was killed) and usage.
async fn relay(
    spawned: spawn::Spawned,
    mut reader: FrameReader,
    writer: &mut FrameWriter,
    mut reaper: tokio::task::JoinHandle<std::io::Result<(i32, proto::mom::ResourcesUsed)>>,
) -> (Option<i32>, proto::mom::ResourcesUsed) {
    let pid = spawned.pid;
    let stdin = spawned.stdin.and_then(|pipe| pipe::Sender::from_owned_fd(OwnedFd::from(pipe)).ok());
    let mut stdout = spawned.stdout.and_then(|pipe| pipe::Receiver::from_owned_fd(OwnedFd::from(pipe)).ok());
    let mut stderr = spawned.stderr.and_then(|pipe| pipe::Receiver::from_owned_fd(OwnedFd::from(pipe)).ok());
    // The launcher's frames are read, and the task's stdin written, on a task of their own:
    // a read cut short by select! would lose a frame, and a task that writes its output
    // before it reads its input must not stop the output's relay while its stdin is full.
    let (gone_sender, mut gone) = tokio::sync::oneshot::channel::<()>();
    let input_task = tokio::spawn(async move {
        let mut stdin = stdin;
        while let Ok(input) = reader.read::<TaskInput>().await {
            match input {
                TaskInput::Stdin(bytes) => {
                    if let Some(pipe) = &mut stdin {
                        if pipe.write_all(&bytes).await.is_err() {
                            stdin = None;
                        }
                    }
                }
                TaskInput::StdinEof => stdin = None,
                TaskInput::Signal(number) => signal_group(pid, number),
            }
        }
        drop(gone_sender);
    });
    let (mut out_buf, mut err_buf) = (vec![0u8; MAX_CHUNK], vec![0u8; MAX_CHUNK]);
    let (mut connected, mut killed) = (true, false);
    let mut reaped = None;
    let mut drain_until = None;
    loop {
        if reaped.is_some() && (stdout.is_none() && stderr.is_none() || !connected) {
            break;
        }
        let drain = async {
            match drain_until {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = &mut gone, if connected => connected = false,
            chunk = read_chunk(&mut stdout, &mut out_buf) => {
                match chunk {
                    Some(n) => connected &= writer.write(&proto::task::TaskOutput::Stdout(out_buf[..n].to_vec())).await.is_ok(),
                    None => stdout = None,
                }
            }
            chunk = read_chunk(&mut stderr, &mut err_buf) => {
                match chunk {
                    Some(n) => connected &= writer.write(&proto::task::TaskOutput::Stderr(err_buf[..n].to_vec())).await.is_ok(),
                    None => stderr = None,
                }
            }
            done = &mut reaper, if reaped.is_none() => {
                reaped = Some(done.ok().and_then(Result::ok).unwrap_or((255, Default::default())));
                drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            () = drain => break,
        }
        if !connected && reaped.is_none() && !killed {
            tracing::info!(pid, "launcher gone: task killed");
            kill::signal_session(pid, Signal::SIGKILL);
            killed = true;
        }
    }
    input_task.abort();
    if reaped.is_none() {
        reaped = Some(reaper.await.ok().and_then(Result::ok).unwrap_or((255, Default::default())));
    }
    let (status, used) = reaped.unwrap_or_default();
    (connected.then_some(status), used)
}

/// Reads up to a chunk from `pipe`; `None` at its end (or when there is none: never ready).
async fn read_chunk<R: AsyncRead + Unpin>(pipe: &mut Option<R>, buffer: &mut [u8]) -> Option<usize> {
    match pipe {
        Some(pipe) => match pipe.read(buffer).await {
            Ok(0) | Err(_) => None,
            Ok(n) => Some(n),
        },
        None => std::future::pending().await,
    }
}

/// Forwards a launcher's signal to the task's process group; numbers that are no signal are
/// ignored.
fn signal_group(pid: i32, number: i32) {
    if let Ok(signal) = Signal::try_from(number) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::task::TaskOutput;

    /// A task that writes all its output (more than a pipe holds) before it reads its input
    /// ends while its launcher sends that input: the output is relayed while the task's stdin
    /// is full.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn output_is_relayed_while_the_tasks_stdin_is_full() {
        let identity = proto::seal::Identity { uid: 0, gid: 0 };
        let (mom_end, launcher_end) = tokio::net::UnixStream::pair().unwrap();
        let (read, write) = proto::transport::split_unix(mom_end);
        let (reader, mut writer) = (
            FrameReader::plain(read, identity).with_limits(super::super::peer::TASK_LIMITS),
            FrameWriter::new(write, None),
        );
        let (read, write) = proto::transport::split_unix(launcher_end);
        let mut launcher_reader = FrameReader::plain(read, identity).with_limits(super::super::peer::TASK_LIMITS);
        let mut launcher_writer = FrameWriter::new(write, None);
        let spawned = spawn::spawn(TaskSpawn {
            argv: ["/bin/sh", "-c", "head -c 1000000 /dev/zero; wc -c"].map(String::from).to_vec(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            dirs: vec!["/".into()],
            identity: None,
            join_fds: Vec::new(),
            stdin: Stdio::piped(),
            stdout: Stdio::piped(),
            stderr: Stdio::null(),
        })
        .unwrap();
        let reaper = tokio::spawn(spawn::wait(spawned.pid));
        let relayed = tokio::spawn(async move { relay(spawned, reader, &mut writer, reaper).await });
        const CHUNKS: usize = 16;
        tokio::spawn(async move {
            for _ in 0..CHUNKS {
                launcher_writer.write(&TaskInput::Stdin(vec![b'x'; MAX_CHUNK])).await?;
            }
            launcher_writer.write(&TaskInput::StdinEof).await?;
            // Kept open until the relay is done: its end would read as the launcher gone.
            std::future::pending::<()>().await;
            Ok::<_, proto::transport::TransportError>(())
        });
        let output = tokio::time::timeout(Duration::from_secs(30), async {
            let mut output = Vec::new();
            while let Ok(TaskOutput::Stdout(bytes)) = launcher_reader.read::<TaskOutput>().await {
                output.extend(bytes);
            }
            output
        })
        .await
        .expect("the relay and the task waited for each other");
        assert_eq!(output.len(), 1_000_000 + format!("{}\n", CHUNKS * MAX_CHUNK).len());
        assert!(output.ends_with(format!("{}\n", CHUNKS * MAX_CHUNK).as_bytes()));
        assert_eq!(relayed.await.unwrap().0, Some(0));
    }
}
