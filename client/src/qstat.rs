//! `qstat`: job status in the default, alternate (`-a -n -1 -s -u`), full (`-f`) and JSON
//! (`-f -F json`) displays, with history (`-x`). Sends `StatusJob` (handled by
//! `server/src/handlers/status_job.rs`). Known jobs go to stdout, one error line per unknown
//! id to stderr, and the exit code is the last error's (pbs-reference 6.7).

use crate::exit;
use crate::output::{self, AltOptions};
use clap::Parser;
use proto::{ClientRequest, ServerReply};
use std::io::Write;
use std::process::ExitCode;

/// qstat's options.
#[derive(Parser, Debug)]
#[command(name = "qstat", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Alternate display.
    #[arg(short = 'a')]
    alternate: bool,
    /// Full display.
    #[arg(short = 'f')]
    full: bool,
    /// Include finished jobs (history).
    #[arg(short = 'x')]
    history: bool,
    /// With -n/-s: node list on the row's line; with -f: no folding.
    #[arg(short = '1')]
    one_line: bool,
    /// Alternate display with the nodes of each job.
    #[arg(short = 'n')]
    nodes: bool,
    /// Alternate display with each job's comment.
    #[arg(short = 's')]
    comment: bool,
    /// Only these users' jobs (comma separated), alternate display.
    #[arg(short = 'u')]
    users: Option<String>,
    /// Output format with -f: json.
    #[arg(short = 'F')]
    format: Option<String>,
    /// Wide display (accepted; the full display is then not folded).
    #[arg(short = 'w')]
    wide: bool,
    /// Queue status (`-Q`, with `-f` full).
    #[arg(short = 'Q')]
    queues: bool,
    /// Queue limits table.
    #[arg(short = 'q')]
    queue_limits: bool,
    /// Server status (`-B`, with `-f` full).
    #[arg(short = 'B')]
    server: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Job ids or queue names.
    selectors: Vec<String>,
}

/// Entry point of the `qstat` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qstat", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    if args.queues || args.queue_limits || args.server {
        let mode = crate::qstat_queues::Mode { queues: args.queues, limits: args.queue_limits, server: args.server };
        return exit::exit(crate::qstat_queues::run(mode, args.full, args.format.as_deref(), &args.selectors));
    }
    if let Some(format) = &args.format {
        if format != "json" {
            return usage(&format!("unsupported -F format {format:?}: only json is supported"));
        }
        if !args.full || args.alternate || args.nodes || args.comment {
            return usage("conflicting options.");
        }
    }
    exit::exit(run(&args))
}

const USAGE: &str = "usage: qstat [-a] [-n [-1]] [-s] [-u user] [-x] [-f [-F json] [-1]] [job_id|queue ...]\n       qstat -Q [-f] [queue ...] | -q [queue ...] | -B [-f]";

fn usage(message: &str) -> ExitCode {
    crate::cli::usage_error("qstat", USAGE, message)
}

/// The attributes a display needs (the full display needs all).
fn wanted(args: &Args) -> Option<Vec<String>> {
    if args.full {
        return None;
    }
    let mut names = vec!["Job_Name", "Job_Owner", "resources_used.cput", "job_state", "queue"];
    if alternate(args) {
        names.extend([
            "session_id",
            "Resource_List.nodect",
            "Resource_List.ncpus",
            "Resource_List.mem",
            "Resource_List.walltime",
            "Resource_List.cput",
            "resources_used.walltime",
            "exec_host",
            "comment",
        ]);
    }
    Some(names.into_iter().map(str::to_string).collect())
}

fn alternate(args: &Args) -> bool {
    args.alternate || args.nodes || args.comment || args.users.is_some()
}

fn run(args: &Args) -> u8 {
    let mut conn = match crate::cli::connect("qstat") {
        Ok(conn) => conn,
        Err(code) => return code,
    };
    let users: Vec<String> =
        args.users.iter().flat_map(|list| list.split(',')).map(|user| user.trim().to_string()).collect();
    let request = ClientRequest::StatusJob {
        selectors: args.selectors.clone(),
        history: args.history,
        users,
        attrs: wanted(args),
    };
    let (server, jobs, errors) = match conn.request_all(&request) {
        Ok(ServerReply::Jobs { server, jobs, errors, .. }) => (server, jobs, errors),
        Ok(ServerReply::Error(error)) => {
            eprintln!("qstat: {}", error.message);
            return exit::for_error(error.code);
        }
        Ok(other) => {
            eprintln!("qstat: unexpected reply from server: {other:?}");
            return exit::FAILURE;
        }
        Err(error) => {
            eprintln!("qstat: {error}");
            return error.exit_code();
        }
    };
    let text = if args.format.is_some() {
        output::qstat_json(&server, &jobs, epoch_now(), env!("CARGO_PKG_VERSION"))
    } else if args.full {
        output::qstat_full(&jobs, !(args.one_line || args.wide))
    } else if alternate(args) {
        let opts =
            AltOptions { nodes: args.nodes, one_line: args.one_line, comment: args.comment, server_comment: None };
        output::qstat_alternate(&server, &jobs, &opts)
    } else {
        output::qstat_default(&jobs)
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    let mut code = exit::SUCCESS;
    for error in errors {
        eprintln!("qstat: {}", error.message);
        code = exit::for_error(error.code);
    }
    code
}

fn epoch_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
