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
        Err(error) => Err(usage_error(command, usage, &error.to_string())),
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
