//! The init files find their own modulecmd, from any PATH (issue 13, item 9): real bash, dash
//! and zsh source `init/<shell>` in `env -i PATH=/usr/bin:/bin`, from an installed tree
//! (`<prefix>/init` beside `<prefix>/bin/modulecmd`) and from a source checkout
//! (`<repo>/modules/init` and `<repo>/target/{release,debug}/modulecmd`), each a copy of the
//! tree made here around a copy of the binary. `/usr/bin` may hold another modulecmd
//! (Debian's Environment Modules installs one): the init file's own must win.

use std::path::{Path, PathBuf};
use std::process::Command;

const INIT_FILES: [&str; 3] = ["bash", "sh", "zsh"];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// How a test that needs a tool skips: `SKIPPED: <reason>`, except under CI (`CI` set and not
/// empty), where a test that cannot run is a failure (the rule of `tests::skip`).
fn skip(reason: &str) {
    if std::env::var_os("CI").is_some_and(|value| !value.is_empty()) {
        panic!("SKIPPED under CI, which is a failure (CI is set): {reason}");
    }
    eprintln!("SKIPPED: {reason}");
}

/// Copies the init files into `init_dir` and the built modulecmd to each of `binaries`.
fn lay_out(init_dir: &Path, binaries: &[PathBuf]) {
    std::fs::create_dir_all(init_dir).unwrap();
    for name in INIT_FILES {
        std::fs::copy(crate_dir().join("init").join(name), init_dir.join(name)).unwrap();
    }
    for binary in binaries {
        std::fs::create_dir_all(binary.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_modulecmd"), binary).unwrap();
    }
}

/// `shell` (bash, dash or zsh), in directory `cwd`, sources `init` (a path, relative to `cwd`
/// or not) in a clean environment with `path` as PATH and the fixture tree as MODULEPATH, then
/// runs `module avail` and prints its status, `MODULES_CMD` and `MODULESHOME`. Returns
/// (stdout, stderr).
fn source(shell: &str, cwd: &Path, init: &str, path: &str) -> (String, String) {
    let home = tempfile::tempdir().unwrap();
    // the shell named by its path: `path` need not hold it
    let program = ["/usr/bin", "/bin"].iter().map(|dir| Path::new(dir).join(shell)).find(|path| path.exists());
    let mut command = Command::new(program.unwrap_or_else(|| PathBuf::from(shell)));
    if shell == "zsh" {
        command.arg("-f");
    }
    let output = command
        .arg("-c")
        .arg(format!(". '{init}'; module avail; echo \"$? $MODULES_CMD $MODULESHOME\""))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path)
        .env("HOME", home.path())
        .env("MODULEPATH", crate_dir().join("tests/tree"))
        .output()
        .expect("the shell runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (text(&output.stdout), text(&output.stderr))
}

/// The shells to try, with the init file each sources: bash (`init/bash`, and `init/sh` as
/// bash users of sh scripts do) and dash always; zsh when installed (under CI it must be).
fn shells() -> Vec<(&'static str, &'static str)> {
    let mut shells = vec![("bash", "bash"), ("dash", "sh"), ("bash", "sh")];
    if Command::new("zsh").arg("-fc").arg("true").status().is_ok() {
        shells.push(("zsh", "zsh"));
    } else {
        skip("zsh: not installed (apt-get install zsh); bash and dash only");
    }
    shells
}

/// `module avail` worked: status 0 and the fixture tree listed.
fn assert_avail(shell: &str, stdout: &str, stderr: &str, cmd: &Path, home: &Path) {
    assert_eq!(stdout, format!("0 {} {}\n", cmd.display(), home.display()), "{shell}: {stderr}");
    assert!(stderr.contains("zlib/1.2.13(default)"), "{shell}: avail lists the tree: {stderr}");
}

#[test]
fn an_installed_trees_init_files_run_their_own_modulecmd_from_any_path() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().canonicalize().unwrap().join("opt/modules");
    let cmd = prefix.join("bin/modulecmd");
    lay_out(&prefix.join("init"), std::slice::from_ref(&cmd));
    for (shell, init) in shells() {
        let init = prefix.join("init").join(init);
        let (stdout, stderr) = source(shell, dir.path(), init.to_str().unwrap(), "/usr/bin:/bin");
        assert_avail(shell, &stdout, &stderr, &cmd, &prefix);
    }
}

#[test]
fn a_checkouts_init_files_run_the_newest_built_modulecmd() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let (release, debug) = (repo.join("target/release/modulecmd"), repo.join("target/debug/modulecmd"));
    lay_out(&repo.join("modules/init"), &[release.clone(), debug.clone()]);
    std::fs::write(repo.join("modules/Cargo.toml"), "[package]\nname = \"modules\"\n").unwrap();
    for (older, newer) in [(&release, &debug), (&debug, &release)] {
        let touched = Command::new("touch").arg("-d").arg("2001-01-01").arg(older).status().unwrap();
        assert!(touched.success());
        let touched = Command::new("touch").arg(newer).status().unwrap();
        assert!(touched.success());
        for (shell, init) in shells() {
            // sourced by a relative path, as `. modules/init/bash` from the checkout's top
            let (stdout, stderr) = source(shell, &repo, &format!("./modules/init/{init}"), "/usr/bin:/bin");
            assert_avail(shell, &stdout, &stderr, newer, &repo.join("modules"));
        }
    }
}

/// A planted program that would show it ran.
fn plant(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\necho 'echo PLANTED RAN'\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A directory above an installed tree (`/scratch` holding `/scratch/apps/init`) may be
/// writable by others: a `target/` planted there is never run, newer or not; nor is one
/// beside an init directory that is not a checkout's (no `Cargo.toml`).
#[test]
fn only_the_trees_own_modulecmd_runs_never_one_planted_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let prefix = root.join("scratch/apps");
    let cmd = prefix.join("bin/modulecmd");
    lay_out(&prefix.join("init"), std::slice::from_ref(&cmd));
    plant(&root.join("target/release/modulecmd"));
    let loose = root.join("loose");
    lay_out(&loose.join("init"), &[]);
    plant(&root.join("target/debug/modulecmd"));
    for (shell, init) in shells() {
        let installed = prefix.join("init").join(init);
        let (stdout, stderr) = source(shell, &root, installed.to_str().unwrap(), "/usr/bin:/bin");
        assert_avail(shell, &stdout, &stderr, &cmd, &prefix);
        let not_a_checkout = loose.join("init").join(init);
        let (stdout, stderr) = source(shell, &root, not_a_checkout.to_str().unwrap(), "/usr/bin:/bin");
        assert!(!stdout.contains("PLANTED"), "{shell}: {stdout}{stderr}");
    }
}

#[test]
fn with_no_modulecmd_anywhere_the_init_files_say_so_and_define_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    lay_out(&root.join("init"), &[]);
    // a PATH with the tools the init files use and no modulecmd
    let tools = root.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    for tool in ["dirname", "ls", "sed", "sort", "tail", "cat"] {
        let found = ["/usr/bin", "/bin"].iter().map(|dir| Path::new(dir).join(tool)).find(|path| path.exists());
        std::os::unix::fs::symlink(found.expect("a coreutils tool"), tools.join(tool)).unwrap();
    }
    for (shell, init) in shells() {
        let init = root.join("init").join(init);
        let (stdout, stderr) = source(shell, &root, init.to_str().unwrap(), tools.to_str().unwrap());
        assert!(stderr.starts_with("module: no modulecmd"), "{shell}: {stderr}");
        assert!(stdout.starts_with("127 ") || stdout.starts_with("1 "), "{shell}: no module function: {stdout}");
    }
}
