//! `pbsnodes`: node status and node management, OpenPBS and TORQUE options (pbs-reference 8.4).
//! Listing (`-a`, names, or none = all) and `-l` (down or offline nodes) send `StatusNode`
//! (`server/src/handlers/status_node.rs`); `-o` (offline), `-r`/`-c` (clear offline) and
//! `-C`/`-N` (operator comment) send `ManageNode` (`server/src/handlers/manage_node.rs`).
//! Errors are printed as OpenPBS prints them (`Node: <name>,  Error: <text>`, `Error marking
//! node <name> - <text>`) and any failure exits 1, as OpenPBS's pbsnodes does.

use crate::exit;
use crate::output;
use clap::Parser;
use proto::{ClientRequest, ServerReply};
use std::process::ExitCode;

/// pbsnodes options.
#[derive(Parser, Debug)]
#[command(name = "pbsnodes", disable_version_flag = true, disable_help_flag = true)]
struct Args {
    /// All nodes.
    #[arg(short = 'a')]
    all: bool,
    /// List nodes that are down or offline (TORQUE: optionally only those in the given states).
    #[arg(short = 'l')]
    list_marked: bool,
    /// Mark the nodes offline.
    #[arg(short = 'o')]
    offline: bool,
    /// Clear offline (OpenPBS; TORQUE's reset).
    #[arg(short = 'r')]
    reset: bool,
    /// Clear offline (TORQUE).
    #[arg(short = 'c')]
    clear: bool,
    /// Set the nodes' comment (OpenPBS).
    #[arg(short = 'C')]
    comment: Option<String>,
    /// Set the nodes' note (TORQUE's name for the comment).
    #[arg(short = 'N')]
    note: Option<String>,
    /// The server (accepted; the configured server is used).
    #[arg(short = 's')]
    server: Option<String>,
    /// Quiet: no error messages.
    #[arg(short = 'q')]
    quiet: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    nodes: Vec<String>,
}

const USAGE: &str = "usage:\tpbsnodes [-{o|r}][-C comment][-s server] host host ...
\tpbsnodes -l [-s server]
\tpbsnodes -a [-s server]
\tpbsnodes [-s server] host host ...";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Operation {
    List { names: Vec<String> },
    ListMarked { filter: Vec<String> },
    Manage { names: Vec<String>, offline: Option<bool>, comment: Option<String> },
}

/// Checks the option combination, as OpenPBS's pbsnodes does.
fn operation(args: Args) -> Result<Operation, &'static str> {
    let comment = match (args.comment, args.note) {
        (Some(_), Some(_)) => return Err("conflicting options -C and -N"),
        (comment, note) => comment.or(note),
    };
    let offline = match (args.offline, args.reset || args.clear) {
        (true, true) => return Err("conflicting options: -o with -r or -c"),
        (true, false) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    };
    let modes = [args.all, args.list_marked, offline.is_some() || comment.is_some()];
    if modes.iter().filter(|mode| **mode).count() > 1 {
        return Err("conflicting options");
    }
    if offline.is_some() || comment.is_some() {
        if args.nodes.is_empty() {
            return Err("no node named");
        }
        return Ok(Operation::Manage { names: args.nodes, offline, comment });
    }
    if args.list_marked {
        return Ok(Operation::ListMarked { filter: args.nodes });
    }
    if args.all && !args.nodes.is_empty() {
        return Err("-a takes no node names");
    }
    Ok(Operation::List { names: args.nodes })
}

/// Entry point of the `pbsnodes` binary.
pub fn main() -> ExitCode {
    // OpenPBS's pbsnodes exits 1 on usage errors too.
    let argv: Vec<String> = std::env::args().collect();
    let args: Args = match crate::cli::parse_from_code("pbsnodes", USAGE, &argv, exit::FAILURE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let quiet = args.quiet;
    let operation = match operation(args) {
        Ok(operation) => operation,
        Err(reason) => return crate::cli::usage_error_code("pbsnodes", USAGE, reason, exit::FAILURE),
    };
    let mut conn = match crate::cli::connect("pbsnodes") {
        Ok(conn) => conn,
        Err(code) => return exit::exit(code),
    };
    let (request, names) = match &operation {
        Operation::List { names } => (ClientRequest::StatusNode { names: names.clone() }, names.clone()),
        Operation::ListMarked { filter } => {
            let names: Vec<String> = filter.iter().filter(|word| !is_state_word(word)).cloned().collect();
            (ClientRequest::StatusNode { names: names.clone() }, names)
        }
        Operation::Manage { names, offline, comment } => {
            let request =
                ClientRequest::ManageNode { names: names.clone(), offline: *offline, comment: comment.clone() };
            (request, names.clone())
        }
    };
    let report = |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };
    match conn.request(&request) {
        Ok(ServerReply::Nodes { nodes, errors }) => {
            let text = match &operation {
                Operation::ListMarked { filter } => {
                    let states: Vec<&str> = filter.iter().map(String::as_str).filter(|w| is_state_word(w)).collect();
                    output::pbsnodes_marked(&nodes, &states, !names.is_empty())
                }
                _ => output::pbsnodes_full(&nodes),
            };
            print!("{text}");
            // The unknown names, in the order asked, are the ones missing from the reply.
            let missing = names.iter().filter(|name| !nodes.iter().any(|node| &node.name == *name));
            for (name, error) in missing.zip(&errors) {
                report(&format!("Node: {name},  Error: {} ", error.code.text()));
            }
            exit::exit(if errors.is_empty() { exit::SUCCESS } else { exit::FAILURE })
        }
        Ok(ServerReply::Done { errors }) => {
            for error in &errors {
                report(&error.message);
            }
            exit::exit(if errors.is_empty() { exit::SUCCESS } else { exit::FAILURE })
        }
        Ok(ServerReply::Error(error)) => {
            report(&format!("pbsnodes: {}", error.message));
            exit::exit(exit::FAILURE)
        }
        Ok(other) => {
            report(&format!("pbsnodes: unexpected reply from server: {other:?}"));
            exit::exit(exit::FAILURE)
        }
        Err(error) => {
            report(&format!("pbsnodes: {error}"));
            exit::exit(error.exit_code())
        }
    }
}

/// TORQUE's `pbsnodes -l` state filters.
fn is_state_word(word: &str) -> bool {
    matches!(word, "free" | "down" | "offline" | "job-busy" | "job-exclusive" | "busy" | "up" | "active" | "all")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Operation, &'static str> {
        let args = Args::try_parse_from(std::iter::once("pbsnodes").chain(args.iter().copied())).unwrap();
        operation(args)
    }

    #[test]
    fn option_combinations() {
        let names = vec!["n1".to_string()];
        assert_eq!(parse(&[]), Ok(Operation::List { names: vec![] }));
        assert_eq!(parse(&["-a"]), Ok(Operation::List { names: vec![] }));
        assert_eq!(parse(&["-l"]), Ok(Operation::ListMarked { filter: vec![] }));
        assert_eq!(
            parse(&["-o", "-C", "broken fan", "n1"]),
            Ok(Operation::Manage { names: names.clone(), offline: Some(true), comment: Some("broken fan".into()) })
        );
        assert_eq!(
            parse(&["-c", "n1"]),
            Ok(Operation::Manage { names: names.clone(), offline: Some(false), comment: None })
        );
        assert_eq!(
            parse(&["-r", "n1"]),
            Ok(Operation::Manage { names: names.clone(), offline: Some(false), comment: None })
        );
        assert_eq!(
            parse(&["-N", "note", "n1"]),
            Ok(Operation::Manage { names, offline: None, comment: Some("note".into()) })
        );
        assert!(parse(&["-o"]).is_err(), "-o needs a node");
        assert!(parse(&["-o", "-r", "n1"]).is_err());
        assert!(parse(&["-a", "-l"]).is_err());
        assert!(parse(&["-C", "a", "-N", "b", "n1"]).is_err());
        assert!(parse(&["-a", "n1"]).is_err());
    }
}
