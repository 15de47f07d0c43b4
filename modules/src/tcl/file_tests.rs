//! Tests of the path helpers, `file`, `glob`, `source` and `puts` argument checking.

use super::*;
use crate::tcl::tests::{err, ok};

#[test]
fn path_helpers() {
    let cases: &[(&str, &str)] = &[
        ("file dirname /a/b/c", "/a/b"),
        ("file dirname /a", "/"),
        ("file dirname /", "/"),
        ("file dirname a", "."),
        ("file dirname a/b/", "a"),
        ("file tail /a/b/c", "c"),
        ("file tail /a/b/", "b"),
        ("file tail c", "c"),
        ("file join a b c", "a/b/c"),
        ("file join a /b c", "/b/c"),
        ("file join /a/ b/", "/a/b"),
        ("file rootname /a/foo.tar.gz", "/a/foo.tar"),
        ("file rootname /a.b/c", "/a.b/c"),
        ("file extension foo.tcl", ".tcl"),
        ("file extension /a.b/c", ""),
        ("file split /a/b", "/ a b"),
        ("file normalize /a/./b/../c", "/a/c"),
        ("file separator", "/"),
    ];
    for (script, want) in cases {
        assert_eq!(ok(script), *want, "script {script:?}");
    }
    assert_eq!(dirname("/x/y"), "/x");
    assert_eq!(tail("/x/y"), "y");
}

#[test]
fn filesystem_commands() {
    let dir = std::env::temp_dir().join(format!("tclscratch-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("a.tcl"), "set x 41\nincr x\n").unwrap();
    std::fs::write(dir.join("b.txt"), "").unwrap();
    std::fs::write(dir.join("bad.tcl"), "set y 1\nnosuchcmd\n").unwrap();
    let d = dir.to_string_lossy().into_owned();
    let mut i = Interp::new(());
    i.set_global("d", &d);
    let cases: &[(&str, &str)] = &[
        ("file exists $d/a.tcl", "1"),
        ("file exists $d/nope", "0"),
        ("file isdirectory $d/sub", "1"),
        ("file isfile $d/sub", "0"),
        ("file readable $d/a.tcl", "1"),
        ("file executable $d/a.tcl", "0"),
        ("source $d/a.tcl", "42"),
    ];
    for (script, want) in cases {
        assert_eq!(i.eval(script).ok().as_deref(), Some(*want), "script {script:?}");
    }
    let g = i.eval("glob -directory $d *.tcl").unwrap();
    assert_eq!(parse_list(&g).unwrap(), vec![format!("{d}/a.tcl"), format!("{d}/bad.tcl")]);
    assert_eq!(i.eval("glob -tails -directory $d *.t*").unwrap(), "a.tcl b.txt bad.tcl");
    assert_eq!(i.eval("glob -nocomplain -directory $d *.zip").unwrap(), "");
    assert_eq!(i.eval("llength [glob -types d -directory $d *]").unwrap(), "1");
    match i.eval("source $d/bad.tcl") {
        Err(Exception::Error(e)) => assert!(e.info.contains(&format!("(file \"{d}/bad.tcl\" line 2)")), "{}", e.info),
        other => panic!("{other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(err("glob /nonexistent-dir-xyz/*").starts_with("no files matched glob pattern"));
    assert_eq!(err("puts a b c d"), "wrong # args: should be \"puts ?-nonewline? ?channelId? string\"");
    assert_eq!(err("puts nochan x"), "can not find channel named \"nochan\"");
    assert_eq!(err("source /nonexistent-xyz"), "couldn't read file \"/nonexistent-xyz\": no such file or directory");
}
