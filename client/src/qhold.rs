//! `qhold` and `qrls`: set and release holds (`-h` any of `u o s p n`, default `u`). Send `HoldJob` /
//! `ReleaseJob` (handled by `server/src/handlers/hold_job.rs`). Also the shared
//! request-over-ids helper used by qdel.

use crate::conn::Connection;
use crate::exit;
use clap::Parser;
use proto::{ClientRequest, ServerReply};
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

/// TORQUE's `-t range` applied to every id: `12[]` becomes the range id `12[range]`, which
/// the server expands (pbs-reference 5.1). Without `-t` the ids are unchanged.
pub fn with_range(ids: Vec<String>, range: Option<&str>) -> Vec<String> {
    match range {
        None => ids,
        Some(range) => ids.iter().map(|id| job::array::with_range(id, range.trim())).collect(),
    }
}

/// Whether `list` is a hold list OpenPBS accepts: one or more of `u o s p n`.
pub fn valid_hold_list(list: &str) -> bool {
    !list.trim().is_empty() && list.trim().chars().all(|c| "uospn".contains(c))
}

/// Sends a request over several ids and reports per-id errors as `<command>: <message>`.
/// Ids OpenPBS's `get_server` rejects (`abc`, `12[x]`) are refused here, as OpenPBS does:
/// `<command>: illegally formed job identifier: <id>`, exit 1. Each run of well-formed ids
/// between them goes to the server in one request, so messages and the exit code (the last
/// failure's, 0 if none) come in argument order, as in OpenPBS's one-id-at-a-time loop.
pub fn send_for_ids(command: &str, ids: Vec<String>, request: impl Fn(Vec<String>) -> ClientRequest) -> u8 {
    let mut code = exit::SUCCESS;
    let mut conn: Option<Connection> = None;
    let mut run = Vec::new();
    for id in ids.into_iter().map(Some).chain([None]) {
        if let Some(id) = id.as_ref().filter(|id| crate::cli::well_formed_job_id(id)) {
            run.push(id.clone());
            continue;
        }
        if !run.is_empty() {
            let conn = match &mut conn {
                Some(conn) => conn,
                None => match crate::cli::connect(command) {
                    Ok(opened) => conn.insert(opened),
                    Err(code) => return code,
                },
            };
            if let Some(failed) = send_run(command, conn, &request(std::mem::take(&mut run))) {
                code = failed;
            }
        }
        if let Some(id) = id {
            eprintln!("{command}: illegally formed job identifier: {id}");
            code = exit::FAILURE;
        }
    }
    code
}

/// Sends one request; prints its errors and returns the last one's exit code, if any.
fn send_run(command: &str, conn: &mut Connection, request: &ClientRequest) -> Option<u8> {
    match conn.request(request) {
        Ok(ServerReply::Done { errors }) => {
            let mut code = None;
            for error in errors {
                eprintln!("{command}: {}", error.message);
                code = Some(exit::for_error(error.code));
            }
            code
        }
        Ok(ServerReply::Error(error)) => {
            eprintln!("{command}: {}", error.message);
            Some(exit::for_error(error.code))
        }
        Ok(other) => {
            eprintln!("{command}: unexpected reply from server: {other:?}");
            Some(exit::FAILURE)
        }
        Err(error) => {
            eprintln!("{command}: {error}");
            Some(error.exit_code())
        }
    }
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
