//! The Tcl-subset interpreter on any modulefile text, as modulecmd runs it: a fresh
//! interpreter with the core commands on a budget (commands, bytes, a deadline), the text
//! evaluated as a file, then its list and expression parsers on the same text. Must end (the
//! budget and nesting limits) with a value or an error, never panic; and a limit, once
//! reached, ends the evaluation whatever the text does (`catch` included).
#![no_main]

use libfuzzer_sys::fuzz_target;
use modules::tcl::{list, Budget, Exception, Interp};
use std::rc::Rc;
use std::time::Duration;

fn budget() -> Rc<Budget> {
    let budget = Budget::new(Some(Duration::from_secs(2)));
    budget.set_command_limit(20_000);
    budget.set_byte_limit(256 << 20);
    Rc::new(budget)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut interp = Interp::new(());
    interp.set_budget(budget());
    // Commands that reach outside the process are not fuzzed.
    for outside in ["exec", "source", "glob", "exit", "puts", "file", "open"] {
        interp.register(outside, |_, _| Ok(String::new()));
    }
    interp.set_global_elem("env", "HOME", "/home/fuzz");
    let result = interp.eval_script(text, "/fuzz/modulefile");
    if interp.limit_reached().is_some() {
        assert!(matches!(result, Err(Exception::Error(_))), "a reached limit ends the evaluation: {result:?}");
    }
    if let Ok(words) = list::parse_list(text) {
        let again = list::parse_list(&list::format_list(&words)).expect("a formatted list parses");
        assert_eq!(again, words, "format_list and parse_list round trip");
    }
    let mut expr = Interp::new(());
    expr.set_budget(budget());
    let _ = expr.eval(&format!("expr {{{text}}}"));
});
