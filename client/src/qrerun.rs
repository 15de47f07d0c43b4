//! `qrerun`: kill running jobs and queue them again (operators and managers). Sends
//! `RerunJob` (handled by `server/src/handlers/rerun_job.rs`). Silent on success; one stderr
//! line per failed id; exit code of the last failure.

use crate::exit;
use clap::Parser;
use proto::ClientRequest;
use std::process::ExitCode;

/// qrerun's options.
#[derive(Parser, Debug)]
#[command(name = "qrerun", disable_version_flag = true)]
struct Args {
    /// `force` (OpenPBS: rerun even when the mom cannot be reached); not supported yet.
    #[arg(short = 'W')]
    extra: Option<String>,
    #[arg(required = true)]
    ids: Vec<String>,
}

/// OpenPBS's usage text.
pub const USAGE: &str = "usage: qrerun [-W force] job_identifier...";

/// Entry point of the `qrerun` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qrerun", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    match args.extra.as_deref() {
        None => {}
        Some("force") => {
            eprintln!("qrerun: -W force is not supported yet by minipbs");
            eprintln!("{USAGE}");
            return exit::exit(exit::USAGE);
        }
        Some(other) => {
            eprintln!("qrerun: illegal -W value: {other}");
            eprintln!("{USAGE}");
            return exit::exit(exit::USAGE);
        }
    }
    exit::exit(crate::ids::send_for_ids("qrerun", args.ids, |ids| ClientRequest::RerunJob { ids }))
}
