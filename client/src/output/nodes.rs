//! `pbsnodes -a` and `pbsnodes <node>...` (OpenPBS flavor, PBS reference section 8.4):
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
}
