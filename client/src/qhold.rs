//! `qhold` and `qrls`: set and release holds (`-h` any of `u o s p n`, default `u`). Send `HoldJob` /
//! `ReleaseJob` (handled by `server/src/handlers/hold_job.rs`).

use crate::exit;
use crate::ids::{send_for_ids, with_range};
use clap::Parser;
use proto::ClientRequest;
use std::process::ExitCode;

/// qhold / qrls options.
#[derive(Parser, Debug)]
#[command(disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Hold types: u (user), o (operator), s (system), p (bad password), n (none).
    #[arg(short = 'h', default_value = "u")]
    hold_types: String,
    /// TORQUE `-t range`: the subjobs of each named array in `range` (`qhold -t 1-3 12[]`).
    #[arg(short = 't')]
    range: Option<String>,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    #[arg(required = true)]
    ids: Vec<String>,
}

/// Entry point of `qhold` (`hold = true`) and `qrls`.
pub fn main(hold: bool) -> ExitCode {
    let command = if hold { "qhold" } else { "qrls" };
    let usage = format!("usage: {command} [-h hold_list] job_identifier...");
    let args: Args = match crate::cli::parse(command, &usage) {
        Ok(args) => args,
        Err(code) => return code,
    };
    if !valid_hold_list(&args.hold_types) {
        eprintln!("{command}: illegal -h value");
        eprintln!("{usage}");
        return exit::exit(exit::USAGE);
    }
    let ids = with_range(args.ids, args.range.as_deref());
    let hold_types = args.hold_types.trim().to_string();
    exit::exit(send_for_ids(command, ids, |ids| {
        let hold_types = hold_types.clone();
        if hold {
            ClientRequest::HoldJob { ids, hold_types }
        } else {
            ClientRequest::ReleaseJob { ids, hold_types }
        }
    }))
}

/// Whether `list` is a hold list OpenPBS accepts: one or more of `u o s p n`.
pub fn valid_hold_list(list: &str) -> bool {
    !list.trim().is_empty() && list.trim().chars().all(|c| "uospn".contains(c))
}

#[cfg(test)]
mod tests {
    use super::valid_hold_list;

    #[test]
    fn hold_lists() {
        for good in ["u", "uos", "p", "n", " s"] {
            assert!(valid_hold_list(good), "{good}");
        }
        for bad in ["", "x", "u,o", "U"] {
            assert!(!valid_hold_list(bad), "{bad}");
        }
    }
}
