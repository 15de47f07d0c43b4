//! `qstat -Q`, `-q` and `-B` (with `-f`): queue and server status. Sends `StatusQueue` or
//! `StatusServer` (`server/src/handlers/status_queue.rs`, `status_server.rs`) and prints
//! with `output::queues` (`-F json`: `output::json`). Unknown queues: one stderr line each, exit code of the last.

use crate::exit;
use crate::output::{json, queues};
use proto::{ClientRequest, ObjectStatus, ServerReply};

/// Which display `qstat` was asked for.
#[derive(Debug, Clone, Copy)]
pub struct Mode {
    pub queues: bool,
    pub limits: bool,
    pub server: bool,
}

/// Runs the display; returns the exit code.
pub fn run(mode: Mode, full: bool, format: Option<&str>, selectors: &[String]) -> u8 {
    let json = match format {
        None => false,
        Some("json") if !mode.limits => true,
        Some(format) => {
            eprintln!("qstat: -F {format} is not supported here (only -F json, with -Q or -B)");
            return exit::USAGE;
        }
    };
    if mode.server && (mode.queues || mode.limits) {
        eprintln!("qstat: conflicting options.");
        return exit::USAGE;
    }
    let mut conn = match crate::cli::connect("qstat") {
        Ok(conn) => conn,
        Err(code) => return code,
    };
    let request = if mode.server {
        ClientRequest::StatusServer
    } else {
        // Queue names may carry `@server`; the server strips it.
        ClientRequest::StatusQueue { names: selectors.to_vec() }
    };
    let (objects, errors) = match conn.request(&request) {
        Ok(ServerReply::Objects { objects, errors }) => (objects, errors),
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
    let text = if json {
        let label = if mode.server { "Server" } else { "Queue" };
        json::qstat_objects_json(label, &conn.server_name, &objects, crate::cli::now(), env!("CARGO_PKG_VERSION"))
    } else {
        render(mode, full, &conn.server_name, &objects)
    };
    crate::cli::print_listing("qstat", &text, errors, crate::exit::SUCCESS)
}

fn render(mode: Mode, full: bool, server: &str, objects: &[ObjectStatus]) -> String {
    match (mode.server, mode.limits, full) {
        (true, _, true) => queues::qstat_objects_full("Server", objects),
        (true, _, false) => objects.first().map(queues::qstat_server).unwrap_or_default(),
        (false, true, _) => queues::qstat_queue_limits(server, objects),
        (false, false, true) => queues::qstat_objects_full("Queue", objects),
        (false, false, false) if objects.is_empty() => String::new(),
        (false, false, false) => queues::qstat_queues(objects),
    }
}
