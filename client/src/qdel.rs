//! `qdel`: delete jobs. Sends `DeleteJob` (handled by `server/src/handlers/delete_job.rs`).
//! Silent on success; one stderr line per failed id; exit code of the last failure.

use crate::exit;
use clap::Parser;
use proto::ClientRequest;
use std::process::ExitCode;

/// qdel's options.
#[derive(Parser, Debug)]
#[command(name = "qdel", disable_version_flag = true)]
struct Args {
    /// Accepted for compatibility (`-W force`).
    #[arg(short = 'W')]
    extra: Option<String>,
    #[arg(required = true)]
    ids: Vec<String>,
}

/// Entry point of the `qdel` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qdel", "usage: qdel [-W force|suppress_email=X] [-x] job_identifier...") {
        Ok(args) => args,
        Err(code) => return code,
    };
    exit::exit(crate::qhold::send_for_ids("qdel", ClientRequest::DeleteJob { ids: args.ids }))
}
