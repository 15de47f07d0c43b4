//! `qmove destination job_identifier...`: move jobs that have not started to another queue.
//! Sends `MoveJob` (handled by `server/src/handlers/move_job.rs`). Silent on success; one
//! stderr line per refused job; exit code of the last failure.

use crate::exit;
use clap::Parser;
use proto::ClientRequest;
use std::process::ExitCode;

/// qmove's arguments.
#[derive(Parser, Debug)]
#[command(name = "qmove", disable_version_flag = true)]
struct Args {
    /// `queue`, `@server` or `queue@server`.
    destination: String,
    #[arg(required = true)]
    ids: Vec<String>,
}

const USAGE: &str = "usage: qmove destination job_identifier...";

/// Entry point of the `qmove` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qmove", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let destination = args.destination;
    exit::exit(crate::ids::send_for_ids("qmove", args.ids, |ids| ClientRequest::MoveJob {
        destination: destination.clone(),
        ids,
    }))
}
