//! Job-id operands, shared by the commands that act on a list of jobs (qdel, qhold, qrls,
//! qrerun, qsig, qmove, qalter): TORQUE's `-t range` applied to array ids, and one request
//! sent per run of well-formed ids with per-id errors printed as `<command>: <message>`.

use crate::conn::Connection;
use crate::exit;
use proto::{ClientRequest, ServerReply};

/// TORQUE's `-t range` applied to every id: `12[]` becomes the range id `12[range]`, which
/// the server expands (pbs-reference 5.1). Without `-t` the ids are unchanged.
pub fn with_range(ids: Vec<String>, range: Option<&str>) -> Vec<String> {
    match range {
        None => ids,
        Some(range) => ids.iter().map(|id| job::array::with_range(id, range.trim())).collect(),
    }
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
