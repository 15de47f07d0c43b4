//! What `qmgr` prints: `list` (`Queue workq` then `    name = value` lines, long lists
//! continued on a tab-indented line, a blank line after each object) and `print` (the
//! `create queue` / `set queue` / `set server` commands that recreate the configuration, list
//! values split into `=` and `+=` lines, values with blanks, commas or quotes quoted), as
//! OpenPBS's `qmgr.c` `display()` writes them.
//!
//! Must not: talk to the server, or decide which objects to show (callers pass them).

use proto::ObjectStatus;
use std::fmt::Write;

/// Attributes the server reports but qmgr cannot set; `print` leaves them out.
const READ_ONLY: [&str; 12] = [
    "total_jobs",
    "state_count",
    "resources_assigned",
    "hasnodes",
    "server_state",
    "server_host",
    "pbs_version",
    "job_history_enable",
    "Mom",
    "ntype",
    "pcpus",
    "jobs",
];

/// Attributes whose value is one string (quoted whole, never split at commas).
const STRINGS: [&str; 3] = ["comment", "default_queue", "flavor"];

/// `qmgr list <kind>`: `label` is `Queue`, `Server` or `Node`; `only` keeps just the named
/// attributes (all when empty).
pub fn list(label: &str, objects: &[ObjectStatus], only: &[String]) -> String {
    let mut out = String::new();
    for object in objects {
        let _ = writeln!(out, "{label} {}", object.name);
        for attr in &object.attrs {
            let full = attr.full_name();
            if !only.is_empty()
                && !only.iter().any(|name| name.eq_ignore_ascii_case(&full) || name.eq_ignore_ascii_case(&attr.name))
            {
                continue;
            }
            out.push_str("    ");
            out.push_str(&full);
            out.push_str(" = ");
            // Long comma lists continue on a new line after a tab, once a line passes 80.
            let mut length = attr.name.len() + 8 + attr.resource.as_ref().map_or(0, |r| r.len() + 1) + 3;
            let pieces: Vec<&str> = attr.value.split(',').collect();
            for (index, piece) in pieces.iter().enumerate() {
                length += piece.len() + 1;
                let mut piece = *piece;
                if index > 0 && length >= 80 {
                    out.push_str("\n\t");
                    piece = piece.trim_start();
                }
                out.push_str(piece);
                if index + 1 < pieces.len() {
                    out.push(',');
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// `qmgr print queue`: the queues' create and set commands.
pub fn print_queues(queues: &[ObjectStatus]) -> String {
    let mut out = String::from("#\n# Create queues and set their attributes.\n#\n");
    for queue in queues {
        let _ = write!(out, "#\n# Create and define queue {0}\n#\ncreate queue {0}\n", queue.name);
        set_lines(&mut out, &format!("queue {}", queue.name), queue);
    }
    out
}

/// `qmgr print server`: the queues, then the server's attributes.
pub fn print_server(queues: &[ObjectStatus], server: &ObjectStatus) -> String {
    let mut out = if queues.is_empty() { String::new() } else { print_queues(queues) };
    out.push_str("#\n# Set server attributes.\n#\n");
    set_lines(&mut out, "server", server);
    out
}

/// `qmgr list resource`: `Resource NAME`, then `type = T` and `flag = F` (when set) indented
/// by four, a blank line after each (OpenPBS `qmgr.c` `display()`).
pub fn list_resources(resources: &[ObjectStatus]) -> String {
    let mut out = String::new();
    for resource in resources {
        let _ = writeln!(out, "Resource {}", resource.name);
        for attr in resource.attrs.iter().filter(|attr| !attr.value.is_empty()) {
            let _ = writeln!(out, "    {} = {}", attr.name, attr.value);
        }
        out.push('\n');
    }
    out
}

/// `qmgr print resource` (and the start of `print server`): the commands that define the
/// site resources again.
pub fn print_resources(resources: &[ObjectStatus]) -> String {
    let mut out = String::from("#\n# Create resources and set their properties.\n#\n");
    for resource in resources {
        let _ = write!(out, "#\n# Create and define resource {0}\n#\ncreate resource {0}\n", resource.name);
        for attr in resource.attrs.iter().filter(|attr| !attr.value.is_empty()) {
            let _ = writeln!(out, "set resource {} {} = {}", resource.name, attr.name, attr.value);
        }
    }
    out
}

/// `qmgr print node`: create and set commands for each node (state only when offline).
pub fn print_nodes(nodes: &[ObjectStatus]) -> String {
    let mut out = String::from("#\n# Create nodes and set their properties.\n#\n");
    for node in nodes {
        let _ = write!(out, "#\n# Create and define node {0}\n#\ncreate node {0}\n", node.name);
        let mut kept = ObjectStatus { name: node.name.clone(), attrs: Vec::new() };
        for attr in &node.attrs {
            let keep = match attr.full_name().as_str() {
                "state" => attr.value.split(',').any(|state| state == "offline"),
                "resources_available.ncpus" | "properties" | "comment" => true,
                // Site resources set with qmgr; the built-ins come from the mom.
                _ if attr.name == "resources_available" => {
                    !matches!(attr.resource.as_deref(), Some("host" | "mem" | "ngpus" | "vnode" | "arch"))
                }
                _ => false,
            };
            if keep {
                let value = if attr.name == "state" { "offline".to_string() } else { attr.value.clone() };
                kept.attrs.push(job::Attr { value, ..attr.clone() });
            }
        }
        set_lines(&mut out, &format!("node {}", node.name), &kept);
    }
    out
}

/// `set <object> name = value` lines for the settable attributes of `object`.
fn set_lines(out: &mut String, object: &str, status: &ObjectStatus) {
    for attr in &status.attrs {
        if READ_ONLY.contains(&attr.name.as_str()) || attr.name == "last_state_change_time" {
            continue;
        }
        let full = attr.full_name();
        if STRINGS.contains(&attr.name.as_str()) || attr.resource.is_some() {
            let _ = writeln!(out, "set {object} {full} = {}", quoted(&attr.value));
            continue;
        }
        for (index, piece) in attr.value.split(',').enumerate() {
            let op = if index == 0 { "=" } else { "+=" };
            let _ = writeln!(out, "set {object} {full} {op} {}", quoted(piece));
        }
    }
}

/// The value, quoted when it holds a blank, comma or quote (with `'` if it holds `"`).
fn quoted(value: &str) -> String {
    if value.contains(['"', '\'', ' ', ',']) {
        let quote = if value.contains('"') { '\'' } else { '"' };
        format!("{quote}{value}{quote}")
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use insta::assert_snapshot;
    use job::Attr;

    #[test]
    fn resources_listed_and_printed_as_openpbs() {
        let resource = |name: &str, kind: &str, flag: &str| ObjectStatus {
            name: name.into(),
            attrs: vec![Attr::new("type", kind), Attr::new("flag", flag)],
        };
        let resources =
            [resource("gpu_type", "string", "h"), resource("qos", "string", ""), resource("scratch", "size", "hn")];
        assert_snapshot!(format!("{}---\n{}", list_resources(&resources), print_resources(&resources)));
    }

    fn workq() -> ObjectStatus {
        ObjectStatus {
            name: "workq".into(),
            attrs: vec![
                Attr::new("queue_type", "Execution"),
                Attr::new("Priority", "10"),
                Attr::new("total_jobs", "3"),
                Attr::new("state_count", "Transit:0 Queued:1 Held:0 Waiting:0 Running:2 Exiting:0 Begun:0 "),
                Attr::new("acl_users", "alice,bob"),
                Attr::new("max_run", "[o:PBS_ALL=10],[u:PBS_GENERIC=2]"),
                Attr::resource("resources_max", "walltime", "24:00:00"),
                Attr::resource("resources_default", "walltime", "01:00:00"),
                Attr::resource("resources_assigned", "ncpus", "4"),
                Attr::new("enabled", "True"),
                Attr::new("started", "True"),
            ],
        }
    }

    fn server() -> ObjectStatus {
        ObjectStatus {
            name: "head".into(),
            attrs: vec![
                Attr::new("server_state", "Active"),
                Attr::new("server_host", "head"),
                Attr::new("scheduling", "True"),
                Attr::new("total_jobs", "3"),
                Attr::new("managers", "root@*,admin@head"),
                Attr::new("default_queue", "workq"),
                Attr::new("query_other_jobs", "True"),
                Attr::new("job_history_duration", "336:00:00"),
                Attr::new("flavor", "openpbs"),
                Attr::new("pbs_version", "minipbs-0.1.0"),
            ],
        }
    }

    #[test]
    fn list_queue() {
        assert_snapshot!(list("Queue", &[workq()], &[]));
    }

    #[test]
    fn list_only_some_attributes_and_long_lists() {
        let mut queue = workq();
        let users: Vec<String> = (0..20).map(|index| format!("user{index:02}")).collect();
        queue.attrs[4].value = users.join(",");
        assert_snapshot!(list("Queue", &[queue], &["acl_users".into(), "enabled".into()]));
    }

    #[test]
    fn print_server_with_queues() {
        let short = ObjectStatus {
            name: "short".into(),
            attrs: vec![
                Attr::new("queue_type", "Execution"),
                Attr::new("enabled", "False"),
                Attr::new("started", "True"),
            ],
        };
        assert_snapshot!(print_server(&[workq(), short], &server()));
    }

    #[test]
    fn print_node_keeps_settable_attributes() {
        let node = ObjectStatus {
            name: "node1".into(),
            attrs: vec![
                Attr::new("Mom", "node1"),
                Attr::new("state", "offline,job-busy"),
                Attr::resource("resources_available", "ncpus", "4"),
                Attr::resource("resources_assigned", "ncpus", "2"),
                Attr::new("properties", "fast,gpu"),
                Attr::new("comment", "fan is \"loud\""),
            ],
        };
        assert_snapshot!(print_nodes(&[node]));
    }
}
