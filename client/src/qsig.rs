//! `qsig`: send a signal to running jobs (`-s`, by name such as `SIGUSR1` or `USR1`, or by
//! number; default `SIGTERM`). The server checks the signal and sends it to the job's session on
//! its mother superior. Sends `SignalJob` (handled by `server/src/handlers/signal_job.rs`).
//! Silent on success; one stderr line per failed id; exit code of the last failure.

use crate::exit;
use clap::Parser;
use proto::ClientRequest;
use std::process::ExitCode;

/// qsig's options.
#[derive(Parser, Debug)]
#[command(name = "qsig", disable_version_flag = true)]
struct Args {
    #[arg(short = 's', default_value = "SIGTERM")]
    signal: String,
    #[arg(required = true)]
    ids: Vec<String>,
}

/// OpenPBS's usage text.
pub const USAGE: &str = "usage: qsig [-s signal] job_identifier...";

/// Entry point of the `qsig` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qsig", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let signal = args.signal;
    exit::exit(crate::ids::send_for_ids("qsig", args.ids, |ids| ClientRequest::SignalJob {
        ids,
        signal: signal.clone(),
    }))
}
