//! [`Wanted`]: the attributes a status request asks for, split once into name and resource
//! so a listing of many jobs does not re-parse them per attribute. A job's record tries some
//! 40 names against it (`status.rs`), so a look-up must be cheap: names are kept sorted and
//! found by binary search (a few length-first string comparisons, no hashing, no allocation),
//! so a long hostile list costs O(log n) per attribute, a plain `qstat`'s five names about
//! three comparisons. Pure.

use std::collections::{BTreeMap, BTreeSet};

/// The attributes a status request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Group or attribute name, sorted, each with `None` for all of it, or the resources asked
    /// for (sorted).
    groups: Vec<(String, Option<Vec<String>>)>,
}

impl Wanted {
    /// From full names (`job_state`, `Resource_List.walltime`) or group names (`Resource_List`).
    /// A group named whole wants all its resources, whatever else names one of them.
    pub fn new(names: &[String]) -> Wanted {
        let mut groups: BTreeMap<&str, Option<BTreeSet<&str>>> = BTreeMap::new();
        for name in names {
            match name.split_once('.') {
                Some((group, resource)) => {
                    if let Some(resources) = groups.entry(group).or_insert_with(|| Some(BTreeSet::new())) {
                        resources.insert(resource);
                    }
                }
                None => {
                    groups.insert(name, None);
                }
            }
        }
        let owned = |resources: BTreeSet<&str>| resources.into_iter().map(str::to_string).collect();
        Wanted { groups: groups.into_iter().map(|(name, resources)| (name.to_string(), resources.map(owned))).collect() }
    }

    /// Whether attribute `name` (with `resource`, for a resource attribute) is asked for.
    pub fn wants(&self, name: &str, resource: Option<&str>) -> bool {
        let Ok(at) = self.groups.binary_search_by(|(group, _)| group.as_str().cmp(name)) else { return false };
        match &self.groups[at].1 {
            None => true,
            Some(resources) => {
                resource.is_some_and(|resource| resources.binary_search_by(|r| r.as_str().cmp(resource)).is_ok())
            }
        }
    }

    /// Whether any attribute of group `name` (or the attribute `name`) is asked for.
    pub fn wants_group(&self, name: &str) -> bool {
        self.groups.binary_search_by(|(group, _)| group.as_str().cmp(name)).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(names: &[&str]) -> Wanted {
        Wanted::new(&names.iter().map(|name| name.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn names_groups_and_resources() {
        let asked = wanted(&["job_state", "Resource_List.walltime", "resources_used.cput", "Resource_List.mem"]);
        assert!(asked.wants("job_state", None));
        assert!(asked.wants("Resource_List", Some("walltime")) && asked.wants("Resource_List", Some("mem")));
        assert!(!asked.wants("Resource_List", Some("ncpus")));
        assert!(!asked.wants("Resource_List", None), "a group asked for by resource is not wanted whole");
        assert!(asked.wants_group("Resource_List") && !asked.wants_group("Variable_List"));
        assert!(!asked.wants("queue", None) && !asked.wants("job_stat", None) && !asked.wants("job_statee", None));
    }

    #[test]
    fn a_group_named_whole_wants_every_resource_in_either_order() {
        for names in [["Resource_List", "Resource_List.mem"], ["Resource_List.mem", "Resource_List"]] {
            let asked = wanted(&names);
            assert!(asked.wants("Resource_List", Some("ncpus")), "{names:?}");
            assert!(asked.wants("Resource_List", None), "{names:?}");
        }
    }

    #[test]
    fn a_long_list_is_found_like_a_short_one() {
        let names: Vec<String> = (0..5000).map(|n| format!("attr{n}")).chain(["queue".to_string()]).collect();
        let asked = Wanted::new(&names);
        assert!(asked.wants("queue", None) && asked.wants("attr4999", None) && !asked.wants("attr5000", None));
        assert!(Wanted::new(&[]).groups.is_empty() && !Wanted::new(&[]).wants("queue", None));
    }
}
