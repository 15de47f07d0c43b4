//! What every command does the same way: parse its arguments with clap (help on stdout and
//! exit 0; a usage error as `<command>: <reason>` plus the usage line and exit 2) and open the
//! connection to the server (an error as `<command>: <reason>` and its exit code), and read the
//! clock (`now`, for qsub, qalter, qstat and qselect); print a listing with its errors.

use crate::conn::Connection;
use crate::exit;
use std::process::ExitCode;

/// Parses `args` (program name first) as `T`, or returns the exit code to end with.
pub fn parse_from<T: clap::Parser>(command: &str, usage: &str, args: &[String]) -> Result<T, ExitCode> {
    parse_from_code(command, usage, args, exit::USAGE)
}

/// [`parse_from`] for a command whose usage errors exit with `code` (OpenPBS's pbsnodes: 1).
pub fn parse_from_code<T: clap::Parser>(command: &str, usage: &str, args: &[String], code: u8) -> Result<T, ExitCode> {
    match T::try_parse_from(args) {
        Ok(parsed) => Ok(parsed),
        Err(error) if error.kind() == clap::error::ErrorKind::DisplayHelp => {
            print!("{error}");
            Err(exit::exit(exit::SUCCESS))
        }
        Err(error) => {
            let message = getopt_message(&error).unwrap_or_else(|| error.to_string());
            if message.is_empty() {
                eprintln!("{usage}");
                Err(exit::exit(code))
            } else {
                Err(usage_error_code(command, usage, &message, code))
            }
        }
    }
}

/// What the PBS commands (getopt) print for some parse errors: `invalid option -- 'Z'` for an
/// unknown option letter, `option requires an argument -- 'l'` for a missing value, and
/// nothing but the usage for missing operands. `None`: use clap's message.
fn getopt_message(error: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let invalid = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(text)) => Some(text.clone()),
        _ => None,
    };
    let letter = |text: &str| {
        let rest = text.strip_prefix('-').filter(|rest| !rest.starts_with('-'))?;
        rest.chars().next()
    };
    match error.kind() {
        ErrorKind::MissingRequiredArgument => Some(String::new()),
        // An extra operand: the usage alone, as OpenPBS's `optind < argc` check prints it.
        ErrorKind::UnknownArgument => match invalid? {
            text if !text.starts_with('-') => Some(String::new()),
            text => letter(&text).map(|c| format!("invalid option -- '{c}'")),
        },
        ErrorKind::InvalidValue | ErrorKind::NoEquals | ErrorKind::ValueValidation => {
            let text = invalid?;
            let c = letter(text.split_whitespace().next().unwrap_or(&text))?;
            let empty = error.get(ContextKind::InvalidValue).is_some_and(|value| value.to_string().is_empty());
            // OpenPBS's commands say `illegal -X value` for a value they cannot use.
            Some(if empty { format!("option requires an argument -- '{c}'") } else { format!("illegal -{c} value") })
        }
        _ => None,
    }
}

/// Parses the process's own arguments as `T`.
pub fn parse<T: clap::Parser>(command: &str, usage: &str) -> Result<T, ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    parse_from(command, usage, &args)
}

/// Prints `<command>: <first line of message>` and `usage` to stderr; returns exit code 2.
pub fn usage_error(command: &str, usage: &str, message: &str) -> ExitCode {
    usage_error_code(command, usage, message, exit::USAGE)
}

/// [`usage_error`] ending with exit code `code`.
pub fn usage_error_code(command: &str, usage: &str, message: &str, code: u8) -> ExitCode {
    let first = message.lines().next().unwrap_or_default().trim_start_matches("error: ");
    eprintln!("{command}: {first}");
    eprintln!("{usage}");
    exit::exit(code)
}

/// Connects to the configured server, or prints why not and returns the exit code.
pub fn connect(command: &str) -> Result<Connection, u8> {
    Connection::open().map_err(|error| {
        eprintln!("{command}: {error}");
        error.exit_code()
    })
}

/// Whether `id` is a job identifier as OpenPBS's `parse_jobid` accepts it:
/// `seq[.server][@server]`, `seq` digits with an optional `[...]` of digits, `-` and `:`
/// (array parent, subjob or range); a server name has no `#` or `@`. `abc` and `12[x]` are not.
pub fn well_formed_job_id(id: &str) -> bool {
    let id = id.trim_start();
    let digits = id.len() - id.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return false;
    }
    let mut rest = &id[digits..];
    if let Some(inside) = rest.strip_prefix('[') {
        let Some(end) = inside.find(']') else { return false };
        if !inside[..end].chars().all(|c| c.is_ascii_digit() || matches!(c, '-' | ':' | ',')) {
            return false;
        }
        rest = &inside[end + 1..];
    }
    let name_len =
        |text: &str| text.len() - text.trim_start_matches(|c: char| c.is_ascii_graphic() && c != '#' && c != '@').len();
    if let Some(server) = rest.strip_prefix('.') {
        let len = name_len(server);
        if len == 0 {
            return false;
        }
        rest = &server[len..];
    }
    if let Some(server) = rest.strip_prefix('@') {
        let len = name_len(server);
        if len == 0 {
            return false;
        }
        rest = &server[len..];
    }
    rest.is_empty()
}

/// The current time, epoch seconds.
pub fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs() as i64)
}

/// Prints a listing on stdout and each error on stderr; the exit code is the last error's
/// (OpenPBS), or `first_code` when there is none (a failure found before asking the server).
/// Shared by qstat's job and queue/server listings.
pub(crate) fn print_listing(command: &str, text: &str, errors: Vec<proto::error::RequestError>, first_code: u8) -> u8 {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
    let mut code = first_code;
    for error in errors {
        eprintln!("{command}: {}", error.message);
        code = exit::for_error(error.code);
    }
    code
}

#[cfg(test)]
mod tests {
    use super::{getopt_message, well_formed_job_id};
    use clap::Parser;

    #[test]
    fn job_ids_as_openpbs_parses_them() {
        for good in ["12", "12.head", "12[]", "12[3].head", "12[1-5:2]", "12.head.example.com@other", "12@srv"] {
            assert!(well_formed_job_id(good), "{good}");
        }
        for bad in ["", "abc", "12[x]", "12[3", "12.", "12@", "x12", "12 13", "12#", "-1", "12.head@"] {
            assert!(!well_formed_job_id(bad), "{bad}");
        }
    }

    #[derive(Parser, Debug)]
    struct Demo {
        #[arg(short = 'l')]
        list: Option<String>,
        #[arg(short = 'n')]
        days: Option<u32>,
        #[arg(required = true)]
        ids: Vec<String>,
    }

    fn message(args: &[&str]) -> Option<String> {
        let error = Demo::try_parse_from(std::iter::once("demo").chain(args.iter().copied())).unwrap_err();
        getopt_message(&error)
    }

    #[test]
    fn getopt_texts() {
        assert_eq!(message(&["-Z", "1"]).as_deref(), Some("invalid option -- 'Z'"));
        assert_eq!(message(&["1", "-l"]).as_deref(), Some("option requires an argument -- 'l'"));
        assert_eq!(message(&[]).as_deref(), Some(""), "missing operands: usage only");
        assert_eq!(message(&["--bogus", "1"]), None, "long options keep clap's text");
        assert_eq!(message(&["-n", "x", "1"]).as_deref(), Some("illegal -n value"));
    }
}
