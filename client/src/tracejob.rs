//! `tracejob`: everything the logs say about a job (pbs-reference section 8.5), merged by
//! time: the accounting files of the last `-n` days (`server_priv/accounting/YYYYMMDD`), the
//! daemon logs `minipbs up` writes (`logs/*.log`: the server's and each mom's, told apart by
//! the line's object, `Server@...` or `pbs_mom`) and the packaged daemons write
//! (`server_logs/pbs_server.log`, `mom_logs/pbs_mom.log`), and OpenPBS's day files
//! (`server_logs/`, `mom_logs/`, `sched_logs/`) where a real PBS_HOME has them.
//!
//! Owns: finding the files, selecting and ordering the job's lines ([`select`], pure).
//! Printing is `output::tracejob`. Must not: talk to the server (tracejob reads logs only).

use crate::conf;
use crate::exit;
use crate::output::tracejob::{not_found, trace, TraceLine};
use clap::Parser;
use pbslog::line::AccountingLine;
use pbslog::{LogLine, Tm};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// tracejob's options.
#[derive(Parser, Debug)]
#[command(name = "tracejob", disable_version_flag = true)]
struct Args {
    /// Days of logs to search, today included.
    #[arg(short = 'n', default_value_t = 1)]
    days: u32,
    /// Skip the accounting log.
    #[arg(short = 'a')]
    no_accounting: bool,
    /// Skip the server log.
    #[arg(short = 's')]
    no_server: bool,
    /// Skip the scheduler log.
    #[arg(short = 'l')]
    no_scheduler: bool,
    /// Skip the mom logs.
    #[arg(short = 'm')]
    no_mom: bool,
    /// Toggle filtering of excessive messages (off by default).
    #[arg(short = 'z')]
    filter_excessive: bool,
    /// How many equal messages are excessive (with -z).
    #[arg(short = 'c', default_value_t = 15)]
    count: usize,
    /// Terminal width for wrapping (default: the terminal's; 0 = no wrapping).
    #[arg(short = 'w')]
    columns: Option<usize>,
    /// PBS_HOME to read (default: PBS_HOME of pbs.conf).
    #[arg(short = 'p')]
    path: Option<PathBuf>,
    /// Hide entries of these event classes: error, system, admin, job, job_usage, security,
    /// sched, debug, debug2, or a hex mask.
    #[arg(short = 'f')]
    filters: Vec<String>,
    /// Verbose: name log files that cannot be read.
    #[arg(short = 'v')]
    verbose: bool,
    #[arg(required = true)]
    ids: Vec<String>,
}

const USAGE: &str =
    "usage: tracejob [-a|s|l|m|v] [-w size] [-p path] [-n days] [-f filter_type] [-z] [-c count] job_identifier...";

/// Entry point of the `tracejob` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("tracejob", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let mut hidden = 0u32;
    for filter in &args.filters {
        match event_mask(filter) {
            Some(mask) => hidden |= mask,
            None => return crate::cli::usage_error("tracejob", USAGE, &format!("unknown -f filter type {filter:?}")),
        }
    }
    let loaded = conf::load();
    let home = match (&args.path, &loaded) {
        (Some(path), _) => path.clone(),
        (None, Ok(conf)) => match &conf.home {
            Some(home) => home.clone(),
            None => {
                eprintln!("tracejob: {} does not name PBS_HOME: use -p PBS_HOME", conf.source.display());
                return exit::exit(exit::FAILURE);
            }
        },
        (None, Err(message)) => {
            eprintln!("tracejob: {message}");
            return exit::exit(exit::FAILURE);
        }
    };
    let server_name = loaded.map(|conf| conf.server_name).unwrap_or_default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs() as i64)
        .unwrap_or(0);
    let sources = read_sources(&home, &args, now);
    let columns = args.columns.unwrap_or_else(terminal_columns);
    let mut code = exit::SUCCESS;
    let mut stdout = std::io::stdout().lock();
    for id in &args.ids {
        let id = normalize(id, &server_name);
        let mut lines = select(&id, &sources, since(now, args.days));
        lines.retain(|line| line.event & hidden == 0);
        if args.filter_excessive {
            drop_excessive(&mut lines, args.count);
        }
        if lines.is_empty() {
            eprint!("{}", not_found(&id, args.days));
            code = exit::FAILURE;
            continue;
        }
        let shown: Vec<TraceLine> = lines.into_iter().map(|line| line.line).collect();
        let _ = stdout.write_all(trace(&id, &shown, columns).as_bytes());
    }
    let _ = stdout.flush();
    exit::exit(code)
}

/// `12` -> `12.<server>`, as qstat names jobs; ids with a server part stay as they are.
pub fn normalize(id: &str, server_name: &str) -> String {
    if id.contains('.') || server_name.is_empty() {
        id.to_string()
    } else {
        format!("{id}.{server_name}")
    }
}

/// One log file's text and what kind of log it is.
#[derive(Debug, Clone)]
pub struct Source {
    pub kind: SourceKind,
    pub text: String,
}

/// Accounting records, or daemon log lines (whose object names the daemon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Accounting,
    Daemon,
}

/// A selected line with what ordering and filtering need.
#[derive(Debug, Clone)]
struct Selected {
    /// Epoch seconds and microseconds (0 for accounting records, whose stamps have seconds).
    time: (i64, u32),
    event: u32,
    line: TraceLine,
}

/// The lines naming job `id` in `sources` (in reading order), from time `since` on, in time
/// order: the daemons' high-resolution stamps order their lines to the microsecond; an
/// accounting record (stamped to the second) comes first among the lines of its second, as
/// OpenPBS's tracejob, which reads the accounting file first, shows it.
fn select(id: &str, sources: &[Source], since: i64) -> Vec<Selected> {
    let mut selected = Vec::new();
    for source in sources {
        for text in source.text.lines() {
            let entry = match source.kind {
                SourceKind::Accounting => AccountingLine::parse(text)
                    .filter(|record| record.id == id)
                    .map(|record| (record.date, 'A', 0, record.message)),
                SourceKind::Daemon => LogLine::parse(text).filter(|line| line.name == id).map(|line| {
                    let event = u32::from_str_radix(&line.event, 16).unwrap_or(0);
                    (line.date, source_letter(&line.object), event, line.message)
                }),
            };
            let Some((date, source, event, message)) = entry else { continue };
            let Some(time) = Tm::parse_pbs_date(&date).and_then(|tm| tm.local_epoch()) else { continue };
            if time >= since {
                let time = (time, pbslog::line::micros(&date));
                // Shown to the second, in the 20 columns of tracejob's layout.
                let date = date.split('.').next().unwrap_or_default().to_string();
                selected.push(Selected { time, event, line: TraceLine { date, source, message } });
            }
        }
    }
    let rank = |source: char| match source {
        'A' => 0,
        'S' => 1,
        'M' => 2,
        _ => 3,
    };
    selected.sort_by_key(|line| (line.time, rank(line.line.source)));
    selected
}

/// `S` for a server line, `M` for a mom's, `L` for the scheduler's.
fn source_letter(object: &str) -> char {
    if object.starts_with("Server") {
        'S'
    } else if object.contains("sched") {
        'L'
    } else {
        'M'
    }
}

/// OpenPBS `-z`: of a message that appears `count` times or more, only one is shown.
fn drop_excessive(lines: &mut Vec<Selected>, count: usize) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for line in lines.iter() {
        *seen.entry(line.line.message.clone()).or_default() += 1;
    }
    let mut shown = std::collections::HashSet::new();
    lines.retain(|line| seen[&line.line.message] < count || shown.insert(line.line.message.clone()));
}

/// The event classes `-f` hides (PBSEVENT_* bits).
fn event_mask(name: &str) -> Option<u32> {
    let mask = match name {
        "error" => 0x0001,
        "system" => 0x0002,
        "admin" => 0x0004,
        "job" => 0x0008,
        "job_usage" => 0x0010,
        "security" => 0x0020,
        "sched" => 0x0040,
        "debug" => 0x0080,
        "debug2" => 0x0100,
        "resv" => 0x0200,
        "debug3" => 0x0400,
        "debug4" => 0x0800,
        "force" => 0x8000,
        other if other.starts_with(|c: char| c.is_ascii_digit()) => u32::from_str_radix(other, 16).ok()?,
        _ => return None,
    };
    Some(mask)
}

/// Start of the oldest day searched: local midnight `days - 1` days ago.
fn since(now: i64, days: u32) -> i64 {
    let today = Tm::local(now);
    let midnight = Tm { hour: 0, minute: 0, second: 0, ..today }.local_epoch().unwrap_or(now - now % 86_400);
    midnight - i64::from(days.max(1) - 1) * 86_400
}

/// Reads the log files of the last `args.days` days in OpenPBS's order: accounting, server,
/// moms, scheduler.
fn read_sources(home: &Path, args: &Args, now: i64) -> Vec<Source> {
    let day_names: Vec<String> =
        (0..args.days.max(1)).map(|back| Tm::local(now - i64::from(back) * 86_400).file_day()).collect();
    let mut files: Vec<(SourceKind, PathBuf)> = Vec::new();
    let day_files = |dir: &str| day_names.iter().map(|day| home.join(dir).join(day)).collect::<Vec<_>>();
    if !args.no_accounting {
        files.extend(day_files("server_priv/accounting").into_iter().map(|path| (SourceKind::Accounting, path)));
    }
    for (skip, dir) in [(args.no_server, "server_logs"), (args.no_mom, "mom_logs"), (args.no_scheduler, "sched_logs")] {
        if !skip {
            files.extend(day_files(dir).into_iter().map(|path| (SourceKind::Daemon, path)));
        }
    }
    // minipbs's whole-life logs: `minipbs up`'s `logs/`, the packaged daemons' `server_logs/`
    // and `mom_logs/` (`pbs_server.log`, `pbs_mom.log`: packaging/*/start-pbs_* --log).
    for dir in ["logs", "server_logs", "mom_logs"] {
        files.extend(whole_logs(&home.join(dir)).into_iter().map(|path| (SourceKind::Daemon, path)));
    }
    let mut sources = Vec::new();
    for (kind, path) in files {
        match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let text = if kind == SourceKind::Daemon { keep_sources(&text, args) } else { text };
                sources.push(Source { kind, text });
            }
            Err(error) if args.verbose => eprintln!("tracejob: {}: {error}", path.display()),
            Err(_) => {}
        }
    }
    sources
}

/// The `*.log` files of `dir`: `server.log` first, then the others in name order.
fn whole_logs(dir: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "log"))
                .collect()
        })
        .unwrap_or_default();
    logs.sort_by_key(|path| (path.file_name().is_none_or(|name| name != "server.log"), path.clone()));
    logs
}

/// Drops the daemon lines of sources skipped with `-s`, `-m`, `-l`.
fn keep_sources(text: &str, args: &Args) -> String {
    if !(args.no_server || args.no_mom || args.no_scheduler) {
        return text.to_string();
    }
    let keep = |line: &&str| match LogLine::parse(line).map(|line| source_letter(&line.object)) {
        Some('S') => !args.no_server,
        Some('M') => !args.no_mom,
        Some('L') => !args.no_scheduler,
        _ => false,
    };
    text.lines().filter(keep).map(|line| format!("{line}\n")).collect()
}

/// The terminal's width, 0 when stdout is not a terminal.
fn terminal_columns() -> usize {
    crate::terminal::size_of(std::io::stdout()).map_or(0, |size| usize::from(size.cols))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(tm: &str) -> i64 {
        Tm::parse_pbs_date(tm).unwrap().local_epoch().unwrap()
    }

    #[test]
    fn ids_are_named_as_qstat_names_them() {
        assert_eq!(normalize("12", "head"), "12.head");
        assert_eq!(normalize("12[]", "head"), "12[].head");
        assert_eq!(normalize("12.other", "head"), "12.other");
    }

    #[test]
    fn selects_the_job_lines_in_time_order() {
        let accounting = "11/21/2023 22:26:00;Q;12.head;queue=workq\n11/21/2023 22:26:00;Q;13.head;queue=workq\n";
        let server = "11/21/2023 22:26:00.000100;0008;Server@head;Job;12.head;Job Queued\n\
                      11/21/2023 22:25:00.000000;0008;Server@head;Job;12.head;too old\n\
                      garbage line\n\
                      11/21/2023 22:26:05.000200;0008;Server@head;Job;12.head;Job Run\n\
                      11/21/2023 22:26:09;0008;Server@head;Job;12.head;Exit_status=0\n";
        let mom = "11/21/2023 22:26:05.000100;0008;pbs_mom;Job;12.head;job started\n";
        let sources = [
            Source { kind: SourceKind::Daemon, text: server.to_string() },
            Source { kind: SourceKind::Daemon, text: mom.to_string() },
            Source { kind: SourceKind::Accounting, text: accounting.to_string() },
        ];
        let lines: Vec<String> = select("12.head", &sources, at("11/21/2023 22:26:00"))
            .into_iter()
            .map(|line| format!("{} {} {}", line.line.date, line.line.source, line.line.message))
            .collect();
        assert_eq!(
            lines,
            [
                "11/21/2023 22:26:00 A queue=workq",
                "11/21/2023 22:26:00 S Job Queued",
                "11/21/2023 22:26:05 M job started",
                "11/21/2023 22:26:05 S Job Run",
                "11/21/2023 22:26:09 S Exit_status=0",
            ]
        );
    }

    #[test]
    fn reads_the_packaged_daemons_logs() {
        let home = tempfile::tempdir().unwrap();
        let line = |object: &str| format!("11/21/2023 22:26:00.000100;0008;{object};Job;12.head;Job Queued\n");
        for (dir, file, object) in
            [("server_logs", "pbs_server.log", "Server@head"), ("mom_logs", "pbs_mom.log", "pbs_mom")]
        {
            std::fs::create_dir(home.path().join(dir)).unwrap();
            std::fs::write(home.path().join(dir).join(file), line(object)).unwrap();
        }
        std::fs::write(home.path().join("mom_logs").join("pbs_mom.log.1"), line("rotated")).unwrap();
        let args = Args::try_parse_from(["tracejob", "12"]).unwrap();
        let texts: Vec<String> = read_sources(home.path(), &args, 0).into_iter().map(|source| source.text).collect();
        assert_eq!(texts, [line("Server@head"), line("pbs_mom")], "rotated files are not read");
        let args = Args::try_parse_from(["tracejob", "-m", "12"]).unwrap();
        let texts: Vec<String> = read_sources(home.path(), &args, 0).into_iter().map(|source| source.text).collect();
        assert_eq!(texts, [line("Server@head"), String::new()], "-m drops the mom's lines");
    }

    #[test]
    fn filter_names() {
        assert_eq!(event_mask("job"), Some(8));
        assert_eq!(event_mask("80"), Some(0x80));
        assert_eq!(event_mask("bogus"), None);
    }
}
