//! `pbsnodes`: node status (`-a` all nodes, or the named ones). Sends `StatusNode` (handled by
//! `server/src/handlers/status_node.rs`).

use crate::exit;
use crate::output;
use clap::Parser;
use proto::{ClientRequest, ServerReply};
use std::process::ExitCode;

/// pbsnodes options.
#[derive(Parser, Debug)]
#[command(name = "pbsnodes", disable_version_flag = true)]
struct Args {
    /// All nodes.
    #[arg(short = 'a')]
    all: bool,
    nodes: Vec<String>,
}

/// Entry point of the `pbsnodes` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("pbsnodes", "usage: pbsnodes [-a] [node ...]") {
        Ok(args) => args,
        Err(code) => return code,
    };
    let names = if args.all { Vec::new() } else { args.nodes };
    let mut conn = match crate::cli::connect("pbsnodes") {
        Ok(conn) => conn,
        Err(code) => return exit::exit(code),
    };
    match conn.request(&ClientRequest::StatusNode { names }) {
        Ok(ServerReply::Nodes { nodes, errors }) => {
            print!("{}", output::pbsnodes_full(&nodes));
            let mut code = exit::SUCCESS;
            for error in errors {
                eprintln!("pbsnodes: {}", error.message);
                code = exit::for_error(error.code);
            }
            exit::exit(code)
        }
        Ok(other) => {
            eprintln!("pbsnodes: unexpected reply from server: {other:?}");
            exit::exit(exit::FAILURE)
        }
        Err(error) => {
            eprintln!("pbsnodes: {error}");
            exit::exit(error.exit_code())
        }
    }
}
