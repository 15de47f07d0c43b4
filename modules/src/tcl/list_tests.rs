//! Tests of list parsing/quoting, dictionary order and the list commands.

use super::*;
use crate::tcl::tests::{err, ok};

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn parse_list_cases() {
    let cases: &[(&str, &[&str])] = &[
        ("a b c", &["a", "b", "c"]),
        ("  a\n\tb  ", &["a", "b"]),
        ("{a b} c", &["a b", "c"]),
        ("{a {b c}} d", &["a {b c}", "d"]),
        ("\"a b\" {}", &["a b", ""]),
        ("a\\ b c\\tx", &["a b", "c\tx"]),
        ("{a\\}b}", &["a\\}b"]),
        ("\"a\\\"b\"", &["a\"b"]),
        ("a{b c}", &["a{b", "c}"]),
        ("", &[]),
    ];
    for (text, want) in cases {
        assert_eq!(parse_list(text), Ok(strs(want)), "list {text:?}");
    }
    assert_eq!(parse_list("{a").unwrap_err().message, "unmatched open brace in list");
    assert_eq!(parse_list("\"a").unwrap_err().message, "unmatched open quote in list");
    assert_eq!(parse_list("{a}b").unwrap_err().message, "list element in braces followed by \"b\" instead of space");
    assert_eq!(parse_list("\"a\"b").unwrap_err().message, "list element in quotes followed by \"b\" instead of space");
}

#[test]
fn format_list_cases_and_round_trip() {
    let cases: &[(&[&str], &str)] = &[
        (&["a", "b"], "a b"),
        (&["a b", ""], "{a b} {}"),
        (&["a{"], "a\\{"),
        (&["}a"], "\\}a"),
        (&["{a}"], "{{a}}"),
        (&["a\\"], "a\\\\"),
        (&["$x", "[y]"], "{$x} {[y]}"),
        (&["#a", "#b"], "{#a} #b"),
        (&["a\nb"], "{a\nb}"),
        (&["a\"b"], "a\\\"b"),
        (&["a]"], "a\\]"),
        (&["a\"b c"], "{a\"b c}"),
        (&["a\\b"], "{a\\b}"),
    ];
    for (words, want) in cases {
        assert_eq!(format_list(&strs(words)), *want);
    }
    let samples = [
        "", " ", "a b", "{", "}", "{}", "}{", "\\", "\\\\", "a\\", "\"", "a\"b", "{a\\}", "\\{", "x\\\ny", "$a", "[b]",
        ";", "#", "a\tb\nc", "é ü", "{{", "\\n", "end\\", "{a} b", "a}", "\\}",
    ];
    for a in samples {
        for b in samples {
            let words = strs(&[a, b, "z"]);
            let text = format_list(&words);
            assert_eq!(parse_list(&text), Ok(words.clone()), "round trip of {words:?} via {text:?}");
        }
    }
}

#[test]
fn dictionary_order() {
    use std::cmp::Ordering::*;
    let cases = [
        ("1.9", "1.17", Less),
        ("4.2", "4.10", Less),
        ("2.9.1", "2.10", Less),
        ("a1", "a10", Less),
        ("a10", "b", Less),
        ("abc", "ABD", Less),
        ("ABC", "abc", Less),
        ("abc", "abc", Equal),
        ("x2", "x02", Less),
        ("a", "ab", Less),
        ("1.10", "1.9", Greater),
    ];
    for (a, b, want) in cases {
        assert_eq!(dictionary_cmp(a, b), want, "{a} vs {b}");
        assert_eq!(dictionary_cmp(b, a), want.reverse(), "{b} vs {a}");
    }
}

#[test]
fn list_commands() {
    let cases: &[(&str, &str)] = &[
        ("lsort -dictionary {1.17 1.9 1.10 2.0 1.2}", "1.2 1.9 1.10 1.17 2.0"),
        ("lsort -dictionary -decreasing {4.2 4.10 4.9}", "4.10 4.9 4.2"),
        ("lsort {b A a B}", "A B a b"),
        ("lsort -nocase {b A c}", "A b c"),
        ("lsort -integer {10 9 -1}", "-1 9 10"),
        ("lsort -real {1.5 1e0 -2}", "-2 1e0 1.5"),
        ("lsort -unique {b a b c a}", "a b c"),
        ("lsort -index 1 {{a 3} {b 1} {c 2}}", "{b 1} {c 2} {a 3}"),
        ("llength {a {b c} d}", "3"),
        ("lindex {a b c} 1", "b"),
        ("lindex {a b c} end", "c"),
        ("lindex {a b c} end-1", "b"),
        ("lindex {a b c} 5", ""),
        ("lindex {a {b {c d}}} 1 1 0", "c"),
        ("lindex {a {b {c d}}} {1 1 1}", "d"),
        ("lindex {a b}", "a b"),
        ("lrange {a b c d} 1 end-1", "b c"),
        ("lrange {a b c} 2 0", ""),
        ("set l {}; lappend l a {b c}; lappend l d", "a {b c} d"),
        ("lsearch {a b c} b", "1"),
        ("lsearch {a b c} z", "-1"),
        ("lsearch -glob {ab cd ae} a*", "0"),
        ("lsearch -all -inline {ab cd ae} a*", "ab ae"),
        ("lsearch -all -not {ab cd ae} a*", "1"),
        ("lsearch -exact -nocase {A B} b", "1"),
        ("lsearch -regexp {x1 y22} {\\d\\d}", "1"),
        ("lreverse {a b c}", "c b a"),
        ("linsert {a b} 1 x y", "a x y b"),
        ("linsert {a b} end x", "a b x"),
        ("lreplace {a b c d} 1 2 x", "a x d"),
        ("lreplace {a b c} 1 1", "a c"),
        ("lassign {1 2 3} x y; list $x $y", "1 2"),
        ("lassign {1 2 3} x", "2 3"),
        ("lrepeat 2 a b", "a b a b"),
        ("join {a b c} ,", "a,b,c"),
        ("join {a {b c}}", "a b c"),
        ("split a:b::c :", "a b {} c"),
        ("split {a b\tc}", "a b c"),
        ("split abc {}", "a b c"),
        ("concat {a b} { c } {} d", "a b c d"),
        ("list a {} b", "a {} b"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("lsort -integer {1 x}"), "expected integer but got \"x\"");
    assert_eq!(err("lindex {a b} foo"), "bad index \"foo\": must be integer?[+-]integer? or end?[+-]integer?");
    assert_eq!(err("llength {a {b}c}"), "list element in braces followed by \"c\" instead of space");
}

#[test]
fn arrays() {
    let cases: &[(&str, &str)] = &[
        ("array set a {x 1 y 2}; lsort [array names a]", "x y"),
        ("array set a {x 1 y 2}; array size a", "2"),
        ("array set a {x 1 y 2}; array get a x", "x 1"),
        ("array exists nope", "0"),
        ("set a(1) z; array exists a", "1"),
        ("array set a {x 1 y 2}; array unset a x; array names a", "y"),
        ("array set a {x 1}; array unset a; info exists a", "0"),
        ("set a(x) 1; unset a(x); array size a", "0"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("array set a {x}"), "list must have an even number of elements");
}
