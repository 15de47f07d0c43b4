//! The shell code modulecmd prints on stdout for the `module` function to `eval`: the
//! environment changes, then what modulefiles asked to run (`puts stdout`), then the
//! statement that sets the exit status (`test 0;` or `test 0 = 1;`); and the definitions
//! `autoinit` prints.
//!
//! Owns: quoting (single quotes, `'\''` for an embedded quote) and the function definitions.
//! Must not: decide what changes.

use crate::env::Change;
use std::path::Path;

/// The shells modulecmd speaks (the sh family; they share one syntax here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Sh,
    Bash,
    Zsh,
}

impl Shell {
    /// The shell named on modulecmd's command line.
    pub fn parse(name: &str) -> Option<Shell> {
        match name {
            "sh" | "dash" | "ksh" => Some(Shell::Sh),
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shell::Sh => "sh",
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
        }
    }
}

/// `value` single-quoted, always, with `'\''` for an embedded quote: the bytes the `module`
/// function and its callers are pinned to (tests and the modules compatibility tests). Written
/// by hand on purpose: `shlex::try_quote` leaves safe words bare and switches to double quotes
/// around `'`, so its output differs. The mom's exported `module` function uses this one too.
pub fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// The code for `changes`, `raw` lines (from `puts stdout`) and the status.
pub fn render(changes: &[Change], raw: &[String], ok: bool) -> String {
    let mut out = String::new();
    for change in changes {
        match change {
            Change::Set(name, value) if is_name(name) => {
                out.push_str(&format!("{name}={}; export {name};\n", quote(value)));
            }
            Change::Unset(name) if is_name(name) => out.push_str(&format!("unset {name};\n")),
            _ => {}
        }
    }
    for line in raw {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(if ok { "test 0;\n" } else { "test 0 = 1;\n" });
    out
}

/// A name the shell accepts in an assignment (others, such as `BASH_FUNC_x%%`, are skipped).
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The definitions of `module` for `shell`, running `modulecmd` at `cmd`, with `home` the
/// install prefix (`MODULESHOME`) and, for a shell with no modules state yet, the initial
/// `MODULEPATH`. Bash exports the function, so job scripts inherit it.
pub fn autoinit(shell: Shell, cmd: &Path, home: &Path, modulepath: Option<&str>) -> String {
    let cmd = quote(&cmd.display().to_string());
    let name = shell.name();
    let mut out = format!(
        "_module_raw() {{ eval \"$({cmd} {name} \"$@\")\"; _mlstatus=$?; return $_mlstatus; }};\n\
         module() {{ _module_raw \"$@\"; }};\n\
         MODULESHOME={home}; export MODULESHOME;\n\
         MODULES_CMD={cmd}; export MODULES_CMD;\n\
         if [ -z \"${{LOADEDMODULES+x}}\" ]; then LOADEDMODULES=; export LOADEDMODULES; fi;\n",
        home = quote(&home.display().to_string()),
    );
    if let Some(modulepath) = modulepath {
        out.push_str(&format!("MODULEPATH={}; export MODULEPATH;\n", quote(modulepath)));
    }
    if shell == Shell::Bash {
        out.push_str("export -f _module_raw module;\n");
    }
    out.push_str("test 0;\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_quoted_and_status_comes_last() {
        let changes = [
            Change::Set("A".into(), "it's $HOME; `x`".into()),
            Change::Unset("B".into()),
            Change::Set("BASH_FUNC_m%%".into(), "() {}".into()),
        ];
        let code = render(&changes, &["echo hi".to_string()], false);
        assert_eq!(code, "A='it'\\''s $HOME; `x`'; export A;\nunset B;\necho hi\ntest 0 = 1;\n");
        assert_eq!(render(&[], &[], true), "test 0;\n");
    }

    #[test]
    fn bash_exports_the_function() {
        let code = autoinit(Shell::Bash, Path::new("/opt/m/modulecmd"), Path::new("/opt/m"), Some("/a:/b"));
        assert!(code.contains("eval \"$('/opt/m/modulecmd' bash \"$@\")\""), "{code}");
        assert!(code.contains("export -f _module_raw module;"));
        assert!(code.contains("MODULEPATH='/a:/b'; export MODULEPATH;"));
        assert!(!autoinit(Shell::Sh, Path::new("/m"), Path::new("/"), None).contains("export -f"));
        assert_eq!(Shell::parse("zsh"), Some(Shell::Zsh));
        assert_eq!(Shell::parse("fish"), None);
    }
}
