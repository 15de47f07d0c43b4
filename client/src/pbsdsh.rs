//! The `pbsdsh` command: run a program on the job's vnodes through the moms, from inside a job.
//! OpenPBS's and TORQUE's options together (docs/gpu-mpi.md 4.5, pbs-reference.md 8.6):
//! `-c copies`, `-n index`, `-h host`, `-u`, `-s`, `-v`, `-o`, `-e var[=value],...`, `-E`,
//! `--`. By default one task per line of `PBS_NODEFILE`, all at once; the tasks' output is
//! always relayed and printed by pbsdsh (TORQUE's `-o`), so the job's output file shows every
//! task's lines; pbsdsh always waits and exits with the worst task status.
//!
//! Owns: the options, the flow and its texts. Must not know: the mom's side.

use crate::cli;
use crate::exit;
use crate::launch::JobContext;
use crate::nodefile;
use crate::pbsdsh_plan::{self, Selection};
use crate::pbsdsh_run::{self, RunOptions};
use clap::{ArgAction, Parser};
use proto::task::{TaskCommand, TaskRequest, TASK_VERSION};
use std::process::ExitCode;

pub const USAGE: &str = "usage: pbsdsh [-c copies | -n node_index | -h host] [-u] [-s] [-v] [-o] [-e var[=value],...] [-E] [--] program [args]...";

#[derive(Parser, Debug)]
#[command(
    name = "pbsdsh",
    disable_help_flag = true,
    about = "Runs a program on the vnodes of the job it is called from (one task per line of PBS_NODEFILE by default).",
    after_help = "-o is accepted for both OpenPBS and TORQUE scripts; pbsdsh always prints the tasks' output \
                  (TORQUE's -o) and always waits for every task (OpenPBS's -o, \"do not wait\", is not offered). \
                  Each task gets RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR and \
                  MASTER_PORT (when set here) and, with -u, torchrun's PET_NODE_RANK, PET_NNODES, \
                  PET_MASTER_ADDR and PET_MASTER_PORT."
)]
pub struct PbsdshArgs {
    /// Run this many copies, over the vnodes in order, wrapping around
    #[arg(short = 'c', value_name = "copies", value_parser = clap::value_parser!(u64).range(1..))]
    pub copies: Option<u64>,
    /// Run only on this vnode (a line of PBS_NODEFILE, from 0; a unique host with -u)
    #[arg(short = 'n', value_name = "node_index", conflicts_with_all = ["copies", "host"])]
    pub node: Option<usize>,
    /// Run only on this host (its first vnode)
    #[arg(short = 'h', value_name = "host", conflicts_with_all = ["copies", "unique"])]
    pub host: Option<String>,
    /// Run once per unique host
    #[arg(short = 'u')]
    pub unique: bool,
    /// Run the tasks one after another
    #[arg(short = 's')]
    pub sequential: bool,
    /// Say when each task starts and ends
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Accepted: the tasks' output always comes back to pbsdsh
    #[arg(short = 'o')]
    pub output: bool,
    /// Pass these variables: name=value, or name for pbsdsh's own value
    #[arg(short = 'e', value_name = "var[=value],...", action = ArgAction::Append)]
    pub env: Vec<String>,
    /// Pass all of pbsdsh's environment (but PBS_*, MINIPBS_*, CUDA_VISIBLE_DEVICES, HOSTNAME)
    #[arg(short = 'E')]
    pub all_env: bool,
    /// Print help
    #[arg(long = "help", action = ArgAction::Help)]
    pub help: Option<bool>,
    /// The program and its arguments, executed directly (no shell) in pbsdsh's directory
    #[arg(value_name = "program", required = true, trailing_var_arg = true)]
    pub program: Vec<String>,
}

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os().map(|word| word.to_string_lossy().into_owned()).collect();
    let vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect();
    let cwd = std::env::current_dir().ok().map(|dir| dir.to_string_lossy().into_owned());
    run(&args, &vars, cwd)
}

/// The command on `args` (program name first), with `vars` its environment and `cwd` its
/// working directory.
pub fn run(args: &[String], vars: &[(String, String)], cwd: Option<String>) -> ExitCode {
    let parsed: PbsdshArgs = match cli::parse_from_code("pbsdsh", USAGE, args, exit::FAILURE) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let get = |name: &str| vars.iter().find(|(have, _)| have == name).map(|(_, value)| value.clone());
    let (context, requests) = match plan(&parsed, get, vars, cwd) {
        Ok(planned) => planned,
        Err(message) => {
            eprintln!("pbsdsh: {message}");
            return exit::exit(exit::FAILURE);
        }
    };
    let options = RunOptions { sequential: parsed.sequential, verbose: parsed.verbose };
    exit::exit(pbsdsh_run::run_all(&context.socket, requests, options))
}

/// The job and one request per task, or what to say.
fn plan(
    parsed: &PbsdshArgs,
    get: impl Fn(&str) -> Option<String>,
    vars: &[(String, String)],
    cwd: Option<String>,
) -> Result<(JobContext, Vec<TaskRequest>), String> {
    let context = JobContext::from_env(&get).map_err(|error| error.to_string())?;
    let selection = Selection {
        copies: parsed.copies.map(|copies| usize::try_from(copies).unwrap_or(usize::MAX)),
        node: parsed.node,
        host: parsed.host.clone(),
        unique: parsed.unique,
    };
    let vnodes = pbsdsh_plan::targets(&context.nodefile, &selection, &context.job_id, nodefile::resolve)
        .map_err(|error| error.to_string())?;
    let user = pbsdsh_plan::user_env(&parsed.env, parsed.all_env, vars, &get).map_err(|error| error.to_string())?;
    let envs = pbsdsh_plan::task_env(&context.nodefile, &vnodes, parsed.unique, &get);
    let requests: Vec<TaskRequest> = vnodes
        .iter()
        .zip(envs)
        .map(|(&vnode, env)| TaskRequest {
            version: TASK_VERSION,
            job_id: context.job_id.clone(),
            cookie: context.cookie.clone(),
            node: context.nodefile.vnodes[vnode].clone(),
            command: TaskCommand::Argv(parsed.program.clone()),
            env: pbsdsh_plan::merge(&user, env),
            cwd: cwd.clone(),
            vnode: vnode as u32,
            stdin: false,
            output: true,
        })
        .collect();
    if let Some(first) = requests.first() {
        first.check_bounds().map_err(|error| error.to_string())?;
    }
    Ok((context, requests))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<PbsdshArgs, clap::Error> {
        PbsdshArgs::try_parse_from(std::iter::once("pbsdsh").chain(words.iter().copied()))
    }

    #[test]
    fn every_option() {
        let args =
            parse(&["-c", "3", "-u", "-s", "-v", "-o", "-e", "A,B=1", "-e", "C", "-E", "--", "prog", "-x"]).unwrap();
        assert_eq!(args.copies, Some(3));
        assert!(args.unique && args.sequential && args.verbose && args.output && args.all_env);
        assert_eq!(args.env, ["A,B=1", "C"]);
        assert_eq!(args.program, ["prog", "-x"]);
        let args = parse(&["-n", "2", "hostname", "-s"]).unwrap();
        assert_eq!((args.node, args.program), (Some(2), vec!["hostname".to_string(), "-s".to_string()]));
        assert!(!args.sequential);
        assert_eq!(parse(&["-h", "n2", "true"]).unwrap().host.as_deref(), Some("n2"));
    }

    #[test]
    fn help_text() {
        use clap::CommandFactory;
        insta::assert_snapshot!(PbsdshArgs::command().render_help().to_string());
    }

    #[test]
    fn bad_lines_are_refused() {
        for bad in
            [&["-c", "0", "x"][..], &["-c", "2", "-n", "1", "x"], &["-h", "n1", "-u", "x"], &["-Z", "x"], &["-v"], &[]]
        {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
