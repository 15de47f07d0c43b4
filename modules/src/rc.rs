//! The control files of a modulepath (modules.md 3.2, 3.3): `.modulerc` (`module-version`
//! gives symbolic versions and explicit defaults, `module-alias` pseudo-modules) and `.version`
//! (`set ModulesVersion`). Both are Tcl modulefiles and need the magic cookie; they are
//! evaluated with the Tcl-subset interpreter and only these commands mean anything in them.
//!
//! Owns: what one control file declares. A control file that fails to evaluate declares
//! nothing (as if absent).

use crate::tcl::{Exception, Interp, TclError};
use std::collections::BTreeMap;
use std::path::Path;

/// What a control file declares, with module names made full (relative to the modulepath).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RcInfo {
    /// Symbolic versions: `(module full name, symbol)`, e.g. `("zlib/1.2.13", "default")`.
    pub versions: Vec<(String, String)>,
    /// `alias -> target`.
    pub aliases: BTreeMap<String, String>,
    /// `.version`'s `ModulesVersion`.
    pub modules_version: Option<String>,
}

struct RcCtx {
    /// The directory the file is in, relative to the modulepath (`""` at the top).
    dir: String,
    info: RcInfo,
}

/// Reads the control file `path` lying in `dir` (relative to its modulepath).
pub fn read(path: &Path, dir: &str) -> RcInfo {
    let Ok(text) = crate::tcl::read_script(path) else { return RcInfo::default() };
    if !text.starts_with("#%Module") {
        return RcInfo::default();
    }
    let mut interp = Interp::new(RcCtx { dir: dir.to_string(), info: RcInfo::default() });
    interp.register("module-version", module_version);
    interp.register("module-alias", module_alias);
    for ignored in ["module-hide", "module-forbid", "module-tag", "module-virtual", "puts", "module-info"] {
        interp.register(ignored, |_, _| Ok(String::new()));
    }
    interp.set_command_limit(100_000);
    let result = interp.eval_script(&text, &path.display().to_string());
    if let Err(Exception::Error(_)) = result {
        return RcInfo::default();
    }
    let mut info = std::mem::take(&mut interp.ctx.info);
    info.modules_version = interp.get_global("ModulesVersion");
    info
}

/// A designation in a control file, made full: `/1.2` and `1.2` are relative to the file's
/// directory when it is not the modulepath's top.
fn full_name(dir: &str, name: &str) -> String {
    let name = name.trim_end_matches('/');
    if let Some(relative) = name.strip_prefix('/') {
        return if dir.is_empty() { relative.to_string() } else { format!("{dir}/{relative}") };
    }
    if !dir.is_empty() && !name.starts_with(&format!("{dir}/")) && name != dir && !name.contains('/') {
        return format!("{dir}/{name}");
    }
    name.to_string()
}

fn module_version(interp: &mut Interp<RcCtx>, args: &[String]) -> Result<String, Exception> {
    if args.len() < 3 {
        return Err(Exception::Error(TclError::new(
            "wrong # args: should be \"module-version modulename symbol ?symbol...?\"",
        )));
    }
    let module = full_name(&interp.ctx.dir, &args[1]);
    for symbol in &args[2..] {
        interp.ctx.info.versions.push((module.clone(), symbol.clone()));
    }
    Ok(String::new())
}

fn module_alias(interp: &mut Interp<RcCtx>, args: &[String]) -> Result<String, Exception> {
    if args.len() != 3 {
        return Err(Exception::Error(TclError::new("wrong # args: should be \"module-alias name modulename\"")));
    }
    let alias = full_name(&interp.ctx.dir, &args[1]);
    interp.ctx.info.aliases.insert(alias, args[2].trim_end_matches('/').to_string());
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_aliases_and_modules_version() {
        let dir = tempfile::tempdir().unwrap();
        let rc = dir.path().join(".modulerc");
        std::fs::write(
            &rc,
            "#%Module\nmodule-version zlib/1.2.13 default\nmodule-version /1.3.1 testing edge\nmodule-alias sam bio/samtools/1.17\n",
        )
        .unwrap();
        let info = read(&rc, "zlib");
        assert_eq!(
            info.versions,
            [
                ("zlib/1.2.13".to_string(), "default".to_string()),
                ("zlib/1.3.1".to_string(), "testing".to_string()),
                ("zlib/1.3.1".to_string(), "edge".to_string())
            ]
        );
        assert_eq!(info.aliases.get("zlib/sam").map(String::as_str), Some("bio/samtools/1.17"));
        let top = read(&rc, "");
        assert_eq!(top.aliases.get("sam").map(String::as_str), Some("bio/samtools/1.17"));
        let version = dir.path().join(".version");
        std::fs::write(&version, "#%Module1.0\nset ModulesVersion \"2.0\"\n").unwrap();
        assert_eq!(read(&version, "x").modules_version.as_deref(), Some("2.0"));
        std::fs::write(&version, "set ModulesVersion 2.0\n").unwrap();
        assert_eq!(read(&version, "x"), RcInfo::default(), "no cookie, no declarations");
        std::fs::write(&version, "#%Module\nset ModulesVersion 2.0\nerror boom\n").unwrap();
        assert_eq!(read(&version, "x"), RcInfo::default(), "a failing file declares nothing");
    }
}
