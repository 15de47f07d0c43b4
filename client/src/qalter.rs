//! `qalter`: change attributes of queued (and, for managers, some of running) jobs with qsub's
//! option letters. Values are checked here as qsub checks them (job name, `-l` grammar with a
//! caret under the bad token, `-j`/`-r` choices, priority as a number) and again by the server.
//! Sends `AlterJob` (handled by `server/src/handlers/alter_job.rs`). Silent on success; one
//! stderr line per failed id; exit code of the last failure; usage errors exit 2.

use crate::exit;
use crate::submit::{caret_failure, check_resources, std_path};
use clap::Parser;
use job::spec::Join;
use proto::{ClientRequest, JobAlteration};
use std::process::ExitCode;

/// qalter's options: qsub's letters for the attributes a job can change.
#[derive(Parser, Debug, Default)]
#[command(name = "qalter", disable_help_flag = true, disable_version_flag = true)]
struct QalterOpts {
    #[arg(short = 'a')]
    execution_time: Option<String>,
    #[arg(short = 'A')]
    account: Option<String>,
    #[arg(short = 'c')]
    checkpoint: Option<String>,
    #[arg(short = 'e')]
    error: Option<String>,
    #[arg(short = 'h')]
    hold: Option<String>,
    #[arg(short = 'j', value_parser = ["oe", "eo", "n"])]
    join: Option<String>,
    #[arg(short = 'k')]
    keep: Option<String>,
    #[arg(short = 'l')]
    resources: Vec<String>,
    #[arg(short = 'm')]
    mail_points: Option<String>,
    #[arg(short = 'M')]
    mail_users: Option<String>,
    #[arg(short = 'N')]
    name: Option<String>,
    #[arg(short = 'o')]
    output: Option<String>,
    #[arg(short = 'p', allow_negative_numbers = true)]
    priority: Option<i32>,
    #[arg(short = 'P')]
    project: Option<String>,
    #[arg(short = 'r', value_parser = ["y", "n"])]
    rerunnable: Option<String>,
    #[arg(short = 'R')]
    remove: Option<String>,
    #[arg(short = 'S')]
    shell: Option<String>,
    #[arg(short = 'u')]
    user: Option<String>,
    #[arg(short = 'v')]
    variables: Vec<String>,
    #[arg(short = 'W')]
    extra: Vec<String>,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    #[arg(required = true)]
    ids: Vec<String>,
}

/// OpenPBS's usage text, with the options minipbs supports (plus TORQUE's `-v`).
pub const USAGE: &str = "usage: qalter [-a date_time] [-A account_string] [-c interval] [-e path]
\t[-h hold_list] [-j oe|eo|n] [-k keep] [-l resource_list] [-m mail_options]
\t[-M user_list] [-N jobname] [-o path] [-p priority] [-P project] [-r y|n]
\t[-S path] [-v variable_list] job_identifier...";

/// A usage error: the message, an optional detail (the `-l` caret display), then the usage.
#[derive(Debug)]
struct UsageError {
    message: String,
    detail: Option<String>,
}

fn usage_error(message: impl Into<String>) -> UsageError {
    UsageError { message: message.into(), detail: None }
}

/// Entry point of the `qalter` binary.
pub fn main() -> ExitCode {
    let opts: QalterOpts = match crate::cli::parse("qalter", USAGE) {
        Ok(opts) => opts,
        Err(code) => return code,
    };
    let changes = match alteration(&opts) {
        Ok(changes) => changes,
        Err(error) => {
            eprintln!("qalter: {}", error.message);
            if let Some(detail) = error.detail {
                eprintln!("{detail}");
            }
            eprintln!("{USAGE}");
            return exit::exit(exit::USAGE);
        }
    };
    exit::exit(crate::ids::send_for_ids("qalter", opts.ids, |ids| ClientRequest::AlterJob {
        ids,
        changes: Box::new(changes.clone()),
    }))
}

/// Turns the options into the changes to ask for, checking each value as qsub does.
fn alteration(opts: &QalterOpts) -> Result<JobAlteration, UsageError> {
    refuse_unsupported(opts)?;
    if let Some(name) = &opts.name {
        job::spec::check_job_name(name).map_err(|reason| usage_error(format!("illegal -N value: {reason}")))?;
    }
    if let Some(hold) = &opts.hold {
        if hold.is_empty() || !(hold == "n" || hold.chars().all(|c| "uos".contains(c))) {
            return Err(usage_error(format!("illegal -h value: {hold} (u, o, s or n)")));
        }
    }
    let mut resources = Vec::new();
    for value in &opts.resources {
        let pairs = check_resources(value).map_err(|error| {
            let failure = caret_failure(exit::USAGE, None, &error);
            UsageError { message: failure.message, detail: failure.detail }
        })?;
        job::resources::merge_override(&mut resources, &pairs);
    }
    let variables = crate::submit_env::named_variables(&opts.variables).map_err(usage_error)?;
    let mail_users = match &opts.mail_users {
        Some(list) => {
            Some(job::mail::parse_list(list).map_err(|error| usage_error(format!("illegal -M value: {error}")))?)
        }
        None => None,
    };
    let execution_time = match &opts.execution_time {
        Some(text) => Some(
            crate::submit::execution_time(text, crate::cli::now()).ok_or_else(|| usage_error("illegal -a value"))?,
        ),
        None => None,
    };
    if let Some(checkpoint) = &opts.checkpoint {
        job::options::check_checkpoint(checkpoint)
            .map_err(|error| usage_error(format!("illegal -c value: {error}")))?;
    }
    if let Some(project) = &opts.project {
        job::options::check_project(project).map_err(|error| usage_error(format!("illegal -P value: {error}")))?;
    }
    let (cwd, host) = (crate::submit_env::workdir(), crate::submit_env::hostname());
    Ok(JobAlteration {
        name: opts.name.clone(),
        resources,
        priority: opts.priority,
        hold_types: opts.hold.clone(),
        account: opts.account.clone(),
        join: opts.join.as_deref().map(|join| match join {
            "oe" => Join::OutErr,
            "eo" => Join::ErrOut,
            _ => Join::No,
        }),
        keep: opts.keep.clone(),
        mail_points: opts.mail_points.clone(),
        mail_users,
        output_path: opts.output.as_deref().map(|path| std_path(&cwd, &host, path)),
        error_path: opts.error.as_deref().map(|path| std_path(&cwd, &host, path)),
        rerunnable: opts.rerunnable.as_deref().map(|value| value == "y"),
        shell: opts.shell.clone(),
        variables,
        execution_time,
        checkpoint: opts.checkpoint.clone(),
        project: opts.project.clone(),
    })
}

/// OpenPBS options whose attributes minipbs does not have yet.
fn refuse_unsupported(opts: &QalterOpts) -> Result<(), UsageError> {
    let unsupported = [
        (opts.remove.is_some(), "-R (remove output)"),
        (opts.user.is_some(), "-u (user list)"),
        (!opts.extra.is_empty(), "-W (additional attributes)"),
    ];
    match unsupported.iter().find(|(given, _)| *given) {
        Some((_, what)) => Err(usage_error(format!("{what} is not supported yet by minipbs"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<JobAlteration, String> {
        let args = std::iter::once("qalter").chain(args.iter().copied());
        let opts = QalterOpts::try_parse_from(args).map_err(|error| error.kind().to_string())?;
        alteration(&opts).map_err(|error| match error.detail {
            Some(detail) => format!("{}\n{detail}", error.message),
            None => error.message,
        })
    }

    #[test]
    fn options_become_changes() {
        let changes =
            parse(&["-l", "walltime=00:00:03", "-l", "mem=1gb", "-N", "new", "-p", "-5", "-r", "n", "-j", "oe", "1"])
                .unwrap();
        assert_eq!(
            changes.resources,
            vec![("walltime".to_string(), "00:00:03".to_string()), ("mem".to_string(), "1gb".to_string())]
        );
        assert_eq!(changes.name.as_deref(), Some("new"));
        assert_eq!(changes.priority, Some(-5));
        assert_eq!(changes.rerunnable, Some(false));
        assert_eq!(changes.join, Some(Join::OutErr));
        let changes = parse(&["-o", "/tmp/out", "-M", "a@x,b", "-v", "A=1,B=2", "1"]).unwrap();
        assert!(changes.output_path.unwrap().ends_with(":/tmp/out"));
        assert_eq!(changes.mail_users, Some(vec!["a@x".to_string(), "b".to_string()]));
        assert_eq!(changes.variables, vec![("A".into(), "1".into()), ("B".into(), "2".into())]);
    }

    #[test]
    fn bad_values_are_usage_errors() {
        insta::assert_snapshot!(parse(&["-l", "walltime=1:00:00,,mem=1gb", "1"]).unwrap_err());
        assert!(parse(&["-N", "bad name", "1"]).unwrap_err().starts_with("illegal -N value"));
        assert!(parse(&["-h", "x", "1"]).unwrap_err().starts_with("illegal -h value"));
        assert!(parse(&["-M", "x@example.org,-be", "1"]).unwrap_err().starts_with("illegal -M value"));
        assert_eq!(parse(&["-a", "2460", "1"]).unwrap_err(), "illegal -a value");
        assert!(parse(&["-c", "often", "1"]).unwrap_err().starts_with("illegal -c value"));
        assert!(parse(&["-P", "a b", "1"]).unwrap_err().starts_with("illegal -P value"));
        assert_eq!(parse(&["-R", "oe", "1"]).unwrap_err(), "-R (remove output) is not supported yet by minipbs");
        let changes = parse(&["-a", "2359", "-c", "n", "-P", "proj", "1"]).unwrap();
        assert!(changes.execution_time.is_some());
        assert_eq!((changes.checkpoint.as_deref(), changes.project.as_deref()), (Some("n"), Some("proj")));
        assert!(parse(&["-p", "high", "1"]).is_err());
        assert!(parse(&["-j", "y", "1"]).is_err());
        assert!(parse(&["-N", "x"]).is_err(), "a job id is required");
    }
}
