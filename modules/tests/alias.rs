//! A requirement reached through a `module-alias` (`prereq mpi`, `module load mpi`, with
//! `module-alias mpi openmpi/4.1.6`) is tagged auto-loaded and unloaded with its dependent like
//! any other, and `__MODULES_LMALTNAME` names the alias `al|mpi` whatever name loaded the
//! module (issue 13, item 9); a switch away from it reloads the dependent without loading
//! the requirement again, so the dependent fails and goes. Real bash sources `init/bash`; the transcript is a snapshot,
//! identical to what Environment Modules 5.2.0 prints for the same script on the same tree.

use std::path::Path;
use std::process::Command;

/// The tree: two openmpi versions, the alias, a module that requires the alias and one that
/// loads it.
fn tree(root: &Path) {
    let files = [
        ("openmpi/4.1.6", "#%Module\nsetenv MPI_HOME /sw/openmpi/4.1.6\n"),
        ("openmpi/5.0", "#%Module\nsetenv MPI_HOME /sw/openmpi/5.0\n"),
        (".modulerc", "#%Module\nmodule-alias mpi openmpi/4.1.6\n"),
        ("app/1.0", "#%Module\nprereq mpi\nsetenv APP 1\n"),
        ("app2/1.0", "#%Module\nmodule load mpi\nsetenv APP2 1\n"),
    ];
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// Each step echoes its command, then what `module` printed (stderr, into stdout) and the
/// bookkeeping variables.
const SCRIPT: &str = r#"show() { echo "LOADEDMODULES=${LOADEDMODULES-}"; echo "__MODULES_LMTAG=${__MODULES_LMTAG-}"; echo "__MODULES_LMALTNAME=${__MODULES_LMALTNAME-}"; echo "MPI_HOME=${MPI_HOME-}"; }
echo '$ module load app'; module load app 2>&1; show; module list 2>&1
echo '$ module unload app'; module unload app 2>&1; show
echo '$ module load app2'; module load app2 2>&1; show; module list 2>&1
echo '$ module unload openmpi'; module unload openmpi 2>&1; show
echo '$ module load openmpi/4.1.6 app'; module load openmpi/4.1.6 app 2>&1; show
echo '$ module unload app'; module unload app 2>&1; show
echo '$ module load mpi; module load app2'; module purge; module load mpi; module load app2 2>&1; module list 2>&1
echo '$ module unload app2'; module unload app2 2>&1; show
echo '$ module load app; module switch openmpi/5.0'; module purge; module load app 2>&1; module switch openmpi/5.0 2>&1; echo "status=$?"; show
"#;

#[test]
fn a_requirement_loaded_through_an_alias_is_auto_loaded_and_unloaded_with_its_dependent() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let bin = Path::new(env!("CARGO_BIN_EXE_modulecmd")).parent().unwrap().to_path_buf();
    let init = Path::new(env!("CARGO_MANIFEST_DIR")).join("init/bash");
    let home = tempfile::tempdir().unwrap();
    let output = Command::new("bash")
        .arg("--norc")
        .arg("-c")
        .arg(format!(". {}\n{SCRIPT}", init.display()))
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", home.path())
        .env("MODULEPATH", dir.path())
        .output()
        .expect("bash runs");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}
