//! Attribute lists: what the server reports about a job or a node, in PBS's attribute order.
//! `qstat` and `pbsnodes` format these; the server builds them. A resource attribute such as
//! `Resource_List.walltime` has `name = "Resource_List"` and `resource = Some("walltime")`.

use serde::{Deserialize, Serialize};

/// One attribute of a job or node, value already in its PBS text form. Time stamps (`ctime`,
/// `qtime`, `mtime`, `stime`, `etime`, `obittime`) are sent as epoch seconds and rendered by
/// the client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attr {
    pub name: String,
    /// Left out of the frame when `None` (a peer of any release reads a missing one as `None`):
    /// a listing of 10,000 jobs sends some 50,000 attributes, most of them without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    pub value: String,
}

impl Attr {
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Attr {
        Attr { name: name.into(), resource: None, value: value.into() }
    }

    pub fn resource(name: impl Into<String>, resource: impl Into<String>, value: impl Into<String>) -> Attr {
        Attr { name: name.into(), resource: Some(resource.into()), value: value.into() }
    }

    /// Whether `full_name` (`job_state`, `Resource_List.walltime`) names this attribute; what
    /// [`Attr::full_name`] would compare equal to, without building it (qstat looks up five
    /// attributes of each of 10,000 jobs).
    pub fn is_named(&self, full_name: &str) -> bool {
        match &self.resource {
            None => self.name == full_name,
            Some(resource) => full_name
                .strip_prefix(self.name.as_str())
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| rest == resource),
        }
    }

    /// The name as `qstat -f` prints it: `Resource_List.walltime`.
    pub fn full_name(&self) -> String {
        match &self.resource {
            Some(resource) => format!("{}.{}", self.name, resource),
            None => self.name.clone(),
        }
    }
}

/// Looks up an attribute value by full name (`job_state`, `Resource_List.walltime`).
pub fn find<'a>(attrs: &'a [Attr], full_name: &str) -> Option<&'a str> {
    attrs.iter().find(|attr| attr.is_named(full_name)).map(|attr| attr.value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_matches_full_names_only() {
        let attrs = [
            Attr::new("Resource_List", "whole"),
            Attr::resource("Resource_List", "walltime", "01:00:00"),
            Attr::resource("Resource_Lis", "t.walltime", "wrong split"),
            Attr::new("job_state", "Q"),
        ];
        assert_eq!(find(&attrs, "Resource_List.walltime"), Some("01:00:00"));
        assert_eq!(find(&attrs, "Resource_List"), Some("whole"));
        assert_eq!(find(&attrs, "job_state"), Some("Q"));
        assert_eq!(find(&attrs, "Resource_List.wall"), None);
        assert_eq!(find(&attrs, "Resource_List.walltimes"), None);
        assert_eq!(find(&attrs, "Resource_Lis.t.walltime"), Some("wrong split"), "as full_name() spells it");
        for attr in &attrs {
            assert!(attr.is_named(&attr.full_name()));
        }
    }

    #[test]
    fn no_resource_is_left_out_of_the_frame_and_read_back_as_none() {
        let plain = Attr::new("job_state", "Q");
        let text = serde_json::to_string(&plain).unwrap();
        assert_eq!(text, r#"{"name":"job_state","value":"Q"}"#);
        assert_eq!(serde_json::from_str::<Attr>(&text).unwrap(), plain);
        let old = r#"{"name":"job_state","resource":null,"value":"Q"}"#;
        assert_eq!(serde_json::from_str::<Attr>(old).unwrap(), plain, "as releases before wrote it");
        let resource = Attr::resource("Resource_List", "ncpus", "1");
        let text = serde_json::to_string(&resource).unwrap();
        assert_eq!(serde_json::from_str::<Attr>(&text).unwrap(), resource);
    }
}
