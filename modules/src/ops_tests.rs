//! Loads, unloads and switches on a small tree, checked on the session: the environment, the
//! loaded list and the report lines (Environment Modules 5.2's words, modules.md section 5).

use super::*;
use crate::env::Env;
use crate::tcl::Limit;

const TREE: &[(&str, &str)] = &[
    ("zlib/1.2.13", "#%Module\nconflict zlib\nsetenv ZLIB_ROOT /sw/zlib/1.2.13\nprepend-path PATH /sw/zlib/1.2.13/bin\nprepend-path LD_LIBRARY_PATH /sw/shared/lib\n"),
    ("zlib/1.3.1", "#%Module\nconflict zlib\nsetenv ZLIB_ROOT /sw/zlib/1.3.1\nprepend-path PATH /sw/zlib/1.3.1/bin\n"),
    ("zlib/.modulerc", "#%Module\nmodule-version zlib/1.2.13 default\nmodule-version zlib/1.3.1 testing\n"),
    ("netlib/3.0", "#%Module\nprereq zlib\nconflict netlib otherlib\nsetenv NETLIB_ROOT /sw/netlib\nprepend-path PATH /sw/netlib/bin\nprepend-path LD_LIBRARY_PATH /sw/shared/lib\n"),
    ("foo/1.0", "#%Module\nsetenv FOO bar\n\nsetnev FOO baz\n"),
    ("nocookie/1.0", "echo not a module\n"),
    ("loopa/1.0", "#%Module\nmodule load loopb\nsetenv LOOPA 1\n"),
    ("loopb/1.0", "#%Module\nmodule load loopa\nsetenv LOOPB 1\n"),
    ("gcc/9.1", "#%Module\nconflict gcc\nsetenv CC gcc-9\n"),
    ("gcc/11.4", "#%Module\nconflict gcc\nsetenv CC gcc-11\nmodule load zlib\n"),
    ("app/1.0", "#%Module\nif { ![is-loaded netlib] } { module load netlib }\nsetenv APP 1\n"),
];

struct Tree {
    dir: tempfile::TempDir,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in TREE {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    Tree { dir }
}

impl Tree {
    fn session(&self) -> Session {
        let vars = [("MODULEPATH", self.dir.path().display().to_string()), ("PATH", "/usr/bin:/bin".to_string())];
        Session::new(Env::new(vars.into_iter().map(|(name, value)| (name.to_string(), value))), 80)
    }
}

fn loaded(session: &Session) -> Vec<(String, bool)> {
    session.loaded.iter().map(|module| (module.name.clone(), module.auto)).collect()
}

fn names(items: &[(&str, bool)]) -> Vec<(String, bool)> {
    items.iter().map(|(name, auto)| (name.to_string(), *auto)).collect()
}

#[test]
fn a_prereq_is_loaded_first_and_unloaded_when_no_longer_needed() {
    let tree = tree();
    let mut session = tree.session();
    assert_eq!(load(&mut session, "netlib", false), Ok(()));
    assert_eq!(loaded(&session), names(&[("zlib/1.2.13", true), ("netlib/3.0", false)]));
    assert_eq!(session.out, ["Loading netlib/3.0", "  Loading requirement: zlib/1.2.13"]);
    assert_eq!(session.env.get("PATH"), Some("/sw/netlib/bin:/sw/zlib/1.2.13/bin:/usr/bin:/bin"));
    assert_eq!(session.env.get("__MODULES_SHARE_LD_LIBRARY_PATH"), Some("/sw/shared/lib:2"));
    assert_eq!(session.env.get("__MODULES_LMPREREQ"), Some("netlib/3.0&zlib"));
    let mut session = Session::new(session.env.clone(), 80);
    assert_eq!(unload(&mut session, "netlib"), Ok(()));
    assert_eq!(session.out, ["Unloading netlib/3.0", "  Unloading useless requirement: zlib/1.2.13"]);
    assert!(session.loaded.is_empty());
    assert_eq!(session.env.get("PATH"), Some("/usr/bin:/bin"));
    for gone in ["LD_LIBRARY_PATH", "__MODULES_SHARE_LD_LIBRARY_PATH", "ZLIB_ROOT", "LOADEDMODULES", "_LMFILES_"] {
        assert_eq!(session.env.get(gone), None, "{gone}");
    }
    assert!(!session.failed);
}

#[test]
fn unloading_a_requirement_unloads_its_dependents_first() {
    let tree = tree();
    let mut session = tree.session();
    load(&mut session, "app", false).unwrap();
    assert_eq!(loaded(&session), names(&[("zlib/1.2.13", true), ("netlib/3.0", true), ("app/1.0", false)]));
    let mut session = Session::new(session.env.clone(), 80);
    unload(&mut session, "zlib").unwrap();
    assert_eq!(session.out, ["Unloading zlib/1.2.13 <aL>", "  Unloading dependent: app/1.0 netlib/3.0"]);
    assert!(session.loaded.is_empty());
    assert_eq!(session.env.get("APP"), None);
}

#[test]
fn conflicts_are_refused_with_the_hint_and_change_nothing() {
    let tree = tree();
    let mut session = tree.session();
    load(&mut session, "gcc/9.1", false).unwrap();
    let mut session = Session::new(session.env.clone(), 80);
    let before = session.env.clone();
    assert_eq!(load(&mut session, "gcc/11.4", false), Err(ModError::Conflict("gcc".into())));
    assert_eq!(
        session.out,
        [
            "Loading gcc/11.4",
            "  ERROR: Module cannot be loaded due to a conflict.",
            "    HINT: Might try \"module unload gcc\" first."
        ]
    );
    assert_eq!(session.env, before, "nothing of gcc/11.4 or its requirement stays");
    assert!(session.failed);
}

#[test]
fn switch_swaps_and_loads_the_new_requirements() {
    let tree = tree();
    let mut session = tree.session();
    load(&mut session, "gcc/9.1", false).unwrap();
    let mut session = Session::new(session.env.clone(), 80);
    switch(&mut session, &["gcc/11.4".to_string()]).unwrap();
    assert_eq!(loaded(&session), names(&[("zlib/1.2.13", true), ("gcc/11.4", false)]));
    assert_eq!(session.out, ["Switching from gcc/9.1 to gcc/11.4", "  Loading requirement: zlib/1.2.13"]);
    assert_eq!(session.env.get("CC"), Some("gcc-11"));
}

#[test]
fn a_tcl_error_names_the_file_and_line_and_changes_nothing() {
    let tree = tree();
    let mut session = tree.session();
    let before = session.env.clone();
    assert!(matches!(load(&mut session, "foo", false), Err(ModError::Tcl(_))));
    let file = tree.dir.path().join("foo/1.0").display().to_string();
    assert_eq!(
        session.out,
        [
            "Loading foo/1.0".to_string(),
            "  Module ERROR: invalid command name \"setnev\"".to_string(),
            "        while executing".to_string(),
            "    \"setnev FOO baz\"".to_string(),
            format!("        (file \"{file}\" line 4)"),
            "    Please contact <root@localhost>".to_string(),
        ]
    );
    assert_eq!(session.env, before, "FOO was set before the error, and is not now");
}

#[test]
fn missing_cookie_and_unknown_names() {
    let tree = tree();
    let mut session = tree.session();
    assert!(load(&mut session, "nocookie/1.0", false).is_err());
    assert!(load(&mut session, "nosuch", false).is_err());
    let file = tree.dir.path().join("nocookie/1.0").display().to_string();
    assert_eq!(
        session.out,
        [
            "Module ERROR: Magic cookie '#%Module' missing".to_string(),
            format!("  In '{file}'"),
            "  Please contact <root@localhost>".to_string(),
            "ERROR: Unable to locate a modulefile for 'nosuch'".to_string(),
        ]
    );
}

#[test]
fn modules_loading_each_other_are_a_clear_error_not_a_hang() {
    let tree = tree();
    let mut session = tree.session();
    let before = session.env.clone();
    assert!(load(&mut session, "loopa", false).is_err());
    assert_eq!(session.env, before);
    assert_eq!(session.out[0], "Loading loopa/1.0");
    assert!(
        session.out.contains(&"  ERROR: loopa/1.0 requires itself through its requirements (loopa/1.0 -> loopb/1.0 -> loopa/1.0); nothing was loaded".to_string()),
        "{:?}",
        session.out
    );
}

#[test]
fn a_load_past_the_time_limit_fails_naming_its_file_and_changes_nothing() {
    let tree = tree();
    let slow = tree.dir.path().join("slow/1.0");
    std::fs::create_dir_all(slow.parent().unwrap()).unwrap();
    std::fs::write(&slow, "#%Module\nsetenv SLOW 1\nmodule load zlib\nwhile 1 {}\n").unwrap();
    let mut env = tree.session().env;
    env.set("MODULES_EVAL_TIMEOUT", "0.2");
    let mut session = Session::new(env.clone(), 80);
    assert_eq!(
        load(&mut session, "slow", false),
        Err(ModError::Limit(slow.clone(), Limit::Time(std::time::Duration::from_millis(200))))
    );
    assert!(session.failed);
    assert_eq!(session.env, env);
    assert!(session.loaded.is_empty());
    let shown = slow.display();
    assert_eq!(
        session.out,
        [
            // the requirement loaded for it is unloaded with it, and not reported (as in 5.2)
            "Loading slow/1.0".to_string(),
            "  Module ERROR: evaluation time limit of 0.2 s exceeded (MODULES_EVAL_TIMEOUT)".into(),
            format!("    In '{shown}'"),
            "    Please contact <root@localhost>".into(),
        ]
    );
}
