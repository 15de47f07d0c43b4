//! The Tcl-subset interpreter on any modulefile text, as modulecmd runs it: a fresh
//! interpreter with the core commands, the text evaluated as a file, then its list and
//! expression parsers on the same text. Must end (the command and nesting limits) with a
//! value or an error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use modules::tcl::{list, Interp};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut interp = Interp::new(());
    interp.set_command_limit(20_000);
    // Commands that reach outside the process are not fuzzed.
    for outside in ["exec", "source", "glob", "exit", "puts", "file", "open"] {
        interp.register(outside, |_, _| Ok(String::new()));
    }
    interp.set_global_elem("env", "HOME", "/home/fuzz");
    let _ = interp.eval_script(text, "/fuzz/modulefile");
    if let Ok(words) = list::parse_list(text) {
        let again = list::parse_list(&list::format_list(&words)).expect("a formatted list parses");
        assert_eq!(again, words, "format_list and parse_list round trip");
    }
    let mut expr = Interp::new(());
    expr.set_command_limit(20_000);
    let _ = expr.eval(&format!("expr {{{text}}}"));
});
