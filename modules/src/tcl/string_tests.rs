//! Tests of glob matching, the `string` command and `format`, `regexp`, `regsub`.

use super::*;
use crate::tcl::tests::{err, ok};

#[test]
fn glob_matching() {
    let cases = [
        ("*", "", true),
        ("a*", "abc", true),
        ("a*c", "abxc", true),
        ("a*c", "abxd", false),
        ("?b", "ab", true),
        ("?b", "b", false),
        ("[a-c]x", "bx", true),
        ("[a-c]x", "dx", false),
        ("[abc]", "c", true),
        ("a\\*", "a*", true),
        ("a\\*", "ab", false),
        ("*.tcl", "foo.tcl", true),
        ("*/1.*", "foo/1.2", true),
        ("a*b*c", "aXbYc", true),
        ("a*b*c", "aXbY", false),
        ("é?", "éü", true),
        ("[", "[", false),
        ("\\", "\\", true),
    ];
    for (p, t, want) in cases {
        assert_eq!(glob_match(p, t, false), want, "{p} vs {t}");
    }
    assert!(glob_match("ABC*", "abcd", true));
    assert!(!glob_match("ABC*", "abcd", false));
    let long = "a".repeat(5000);
    assert!(!glob_match(&"*a".repeat(50), &format!("{long}b"), false));
}

#[test]
fn string_command() {
    let cases: &[(&str, &str)] = &[
        ("string match -nocase A* abc", "1"),
        ("string match {[0-9]*} 42x", "1"),
        ("string equal abc abc", "1"),
        ("string equal -nocase ABC abc", "1"),
        ("string equal -length 2 abx aby", "1"),
        ("string compare a b", "-1"),
        ("string compare b a", "1"),
        ("string compare -nocase A a", "0"),
        ("string first b abcb", "1"),
        ("string first b abcb 2", "3"),
        ("string first z abc", "-1"),
        ("string last b abcb", "3"),
        ("string last b abcb 2", "1"),
        ("string index abc 1", "b"),
        ("string index abc end", "c"),
        ("string index abc 9", ""),
        ("string range abcdef 1 3", "bcd"),
        ("string range abcdef 2 end", "cdef"),
        ("string range abcdef -5 1", "ab"),
        ("string range abc 2 1", ""),
        ("string length héllo", "5"),
        ("string tolower ABC", "abc"),
        ("string toupper abc", "ABC"),
        ("string totitle hELLO", "Hello"),
        ("string trim {  a b  }", "a b"),
        ("string trimleft xxaxx x", "axx"),
        ("string trimright xxaxx x", "xxa"),
        ("string map {a 1 b 2} abcab", "12c12"),
        ("string map {abc X a Y} abca", "XY"),
        ("string map -nocase {A x} aA", "xx"),
        ("string replace abcdef 1 2 XY", "aXYdef"),
        ("string replace abc 1 1", "ac"),
        ("string repeat ab 3", "ababab"),
        ("string reverse abc", "cba"),
        ("string is integer 42", "1"),
        ("string is integer 4x", "0"),
        ("string is integer {}", "1"),
        ("string is integer -strict {}", "0"),
        ("string is double 1.5e3", "1"),
        ("string is digit 123", "1"),
        ("string is alpha abC", "1"),
        ("string is alnum ab1", "1"),
        ("string is space { \t}", "1"),
        ("string is upper AB", "1"),
        ("string is lower ab", "1"),
        ("string is boolean yes", "1"),
        ("string is true on", "1"),
        ("string is false 0", "1"),
        ("string is boolean 2", "0"),
        ("string cat a b c", "abc"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert!(err("string bogus x").starts_with("unknown or ambiguous subcommand \"bogus\""));
    assert_eq!(err("string map {a} x"), "char map list unbalanced");
}

#[test]
fn format_command() {
    let cases: &[(&str, &str)] = &[
        ("format %s-%d abc 42", "abc-42"),
        ("format %5s| x", "    x|"),
        ("format %-5s| x", "x    |"),
        ("format %05d -42", "-0042"),
        ("format %+d 5", "+5"),
        ("format {% d} 5", " 5"),
        ("format %x 255", "ff"),
        ("format %X 255", "FF"),
        ("format %#x 255", "0xff"),
        ("format %o 8", "10"),
        ("format %c 65", "A"),
        ("format %.2f 3.14159", "3.14"),
        ("format %8.3f 3.14159", "   3.142"),
        ("format %e 1234.5", "1.234500e+03"),
        ("format %.2E 0.000123", "1.23E-04"),
        ("format %g 0.0001", "0.0001"),
        ("format %g 1234567", "1.23457e+06"),
        ("format %g 100", "100"),
        ("format %g 1.5", "1.5"),
        ("format %*d 4 7", "   7"),
        ("format %.3s abcdef", "abc"),
        ("format %% ", "%"),
        ("format %i 7", "7"),
        ("format %d 0x10", "16"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("format %d abc"), "expected integer but got \"abc\"");
    assert_eq!(err("format %d"), "not enough arguments for all format specifiers");
    assert_eq!(err("format %q 1"), "bad field specifier \"q\"");
}

#[test]
fn regexp_and_regsub() {
    let cases: &[(&str, &str)] = &[
        ("regexp {^(\\d+)\\.(\\d+)} 4.10.2 all maj min; list $all $maj $min", "4.10 4 10"),
        ("regexp {x} abc", "0"),
        ("regexp -nocase {ABC} xabcx", "1"),
        ("regexp -inline {(a)(b)?} ac", "a a {}"),
        ("regexp -all {a} banana", "3"),
        ("regexp -all -inline {a.} banana", "an an"),
        ("regexp -indices {b+} abbc m; set m", "1 2"),
        ("regsub {a} banana o", "bonana"),
        ("regsub -all {a} banana o", "bonono"),
        ("regsub -all {(a)(n)} banana {\\2\\1} r; set r", "bnanaa"),
        ("regsub -all {an} banana {<&>}", "b<an><an>a"),
        ("regsub {x} abc y r", "0"),
        ("regsub -all -nocase {A} aA x", "xx"),
        ("regsub -all {\\\\} {a\\b} / ", "a/b"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert!(err("regexp {(} x").starts_with("couldn't compile regular expression pattern"));
}
