//! The `module` command as users meet it: real bash (and dash) sourcing `init/bash` (`init/sh`)
//! with modulecmd on PATH, in a clean environment, on the fixture tree `tests/tree`. Each
//! script prints what it checks; the expected messages are Environment Modules 5.2's
//! (modules.md sections 4 and 5), recorded from the real tool on the same tree.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn tree() -> PathBuf {
    crate_dir().join("tests/tree")
}

/// Runs `script` in `shell` after sourcing the init file, with only PATH (modulecmd first),
/// HOME and MODULEPATH set. Returns (stdout, stderr, exit status).
fn run_in(shell: &str, init: &str, script: &str) -> (String, String, i32) {
    let bin = Path::new(env!("CARGO_BIN_EXE_modulecmd")).parent().unwrap().to_path_buf();
    let home = tempfile::tempdir().unwrap();
    let init = crate_dir().join("init").join(init);
    let output = Command::new(shell)
        .arg("-c")
        .arg(format!(". {}\n{script}", init.display()))
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", home.path())
        .env("MODULEPATH", tree())
        .output()
        .expect("the shell runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (text(&output.stdout), text(&output.stderr), output.status.code().unwrap_or(-1))
}

/// How a test that needs a tool skips (the rule of the system tests' `tests::skip`, this
/// crate depending on none of the workspace): `SKIPPED: <reason>` and the caller returns,
/// except under CI (`CI` set and not empty), where a test that cannot run is a failure.
fn skip(reason: &str) {
    if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) {
        panic!("SKIPPED under CI, which is a failure (CI is set): {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

fn bash(script: &str) -> (String, String, i32) {
    run_in("bash", "bash", script)
}

/// The environment as a sorted list, without what the shell itself changes between calls and
/// the empty `LOADEDMODULES` that initialisation exports (5.2 unsets it once the last module
/// is unloaded, as we do).
const SNAPSHOT: &str = "env | grep -v -x -e '_=.*' -e 'SHLVL=.*' -e 'PWD=.*' -e 'LOADEDMODULES=' | sort";

#[test]
fn load_unload_and_switch_leave_the_environment_exactly_as_expected() {
    let script = format!(
        "{SNAPSHOT} > before\n\
         module load netlib; echo \"load=$?\"\n\
         echo \"PATH=$PATH\"; echo \"LD=$LD_LIBRARY_PATH\"; echo \"ROOT=$ZLIB_ROOT $NETLIB_ROOT\"\n\
         echo \"LOADED=$LOADEDMODULES\"\n\
         module unload netlib; echo \"unload=$?\"\n\
         {SNAPSHOT} > after; diff before after && echo same\n\
         module load gcc/9.1; module switch gcc/11.4; echo \"switch=$? $LOADEDMODULES $CC\"\n\
         module purge; echo \"purge=$? [${{LOADEDMODULES-unset}}]\"\n\
         {SNAPSHOT} > purged; diff before purged && echo same again\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let (stdout, stderr, status) = bash(&format!("cd {} && {{ {script} }}", dir.path().display()));
    assert_eq!(status, 0, "{stderr}");
    let expected = "load=0\n\
        PATH=/sw/netlib/bin:/sw/zlib/1.2.13/bin:BIN:/usr/bin:/bin\n\
        LD=/sw/shared/lib\n\
        ROOT=/sw/zlib/1.2.13 /sw/netlib\n\
        LOADED=zlib/1.2.13:netlib/3.0\n\
        unload=0\n\
        same\n\
        switch=0 zlib/1.2.13:gcc/11.4 gcc-11\n\
        purge=0 [unset]\n\
        same again\n";
    let bin = Path::new(env!("CARGO_BIN_EXE_modulecmd")).parent().unwrap().display().to_string();
    assert_eq!(stdout, expected.replace("BIN", &bin));
    assert_eq!(
        stderr,
        "Loading netlib/3.0\n  Loading requirement: zlib/1.2.13\n\
         Unloading netlib/3.0\n  Unloading useless requirement: zlib/1.2.13\n\
         Switching from gcc/9.1 to gcc/11.4\n  Loading requirement: zlib/1.2.13\n"
    );
}

#[test]
fn errors_have_5_2s_messages_and_exit_status_and_change_nothing() {
    let script = format!(
        "{SNAPSHOT} > /tmp/$$.before\n\
         module load foo; echo \"foo=$? [$FOO]\"\n\
         module load nocookie/1.0; echo \"nocookie=$?\"\n\
         module load loopa; echo \"loop=$? [$LOOPA$LOOPB]\"\n\
         module load nosuch; echo \"nosuch=$?\"\n\
         module unload; echo \"unload=$?\"\n\
         module frob; echo \"frob=$?\"\n\
         module is-loaded gcc; echo \"is-loaded=$?\"\n\
         {SNAPSHOT} > /tmp/$$.after; diff /tmp/$$.before /tmp/$$.after && echo unchanged; rm -f /tmp/$$.*\n"
    );
    let (stdout, stderr, _) = bash(&script);
    assert_eq!(stdout, "foo=1 []\nnocookie=1\nloop=1 []\nnosuch=1\nunload=1\nfrob=1\nis-loaded=1\nunchanged\n");
    let tree = tree().display().to_string();
    let expected = format!(
        "Loading foo/1.0\n\
         \x20 Module ERROR: invalid command name \"setnev\"\n\
         \x20       while executing\n\
         \x20   \"setnev FOO baz\"\n\
         \x20       (file \"{tree}/foo/1.0\" line 4)\n\
         \x20   Please contact <root@localhost>\n\
         Module ERROR: Magic cookie '#%Module' missing\n\
         \x20 In '{tree}/nocookie/1.0'\n\
         \x20 Please contact <root@localhost>\n"
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    assert!(
        stderr.contains("Loading loopa/1.0\n  ERROR: loopa/1.0 requires itself through its requirements"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            "ERROR: Unable to locate a modulefile for 'nosuch'\n\
         ERROR: Unexpected number of args for 'unload' command\n  Try 'module --help' for more information.\n\
         ERROR: Invalid command 'frob'\n  Try 'module --help' for more information.\n"
        ),
        "{stderr}"
    );
}

#[test]
fn conflicts_prereqs_and_dependents() {
    let script = "module load gcc/9.1; module load gcc/11.4; echo \"conflict=$? $LOADEDMODULES\"\n\
         module purge; module load --no-auto netlib; echo \"noauto=$? [$LOADEDMODULES]\"\n\
         module load app; module unload zlib; echo \"dependents=$? [$LOADEDMODULES]\"\n\
         module load zlib/testing; module list; module -t list\n";
    let (stdout, stderr, _) = bash(script);
    assert_eq!(stdout, "conflict=1 gcc/9.1\nnoauto=1 []\ndependents=0 []\n");
    let expected = "Loading gcc/11.4\n\
        \x20 ERROR: Module cannot be loaded due to a conflict.\n\
        \x20   HINT: Might try \"module unload gcc\" first.\n\
        Loading netlib/3.0\n\
        \x20 ERROR: Module cannot be loaded due to missing prereq.\n\
        \x20   HINT: the following module must be loaded first: zlib\n\
        Loading app/1.0\n\
        \x20 Loading requirement: zlib/1.2.13 netlib/3.0\n\
        Unloading zlib/1.2.13 <aL>\n\
        \x20 Unloading dependent: app/1.0 netlib/3.0\n\
        Currently Loaded Modulefiles:\n\
        \x201) zlib/1.3.1(testing)  \n\
        \n\
        Key:\n\
        (symbolic-version)  \n\
        Currently Loaded Modulefiles:\n\
        zlib/1.3.1\n";
    assert_eq!(stderr, expected);
}

#[test]
fn avail_show_help_whatis_and_use_print_what_5_2_prints() {
    let (stdout, stderr, status) = bash(
        "module avail; module -t avail zlib; module show netlib; module help zlib; module whatis zlib; module use",
    );
    assert_eq!((stdout.as_str(), status), ("", 0));
    let tree = tree().display().to_string();
    let header = modules::format::header(&tree, 80);
    let dashes = "-".repeat(67);
    let expected = format!(
        "{header}\n\
         app/1.0  gcc/9.1   loopa/1.0  netlib/3.0            zlib/1.3.1(testing)  \n\
         foo/1.0  gcc/11.4  loopb/1.0  zlib/1.2.13(default)  \n"
    );
    assert!(stderr.starts_with(&expected), "{stderr}");
    let rest = format!(
        "\nKey:\n(symbolic-version)  \n\
         {tree}:\nzlib/1.2.13(default)\nzlib/1.3.1(testing)\n\
         {dashes}\n{tree}/netlib/3.0:\n\n\
         module-whatis\t{{netlib numerical library}}\n\
         prereq\t\tzlib\n\
         conflict\tnetlib otherlib\n\
         setenv\t\tNETLIB_ROOT /sw/netlib\n\
         prepend-path\tPATH /sw/netlib/bin\n\
         prepend-path\tLD_LIBRARY_PATH /sw/shared/lib\n\
         {dashes}\n\
         {dashes}\nModule Specific Help for {tree}/zlib/1.2.13:\n\n\
         WARNING: Unable to find ModulesHelp in {tree}/zlib/1.2.13.\n\
         {dashes}\n\
         {header}\n\
         \x20        zlib/1.2.13: Name: zlib\n\
         \x20        zlib/1.2.13: Version: 1.2.13\n\
         \x20         zlib/1.3.1: Name: zlib\n\
         Search path for module files (in search order):\n  {tree}\n"
    );
    assert!(stderr.ends_with(&rest), "{stderr}");
}

#[test]
fn child_shells_and_dash_have_module_too() {
    let (stdout, stderr, _) = bash("module load zlib; bash -c 'module load netlib; echo \"$LOADEDMODULES\"'");
    assert_eq!(stdout, "zlib/1.2.13:netlib/3.0\n", "an exported function in a child bash: {stderr}");
    let (stdout, stderr, _) = run_in("sh", "sh", "module load netlib 2>/dev/null; echo \"$LOADEDMODULES $ZLIB_ROOT\"");
    assert_eq!(stdout, "zlib/1.2.13:netlib/3.0 /sw/zlib/1.2.13\n", "{stderr}");
}

#[test]
fn zsh_has_module_too() {
    if Command::new("zsh").arg("-fc").arg("true").status().is_err() {
        skip("zsh_has_module_too: zsh is not installed (apt-get install zsh)");
        return;
    }
    let script = "module load netlib 2>/dev/null; echo \"load=$? $LOADEDMODULES ${MODULESHOME:t}\"\n\
                  module unload netlib 2>/dev/null; echo \"unload=$? [$LOADEDMODULES] [$ZLIB_ROOT]\"";
    let (stdout, stderr, _) = run_in("zsh", "zsh", script);
    assert_eq!(stdout, "load=0 zlib/1.2.13:netlib/3.0 modules\nunload=0 [] []\n", "{stderr}");
}

#[test]
fn the_profile_d_snippet_defines_module_in_bash_and_sh() {
    for shell in ["bash", "sh"] {
        let (stdout, stderr, _) =
            run_in(shell, "profile.sh", "module load netlib 2>/dev/null; echo \"$? $LOADEDMODULES\"");
        assert_eq!(stdout, "0 zlib/1.2.13:netlib/3.0\n", "{shell}: {stderr}");
    }
}

#[test]
fn a_modulefile_past_the_time_limit_fails_the_load_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let slow = dir.path().join("slow/1");
    std::fs::create_dir_all(slow.parent().unwrap()).unwrap();
    std::fs::write(&slow, "#%Module\nsetenv SLOW 1\nprepend-path PATH /slow/bin\nwhile 1 {}\n").unwrap();
    let script = format!(
        "export MODULEPATH={} MODULES_EVAL_TIMEOUT=1\n\
         module load slow; echo \"load=$? [${{SLOW-unset}}] [$LOADEDMODULES] [$PATH]\"",
        dir.path().display()
    );
    let (stdout, stderr, _) = bash(&script);
    let bin = Path::new(env!("CARGO_BIN_EXE_modulecmd")).parent().unwrap().display().to_string();
    assert_eq!(stdout, format!("load=1 [unset] [] [{bin}:/usr/bin:/bin]\n"), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "Loading slow/1\n  Module ERROR: evaluation time limit of 1 s exceeded (MODULES_EVAL_TIMEOUT)\n    \
             In '{}'\n    Please contact <root@localhost>\n",
            slow.display()
        )
    );
}
