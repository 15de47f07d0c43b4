//! The `pbs_tmrsh` command (OpenPBS's name and command line; also installed as `pbs_rsh`): an
//! rsh/ssh stand-in for MPI launchers inside a job. `pbs_tmrsh host [-l user] [-n] command
//! [args]` asks the local mom to run the words joined by spaces with the job owner's shell on
//! `host`, one of the job's nodes, in the job, and relays stdin (not with `-n`), stdout,
//! stderr and SIGINT/SIGTERM/SIGHUP; it exits with the task's status (128 + signal when
//! killed) and 255 when it cannot run it, as ssh does. If pbs_tmrsh dies the mom kills the
//! task (docs/gpu-mpi.md 4.3, 4.4).
//!
//! Owns: the command's flow and texts. Must not know: the mom's side, processes of the task.

use crate::exit;
use crate::launch::{self, ContextError, JobContext};
use crate::nodefile;
use crate::pbs_tmrsh_args::{self, ArgsError, TmrshArgs};
use crate::task_conn::{self, Event, Sender, Task, TaskError};
use proto::task::{TaskCommand, TaskInput, TaskRequest, TASK_VERSION};
use std::io::Write;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

pub const USAGE: &str = "usage: pbs_tmrsh [-n][-l username] host [-n][-l username] command\n       pbs_tmrsh --version";

/// Every failure ends with this code, as ssh's own errors do.
pub const EXIT_ERROR: u8 = exit::LAUNCH_FAILED;

/// Why the command was not run.
#[derive(Debug, thiserror::Error)]
pub enum TmrshError {
    #[error(transparent)]
    Context(#[from] ContextError),
    #[error("bad user \"{given}\": tasks run as the caller, {caller}")]
    BadUser { given: String, caller: String },
    #[error("host \"{host}\" is not a node in job <{job}>")]
    NotInJob { host: String, job: String },
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error("unable to catch signals: {0}")]
    Signals(std::io::Error),
}

pub fn main() -> ExitCode {
    let words: Vec<String> = std::env::args_os().skip(1).map(|word| word.to_string_lossy().into_owned()).collect();
    if words == ["--version"] {
        println!("pbs_version = {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    ExitCode::from(run(&words, launch::process_env))
}

/// The command on `words` (after the program name) in the environment `get` reads.
pub fn run(words: &[String], get: impl Fn(&str) -> Option<String>) -> u8 {
    let args = match pbs_tmrsh_args::parse(words) {
        Ok(args) => args,
        Err(error) => {
            eprintln!("{}", usage_text(&error));
            return EXIT_ERROR;
        }
    };
    match execute(&args, get) {
        Ok(status) => task_conn::exit_code(status),
        Err(error) => {
            eprintln!("pbs_tmrsh: {error}");
            EXIT_ERROR
        }
    }
}

/// What a malformed command line prints: why, then the usage.
pub fn usage_text(error: &ArgsError) -> String {
    format!("pbs_tmrsh: {error}\n{USAGE}")
}

/// The request for `args` in `context`, or why there is none (`resolve` gives a host name's
/// addresses: [`nodefile::resolve`] in the command).
pub fn request(
    args: &TmrshArgs,
    context: &JobContext,
    caller: &str,
    resolve: impl Fn(&str) -> Vec<IpAddr>,
) -> Result<TaskRequest, TmrshError> {
    if let Some(given) = args.user.as_deref().filter(|given| *given != caller) {
        return Err(TmrshError::BadUser { given: given.to_string(), caller: caller.to_string() });
    }
    let vnode = context
        .nodefile
        .find(&args.host, resolve)
        .ok_or_else(|| TmrshError::NotInJob { host: args.host.clone(), job: context.job_id.clone() })?;
    Ok(TaskRequest {
        version: TASK_VERSION,
        job_id: context.job_id.clone(),
        cookie: context.cookie.clone(),
        node: context.nodefile.vnodes[vnode].clone(),
        command: TaskCommand::Shell(pbs_tmrsh_args::shell_line(&args.command)),
        env: Vec::new(),
        cwd: None,
        vnode: vnode as u32,
        stdin: !args.no_stdin,
        output: true,
    })
}

fn execute(args: &TmrshArgs, get: impl Fn(&str) -> Option<String>) -> Result<i32, TmrshError> {
    let context = JobContext::from_env(get)?;
    let request = request(args, &context, &caller(), nodefile::resolve)?;
    let running: Arc<Mutex<Option<Sender>>> = Arc::default();
    let for_signals = Arc::clone(&running);
    task_conn::catch_signals(move |signal| {
        let sender = for_signals.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let forwarded = sender.is_some_and(|sender| sender.send(&TaskInput::Signal(signal as i32)).is_ok());
        if !forwarded {
            std::process::exit(128 + signal as i32);
        }
    })
    .map_err(TmrshError::Signals)?;
    let task = Task::start(&context.socket, &request)?;
    *running.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(task.sender());
    if request.stdin {
        let sender = task.sender();
        std::thread::spawn(move || task_conn::relay_stdin(&sender, std::io::stdin().lock()));
    }
    Ok(task.wait(relay_output)?)
}

/// Writes the task's output to ours as it comes, unbuffered (ssh's behaviour).
fn relay_output(event: Event<'_>) {
    let _ = match event {
        Event::Stdout(bytes) => std::io::stdout().lock().write_all(bytes).and_then(|()| std::io::stdout().flush()),
        Event::Stderr(bytes) => std::io::stderr().lock().write_all(bytes),
        Event::Started { .. } => Ok(()),
    };
}

/// The caller's user name (its uid's, as OpenPBS's `myname`).
fn caller() -> String {
    uzers::get_user_by_uid(uzers::get_current_uid())
        .map(|user| user.name().to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodefile::Nodefile;

    fn context() -> JobContext {
        JobContext {
            job_id: "7.s".into(),
            cookie: "c00kie".into(),
            socket: "/run/t".into(),
            nodefile: Nodefile::parse("n1\nn1\nn2.example.com\nn2.example.com\n").unwrap(),
        }
    }

    fn none(_: &str) -> Vec<IpAddr> {
        Vec::new()
    }

    fn args(words: &[&str]) -> TmrshArgs {
        pbs_tmrsh_args::parse(&words.iter().map(|word| word.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn the_request_runs_a_shell_line_on_the_hosts_first_vnode() {
        let request =
            request(&args(&["-n", "n2", " orted", "-mca", "ess", "\"env\""]), &context(), "alice", none).unwrap();
        assert_eq!(request.node, "n2.example.com");
        assert_eq!(request.vnode, 2);
        assert_eq!(request.command, TaskCommand::Shell(" orted -mca ess \"env\"".into()));
        assert!(!request.stdin && request.output && request.cwd.is_none() && request.env.is_empty());
        assert_eq!((request.job_id.as_str(), request.cookie.as_str()), ("7.s", "c00kie"));
        assert!(request.check_bounds().is_ok());
        assert!(super::request(&args(&["-l", "alice", "n1", "true"]), &context(), "alice", none).unwrap().stdin);
    }

    #[test]
    fn refusals_and_usage_texts() {
        let texts = [
            super::request(&args(&["-l", "root", "n1", "true"]), &context(), "alice", none).unwrap_err().to_string(),
            super::request(&args(&["n9.invalid", "true"]), &context(), "alice", none).unwrap_err().to_string(),
            usage_text(&ArgsError::Unknown('Z')),
            usage_text(&ArgsError::NoCommand),
        ];
        insta::assert_snapshot!(texts.join("\n"));
    }
}
