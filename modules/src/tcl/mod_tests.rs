//! Tests of the core: word splitting, quoting, substitution, errorInfo tracebacks, limits, nasty inputs.

use super::*;

pub(crate) fn run(script: &str) -> Result<String, Exception> {
    Interp::new(()).eval(script)
}

pub(crate) fn ok(script: &str) -> String {
    match run(script) {
        Ok(v) => v,
        Err(e) => panic!("script {script:?} failed: {e:?}"),
    }
}

pub(crate) fn err(script: &str) -> String {
    match run(script) {
        Err(Exception::Error(e)) => e.message,
        other => panic!("script {script:?} should fail, got {other:?}"),
    }
}

#[test]
fn word_splitting_and_quoting() {
    let cases: &[(&str, &str)] = &[
        ("list a b  c", "a b c"),
        ("list a\tb;list x", "x"),
        ("list {a b} c", "{a b} c"),
        ("list \"a b\" c", "{a b} c"),
        ("list {a {b c}}", "{a {b c}}"),
        ("list {a\\\n   b}", "{a b}"),
        ("list {a\\nb}", "{a\\nb}"),
        ("list \"a{b\"", "a\\{b"),
        ("list a\\ b", "{a b}"),
        ("list \"a\\tb\"", "{a\tb}"),
        ("list a \\\n   b", "a b"),
        ("list \\x41\\u00e9\\101\\q", "AéAq"),
        ("list a\"b", "a\\\"b"),
        ("list {}", "{}"),
        ("list \"\"", "{}"),
        ("# comment\nlist x", "x"),
        ("# comment \\\n continued\nlist y", "y"),
        ("list a # b", "a # b"),
        ("list {*}{a b} c", "a b c"),
        ("list {*}{} c", "c"),
        ("list {*}", "*"),
        ("set x {a b}; list {*}$x", "a b"),
        ("list \"a]\"", "a\\]"),
        ("list [list a]b", "ab"),
        ("list [list {a]}]", "{a\\]}"),
        ("set a 1;set b 2", "2"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
}

#[test]
fn substitutions() {
    let mut i = Interp::new(());
    i.set_global_elem("env", "HOME", "/home/u");
    i.set_global_elem("env", "X Y", "sp");
    let cases: &[(&str, &str)] = &[
        ("set name HOME; set env($name)", "/home/u"),
        ("set ::env(HOME)", "/home/u"),
        ("list $::env(HOME)", "/home/u"),
        ("list ${::env(HOME)}/x", "/home/u/x"),
        ("set a(x) 1; set k x; list $a($k)$a(x)", "11"),
        ("list $env(X Y)", "sp"),
        ("proc p {} {return $::env(HOME)}; p", "/home/u"),
        ("set v 5; list ${v}a $v.b", "5a 5.b"),
        ("list $ a$", "{$} {a$}"),
        ("list [set q [string toupper [list ab]]]", "AB"),
        ("set x 3; list \"[expr {$x*2}] $x\"", "{6 3}"),
        ("set ::g 7; set g", "7"),
        ("info exists ::env(HOME)", "1"),
        ("info exists ::env(NOPE)", "0"),
        ("set s {$x}; list $s", "{$x}"),
    ];
    for (script, want) in cases {
        assert_eq!(i.eval(script).ok().as_deref(), Some(*want), "script {script:?}");
    }
    i.unset_global_elem("env", "HOME");
    assert_eq!(i.get_global_elem("env", "HOME"), None);
    assert_eq!(i.get_global("g").as_deref(), Some("7"));
}

#[test]
fn syntax_errors() {
    let cases: &[(&str, &str)] = &[
        ("set x {a", "missing close-brace"),
        ("set x \"a", "missing \""),
        ("set x [list a", "missing close-bracket"),
        ("set x {a}b", "extra characters after close-brace"),
        ("set x \"a\"b", "extra characters after close-quote"),
        ("set x ${a", "missing close-brace for variable name"),
        ("set x $a(b", "missing )"),
        ("setnev FOO bar", "invalid command name \"setnev\""),
        ("set", "wrong # args: should be \"set varName ?newValue?\""),
        ("set x", "can't read \"x\": no such variable"),
        ("array set env {}; set env(X)", "can't read \"env(X)\": no such element in array"),
        ("incr x abc", "expected integer but got \"abc\""),
        ("set x 1; set x(a) 2", "can't set \"x(a)\": variable isn't array"),
        ("set a(x) 1; set a", "can't read \"a\": variable is array"),
        ("unset nope", "can't unset \"nope\": no such variable"),
    ];
    for (script, want) in cases {
        assert_eq!(err(script), *want, "script {script:?}");
    }
    assert_eq!(ok("unset -nocomplain nope; set x 1; unset x; info exists x"), "0");
}

fn script_error(script: &str, file: &str) -> TclError {
    match Interp::new(()).eval_script(script, file) {
        Err(Exception::Error(e)) => e,
        other => panic!("expected error, got {other:?}"),
    }
}

#[test]
fn error_info_top_level() {
    let e = script_error("#%Module\nset a 1\nsetnev FOO bar\nset b 2\n", "/m/foo/1.0");
    assert_eq!(e.message, "invalid command name \"setnev\"");
    assert_eq!(
        e.info,
        "invalid command name \"setnev\"\n    while executing\n\"setnev FOO bar\"\n    (file \"/m/foo/1.0\" line 3)"
    );
    assert_eq!(e.line, 3);
}

#[test]
fn error_info_if_body() {
    let e = script_error("set a 1\nif {1} {\n    setnev FOO bar\n}\n", "f");
    let want = "invalid command name \"setnev\"\n    while executing\n\"setnev FOO bar\"\n    invoked from within\n\
                \"if {1} {\n    setnev FOO bar\n}\"\n    (file \"f\" line 2)";
    assert_eq!(e.info, want);
    assert_eq!(e.line, 2);
}

#[test]
fn error_info_proc() {
    let e = script_error("proc p {} {\n    set x 1\n    error boom\n}\n\np\n", "f");
    let want = "boom\n    while executing\n\"error boom\"\n    (procedure \"p\" line 3)\n    invoked from within\n\"p\"\n    (file \"f\" line 6)";
    assert_eq!(e.info, want);
    assert_eq!(e.line, 6);
}

#[test]
fn error_info_substitution_and_parse() {
    let e = script_error("set x [nosuch 1]", "f");
    assert_eq!(e.info, "invalid command name \"nosuch\"\n    while executing\n\"nosuch 1\"\n    invoked from within\n\"set x [nosuch 1]\"\n    (file \"f\" line 1)");
    let e = script_error("set a 1\nset x {abc\nset y 2\n", "f");
    assert_eq!(e.message, "missing close-brace");
    assert_eq!(e.info, "missing close-brace\n    while executing\n\"set x {\"\n    (file \"f\" line 2)");
    assert_eq!(e.line, 2);
    let e = script_error("set x [list a", "f");
    assert_eq!(e.info, "missing close-bracket\n    while executing\n\"set x [\"\n    (file \"f\" line 1)");
    let e = script_error("set x {a}b c", "f");
    assert_eq!(
        e.info,
        "extra characters after close-brace\n    while executing\n\"set x {a}b\"\n    (file \"f\" line 1)"
    );
    let long = format!("error {}", "x".repeat(200));
    let e = script_error(&long, "f");
    let shown = format!("\"{}...\"", long.chars().take(150).collect::<String>());
    assert!(e.info.contains(&shown), "{}", e.info);
}

#[test]
fn eval_script_return_exit_and_call() {
    let mut i = Interp::new(());
    assert_eq!(i.eval_script("set a 1\nreturn done\nset a 2", "f"), Ok("done".into()));
    assert_eq!(i.get_global("a").as_deref(), Some("1"));
    assert_eq!(i.eval_script("exit 3", "f"), Err(Exception::Exit(3)));
    assert_eq!(i.eval_script("break", "f"), Err(Exception::Break));
    i.eval("proc ModulesHelp {args} {return \"help $args\"}").unwrap();
    assert_eq!(i.call("ModulesHelp", &["x".into()]), Some(Ok("help x".into())));
    assert_eq!(i.call("Nope", &[]), None);
    assert!(i.has_command("set") && i.has_command("ModulesHelp") && !i.has_command("Nope"));
}

#[test]
fn registered_command_reaches_ctx() {
    fn bump(i: &mut Interp<Vec<String>>, a: &[String]) -> Result<String, Exception> {
        i.ctx.extend(a.iter().skip(1).cloned());
        Ok(i.ctx.len().to_string())
    }
    let mut i = Interp::new(Vec::new());
    i.register("setenv", bump);
    assert_eq!(i.eval("setenv A b; setenv C d"), Ok("4".into()));
    assert_eq!(i.ctx, vec!["A", "b", "C", "d"]);
}

#[test]
fn limits() {
    let mut i = Interp::new(());
    i.set_command_limit(100_000);
    match i.eval("while 1 {}") {
        Err(Exception::Error(e)) => assert_eq!(e.message, "too many commands evaluated (infinite loop?)"),
        other => panic!("{other:?}"),
    }
    let mut i = Interp::new(());
    i.set_command_limit(100_000);
    assert!(matches!(i.eval("for {} 1 {} {catch {while 1 {}}}"), Err(Exception::Error(_))));
    let deep =
        std::thread::Builder::new().stack_size(64 << 20).spawn(|| run("proc f {} {f}; f")).unwrap().join().unwrap();
    match deep {
        Err(Exception::Error(e)) => assert_eq!(e.message, "too many nested evaluations (infinite loop?)"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_panics_on_nasty_input() {
    let nasty = [
        "{",
        "}",
        "\"",
        "[",
        "]",
        "\\",
        "$",
        "${",
        "$a(",
        "set x {",
        "set x \"",
        "set x [",
        "{*}",
        "{*}{",
        "expr 99999999999999999999999",
        "expr 1/0",
        "expr {-9223372036854775808 / -1}",
        "expr {1 %",
        "lindex {a b} 9999999999999999999",
        "string repeat x 999999999999",
        "expr {(((((1",
        "expr {2**-1}",
        "expr {1<<99999}",
        "expr {-9223372036854775808 % -1}",
        "format %999999999999d 1",
        "format %*d",
        "string range abc 99999999999999999999 -99999999999999999999",
        "lrange {a b} end-99999999999999999999 end",
        "set a(",
        "set \u{e9}(\u{e9}) 1",
        "list \\\u{e9}",
        "list {\\\u{e9}}",
        "expr {\"\u{e9}\" < 1}",
        "proc",
        "proc p",
        "upvar 99 x y",
        "uplevel 99 {}",
        "info level -99",
        "regexp {(} x",
        "regsub -all {} abc x",
        "lsort -integer {a b}",
        "string index \u{e9}\u{e9} 1",
        "split \u{e9}\u{e9} {}",
        "switch",
        "switch x",
        "foreach {} {} {}",
        "string map {a} x",
        "lsearch -regexp {a} (",
        "expr {\"\\",
        "subst {[}",
        "subst {$}",
        "glob -nocomplain /nonexist*/x",
        "format %c -1",
        "format %.99999999999f 1",
        "lrepeat 999999999999 x",
        "incr x 9223372036854775807; incr x",
        "expr {int(1e300)}",
        "expr {round(-1e300)}",
        "expr {abs(-9223372036854775808)}",
        "expr {0x}",
        "expr {1e999}",
        "expr {nan}",
        "expr {sqrt(-1)}",
        "expr max()",
        "string is integer -failindex",
        "after",
        "\\\n",
        "#\\",
        "set x [[[[[[[[[[",
        "lappend",
        "file dirname",
        "array set a {x}",
        "scan",
    ];
    for s in nasty {
        let _ = run(s);
    }
    assert_eq!(err("string repeat x 999999999999"), "result string too long (over 64 MiB)");
    assert_eq!(ok("lindex {a b} 9999999999999999999"), "");
    let deep_brackets = format!("set x {}1{}", "[".repeat(3000), "]".repeat(3000));
    let r = std::thread::Builder::new().stack_size(64 << 20).spawn(move || run(&deep_brackets)).unwrap().join();
    assert!(r.is_ok());
    let deep_parens = format!("expr {{{}1{}}}", "(".repeat(5000), ")".repeat(5000));
    assert!(run(&deep_parens).is_err());
    let long_chain = format!("expr {{1{}}}", "+1".repeat(20000));
    assert_eq!(ok(&long_chain), "20001");
}
