//! `#PBS` directive extraction (`job::directives::extract`) on any script text, with the
//! default prefix and with a prefix taken from the input (`-C`/`PBS_DPREFIX`). Must return
//! `Ok` or `Err`, never panic; every directive's position lies inside the script.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    check(text, "#PBS");
    if let Some((prefix, script)) = text.split_once('\u{0}') {
        check(script, prefix);
    }
});

fn check(script: &str, prefix: &str) {
    if let Ok(directives) = job::directives::extract(script, prefix) {
        let lines = script.split('\n').count();
        for directive in directives {
            assert!(directive.line >= 1 && directive.line <= lines, "line {} of {lines}", directive.line);
            assert!(directive.column >= 1);
        }
    }
}
