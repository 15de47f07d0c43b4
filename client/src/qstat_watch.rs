//! `qstat --watch [SECONDS]` (a minipbs extension; `watch qstat` works as well): runs this same
//! `qstat` without `--watch` every SECONDS (default 2, as `watch`) and redraws its output in
//! place until interrupted. Running the listing as a child, as `watch` does, keeps every display
//! (`-a`, `-f`, `-Q`, `-B`, errors on stderr) exactly what plain `qstat` prints, and leaves the
//! default listing untouched.
//!
//! On a terminal each frame clears the screen first (`ESC [H ESC [2J`); otherwise frames follow
//! each other, each under its header line, so the output can be logged. A first run that fails
//! with a usage error (exit 2) ends the watch with that error instead of repeating it.
//!
//! Bounds: SECONDS from 0.5 (each frame is one status request for the whole listing) to 86400.

use std::io::Write;
use std::process::{Command, ExitCode};
use std::time::Duration;

/// The shortest and longest interval `--watch` takes, in seconds.
pub const MIN_SECONDS: f64 = 0.5;
pub const MAX_SECONDS: f64 = 86_400.0;
/// The interval when `--watch` names none (`watch`'s).
pub const DEFAULT_SECONDS: f64 = 2.0;

/// What `--watch` asked for: the interval and qstat's other arguments (the program name first).
#[derive(Debug, PartialEq)]
pub struct Watch {
    pub seconds: f64,
    pub rest: Vec<String>,
}

/// Finds `--watch`, `--watch=N` or `--watch N` (N a number; anything else after `--watch` is an
/// operand such as a job id) in qstat's arguments. `Ok(None)`: no `--watch`.
pub fn split(args: &[String]) -> Result<Option<Watch>, String> {
    let Some(at) = args.iter().position(|arg| arg == "--watch" || arg.starts_with("--watch=")) else {
        return Ok(None);
    };
    let mut rest = args.to_vec();
    let flag = rest.remove(at);
    let value = match flag.strip_prefix("--watch=") {
        Some(value) => Some(value.to_string()),
        None if rest.get(at).is_some_and(|next| next.parse::<f64>().is_ok()) => Some(rest.remove(at)),
        None => None,
    };
    let seconds = match value {
        None => DEFAULT_SECONDS,
        Some(text) => match text.parse::<f64>() {
            Ok(seconds) if seconds.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&seconds) => seconds,
            _ => return Err(format!("--watch {text}: give seconds from {MIN_SECONDS} to {MAX_SECONDS}")),
        },
    };
    if rest.iter().any(|arg| arg == "--watch" || arg.starts_with("--watch=")) {
        return Err("--watch given twice".to_string());
    }
    Ok(Some(Watch { seconds, rest }))
}

/// One frame: the header line (`Every 2s: qstat -a    <time>`), a blank line, then what the
/// listing printed (stdout, then stderr). `clear` on a terminal.
pub fn frame(watch: &Watch, time: &str, stdout: &[u8], stderr: &[u8], clear: bool) -> Vec<u8> {
    let command = watch.rest.iter().skip(1).fold("qstat".to_string(), |line, arg| line + " " + arg);
    let mut out = Vec::with_capacity(stdout.len() + stderr.len() + 128);
    if clear {
        out.extend_from_slice(b"\x1b[H\x1b[2J");
    }
    out.extend_from_slice(format!("Every {}s: {command}    {time}\n\n", watch.seconds).as_bytes());
    out.extend_from_slice(stdout);
    out.extend_from_slice(stderr);
    if !clear {
        out.push(b'\n');
    }
    out
}

/// Redraws the listing until the process is interrupted.
pub fn run(watch: Watch) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("qstat: --watch: cannot find this program: {error}");
            return ExitCode::from(crate::exit::FAILURE);
        }
    };
    let clear = std::io::IsTerminal::is_terminal(&std::io::stdout());
    let mut first = true;
    loop {
        let output = match Command::new(&exe).args(&watch.rest[1..]).output() {
            Ok(output) => output,
            Err(error) => {
                eprintln!("qstat: --watch: cannot run {}: {error}", exe.display());
                return ExitCode::from(crate::exit::FAILURE);
            }
        };
        if first && output.status.code() == Some(i32::from(crate::exit::USAGE)) {
            let _ = std::io::stderr().write_all(&output.stderr);
            return ExitCode::from(crate::exit::USAGE);
        }
        first = false;
        let time = crate::output::ctime_text(crate::cli::now());
        let mut stdout = std::io::stdout().lock();
        if stdout
            .write_all(&frame(&watch, &time, &output.stdout, &output.stderr, clear))
            .and_then(|()| stdout.flush())
            .is_err()
        {
            // The reader went away (a closed pipe): nothing more to show.
            return ExitCode::SUCCESS;
        }
        drop(stdout);
        std::thread::sleep(Duration::from_secs_f64(watch.seconds));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn the_interval_is_a_number_after_the_flag_and_anything_else_an_operand() {
        assert_eq!(split(&args("qstat -a")).unwrap(), None);
        assert_eq!(split(&args("qstat --watch")).unwrap(), Some(Watch { seconds: 2.0, rest: args("qstat") }));
        assert_eq!(split(&args("qstat --watch 5 -a")).unwrap(), Some(Watch { seconds: 5.0, rest: args("qstat -a") }));
        assert_eq!(split(&args("qstat -f --watch=0.5")).unwrap(), Some(Watch { seconds: 0.5, rest: args("qstat -f") }));
        let id = split(&args("qstat --watch 12.head")).unwrap().unwrap();
        assert_eq!((id.seconds, id.rest), (2.0, args("qstat 12.head")), "a job id is not an interval");
    }

    #[test]
    fn intervals_out_of_bounds_are_refused_with_the_bounds() {
        for bad in
            ["--watch=0", "--watch=0.1", "--watch=86401", "--watch=nan", "--watch=inf", "--watch=x", "--watch=-1"]
        {
            let error = split(&args(&format!("qstat {bad}"))).unwrap_err();
            assert!(error.contains("from 0.5 to 86400"), "{bad}: {error}");
        }
        assert_eq!(split(&args("qstat --watch --watch")).unwrap_err(), "--watch given twice");
    }

    #[test]
    fn a_frame_clears_the_screen_only_on_a_terminal() {
        let watch = Watch { seconds: 2.0, rest: args("qstat -a") };
        let frame_text = |clear| {
            String::from_utf8(frame(&watch, "Thu Nov 26 07:30:00 2026", b"listing\n", b"error\n", clear)).unwrap()
        };
        assert_eq!(frame_text(true), "\x1b[H\x1b[2JEvery 2s: qstat -a    Thu Nov 26 07:30:00 2026\n\nlisting\nerror\n");
        assert_eq!(frame_text(false), "Every 2s: qstat -a    Thu Nov 26 07:30:00 2026\n\nlisting\nerror\n\n");
    }
}
