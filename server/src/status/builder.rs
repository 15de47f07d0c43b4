//! [`Builder`]: where a job's status record is collected, attribute by attribute, as
//! `status.rs` adds them: into a list of named attributes (a `Jobs` reply), or into a row of the
//! values of the attributes a listing named ([`Columns`], a `Rows` reply: no name is built).
//! Both shapes apply the same [`Hidden`] rules, before a value is formatted: what a reader may
//! not see is never made, on either path. Pure.

use super::Wanted;
use compact_str::CompactString;
use job::resources::site::SiteResources;
use job::Attr;

/// The attributes that carry a job's environment or command line (`PBS_O_*` and every `-v`
/// variable are in `Variable_List`): shown to the job's owner, operators and managers only.
pub const PRIVATE: [&str; 4] = ["Variable_List", "Submit_arguments", "submit_args", "init_work_dir"];

/// The attributes only managers read.
pub const MANAGER_ONLY: [&str; 1] = ["schedselect"];

/// What one reader may not see of one job.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hidden<'a> {
    /// The [`PRIVATE`] attributes.
    pub private: bool,
    /// The [`MANAGER_ONLY`] attributes.
    pub manager_only: bool,
    /// The resources (of any attribute: `Resource_List.X`, `resources_used.X`) of these site
    /// resources that are flagged invisible (`i`); `None` hides none.
    pub invisible: Option<&'a SiteResources>,
}

impl Hidden<'_> {
    /// Hides nothing.
    pub const NOTHING: Hidden<'static> = Hidden { private: false, manager_only: false, invisible: None };

    fn hides(&self, name: &str, resource: Option<&str>) -> bool {
        (self.private && PRIVATE.contains(&name))
            || (self.manager_only && MANAGER_ONLY.contains(&name))
            || match (self.invisible, resource) {
                (Some(site), Some(resource)) => crate::state::site::is_invisible_resource(site, resource),
                _ => false,
            }
    }
}

/// The attributes a listing in rows names, in order: a row's values are theirs, by exact full
/// name (a group name such as `Resource_List` matches no resource of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// Name and resource of each (`Resource_List.mem`: `("Resource_List", Some("mem"))`).
    names: Vec<(String, Option<String>)>,
    /// The same names, for the cheap first test every attribute of a record goes through.
    wanted: Wanted,
}

impl Columns {
    /// From full names, as a request sends them (distinct: `server/src/bounds.rs`).
    pub fn new(names: &[String]) -> Columns {
        let split = |name: &String| match name.split_once('.') {
            Some((name, resource)) => (name.to_string(), Some(resource.to_string())),
            None => (name.clone(), None),
        };
        Columns { names: names.iter().map(split).collect(), wanted: Wanted::new(names) }
    }

    /// How many values a row has.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether a row has no value at all.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn index(&self, name: &str, resource: Option<&str>) -> Option<usize> {
        self.names.iter().position(|(column, column_resource)| column == name && column_resource.as_deref() == resource)
    }
}

/// What a record is collected into.
enum Sink<'a> {
    Attrs(Vec<Attr>),
    Row { columns: &'a Columns, values: Vec<Option<CompactString>> },
}

/// Collects the wanted attributes a reader may see.
pub struct Builder<'a> {
    wanted: Option<&'a Wanted>,
    hidden: Hidden<'a>,
    sink: Sink<'a>,
}

impl<'a> Builder<'a> {
    /// Into a list of named attributes: those in `wanted` (`None`: all).
    pub fn attrs(wanted: Option<&'a Wanted>, hidden: Hidden<'a>) -> Builder<'a> {
        Builder { wanted, hidden, sink: Sink::Attrs(Vec::new()) }
    }

    /// Into a row of the values of `columns`.
    pub fn row(columns: &'a Columns, hidden: Hidden<'a>) -> Builder<'a> {
        let sink = Sink::Row { columns, values: vec![None; columns.len()] };
        Builder { wanted: Some(&columns.wanted), hidden, sink }
    }

    /// The attributes collected (empty for a row).
    pub fn into_attrs(self) -> Vec<Attr> {
        match self.sink {
            Sink::Attrs(attrs) => attrs,
            Sink::Row { .. } => Vec::new(),
        }
    }

    /// The row collected (empty for a list of attributes).
    pub fn into_row(self) -> Vec<Option<CompactString>> {
        match self.sink {
            Sink::Attrs(_) => Vec::new(),
            Sink::Row { values, .. } => values,
        }
    }

    /// Whether any attribute of group `name` (or the attribute `name`) is wanted.
    pub(crate) fn wants_group(&self, name: &str) -> bool {
        self.wanted.is_none_or(|wanted| wanted.wants_group(name))
    }

    pub(crate) fn add(&mut self, name: &str, value: impl FnOnce() -> String) {
        self.put(name, None, || Some(value()), |attrs| attrs.len());
    }

    /// Adds `name` if `value` gives one: for attributes whose presence costs a look-up, made
    /// only when the attribute is wanted and seen.
    pub(crate) fn add_some(&mut self, name: &str, value: impl FnOnce() -> Option<String>) {
        self.put(name, None, value, |attrs| attrs.len());
    }

    pub(crate) fn add_res(&mut self, name: &str, resource: &str, value: impl FnOnce() -> String) {
        self.put(name, Some(resource), || Some(value()), |attrs| attrs.len());
    }

    /// Adds `name`, if `value` gives one, where `at` says in the list of attributes (a row has
    /// no order). `value` is called only when the attribute is wanted and seen.
    pub(crate) fn insert(
        &mut self,
        name: &str,
        value: impl FnOnce() -> Option<String>,
        at: impl FnOnce(&[Attr]) -> usize,
    ) {
        self.put(name, None, value, at);
    }

    fn put(
        &mut self,
        name: &str,
        resource: Option<&str>,
        value: impl FnOnce() -> Option<String>,
        at: impl FnOnce(&[Attr]) -> usize,
    ) {
        match &mut self.sink {
            Sink::Attrs(attrs) => {
                let wanted = self.wanted.is_none_or(|wanted| wanted.wants(name, resource));
                if !wanted || self.hidden.hides(name, resource) {
                    return;
                }
                let Some(value) = value() else { return };
                let attr = Attr { name: name.to_string(), resource: resource.map(str::to_string), value };
                let at = at(attrs);
                attrs.insert(at, attr);
            }
            // The first attribute of a name counts, as `JobStatus::get` finds it. A column is
            // wanted by its exact name: found by one search (after the filter, which turns
            // most names away), not a search of `Wanted` and another of the columns.
            Sink::Row { columns, values } => {
                if !columns.wanted.may_want(name) {
                    return;
                }
                let Some(slot @ None) = columns.index(name, resource).map(|at| &mut values[at]) else { return };
                if !self.hidden.hides(name, resource) {
                    // Inline when short (most values): freed here, not after the frame.
                    *slot = value().map(CompactString::from);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_row_holds_the_named_values_in_the_asked_order() {
        let columns = Columns::new(&names(&["queue", "Resource_List.mem", "Job_Name", "Resource_List"]));
        let mut row = Builder::row(&columns, Hidden::NOTHING);
        row.add("Job_Name", || "sim".into());
        row.add("Job_Name", || panic!("the first of a name counts"));
        row.add_res("Resource_List", "ncpus", || panic!("not asked for"));
        row.add_res("Resource_List", "mem", || "1gb".into());
        row.add("job_state", || panic!("not asked for"));
        row.add("queue", || "workq".into());
        assert_eq!(row.into_row(), [Some("workq".into()), Some("1gb".into()), Some("sim".into()), None]);
    }

    #[test]
    fn hidden_attributes_are_never_made_on_either_path() {
        let mut site = SiteResources::default();
        site.define(job::resources::site::ResourceDef::from_words("secret", Some("long"), Some("i")).unwrap()).unwrap();
        let hidden = Hidden { private: true, manager_only: true, invisible: Some(&site) };
        let asked = names(&["Variable_List", "schedselect", "Resource_List.secret", "queue"]);
        let columns = Columns::new(&asked);
        let wanted = Wanted::new(&asked);
        let fill = |out: &mut Builder| {
            out.add("Variable_List", || panic!("private"));
            out.add("schedselect", || panic!("managers only"));
            out.add_res("Resource_List", "secret", || panic!("invisible"));
            out.add("queue", || "workq".into());
        };
        let mut row = Builder::row(&columns, hidden);
        fill(&mut row);
        assert_eq!(row.into_row(), [None, None, None, Some("workq".into())]);
        for wanted in [None, Some(&wanted)] {
            let mut attrs = Builder::attrs(wanted, hidden);
            fill(&mut attrs);
            assert_eq!(attrs.into_attrs(), [Attr::new("queue", "workq")]);
        }
    }
}
