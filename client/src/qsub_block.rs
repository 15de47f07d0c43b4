//! `qsub -W block=true`: after printing the job id, qsub waits for the job to end and exits
//! with its exit status as C's `exit()` keeps it (the low 8 bits), as OpenPBS's qsub does (it
//! waits on a socket the server reports to; minipbs's qsub asks the server once a second). An
//! unreachable server is waited for (it may be restarting); a job the server no longer knows,
//! or that ended without an exit status (deleted before it ran), ends qsub with 1.

use crate::conn::Connection;
use crate::exit;
use proto::{ClientRequest, ServerReply};
use std::time::Duration;

/// How often the server is asked.
const POLL: Duration = Duration::from_secs(1);

/// Waits until `job_id` is finished; returns qsub's exit code.
pub fn wait(job_id: &str) -> u8 {
    loop {
        if let Some(code) = ended(job_id) {
            return code;
        }
        std::thread::sleep(POLL);
    }
}

/// The exit code once the job is over, `None` while it is not (or the server cannot be asked).
fn ended(job_id: &str) -> Option<u8> {
    let request = ClientRequest::StatusJob {
        selectors: vec![job_id.to_string()],
        history: true,
        users: Vec::new(),
        attrs: Some(["job_state", "Exit_status", "exit_status"].map(String::from).to_vec()),
        subjobs: false,
        arrays_only: false,
        rows: false,
    };
    match Connection::open().and_then(|mut conn| conn.request_all(&request)) {
        Ok(ServerReply::Jobs { jobs, .. }) => {
            let Some(job) = jobs.first() else { return Some(exit::FAILURE) };
            if !matches!(job.get("job_state"), Some("F") | Some("C")) {
                return None;
            }
            let status = job.get("Exit_status").or_else(|| job.get("exit_status"));
            Some(status.and_then(|text| text.trim().parse::<i64>().ok()).map_or(exit::FAILURE, exit_code))
        }
        Ok(ServerReply::Error(_)) => Some(exit::FAILURE),
        _ => None,
    }
}

/// What `exit(status)` leaves of a status: its low 8 bits (-29 is 227, 265 is 9).
pub fn exit_code(status: i64) -> u8 {
    (status & 0xff) as u8
}

#[cfg(test)]
mod tests {
    use super::exit_code;

    #[test]
    fn exit_keeps_the_low_eight_bits() {
        assert_eq!([0, 3, 255, 256, 265, -29, -1].map(exit_code), [0, 3, 255, 0, 9, 227, 255]);
    }
}
