//! The evaluation limits: a deadline ends any loop, work on big strings counts in proportion
//! to their size, the bytes built in all are bounded, and `catch` cannot hold a limit back.

use super::*;
use crate::tcl::{Exception, Interp};
use std::rc::Rc;

/// An interpreter on a fresh budget with `commands` and `time`.
fn interp(commands: u64, time: Option<Duration>) -> Interp<()> {
    let mut i = Interp::new(());
    i.set_budget(Rc::new(Budget::new(time)));
    i.set_command_limit(commands);
    i
}

fn message(r: Result<String, Exception>) -> String {
    match r {
        Err(Exception::Error(e)) => e.message,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn the_deadline_ends_an_endless_loop_that_catch_cannot_hold() {
    let mut i = interp(u64::MAX, Some(Duration::from_millis(50)));
    let r = i.eval("proc spin {} {while 1 {catch {while 1 {}}}}; spin; set after 1");
    assert_eq!(message(r), "evaluation time limit of 0.05 s exceeded");
    assert_eq!(i.limit_reached(), Some(Limit::Time(Duration::from_millis(50))));
    assert_eq!(i.get_global("after"), None);
    // Reached stays reached: nothing more runs on this budget.
    assert!(i.eval("set x 1").is_err());
}

#[test]
fn catch_does_not_hold_back_a_command_limit() {
    // The last command: without the rule, the script would end well, its limit swallowed.
    let mut i = interp(1000, None);
    let r = i.eval("set before 1; catch {while 1 {}} msg");
    assert_eq!(message(r), "too many commands evaluated (infinite loop?)");
    assert_eq!(i.get_global("msg"), None);
}

#[test]
fn scanning_a_big_string_counts_in_proportion_to_its_size() {
    // The loop: 4 MB scanned (and copied) per round, about 1,000 commands' worth.
    let mut i = interp(10_000, None);
    let r = i.eval("set s [string repeat x 4000000]; set n 0; while 1 {string first y $s; incr n}");
    assert_eq!(message(r), "too many commands evaluated (infinite loop?)");
    let rounds: u64 = i.get_global("n").unwrap().parse().unwrap();
    assert!(rounds < 20, "{rounds} rounds over 4 MB on a budget of 10,000 commands");
}

#[test]
fn the_bytes_built_in_all_are_bounded() {
    let mut i = interp(u64::MAX, None);
    i.budget().set_byte_limit(100 << 20);
    let r = i.eval("for {set n 0} {$n < 10} {incr n} {set v$n [string repeat x 30000000]}");
    assert_eq!(message(r), "too much data produced (over 100 MiB in all)");
    assert_eq!(i.limit_reached(), Some(Limit::Memory(100 << 20)));
    let kept = (0..10).filter(|n| i.get_global(&format!("v{n}")).is_some()).count();
    assert!(kept <= 3, "{kept} values of 30 MB kept on a budget of 100 MiB");
}

#[test]
fn glob_matching_and_string_map_count_their_steps() {
    // `*aaa...ab` against `aaa...a` tries every start: pattern x text steps in one command.
    let mut i = interp(1000, None);
    let r = i.eval("string match *[string repeat a 2000]b [string repeat a 20000]");
    assert_eq!(message(r), "too many commands evaluated (infinite loop?)");
    let mut i = interp(1000, None);
    let r = i.eval("lsearch -glob [list [string repeat a 20000]] *[string repeat a 2000]b");
    assert_eq!(message(r), "too many commands evaluated (infinite loop?)");
    let mut i = interp(1000, None);
    let r = i.eval(
        "set m {}; for {set k 0} {$k < 100} {incr k} {lappend m [string repeat a 100]$k x}\n\
                    string map $m [string repeat a 20000]",
    );
    assert_eq!(message(r), "too many commands evaluated (infinite loop?)");
}

#[test]
fn lists_and_script_files_are_bounded() {
    let mut i = interp(u64::MAX, None);
    assert_eq!(message(i.eval("llength [lrepeat 1048577 x]")), "list too long (over 1048576 elements)");
    assert_eq!(message(i.eval("split [string repeat x 1048577] {}")), "list too long (over 1048576 elements)");
    assert_eq!(
        message(i.eval("regexp -all -inline {} [string repeat x 1048577]")),
        "list too long (over 1048576 elements)"
    );
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.tcl");
    std::fs::write(&big, " ".repeat(MAX_STRING + 1)).unwrap();
    let r = i.eval(&format!("source {}", big.display()));
    assert_eq!(message(r), format!("couldn't read file \"{}\": file larger than 64 MiB", big.display()));
}

#[test]
fn string_first_and_last_find_characters_not_bytes() {
    let mut i = interp(u64::MAX, None);
    for (script, want) in [
        ("string first é aéaé", "1"),
        ("string first é aéaé 2", "3"),
        ("string last é aéaé", "3"),
        ("string last é aéaé 2", "1"),
        ("string last é aéaé 0", "-1"),
        ("string first éa aéaé end", "-1"),
        ("string first {} abc", "-1"),
        ("string last abcd abc", "-1"),
    ] {
        assert_eq!(i.eval(script), Ok(want.to_string()), "{script}");
    }
}

#[test]
fn fifos_and_devices_are_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let path = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: `path` is a NUL-terminated string that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let mut i = interp(u64::MAX, None);
    for file in [fifo.display().to_string(), "/dev/zero".to_string()] {
        let r = i.eval(&format!("source {file}"));
        assert_eq!(message(r), format!("couldn't read file \"{file}\": not a regular file"));
    }
    assert_eq!(i.eval(&format!("file readable {}", fifo.display())), Ok("1".into()));
    assert!(!crate::find::is_modulefile(&fifo));
}
