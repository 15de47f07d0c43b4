//! The environment qsub sends with a job (pbs-reference 4.1): `PBS_O_*` from qsub's own
//! environment, then `-V` (everything) and `-v` (named variables, a bare name takes its
//! current value). Shared: qalter sends `-v` lists too, and minipbs names this host.

use crate::directives::QsubOpts;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The submit directory: `$PWD` if it names the same directory as `.`, else `getcwd()`.
pub fn workdir() -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from) {
        if let (Ok(a), Ok(b)) = (std::fs::metadata(&pwd), std::fs::metadata(".")) {
            if a.ino() == b.ino() && a.dev() == b.dev() {
                return pwd;
            }
        }
    }
    cwd
}

/// This host's short name.
pub fn hostname() -> String {
    let name = nix::unistd::gethostname().ok().and_then(|name| name.into_string().ok()).unwrap_or_default();
    name.split('.').next().filter(|short| !short.is_empty()).unwrap_or("localhost").to_string()
}

/// `Variable_List`: PBS_O_* first, then -V and -v.
pub fn variables(
    opts: &QsubOpts,
    cwd: &Path,
    host: &str,
    init_dir: Option<&str>,
) -> Result<Vec<(String, String)>, String> {
    let mut list: Vec<(String, String)> = Vec::new();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".to_string());
    list.push(("PBS_O_HOME".to_string(), home));
    for name in ["LANG", "LOGNAME", "PATH", "MAIL", "SHELL", "TZ"] {
        if let Ok(value) = std::env::var(name) {
            list.push((format!("PBS_O_{name}"), value));
        }
    }
    list.push(("PBS_O_WORKDIR".to_string(), cwd.to_string_lossy().into_owned()));
    list.push(("PBS_O_HOST".to_string(), host.to_string()));
    list.push((
        "PBS_O_SYSTEM".to_string(),
        nix::sys::utsname::uname()
            .map(|u| u.sysname().to_string_lossy().into_owned())
            .unwrap_or_else(|_| "Linux".to_string()),
    ));
    if let Some(dir) = init_dir {
        list.push(("PBS_O_INITDIR".to_string(), dir.to_string()));
    }
    if opts.export_all {
        for (name, value) in std::env::vars() {
            set(&mut list, name, value);
        }
    }
    for (name, value) in named_variables(&opts.variables)? {
        set(&mut list, name, value);
    }
    Ok(list)
}

/// The `-v` lists (qsub, qalter) as pairs: `a=b`, or a bare name taking its current value.
pub fn named_variables(lists: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for item in lists.iter().flat_map(|list| split_v(list)) {
        match item.split_once('=') {
            Some((name, value)) => set(&mut pairs, name.trim().to_string(), value.to_string()),
            None => {
                let name = item.trim();
                let value = std::env::var(name)
                    .map_err(|_| format!("cannot send environment with the job: {name} is not set"))?;
                set(&mut pairs, name.to_string(), value);
            }
        }
    }
    Ok(pairs)
}

fn set(list: &mut Vec<(String, String)>, name: String, value: String) {
    match list.iter_mut().find(|(existing, _)| *existing == name) {
        Some(slot) => slot.1 = value,
        None => list.push((name, value)),
    }
}

/// Splits a `-v` list at commas that are not inside quotes.
fn split_v(text: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    for c in text.chars() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, ',') => items.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if !current.is_empty() {
        items.push(current);
    }
    items.into_iter().filter(|item| !item.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v_list_splits_outside_quotes() {
        assert_eq!(split_v("a,b=c,d='x,y'"), vec!["a", "b=c", "d=x,y"]);
    }
}
