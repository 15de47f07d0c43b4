//! `pbsfs`: show the fair-share tree (OpenPBS `pbsfs(8B)`: `-p` the table, the default; `-t`
//! the tree; `-g ENTITY` one entity and its path) or change its usage (managers: `-d` decay
//! once, `-e` forget entities the `resource_group` file does not name, `-s ENTITY USAGE`).
//! Sends `FairShare` (handled by `server/src/handlers/fairshare.rs`); the text is made by
//! `pbsfs_output.rs`. `-c` (compare) and `-I` other than `default` are not supported. One
//! mode option at a time (OpenPBS keeps the last one given; here two are a usage error).

use crate::exit;
use crate::pbsfs_output::{entity_text, table_text, tree_text, Entity};
use clap::Parser;
use proto::client::FairShareOp;
use proto::{ClientRequest, ServerReply};
use std::process::ExitCode;

#[derive(Parser, Debug, Default)]
#[command(name = "pbsfs", disable_help_flag = true, disable_version_flag = true)]
struct Args {
    #[arg(short = 'g')]
    get: bool,
    #[arg(short = 's')]
    set: bool,
    #[arg(short = 'p')]
    print: bool,
    #[arg(short = 't')]
    tree: bool,
    #[arg(short = 'd')]
    decay: bool,
    #[arg(short = 'c')]
    compare: bool,
    #[arg(short = 'e')]
    trim: bool,
    /// The scheduler: only `default` (minipbs has one).
    #[arg(short = 'I')]
    scheduler: Option<String>,
    operands: Vec<String>,
}

/// OpenPBS's usage text.
pub const USAGE: &str = "Usage: pbsfs -[ptdgcs] [-I sched_name]";

/// What to do.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    Table,
    Tree,
    Get(String),
    Change(FairShareOp),
}

fn mode(args: Args) -> Result<Mode, &'static str> {
    let chosen = [args.get, args.set, args.print, args.tree, args.decay, args.compare, args.trim];
    if chosen.iter().filter(|set| **set).count() > 1 {
        return Err("use one of -p, -t, -g, -s, -d, -e at a time");
    }
    if args.scheduler.as_deref().is_some_and(|name| name != "default") {
        return Err("minipbs has one scheduler: -I default");
    }
    let operands = args.operands;
    Ok(match operands.len() {
        _ if args.compare => return Err("-c is not supported by minipbs"),
        1 if args.get => Mode::Get(operands[0].clone()),
        _ if args.get => return Err("Usage: pbsfs [-I sched_name] -g <fairshare_entity>"),
        2 if args.set => Mode::Change(FairShareOp::Set { entity: operands[0].clone(), usage: operands[1].clone() }),
        _ if args.set => return Err("Usage: pbsfs [-I sched_name] -s <fairshare_entity> <usage>"),
        0 if args.decay => Mode::Change(FairShareOp::Decay),
        0 if args.trim => Mode::Change(FairShareOp::Trim),
        0 if args.tree => Mode::Tree,
        0 => Mode::Table,
        _ => return Err(USAGE),
    })
}

/// Entry point of the `pbsfs` binary.
pub fn main() -> ExitCode {
    let args: Args = match crate::cli::parse("pbsfs", USAGE) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let mode = match mode(args) {
        Ok(mode) => mode,
        Err(message) => {
            eprintln!("{message}");
            return exit::exit(exit::FAILURE);
        }
    };
    let mut conn = match crate::cli::connect("pbsfs") {
        Ok(conn) => conn,
        Err(code) => return exit::exit(code),
    };
    let op = match &mode {
        Mode::Table | Mode::Tree => FairShareOp::Show,
        Mode::Get(entity) => FairShareOp::Get { entity: entity.clone() },
        Mode::Change(op) => op.clone(),
    };
    let reply = match conn.request(&ClientRequest::FairShare { op }) {
        Ok(reply) => reply,
        Err(error) => {
            eprintln!("pbsfs: {error}");
            return exit::exit(error.exit_code());
        }
    };
    match reply {
        ServerReply::Objects { objects, errors } => {
            let entities: Vec<Entity> = objects.iter().map(Entity::from_status).collect();
            let text = match mode {
                Mode::Tree => tree_text(&entities),
                Mode::Get(_) => entity_text(&entities),
                _ => table_text(&entities),
            };
            print!("{text}");
            for error in &errors {
                eprintln!("pbsfs: {}", error.message);
            }
            exit::exit(exit::SUCCESS)
        }
        ServerReply::Done { .. } => exit::exit(exit::SUCCESS),
        ServerReply::Error(error) if error.message.starts_with("Fairshare Entity ") => {
            // OpenPBS's text, on its own.
            eprintln!("{}", error.message);
            exit::exit(exit::FAILURE)
        }
        ServerReply::Error(error) => {
            eprintln!("pbsfs: {}", error.message);
            exit::exit(exit::for_error(error.code))
        }
        other => {
            eprintln!("pbsfs: unexpected reply from the server: {other:?}");
            exit::exit(exit::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(words: &[&str]) -> Result<Mode, &'static str> {
        let argv: Vec<String> = std::iter::once("pbsfs").chain(words.iter().copied()).map(String::from).collect();
        mode(Args::try_parse_from(argv).expect("parses"))
    }

    #[test]
    fn options_choose_one_mode() {
        assert_eq!(parsed(&[]), Ok(Mode::Table));
        assert_eq!(parsed(&["-p"]), Ok(Mode::Table));
        assert_eq!(parsed(&["-t"]), Ok(Mode::Tree));
        assert_eq!(parsed(&["-g", "alice"]), Ok(Mode::Get("alice".into())));
        assert_eq!(parsed(&["-d"]), Ok(Mode::Change(FairShareOp::Decay)));
        assert_eq!(parsed(&["-e", "-I", "default"]), Ok(Mode::Change(FairShareOp::Trim)));
        assert_eq!(
            parsed(&["-s", "alice", "10"]),
            Ok(Mode::Change(FairShareOp::Set { entity: "alice".into(), usage: "10".into() }))
        );
        for bad in [
            &["-g"][..],
            &["-g", "a", "b"],
            &["-s", "a"],
            &["-p", "x"],
            &["-p", "-t"],
            &["-c", "a", "b"],
            &["-I", "other"],
        ] {
            assert!(parsed(bad).is_err(), "{bad:?}");
        }
    }
}
