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
    /// `force` (managers: end a running job without waiting for its mom) or
    /// `suppress_email=N` (accepted; no mail is sent yet).
    #[arg(short = 'W')]
    extra: Option<String>,
    /// Also remove finished jobs from history.
    #[arg(short = 'x')]
    history: bool,
    /// TORQUE `-t range`: the subjobs of each named array in `range` (`qdel -t 1-3 12[]`).
    #[arg(short = 't')]
    range: Option<String>,
    #[arg(required = true)]
    ids: Vec<String>,
}

const USAGE: &str = "usage: qdel [-W force|suppress_email=X] [-x] job_identifier...";

/// Entry point of the `qdel` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qdel", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let force = match args.extra.as_deref() {
        None => false,
        Some("force") => true,
        Some(other) if other.starts_with("suppress_email=") => false,
        Some(other) => {
            eprintln!("qdel: illegal -W value: {other}");
            eprintln!("{USAGE}");
            return exit::exit(exit::USAGE);
        }
    };
    let history = args.history;
    let ids = crate::ids::with_range(args.ids, args.range.as_deref());
    exit::exit(crate::ids::send_for_ids("qdel", ids, |ids| ClientRequest::DeleteJob { ids, force, history }))
}
