//! What every command does the same way: parse its arguments with clap (help on stdout and
//! exit 0; a usage error as `<command>: <reason>` plus the usage line and exit 2) and open the
//! connection to the server (an error as `<command>: <reason>` and its exit code).

use crate::conn::Connection;
use crate::exit;
use std::process::ExitCode;

/// Parses `args` (program name first) as `T`, or returns the exit code to end with.
pub fn parse_from<T: clap::Parser>(command: &str, usage: &str, args: &[String]) -> Result<T, ExitCode> {
    match T::try_parse_from(args) {
        Ok(parsed) => Ok(parsed),
        Err(error) if error.kind() == clap::error::ErrorKind::DisplayHelp => {
            print!("{error}");
            Err(exit::exit(exit::SUCCESS))
        }
        Err(error) => match getopt_message(&error) {
            Some(message) if message.is_empty() => {
                eprintln!("{usage}");
                Err(exit::exit(exit::USAGE))
            }
            Some(message) => Err(usage_error(command, usage, &message)),
            None => Err(usage_error(command, usage, &error.to_string())),
        },
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
        ErrorKind::UnknownArgument => letter(&invalid?).map(|c| format!("invalid option -- '{c}'")),
        ErrorKind::InvalidValue | ErrorKind::NoEquals => {
            let text = invalid?;
            let c = letter(text.split_whitespace().next().unwrap_or(&text))?;
            let empty = error.get(ContextKind::InvalidValue).is_some_and(|value| value.to_string().is_empty());
            empty.then(|| format!("option requires an argument -- '{c}'"))
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
    let first = message.lines().next().unwrap_or_default().trim_start_matches("error: ");
    eprintln!("{command}: {first}");
    eprintln!("{usage}");
    exit::exit(exit::USAGE)
}

/// Connects to the configured server, or prints why not and returns the exit code.
pub fn connect(command: &str) -> Result<Connection, u8> {
    Connection::open().map_err(|error| {
        eprintln!("{command}: {error}");
        error.exit_code()
    })
}

#[cfg(test)]
mod tests {
    use super::getopt_message;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Demo {
        #[arg(short = 'l')]
        list: Option<String>,
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
    }
}
