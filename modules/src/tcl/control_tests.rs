//! Tests of expr, control flow, procs, variable scoping, switch, catch.

use crate::tcl::tests::{err, ok};

#[test]
fn expr_values_and_precedence() {
    let cases: &[(&str, &str)] = &[
        ("expr {1 + 2 * 3}", "7"),
        ("expr {(1 + 2) * 3}", "9"),
        ("expr {2 ** 3 ** 2}", "512"),
        ("expr {-2 ** 2}", "4"),
        ("expr {7 / 2}", "3"),
        ("expr {-7 / 2}", "-4"),
        ("expr {-7 % 2}", "1"),
        ("expr {7 % -2}", "-1"),
        ("expr {7 / 2.0}", "3.5"),
        ("expr {1.0 * 2}", "2.0"),
        ("expr {0x10 + 010}", "24"),
        ("expr {1 << 4 | 1}", "17"),
        ("expr {5 & 3 ^ 1}", "0"),
        ("expr {1 < 2 == 1}", "1"),
        ("expr {\"abc\" < \"abd\"}", "1"),
        ("expr {\"10\" == 10.0}", "1"),
        ("expr {\"a\" eq \"a\" && \"b\" ne \"c\"}", "1"),
        ("expr {\"b\" in {a b c}}", "1"),
        ("expr {\"d\" ni {a b c}}", "1"),
        ("expr {1 ? \"yes\" : \"no\"}", "yes"),
        ("expr {0 ? 1 : 0 ? 2 : 3}", "3"),
        ("expr {!0 + ~0}", "0"),
        ("expr {int(3.7) + round(2.5) + abs(-2)}", "8"),
        ("expr {max(1, 5.5, 3)}", "5.5"),
        ("expr {min(4, 2)}", "2"),
        ("expr {double(1)}", "1.0"),
        ("expr {wide(7)}", "7"),
        ("expr {sqrt(16)}", "4.0"),
        ("expr {1e20}", "1e+20"),
        ("expr {0.1 + 0.2}", "0.30000000000000004"),
        ("expr {true && yes}", "1"),
        ("expr {off || 0}", "0"),
        ("expr 2 + 3", "5"),
        ("set x 4; expr {$x * [set x]}", "16"),
        ("set a(k) 3; expr {$a(k) + 1}", "4"),
        ("expr {\"[list a]\" eq \"a\"}", "1"),
        ("expr {99999999999999999999999 > 1}", "1"),
        ("expr {9223372036854775807 + 1 > 0}", "1"),
        ("expr {1.5e3}", "1500.0"),
        ("expr { 3 }", "3"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
}

#[test]
fn expr_errors() {
    assert_eq!(err("expr 1/0"), "divide by zero");
    assert_eq!(err("expr {1 % 0}"), "divide by zero");
    assert_eq!(err("expr {\"abc\" + 1}"), "can't use non-numeric string as operand of \"+\"");
    assert_eq!(err("expr {1.5 & 1}"), "can't use floating-point value as operand of \"&\"");
    assert_eq!(err("expr {abc}"), "invalid bareword \"abc\" in expression \"abc\"");
    assert_eq!(err("expr {foo(1)}"), "invalid command name \"tcl::mathfunc::foo\"");
    assert_eq!(err("expr {}"), "empty expression");
    assert_eq!(err("if {\"x\"} {}"), "expected boolean value but got \"x\"");
    assert!(err("expr {1 +}").contains("missing operand"));
    assert!(err("expr {(1 + 2}").contains("unbalanced"));
}

#[test]
fn expr_short_circuit() {
    assert_eq!(ok("set n 0; expr {0 && [incr n]}; set n"), "0");
    assert_eq!(ok("set n 0; expr {1 || [incr n]}; set n"), "0");
    assert_eq!(ok("set n 0; expr {1 ? 2 : [incr n]}; set n"), "0");
    assert_eq!(ok("set n 0; expr {0 ? [incr n] : 5}"), "5");
    assert_eq!(ok("expr {0 && [nosuchcmd]}"), "0");
    assert_eq!(ok("expr {1 || $nosuchvar}"), "1");
    assert_eq!(ok("set n 0; expr {1 && [incr n]}; set n"), "1");
}

#[test]
fn if_while_for_foreach() {
    let cases: &[(&str, &str)] = &[
        ("if {1} {set r a} else {set r b}", "a"),
        ("if {0} {set r a} elseif {1} then {set r c} else {set r b}", "c"),
        ("if {0} then {set r a}", ""),
        ("if 0 {set r a} {set r d}", "d"),
        ("set i 0; while {$i < 5} {incr i}; set i", "5"),
        ("set s {}; for {set i 0} {$i < 10} {incr i} {if {$i == 3} continue; if {$i == 6} break; append s $i}; set s", "01245"),
        ("set s {}; foreach x {a b c} {append s $x}; set s", "abc"),
        ("set s {}; foreach {k v} {a 1 b 2 c} {append s $k=$v,}; set s", "a=1,b=2,c=,"),
        ("set s {}; foreach x {1 2 3} y {a b} {append s $x$y.}; set s", "1a.2b.3."),
        ("set s {}; foreach x {1 2 3} {if {$x == 2} break; append s $x}; set s", "1"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("if"), "wrong # args: no expression after \"if\" argument");
    assert_eq!(err("if 1"), "wrong # args: no script following \"1\" argument");
}

#[test]
fn procs() {
    let cases: &[(&str, &str)] = &[
        ("proc p {a {b 2}} {return $a-$b}; list [p 1] [p 1 3]", "1-2 1-3"),
        ("proc p {a args} {list $a $args}; p 1 2 3", "1 {2 3}"),
        ("proc p {args} {llength $args}; p", "0"),
        ("proc p {} {set x 1}; p", "1"),
        ("proc p {n} {if {$n <= 1} {return 1}; expr {$n * [p [expr {$n - 1}]]}}; p 10", "3628800"),
        ("proc p {} {return -code error oops}; catch p m; set m", "oops"),
        ("set g 5; proc p {} {global g; incr g}; p; set g", "6"),
        ("proc p {} {set ::h 9}; p; set h", "9"),
        ("proc inc {name} {upvar 1 $name v; incr v}; set c 1; inc c; set c", "2"),
        ("proc p {} {upvar #0 env e; set e(X) 1}; p; set env(X)", "1"),
        ("proc q {} {upvar a(k) v; set v 4}; q; set a(k)", "4"),
        ("proc p {} {uplevel 1 {set z 3}}; p; set z", "3"),
        ("proc p {} {info level}; list [info level] [p]", "0 1"),
        ("proc p {x} {info level 0}; p 5", "p 5"),
        ("proc p {a {b 1}} {}; list [info args p] [info body p] [info procs p]", "{a b} {} p"),
        ("proc p {} {}; rename p q; list [info commands p] [info commands q]", "{} q"),
        ("proc p {} {break}; catch p m; set m", "invoked \"break\" outside of a loop"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("proc p {a {b 1} args} {}; p"), "wrong # args: should be \"p a ?b? ?arg ...?\"");
    assert_eq!(err("proc p {a} {}; p 1 2"), "wrong # args: should be \"p a\"");
    assert_eq!(err("proc p {} {set y}; p"), "can't read \"y\": no such variable");
    assert_eq!(err("proc p {{a b c}} {}"), "too many fields in argument specifier \"a b c\"");
}

#[test]
fn switch_forms() {
    let cases: &[(&str, &str)] = &[
        ("switch b {a {set r 1} b {set r 2} default {set r 3}}", "2"),
        ("switch z {a {set r 1} default {set r 3}}", "3"),
        ("switch z {a {set r 1}}", ""),
        ("switch b a {set r 1} b {set r 2}", "2"),
        ("switch -glob -- foo.tcl {*.txt {set r t} *.tcl {set r c}}", "c"),
        ("switch -exact -- * {* {set r star}}", "star"),
        ("switch a {a - b {set r ab} c {set r c}}", "ab"),
        ("switch -regexp abc123 {{^[a-z]+$} {set r w} {\\d+$} {set r d}}", "d"),
        ("switch -nocase -- ABC {abc {set r lower}}", "lower"),
        ("switch -- -x {-x {set r dash}}", "dash"),
        ("switch -x {-x {set r dash}}", "dash"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(err("switch a {a}"), "extra switch pattern with no body");
    assert_eq!(err("switch a {a -}"), "no body specified for pattern \"a\"");
}

#[test]
fn catch_error_return() {
    let cases: &[(&str, &str)] = &[
        ("catch {error boom} m", "1"),
        ("catch {error boom} m; set m", "boom"),
        ("catch {set x 1} m", "0"),
        ("catch {return 5} m; set m", "5"),
        ("catch {break}", "3"),
        ("catch {continue}", "4"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(ok("catch {nosuch x} m o; lindex $o 1"), "1");
    assert_eq!(ok("catch {error a b} m; set ::errorInfo"), "b\n    invoked from within\n\"error a b\"");
    assert_eq!(
        ok("catch {if 1 {error boom}}; set ::errorInfo"),
        "boom\n    while executing\n\"error boom\"\n    invoked from within\n\"if 1 {error boom}\""
    );
    assert_eq!(ok("proc p {} {return -code break}; catch p"), "3");
    assert_eq!(ok("eval {set a 1} ; eval set b 2; list $a $b"), "1 2");
    assert_eq!(ok("set s {a $x [b]}; subst -nocommands -novariables $s"), "a $x [b]");
    assert_eq!(ok("set x 1; subst {$x[set x 2]\\t}"), "12\t");
}
