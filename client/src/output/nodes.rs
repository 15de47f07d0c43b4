//! `pbsnodes -a`, `pbsnodes <node>...` and `pbsnodes -l` (OpenPBS flavor, PBS reference
//! section 8.4):
//!
//! ```text
//! node1
//!      Mom = node1.example.com
//!      state = job-busy
//!
//! ```
//!
//! Owns: that listing. Must not: choose, filter or reorder nodes or attributes, talk to the
//! server, or print.

use proto::NodeStatus;

use super::time::{ctime_text, display_value, TimeText};

/// `pbsnodes` listing with time stamps in local time. See [`pbsnodes_full_with`].
pub fn pbsnodes_full(nodes: &[NodeStatus]) -> String {
    pbsnodes_full_with(nodes, ctime_text)
}

/// `pbsnodes` listing: per node its name on its own line, one `     name = value` line per
/// attribute in the order given (five blanks; resources as `name.resource`; time stamps such
/// as `last_state_change_time` through `time`), then an empty line. Values are never folded.
pub fn pbsnodes_full_with(nodes: &[NodeStatus], time: TimeText) -> String {
    let mut out = String::new();
    for node in nodes {
        out.push_str(&node.name);
        out.push('\n');
        for attr in &node.attrs {
            let name = attr.full_name();
            let value = display_value(&name, &attr.value, time);
            out.push_str(&format!("     {name} = {value}\n"));
        }
        out.push('\n');
    }
    out
}

/// `pbsnodes -l`: one line per node, `%-20s %s %s` (name, state, comment; OpenPBS prints the
/// blank before an empty comment too). Without `named` only nodes that are down or offline;
/// `states` (TORQUE filters such as `free`, `down`, `offline`, `up`, `active`, `all`) narrows or
/// widens that choice.
pub fn pbsnodes_marked(nodes: &[NodeStatus], states: &[&str], named: bool) -> String {
    let mut out = String::new();
    for node in nodes {
        let state = node.get("state").unwrap_or("");
        let has = |word: &str| state.split(',').any(|part| part == word);
        let marked = has("down") || has("offline");
        let chosen = if states.is_empty() {
            named || marked
        } else {
            states.iter().any(|wanted| match *wanted {
                "all" => true,
                "up" => !has("down"),
                "active" => has("job-busy") || has("job-exclusive"),
                "busy" => has("busy") || has("job-busy"),
                other => has(other),
            })
        };
        if chosen {
            let comment = node.get("comment").unwrap_or("");
            out.push_str(&format!("{:<20} {state} {comment}\n", node.name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;
    use crate::output::time::ctime_text_utc;

    #[test]
    fn reference_example_byte_for_byte() {
        let expected = "\
node1
     Mom = node1.example.com
     ntype = PBS
     state = job-busy
     pcpus = 4
     jobs = 123.head/0, 123.head/1, 124.head/2
     resources_available.host = node1
     resources_available.mem = 16gb
     resources_available.ncpus = 4
     resources_available.ngpus = 2
     resources_assigned.ncpus = 3
     sharing = default_shared

";
        assert_eq!(pbsnodes_full_with(&[samples::reference_node()], ctime_text_utc), expected);
    }

    #[test]
    fn time_stamps_use_ctime_text() {
        let text = pbsnodes_full_with(&samples::server_nodes(), ctime_text_utc);
        assert!(text.contains("\n     last_state_change_time = Wed Nov  1 00:00:00 2023\n"), "{text}");
        assert!(text.ends_with("\n\n"));
        assert_eq!(text.lines().filter(|line| !line.is_empty() && !line.starts_with(' ')).count(), 2);
    }

    #[test]
    fn no_nodes_prints_nothing() {
        assert_eq!(pbsnodes_full_with(&[], ctime_text_utc), "");
    }

    #[test]
    fn snapshot_server_nodes() {
        insta::assert_snapshot!(pbsnodes_full_with(&samples::server_nodes(), ctime_text_utc));
    }

    #[test]
    fn marked_nodes_with_their_comment() {
        let node = |name: &str, state: &str, comment: Option<&str>| {
            let mut attrs = vec![job::Attr::new("state", state)];
            if let Some(comment) = comment {
                attrs.push(job::Attr::new("comment", comment));
            }
            NodeStatus { name: name.to_string(), attrs }
        };
        let nodes = vec![
            node("node1", "free", None),
            node("node2", "offline", Some("disk swap")),
            node("node3", "down,offline", Some("node down: mom lost")),
            node("a-very-long-node-name-x", "down", None),
        ];
        insta::assert_snapshot!(pbsnodes_marked(&nodes, &[], false), @r"
        node2                offline disk swap
        node3                down,offline node down: mom lost
        a-very-long-node-name-x down 
        ");
        assert_eq!(pbsnodes_marked(&nodes, &["free"], false), "node1                free \n");
        assert_eq!(
            pbsnodes_marked(&nodes, &[], true).lines().count(),
            4,
            "named nodes are listed whatever their state"
        );
    }
}
