//! `qmgr`: the administrator's command. `-c "<command>"` runs one command; without `-c` the
//! commands come from stdin (after OpenPBS's `Max open servers` line). Changing commands send
//! `Manage` (`server/src/handlers/manage.rs`); `list` and `print` send `StatusQueue`,
//! `StatusServer` or `StatusNode` and format with `output::qmgr`. Options `-a` (stop at the
//! first error), `-e` (echo commands), `-n` (syntax check only), `-z` (no error messages).
//!
//! Errors as OpenPBS prints them: `qmgr obj=<name> svr=default: <server text>` then
//! `qmgr: Error (<number>) returned from server`; the exit code is the last failing command's:
//! the error number % 256 for a refused change, 1 for a failed list/print, 1-4 for syntax.

use crate::conn::Connection;
use crate::exit;
use crate::output::qmgr as display;
use crate::qmgr_parse::{parse, split_requests, Request, Verb};
use clap::Parser;
use proto::error::RequestError;
use proto::manage::{ManageOp, ObjectKind};
use proto::{ClientRequest, ObjectStatus, ServerReply};
use std::io::{Read, Write};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "qmgr", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    /// Run this command and exit.
    #[arg(short = 'c')]
    command: Option<String>,
    /// Abort at the first error.
    #[arg(short = 'a')]
    abort: bool,
    /// Echo each command to stdout.
    #[arg(short = 'e')]
    echo: bool,
    /// Check syntax only.
    #[arg(short = 'n')]
    no_execute: bool,
    /// Do not print errors.
    #[arg(short = 'z')]
    quiet: bool,
    #[arg(long = "help", action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// Servers (only the configured one is served).
    servers: Vec<String>,
}

const USAGE: &str = "usage: qmgr [-a] [-c command] [-e] [-n] [-z] [server...]";

/// Entry point of the `qmgr` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("qmgr", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let mut conn = match Connection::open() {
        Ok(conn) => conn,
        Err(error) => {
            eprintln!("qmgr: {error}");
            return exit::exit(exit::NO_SERVER);
        }
    };
    let (requests, interactive) = match &args.command {
        Some(command) => (split_requests(command), false),
        None => {
            let mut input = String::new();
            if let Err(error) = std::io::stdin().read_to_string(&mut input) {
                eprintln!("qmgr: cannot read commands: {error}");
                return exit::exit(exit::FAILURE);
            }
            (split_requests(&input), true)
        }
    };
    if interactive {
        println!("Max open servers: 49");
    }
    let mut status = exit::SUCCESS;
    for request in requests {
        if args.echo {
            println!("{request}");
        }
        let (code, stop) = run_one(&mut conn, &args, &request);
        status = code;
        if stop || (args.abort && code != exit::SUCCESS) {
            break;
        }
    }
    let _ = std::io::stdout().flush();
    exit::exit(status)
}

/// Runs one request; returns its exit code and whether qmgr should stop (quit).
fn run_one(conn: &mut Connection, args: &Args, request: &str) -> (u8, bool) {
    let (verb, kind, names, attrs) = match parse(request) {
        Ok(Request::Command { verb, kind, names, attrs }) => (verb, kind, names, attrs),
        Ok(Request::Help) => {
            println!("{HELP}");
            return (exit::SUCCESS, false);
        }
        Ok(Request::Quit) => return (exit::SUCCESS, true),
        Err(error) => {
            if !args.quiet {
                eprint!("{}", error.text);
            }
            return (error.exit, false);
        }
    };
    if args.no_execute {
        return (exit::SUCCESS, false);
    }
    let result = match verb {
        Verb::List | Verb::Print => {
            show(conn, verb, kind, &names, &attrs.iter().map(|a| a.full_name()).collect::<Vec<_>>())
        }
        _ => change(conn, verb, kind, &names, attrs),
    };
    match result {
        Ok(()) => (exit::SUCCESS, false),
        Err(Failure { object, error, exit_code }) => {
            if !args.quiet {
                eprintln!("qmgr obj={object} svr=default: {}", error.message);
                eprintln!("qmgr: Error ({}) returned from server", error.code.number());
            }
            (exit_code, false)
        }
    }
}

/// A refused command: the object it named, the server's error and qmgr's exit code.
struct Failure {
    object: String,
    error: RequestError,
    exit_code: u8,
}

fn broken(object: &str, message: String) -> Failure {
    let error = RequestError::new(proto::ErrorCode::System, message);
    Failure { object: object.to_string(), error, exit_code: exit::FAILURE }
}

fn change(
    conn: &mut Connection,
    verb: Verb,
    kind: ObjectKind,
    names: &[String],
    attrs: Vec<proto::manage::AttrOp>,
) -> Result<(), Failure> {
    let op = match verb {
        Verb::Create => ManageOp::Create,
        Verb::Delete => ManageOp::Delete,
        Verb::Set => ManageOp::Set,
        _ => ManageOp::Unset,
    };
    let names: Vec<String> = match kind {
        ObjectKind::Server => vec![String::new()],
        _ if names.is_empty() => {
            let what = match kind {
                ObjectKind::Queue => "Queues",
                ObjectKind::Resource => "Resources",
                _ => "Nodes",
            };
            eprintln!("No Active {what}, nothing done.");
            return Ok(());
        }
        _ => names.to_vec(),
    };
    let mut last = Ok(());
    for name in names {
        let request = ClientRequest::Manage { op, kind, name: name.clone(), attrs: attrs.clone() };
        match conn.request(&request) {
            Ok(ServerReply::Done { mut errors }) => {
                if let Some(error) = errors.pop() {
                    last = Err(Failure { object: name, exit_code: error.code.exit_code(), error });
                }
            }
            Ok(ServerReply::Error(error)) => {
                last = Err(Failure { object: name, exit_code: error.code.exit_code(), error });
            }
            Ok(other) => return Err(broken(&name, format!("unexpected reply from the server: {other:?}"))),
            Err(error) => return Err(broken(&name, error.to_string())),
        }
    }
    last
}

/// `list` and `print`: status requests, formatted by `output::qmgr`.
fn show(conn: &mut Connection, verb: Verb, kind: ObjectKind, names: &[String], only: &[String]) -> Result<(), Failure> {
    let object = names.join(",");
    let fetch = |conn: &mut Connection, request: ClientRequest| -> Result<Vec<ObjectStatus>, Failure> {
        match conn.request(&request) {
            Ok(ServerReply::Objects { objects, mut errors }) => match errors.pop() {
                None => Ok(objects),
                Some(error) => Err(Failure { object: object.clone(), error, exit_code: exit::FAILURE }),
            },
            Ok(ServerReply::Nodes { nodes, mut errors }) => match errors.pop() {
                None => Ok(nodes.into_iter().map(|node| ObjectStatus { name: node.name, attrs: node.attrs }).collect()),
                Some(error) => Err(Failure { object: object.clone(), error, exit_code: exit::FAILURE }),
            },
            Ok(ServerReply::Error(error)) => Err(Failure { object: object.clone(), error, exit_code: exit::FAILURE }),
            Ok(other) => Err(broken(&object, format!("unexpected reply from the server: {other:?}"))),
            Err(error) => Err(broken(&object, error.to_string())),
        }
    };
    let text = match (verb, kind) {
        (Verb::List, ObjectKind::Server) => display::list("Server", &fetch(conn, ClientRequest::StatusServer)?, only),
        (Verb::List, ObjectKind::Queue) => {
            display::list("Queue", &fetch(conn, ClientRequest::StatusQueue { names: names.to_vec() })?, only)
        }
        (Verb::List, ObjectKind::Node) => {
            display::list("Node", &fetch(conn, ClientRequest::StatusNode { names: names.to_vec() })?, only)
        }
        (Verb::List, ObjectKind::Resource) => {
            display::list_resources(&fetch(conn, ClientRequest::StatusResource { names: names.to_vec() })?)
        }
        (_, ObjectKind::Resource) => {
            display::print_resources(&fetch(conn, ClientRequest::StatusResource { names: names.to_vec() })?)
        }
        (_, ObjectKind::Server) => {
            let resources = fetch(conn, ClientRequest::StatusResource { names: Vec::new() })?;
            let queues = fetch(conn, ClientRequest::StatusQueue { names: Vec::new() })?;
            let server = fetch(conn, ClientRequest::StatusServer)?;
            let Some(server) = server.first() else { return Err(broken("", "no server status".to_string())) };
            let resources = if resources.is_empty() { String::new() } else { display::print_resources(&resources) };
            resources + &display::print_server(&queues, server)
        }
        (_, ObjectKind::Queue) => {
            display::print_queues(&fetch(conn, ClientRequest::StatusQueue { names: names.to_vec() })?)
        }
        (_, ObjectKind::Node) => {
            display::print_nodes(&fetch(conn, ClientRequest::StatusNode { names: names.to_vec() })?)
        }
    };
    print!("{text}");
    Ok(())
}

const HELP: &str = "General syntax: command [object][@server] [name=value[,name=value...]]
Commands: create, delete, set, unset, list, print, help, quit (any unique prefix: s, l, p, ...)
Objects: server (s), queue (q), node (n), resource (r)
Operators: = (set), += (add to a list), -= (remove from a list)
Examples: create queue short queue_type=execution,enabled=true,started=true
          set queue short max_run = [u:PBS_GENERIC=2]
          set server managers += alice@*
          print server";
