//! `Shell_Path_List` (`qsub -S path[@host][,path[@host]...]`): which shell runs a job on a node.
//! OpenPBS's mom (`set_shell` in `src/resmom/linux/mom_start.c`) takes the first entry whose
//! host is its own, else the last entry without a host, else the user's login shell.

/// The shell of `list` for the job's mother superior `node`, or `None` for the login shell
/// (also when the entry names no path: `-S ''`, `-S @node1`).
///
/// OpenPBS compares the entry's host with the start of the mom's host name (`strncmp` over
/// the entry's length), so `@node1` also matched `node10`; here the host must be the node's
/// name or its first label (`@node1` matches `node1` and `node1.example.org`).
pub fn shell_for_node<'a>(list: &'a str, node: &str) -> Option<&'a str> {
    let mut wildcard = None;
    for entry in list.split(',').filter(|entry| !entry.is_empty()) {
        match entry.split_once('@') {
            Some((path, host)) if names_node(host, node) => return Some(path).filter(|path| !path.is_empty()),
            Some(_) => {}
            None => wildcard = Some(entry),
        }
    }
    wildcard
}

/// Whether `host` (from an entry) names `node`.
fn names_node(host: &str, node: &str) -> bool {
    !host.is_empty() && (host == node || node.strip_prefix(host).is_some_and(|rest| rest.starts_with('.')))
}

#[cfg(test)]
mod tests {
    use super::shell_for_node;

    #[test]
    fn picks_the_nodes_entry_else_the_one_without_host() {
        let cases = [
            ("/bin/bash", "node1", Some("/bin/bash")),
            ("/bin/sh@node2,/bin/bash", "node1", Some("/bin/bash")),
            ("/bin/sh@node1,/bin/bash", "node1", Some("/bin/sh")),
            ("/bin/bash,/bin/sh@node1", "node1", Some("/bin/sh")),
            ("/bin/zsh,/bin/bash", "node1", Some("/bin/bash")),
            ("/bin/sh@node1", "node10", None),
            ("/bin/sh@node1", "node1.example.org", Some("/bin/sh")),
            ("/bin/sh@node1.example.org", "node1", None),
            ("/bin/sh@", "node1", None),
            ("/bin/sh@node2", "node1", None),
            ("", "node1", None),
            (",/bin/bash,", "node1", Some("/bin/bash")),
            ("@node1,/bin/bash", "node1", None),
        ];
        for (list, node, shell) in cases {
            assert_eq!(shell_for_node(list, node), shell, "{list} on {node}");
        }
    }
}
