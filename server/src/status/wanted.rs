//! [`Wanted`]: the attributes a status request asks for, split once into name and resource
//! so a listing of many jobs does not re-parse them per attribute. A job's record tries some
//! 40 names against it (`status.rs`), so a look-up must be cheap: a 64-bit filter of the names'
//! lengths and end bytes turns most names away with no string comparison at all (a plain
//! `qstat` asks for five), and the others are found by binary search over names sorted by
//! length first: no hashing, no allocation, O(log n) per attribute for a long hostile list.
//! Pure.

use std::collections::{BTreeMap, BTreeSet};

/// The attributes a status request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    /// Group or attribute name, sorted by [`by_length`], each with `None` for all of it, or
    /// the resources asked for (sorted the same way).
    groups: Vec<(String, Option<Vec<String>>)>,
    /// The [`filter_bit`]s of the group names.
    filter: u64,
}

/// A name's bit in [`Wanted::filter`]: from its length and first and last bytes.
fn filter_bit(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let (first, last) = (bytes.first().copied().unwrap_or(0), bytes.last().copied().unwrap_or(0));
    let mix = (bytes.len() as u64).wrapping_mul(7) ^ u64::from(first).wrapping_mul(3) ^ u64::from(last);
    1 << (mix % 64)
}

/// Length first, then bytes: most names differ in length, compared without touching the bytes.
fn by_length(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
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
        let owned = |resources: BTreeSet<&str>| {
            let mut resources: Vec<String> = resources.into_iter().map(str::to_string).collect();
            resources.sort_by(|a, b| by_length(a, b));
            resources
        };
        let mut groups: Vec<(String, Option<Vec<String>>)> =
            groups.into_iter().map(|(name, resources)| (name.to_string(), resources.map(owned))).collect();
        groups.sort_by(|a, b| by_length(&a.0, &b.0));
        let filter = groups.iter().fold(0, |filter, (name, _)| filter | filter_bit(name));
        Wanted { groups, filter }
    }

    /// False when group (or attribute) `name` is surely not asked for: the filter alone, no
    /// string comparison. True says only "perhaps".
    pub fn may_want(&self, name: &str) -> bool {
        self.filter & filter_bit(name) != 0
    }

    /// The entry of group `name`, if asked for.
    fn group(&self, name: &str) -> Option<&Option<Vec<String>>> {
        if !self.may_want(name) {
            return None;
        }
        let at = self.groups.binary_search_by(|(group, _)| by_length(group, name)).ok()?;
        Some(&self.groups[at].1)
    }

    /// Whether attribute `name` (with `resource`, for a resource attribute) is asked for.
    pub fn wants(&self, name: &str, resource: Option<&str>) -> bool {
        match self.group(name) {
            None => false,
            Some(None) => true,
            Some(Some(resources)) => {
                resource.is_some_and(|resource| resources.binary_search_by(|r| by_length(r, resource)).is_ok())
            }
        }
    }

    /// Whether any attribute of group `name` (or the attribute `name`) is asked for.
    pub fn wants_group(&self, name: &str) -> bool {
        self.group(name).is_some()
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
    fn the_filter_never_turns_away_a_name_asked_for() {
        let names = ["Job_Name", "Job_Owner", "resources_used.cput", "job_state", "queue", "Resource_List", "a", "zz"];
        let asked = wanted(&names);
        for name in names {
            let group = name.split_once('.').map_or(name, |(group, _)| group);
            assert!(asked.may_want(group), "{name}");
        }
        let turned_away = ["Variable_List", "Output_Path", "Error_Path", "ctime", "mtime", "qtime", "etime"]
            .into_iter()
            .filter(|name| !asked.may_want(name))
            .count();
        assert!(turned_away > 0, "the filter turns some names away without a search");
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
