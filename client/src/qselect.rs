//! `qselect`: print the ids of the jobs that match criteria, one per line (OpenPBS options, and
//! TORQUE's `-e` and state `C`; OpenPBS's `qselect.1B`). Sends `StatusJob` for the attributes the
//! criteria need (handled by `server/src/handlers/status_job.rs`; `-q` becomes the request's
//! destination, so an unknown queue is the server's error) and filters with the pure
//! predicate in `select.rs`. Nothing matched: no output, exit 0. Malformed criteria:
//! `qselect: illegal -X value` and the usage, exit 2; an unknown resource or a bad resource or
//! priority value: the PBS error text and its exit code, as OpenPBS's qselect does.

use crate::exit;
use crate::select::{self, Op, ResourceListError, Selection, Test};
use clap::Parser;
use proto::{ClientRequest, ErrorCode, ServerReply};
use std::io::Write;
use std::process::ExitCode;

/// qselect's options; every one may be repeated (each adds a criterion).
#[derive(Parser, Debug, Default)]
#[command(name = "qselect", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// `[.op.]date_time`: Execution_Time.
    #[arg(short = 'a')]
    execution: Vec<String>,
    #[arg(short = 'A')]
    account: Vec<String>,
    /// TORQUE: jobs in execution queues only (every queue here is one).
    #[arg(short = 'e')]
    exec_only: bool,
    /// `[.op.]interval`: Checkpoint.
    #[arg(short = 'c')]
    checkpoint: Vec<String>,
    #[arg(short = 'h')]
    holds: Vec<String>,
    /// Finished (history) jobs only.
    #[arg(short = 'H')]
    finished: bool,
    /// Array jobs only.
    #[arg(short = 'J')]
    arrays: bool,
    #[arg(short = 'l')]
    resources: Vec<String>,
    #[arg(short = 'N')]
    name: Vec<String>,
    #[arg(short = 'p')]
    priority: Vec<String>,
    #[arg(short = 'P')]
    project: Vec<String>,
    #[arg(short = 'q')]
    destination: Vec<String>,
    #[arg(short = 'r')]
    rerunable: Vec<String>,
    #[arg(short = 's')]
    states: Vec<String>,
    /// `subopt[.op.]date_time`: a time attribute (`c` ctime, `e` etime, `g` eligible_time,
    /// `m` mtime, `q` qtime, `s` stime, `a` Execution_Time).
    #[arg(short = 't')]
    times: Vec<String>,
    /// Subjobs instead of their array parents.
    #[arg(short = 'T')]
    subjobs: bool,
    #[arg(short = 'u')]
    users: Vec<String>,
    /// Finished jobs too.
    #[arg(short = 'x')]
    history: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
}

const USAGE: &str = "usage: qselect [-a [op]date_time] [-A account_string] [-c [op]interval]
\t[-h hold_list] [-H] [-J] [-l resource_list] [-N name] [-p [op]priority]
\t[-q destination] [-r y|n] [-s states] [-t subopt[op]date_time] [-T] [-P project_name]
\t[-x] [-u user_name]
       qselect --version";

/// Why the criteria cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
enum BadCriteria {
    /// `illegal -<option> value`, usage, exit 2.
    Illegal(char),
    /// A PBS error (unknown resource, bad value): its text, exit with its number.
    Pbs(ErrorCode),
}

/// The selection and the destination (`-q`) the command line asks for. `now` (epoch seconds)
/// completes dates that leave out the day, month or year.
fn selection(args: &Args, now: i64) -> Result<(Selection, Option<String>), BadCriteria> {
    use BadCriteria::*;
    let mut tests = Vec::new();
    for text in &args.execution {
        let (op, date) = select::split_op(text);
        let epoch = date_epoch(date, now).ok_or(Illegal('a'))?;
        tests.push(Test::Time { attr: "Execution_Time", op, epoch });
    }
    for text in &args.times {
        let mut chars = text.chars();
        let attr = match chars.next() {
            Some('a') => "Execution_Time",
            Some('c') => "ctime",
            Some('e') => "etime",
            Some('g') => "eligible_time",
            Some('m') => "mtime",
            Some('q') => "qtime",
            Some('s') => "stime",
            _ => return Err(Illegal('t')),
        };
        let (op, date) = select::split_op(chars.as_str());
        let epoch = date_epoch(date, now).ok_or(Illegal('t'))?;
        tests.push(Test::Time { attr, op, epoch });
    }
    for (attr, values) in [("Account_Name", &args.account), ("Job_Name", &args.name), ("project", &args.project)] {
        for value in values {
            tests.push(Test::Text { attr, op: Op::Eq, value: value.clone() });
        }
    }
    for text in &args.checkpoint {
        let (op, value) = select::split_op(text);
        if value.trim().is_empty() {
            return Err(Illegal('c'));
        }
        tests.push(Test::Checkpoint { op, value: value.trim().to_string() });
    }
    for text in &args.holds {
        let (op, holds) = select::split_op(text);
        let holds = holds.trim();
        if !select::valid_holds(holds) {
            return Err(Illegal('h'));
        }
        tests.push(Test::Hold { op, holds: holds.to_string() });
    }
    for text in &args.resources {
        let list =
            select::parse_resource_list(text, &job::resources::KNOWN_RESOURCES).map_err(|error| match error {
                ResourceListError::Malformed => Illegal('l'),
                ResourceListError::Unknown(_) => Pbs(ErrorCode::UnknownResource),
            })?;
        for test in &list {
            if let Test::Resource { name, value, .. } = test {
                select::check_resource_value(name, value).map_err(|_| Pbs(ErrorCode::BadAttributeValue))?;
            }
        }
        tests.extend(list);
    }
    for text in &args.priority {
        let (op, value) = select::split_op(text);
        let value: i64 = value.trim().parse().map_err(|_| Pbs(ErrorCode::BadAttributeValue))?;
        if !(-1024..=1023).contains(&value) {
            return Err(Pbs(ErrorCode::BadAttributeValue));
        }
        tests.push(Test::Priority { op, value });
    }
    for text in &args.rerunable {
        match text.trim_start().chars().next() {
            Some('y') => tests.push(Test::Rerunable(true)),
            Some('n') => tests.push(Test::Rerunable(false)),
            _ => return Err(Illegal('r')),
        }
    }
    for text in &args.states {
        let (op, letters) = select::split_op(text);
        let letters = letters.trim();
        if letters.is_empty() || !letters.chars().all(|c| "BCEFHMQRSTUWX".contains(c)) {
            return Err(Illegal('s'));
        }
        tests.push(Test::States { op, letters: letters.to_string() });
    }
    if args.finished {
        tests.push(Test::States { op: Op::Eq, letters: "FM".to_string() });
    }
    if !args.users.is_empty() {
        let users: Vec<String> = args.users.iter().flat_map(|list| list.split(',')).map(str::to_string).collect();
        if users.iter().any(|user| user.is_empty()) {
            return Err(Illegal('u'));
        }
        tests.push(Test::Users(users));
    }
    if args.arrays {
        tests.push(Test::Array);
    }
    let destination = args.destination.last().cloned();
    if destination.as_deref().is_some_and(|text| text.is_empty() || text.matches('@').count() > 1) {
        return Err(Illegal('q'));
    }
    let selection = Selection { tests, history: args.history || args.finished, subjobs: args.subjobs };
    Ok((selection, destination))
}

/// The attributes the predicate reads.
const WANTED: [&str; 18] = [
    "Job_Name",
    "Job_Owner",
    "job_state",
    "queue",
    "Account_Name",
    "Checkpoint",
    "ctime",
    "etime",
    "eligible_time",
    "Execution_Time",
    "Hold_Types",
    "mtime",
    "Priority",
    "project",
    "qtime",
    "Rerunable",
    "Resource_List",
    "stime",
];

/// Entry point of the `qselect` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qselect", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let (selection, destination) = match selection(&args, crate::cli::now()) {
        Ok(chosen) => chosen,
        Err(BadCriteria::Illegal(option)) => {
            eprintln!("qselect: illegal -{option} value");
            if option == 'l' {
                eprintln!("resource_list: {}", args.resources.join(","));
            }
            eprintln!("{USAGE}");
            return exit::exit(exit::USAGE);
        }
        Err(BadCriteria::Pbs(code)) => {
            eprintln!("qselect: {}", code.text());
            return exit::exit(exit::for_error(code));
        }
    };
    exit::exit(run(&selection, destination))
}

fn run(selection: &Selection, destination: Option<String>) -> u8 {
    let mut conn = match crate::cli::connect("qselect") {
        Ok(conn) => conn,
        Err(code) => return code,
    };
    let request = ClientRequest::StatusJob {
        selectors: destination.into_iter().collect(),
        history: selection.history,
        users: Vec::new(),
        attrs: Some(WANTED.iter().map(|name| name.to_string()).collect()),
        subjobs: selection.subjobs,
        arrays_only: false,
        rows: false,
    };
    let (jobs, errors) = match conn.request_all(&request) {
        Ok(ServerReply::Jobs { jobs, errors, .. }) => (jobs, errors),
        Ok(ServerReply::Error(error)) => (Vec::new(), vec![error]),
        Ok(other) => {
            eprintln!("qselect: unexpected reply from server: {other:?}");
            return exit::FAILURE;
        }
        Err(error) => {
            eprintln!("qselect: {error}");
            return error.exit_code();
        }
    };
    if let Some(error) = errors.last() {
        // OpenPBS's qselect prints the server's error text alone (`qselect: Unknown queue`).
        eprintln!("qselect: {}", error.code.text());
        return exit::for_error(error.code);
    }
    let mut out = String::new();
    for job in jobs.iter().filter(|job| selection.matches(job)) {
        out.push_str(&job.id);
        out.push('\n');
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    exit::SUCCESS
}

/// Epoch seconds of an OpenPBS date (`[[[[CC]YY]MM]DD]hhmm[.SS]`) in local time. Pieces left
/// out come from `now`; a time of day alone that has already passed today means tomorrow.
fn date_epoch(text: &str, now: i64) -> Option<i64> {
    let parts = select::parse_date(text)?;
    let mut tm = pbslog::time::Tm::local(now);
    if let Some(year) = parts.year {
        tm.year = i64::from(year);
    }
    if let Some(month) = parts.month {
        tm.month = month;
    }
    if let Some(day) = parts.day {
        tm.day = day;
    }
    (tm.hour, tm.minute, tm.second) = (parts.hour, parts.minute, parts.second);
    let epoch = tm.local_epoch()?;
    Some(if parts.day.is_none() && epoch < now { epoch + 24 * 60 * 60 } else { epoch })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Selection, Option<String>), BadCriteria> {
        let args = Args::try_parse_from(std::iter::once("qselect").chain(args.iter().copied())).unwrap();
        selection(&args, 1_700_000_000)
    }

    #[test]
    fn malformed_criteria_name_the_option() {
        for (args, option) in [
            (&["-h", "x"][..], 'h'),
            (&["-h", ""], 'h'),
            (&["-l", "ncpus=4"], 'l'),
            (&["-r", "maybe"], 'r'),
            (&["-s", "Z"], 's'),
            (&["-a", "tomorrow"], 'a'),
            (&["-t", "z1200"], 't'),
            (&["-t", "c12"], 't'),
            (&["-u", "alice,"], 'u'),
        ] {
            assert_eq!(parse(args).err(), Some(BadCriteria::Illegal(option)), "{args:?}");
        }
        assert_eq!(parse(&["-l", "frobs.eq.1"]).err(), Some(BadCriteria::Pbs(ErrorCode::UnknownResource)));
        assert_eq!(parse(&["-l", "walltime.gt.soon"]).err(), Some(BadCriteria::Pbs(ErrorCode::BadAttributeValue)));
        assert_eq!(parse(&["-p", "high"]).err(), Some(BadCriteria::Pbs(ErrorCode::BadAttributeValue)));
    }

    #[test]
    fn criteria_become_tests() {
        let (selection, destination) =
            parse(&["-s", ".ne.QH", "-p", ".ge.5", "-u", "alice,bob", "-q", "workq", "-H", "-l", "ncpus.gt.2"])
                .unwrap();
        assert_eq!(destination.as_deref(), Some("workq"));
        assert!(selection.history);
        assert_eq!(
            selection.tests,
            vec![
                Test::Resource { name: "ncpus".into(), op: Op::Gt, value: "2".into() },
                Test::Priority { op: Op::Ge, value: 5 },
                Test::States { op: Op::Ne, letters: "QH".into() },
                Test::States { op: Op::Eq, letters: "FM".into() },
                Test::Users(vec!["alice".into(), "bob".into()]),
            ]
        );
        let (selection, _) = parse(&["-a", ".lt.1200", "-t", "c.gt.202001010000"]).unwrap();
        assert!(matches!(selection.tests[0], Test::Time { attr: "Execution_Time", op: Op::Lt, .. }));
        assert!(matches!(selection.tests[1], Test::Time { attr: "ctime", op: Op::Gt, .. }));
    }

    #[test]
    fn a_time_of_day_already_past_means_tomorrow() {
        let now = 1_700_000_000;
        let today = date_epoch("0000", now).unwrap();
        assert!(today > now && today - now <= 24 * 3600, "{today} vs {now}");
        let dated = date_epoch("202001010000", now).unwrap();
        assert!(dated < now);
    }
}
