//! `qstat`: job status in the default, alternate (`-a -n -1 -s -u`, and `-i` not running, `-r`
//! running, `-H` finished only, `-T` estimated start times: `qstat_estimated.rs`), full (`-f`), JSON (`-f -F json`) and DSV (`-f -F dsv [-D d]`)
//! displays, with history (`-x`); `--watch` redraws any of them (`qstat_watch.rs`). Sends `StatusJob` (handled by
//! `server/src/handlers/status_job.rs`). Known jobs go to stdout, one error line per unknown
//! id to stderr, and the exit code is the last error's (pbs-reference 6.7).
//!
//! The layouts follow the flavor the server names in its reply: with a `torque` server the
//! tables are TORQUE's, `-x` prints TORQUE's XML (of every attribute, with history) and `-c`
//! hides completed (`C`) jobs.

use crate::exit;
use crate::output::{self, AltOptions};
use clap::Parser;
use proto::{ClientRequest, Flavor, ServerReply};
use std::process::ExitCode;

/// qstat's options.
#[derive(Parser, Debug)]
#[command(name = "qstat", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Alternate display.
    #[arg(short = 'a')]
    alternate: bool,
    /// Full display.
    #[arg(short = 'f')]
    full: bool,
    /// Include finished jobs (history); XML with a torque server.
    #[arg(short = 'x')]
    history: bool,
    /// Hide completed jobs (TORQUE).
    #[arg(short = 'c')]
    hide_completed: bool,
    /// With -n/-s: node list on the row's line; with -f: no folding.
    #[arg(short = '1')]
    one_line: bool,
    /// Alternate display with the nodes of each job.
    #[arg(short = 'n')]
    nodes: bool,
    /// Alternate display with each job's comment.
    #[arg(short = 's')]
    comment: bool,
    /// Alternate display of jobs that are not running (states E H Q T W).
    #[arg(short = 'i')]
    not_running: bool,
    /// Alternate display of running or suspended jobs (states R S).
    #[arg(short = 'r')]
    running: bool,
    /// Alternate display of finished jobs only (states F M X; history).
    #[arg(short = 'H')]
    finished: bool,
    /// Only these users' jobs (comma separated), alternate display.
    #[arg(short = 'u')]
    users: Option<String>,
    /// Output format with -f: json or dsv.
    #[arg(short = 'F')]
    format: Option<String>,
    /// The field delimiter of `-F dsv` (default `|`).
    #[arg(short = 'D')]
    delimiter: Option<String>,
    /// Wide display (accepted; the full display is then not folded).
    #[arg(short = 'w')]
    wide: bool,
    /// Also list the subjobs of arrays.
    #[arg(short = 't')]
    subjobs: bool,
    /// Only arrays.
    #[arg(short = 'J')]
    arrays_only: bool,
    /// Alternate display with the Memory column in gigabytes.
    #[arg(short = 'G')]
    gigabytes: bool,
    /// Alternate display with the Memory column in megawords (8-byte words).
    #[arg(short = 'M')]
    megawords: bool,
    /// Alternate display with the estimated start time instead of the elapsed time, sorted
    /// by it (OpenPBS; not with a torque server).
    #[arg(short = 'T')]
    estimated: bool,
    /// Queue status (`-Q`, with `-f` full).
    #[arg(short = 'Q')]
    queues: bool,
    /// Queue limits table.
    #[arg(short = 'q')]
    queue_limits: bool,
    /// Server status (`-B`, with `-f` full).
    #[arg(short = 'B')]
    server: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Job ids or queue names.
    selectors: Vec<String>,
}

/// Entry point of the `qstat` binary.
pub fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    match crate::qstat_watch::split(&argv) {
        Ok(Some(watch)) => return crate::qstat_watch::run(watch),
        Ok(None) => {}
        Err(message) => return usage(&message),
    }
    let args: Args = match crate::cli::parse_from("qstat", USAGE, &argv) {
        Ok(args) => args,
        Err(code) => return code,
    };
    if args.queues || args.queue_limits || args.server {
        let mode = crate::qstat_queues::Mode { queues: args.queues, limits: args.queue_limits, server: args.server };
        return exit::exit(crate::qstat_queues::run(mode, args.full, args.format.as_deref(), &args.selectors));
    }
    if args.delimiter.is_some() && args.format.as_deref() != Some("dsv") {
        return usage("-D is only valid with -F dsv");
    }
    if let Some(format) = &args.format {
        if format != "json" && format != "dsv" {
            return usage(&format!("unsupported -F format {format:?}: expected json or dsv"));
        }
        if !args.full || alternate(&args) {
            return usage("conflicting options.");
        }
    }
    let displays = [args.alternate, args.not_running, args.running, args.finished];
    if displays.iter().filter(|chosen| **chosen).count() > 1 {
        return usage("conflicting options.");
    }
    exit::exit(run(&args))
}

const USAGE: &str = "usage: qstat [-a|-i|-r|-H] [-T] [-n [-1]] [-s] [-u user] [-c] [-x] [-t] [-J] [-f [-F json|dsv [-D delim]] [-1]] [job_id|queue ...]\n       qstat -Q [-f] [queue ...] | -q [queue ...] | -B [-f]";

fn usage(message: &str) -> ExitCode {
    crate::cli::usage_error("qstat", USAGE, message)
}

/// The attributes a display needs (the full display needs all).
fn wanted(args: &Args) -> Option<Vec<String>> {
    if args.full {
        return None;
    }
    let mut names = vec!["Job_Name", "Job_Owner", "resources_used.cput", "job_state", "queue"];
    if alternate(args) {
        names.extend([
            "session_id",
            "Resource_List.nodect",
            "Resource_List.ncpus",
            "Resource_List.mem",
            "Resource_List.walltime",
            "Resource_List.cput",
            "resources_used.walltime",
            "exec_host",
            "comment",
            // TORQUE's layout also reads these.
            "Resource_List.nodes",
            "Resource_List.procs",
            "Resource_List.pmem",
            "Resource_List.dmem",
            "Resource_List.vmem",
            "Resource_List.pvmem",
            "Walltime.Remaining",
        ]);
    }
    if args.estimated {
        names.extend(["estimated.start_time", "stime"]);
    }
    Some(names.into_iter().map(str::to_string).collect())
}

/// TORQUE's `-x` is XML (of the full display), unless an alternate display was asked for.
fn xml_wanted(args: &Args, flavor: Flavor) -> bool {
    flavor == Flavor::Torque && args.history && !alternate(args)
}

/// `-G` or `-M` (the last letter wins when both are given, as the last option set in OpenPBS).
fn size_unit(args: &Args) -> output::columns::SizeUnit {
    use output::columns::SizeUnit;
    match (args.gigabytes, args.megawords) {
        (_, true) => SizeUnit::Megawords,
        (true, false) => SizeUnit::Gigabytes,
        _ => SizeUnit::AsGiven,
    }
}

/// Whether to ask for the listing in rows (`ServerReply::Rows`): for the default table, which
/// reads only the five attributes it asks for. An older server answers `Jobs` all the same.
fn in_rows(args: &Args) -> bool {
    !args.full && args.format.is_none() && !alternate(args)
}

/// The default table of a listing answered in rows (what [`in_rows`] asks for).
fn print_rows(
    args: &Args,
    columns: &[String],
    rows: &[proto::JobRow],
    errors: Vec<proto::error::RequestError>,
    flavor: Flavor,
    first_code: u8,
) -> u8 {
    let rows = rows.iter().map(|row| output::RowJob { columns, row });
    let jobs: Vec<output::RowJob> = if args.hide_completed {
        rows.filter(|job| output::Listed::get(job, "job_state") != Some("C")).collect()
    } else {
        rows.collect()
    };
    let text = match flavor {
        Flavor::Torque => output::qstat_default_torque(&jobs),
        Flavor::OpenPbs => output::qstat_default(&jobs),
    };
    crate::cli::print_listing("qstat", &text, errors, first_code)
}

fn alternate(args: &Args) -> bool {
    args.alternate
        || args.gigabytes
        || args.megawords
        || args.estimated
        || args.nodes
        || args.comment
        || args.users.is_some()
        || args.not_running
        || args.running
        || args.finished
}

/// The state letters `-i`, `-r` or `-H` keep (OpenPBS's lists); `None` keeps every job.
fn state_filter(args: &Args) -> Option<&'static str> {
    if args.not_running {
        Some("EHQTW")
    } else if args.running {
        Some("RS")
    } else if args.finished {
        Some("MFX")
    } else {
        None
    }
}

fn run(args: &Args) -> u8 {
    // As OpenPBS's qstat: an operand starting with a digit is a job id, and one its
    // get_server rejects is reported (exit 1) and not asked for; other operands are queues.
    let (selectors, bad): (Vec<String>, Vec<String>) = args.selectors.iter().cloned().partition(|selector| {
        !selector.trim_start().starts_with(|c: char| c.is_ascii_digit()) || crate::cli::well_formed_job_id(selector)
    });
    for id in &bad {
        eprintln!("qstat: illegally formed job identifier: {id}");
    }
    let first_code = if bad.is_empty() { exit::SUCCESS } else { exit::FAILURE };
    if selectors.is_empty() && !bad.is_empty() {
        return first_code;
    }
    let mut conn = match crate::cli::connect("qstat") {
        Ok(conn) => conn,
        Err(code) => return code,
    };
    let users: Vec<String> =
        args.users.iter().flat_map(|list| list.split(',')).map(|user| user.trim().to_string()).collect();
    let mut request = ClientRequest::StatusJob {
        selectors,
        history: args.history || args.finished,
        users,
        attrs: wanted(args),
        subjobs: args.subjobs,
        arrays_only: args.arrays_only,
        rows: in_rows(args),
    };
    let mut reply = conn.request_all(&request);
    // TORQUE's -x is XML of every attribute: ask again for all of them.
    let torque_reply = matches!(
        &reply,
        Ok(ServerReply::Jobs { flavor: Flavor::Torque, .. } | ServerReply::Rows { flavor: Flavor::Torque, .. })
    );
    if let (true, true, ClientRequest::StatusJob { attrs, rows, .. }) =
        (torque_reply, xml_wanted(args, Flavor::Torque), &mut request)
    {
        *rows = false;
        if attrs.take().is_some() {
            reply = conn.request_all(&request);
        }
    }
    let (server, mut jobs, errors, flavor) = match reply {
        Ok(ServerReply::Jobs { server, jobs, errors, flavor, .. }) => (server, jobs, errors, flavor),
        Ok(ServerReply::Rows { rows, errors, flavor, .. }) => {
            let columns = wanted(args).unwrap_or_default();
            return print_rows(args, &columns, &rows, errors, flavor, first_code);
        }
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
    if args.hide_completed {
        jobs.retain(|job| job.get("job_state") != Some("C"));
    }
    let torque = flavor == Flavor::Torque;
    if args.estimated && torque {
        // What OpenPBS's qstat says when the server cannot give estimated start times.
        eprintln!("qstat: -T option is unavailable.");
        return exit::FAILURE;
    }
    // As in OpenPBS, the state filters choose among listed jobs; a job asked for by id is shown.
    let by_id = args.selectors.iter().any(|selector| selector.starts_with(|c: char| c.is_ascii_digit()));
    if let Some(letters) = state_filter(args).filter(|_| !by_id) {
        jobs.retain(|job| job.get("job_state").is_some_and(|state| !state.is_empty() && letters.contains(state)));
    }
    let text = if args.format.as_deref() == Some("dsv") {
        let delimiter = args.delimiter.as_deref().unwrap_or(output::dsv::DEFAULT_DELIMITER);
        output::qstat_dsv_with(&jobs, delimiter, output::ctime_text)
    } else if args.format.is_some() {
        output::qstat_json(&server, &jobs, crate::cli::now(), env!("CARGO_PKG_VERSION"))
    } else if xml_wanted(args, flavor) {
        // TORQUE prints an empty document for an empty listing, but nothing for unknown ids.
        if jobs.is_empty() && !errors.is_empty() {
            String::new()
        } else {
            output::qstat_xml(&jobs)
        }
    } else if args.full {
        output::qstat_full(&jobs, !(args.one_line || args.wide), flavor)
    } else if alternate(args) {
        let opts = AltOptions {
            nodes: args.nodes,
            one_line: args.one_line,
            comment: args.comment,
            server_comment: None,
            sizes: size_unit(args),
            estimated: None,
        };
        let opts = if args.estimated {
            let now = crate::cli::now();
            crate::qstat_estimated::sort_by_estimated_start(&mut jobs, now);
            AltOptions { estimated: Some(output::time::EstClock { now, tm: pbslog::time::Tm::local }), ..opts }
        } else {
            opts
        };
        if torque {
            output::qstat_alternate_torque(&server, &jobs, &opts)
        } else {
            output::qstat_alternate(&server, &jobs, &opts)
        }
    } else if torque {
        output::qstat_default_torque(&jobs)
    } else {
        output::qstat_default(&jobs)
    };
    crate::cli::print_listing("qstat", &text, errors, first_code)
}
