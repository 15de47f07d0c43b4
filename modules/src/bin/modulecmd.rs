//! `modulecmd <shell> <subcommand> [args...]`: what the `module` shell function runs. Reads the
//! environment, prints shell code on stdout and messages on stderr, exits 0 (the status
//! travels in the printed code, as the function `eval`s it) unless the command line itself
//! is unusable. No logic here: `modules::cmd::run` does the work.

use modules::cmd::{self, Install};
use modules::env::Env;
use modules::shell::Shell;
use std::io::Write;
use std::path::PathBuf;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(shell) = args.first().and_then(|name| Shell::parse(name)) else {
        eprintln!("modulecmd: usage: modulecmd sh|bash|zsh subcommand [args...]");
        return std::process::ExitCode::from(2);
    };
    let env = Env::new(
        std::env::vars_os().filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?))),
    );
    let cmd_path = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("modulecmd"));
    let home = cmd_path.parent().and_then(|bin| bin.parent()).map(PathBuf::from).unwrap_or_default();
    let install = Install { cmd: &cmd_path, home: &home };
    let output = cmd::run(shell, &args[1..], env, width(), install);
    let mut stderr = std::io::stderr().lock();
    for line in &output.stderr {
        let _ = writeln!(stderr, "{line}");
    }
    let _ = std::io::stdout().lock().write_all(output.stdout.as_bytes());
    std::process::ExitCode::SUCCESS
}

/// `MODULES_TERM_WIDTH`, else the terminal's columns when stderr is one, else 80.
fn width() -> usize {
    if let Some(width) = std::env::var("MODULES_TERM_WIDTH").ok().and_then(|text| text.parse().ok()) {
        return width;
    }
    match rustix::termios::tcgetwinsize(std::io::stderr()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => 80,
    }
}
