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
    attrs.iter().find(|attr| attr.full_name() == full_name).map(|attr| attr.value.as_str())
}
