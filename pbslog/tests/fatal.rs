//! `fatal.rs` ends the process: a panic on any thread once the hook is installed, and locking
//! a poisoned mutex, both exit with `EXIT_SOFTWARE` (70). A plain program (`harness = false`
//! in Cargo.toml), since what it checks is a process exit: run without arguments it runs
//! itself again once per case (the argument names the case) and checks each child's status.

use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex};

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("panic-in-a-thread") => panic_in_a_thread(),
        Some("poisoned-lock") => poisoned_lock(),
        _ => parent(),
    }
}

/// With the hook, a panicking thread ends the process before anyone can join it.
fn panic_in_a_thread() -> ExitCode {
    pbslog::fatal::install_panic_hook("fatal-test");
    let _ = std::thread::spawn(|| panic!("a handler fails")).join();
    println!("survived the panic");
    ExitCode::SUCCESS
}

/// Without the hook (an in-process user), the next locker of a poisoned mutex ends it.
fn poisoned_lock() -> ExitCode {
    let state = Arc::new(Mutex::new(0));
    let holder = Arc::clone(&state);
    let _ = std::thread::spawn(move || {
        let _guard = holder.lock().unwrap();
        panic!("a handler fails under the lock");
    })
    .join();
    let _guard = pbslog::fatal::lock_or_exit(&state, "test state");
    println!("served the poisoned state");
    ExitCode::SUCCESS
}

fn parent() -> ExitCode {
    let exe = std::env::current_exe().expect("this program's path");
    let mut failed = false;
    for case in ["panic-in-a-thread", "poisoned-lock"] {
        let output = Command::new(&exe).arg(case).output().expect("run the case");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let code = output.status.code();
        let ok = code == Some(pbslog::fatal::EXIT_SOFTWARE) && stdout.is_empty();
        println!("{case}: exit {code:?} {}", if ok { "ok" } else { "FAILED" });
        if !ok {
            println!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
