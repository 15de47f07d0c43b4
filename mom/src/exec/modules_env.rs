//! The `module` command in job shells: when the node has a modulecmd (minipbs's `modules`
//! crate, `pbs_mom --modulecmd`, by default the one on the mom's PATH), every job's bash gets
//! the `module` function through bash's exported-function variables (`BASH_FUNC_module%%`),
//! `MODULESHOME`, `MODULES_CMD` and, with `--modulepath`, a default `MODULEPATH`. These are
//! defaults: a job that brought its own (`qsub -V` from a shell with modules) keeps them.
//!
//! The function text is the one `modulecmd bash autoinit` defines (modules/src/shell.rs);
//! keep the two alike (the path is quoted by `modules::shell::quote`, the same bytes). Must not:
//! run modulecmd or read modulefiles.

use std::path::{Path, PathBuf};

/// The node's modules installation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModulesEnv {
    /// The modulecmd binary.
    pub cmd: PathBuf,
    /// `MODULESHOME`: the prefix above the binary's directory.
    pub home: PathBuf,
    /// A default `MODULEPATH` for jobs that bring none.
    pub modulepath: Option<String>,
}

impl ModulesEnv {
    /// The installation `setting` names: `none` (nothing), a path, or, without a setting, the
    /// `modulecmd` found in `search_path` (the mom's PATH); `None` when there is none.
    pub fn find(setting: Option<&str>, search_path: &str, modulepath: Option<String>) -> Option<ModulesEnv> {
        let cmd = match setting {
            Some("none") => return None,
            Some(path) => PathBuf::from(path),
            None => {
                std::env::split_paths(search_path).map(|dir| dir.join("modulecmd")).find(|path| is_executable(path))?
            }
        };
        let cmd = cmd.canonicalize().unwrap_or(cmd);
        let home = cmd.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
        Some(ModulesEnv { cmd, home, modulepath })
    }

    /// The variables a job gets unless it has them.
    pub fn defaults(&self) -> Vec<(String, String)> {
        let cmd = modules::shell::quote(&self.cmd.display().to_string());
        let mut vars = vec![
            (
                "BASH_FUNC__module_raw%%".to_string(),
                format!("() {{  eval \"$({cmd} bash \"$@\")\"; _mlstatus=$?; return $_mlstatus\n}}"),
            ),
            ("BASH_FUNC_module%%".to_string(), "() {  _module_raw \"$@\"\n}".to_string()),
            ("MODULESHOME".to_string(), self.home.display().to_string()),
            ("MODULES_CMD".to_string(), self.cmd.display().to_string()),
        ];
        if let Some(modulepath) = &self.modulepath {
            vars.push(("MODULEPATH".to_string(), modulepath.clone()));
        }
        vars
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn found_on_the_path_named_or_turned_off() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let cmd = bin.join("modulecmd");
        std::fs::write(&cmd, "#!/bin/sh\n").unwrap();
        let search = format!("/nonexistent:{}", bin.display());
        assert_eq!(ModulesEnv::find(None, &search, None), None, "not executable: not a modulecmd");
        std::fs::set_permissions(&cmd, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let found = ModulesEnv::find(None, &search, Some("/m".into())).unwrap();
        assert_eq!(found.home, dir.path().canonicalize().unwrap());
        assert_eq!(ModulesEnv::find(Some("none"), &search, None), None);
        assert_eq!(ModulesEnv::find(None, "/nonexistent", None), None);
        let vars = found.defaults();
        assert_eq!(vars[0].0, "BASH_FUNC__module_raw%%");
        assert!(vars[0].1.contains(&format!("eval \"$('{}' bash \"$@\")\"", found.cmd.display())), "{}", vars[0].1);
        assert_eq!(vars.last().unwrap(), &("MODULEPATH".to_string(), "/m".to_string()));
    }
}
