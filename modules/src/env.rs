//! The environment modulecmd works on: the variables it inherited, the changes modulefiles
//! make to them, and path-like variables with reference counts (an element added by two
//! modules stays until both are unloaded; counts above one live in `__MODULES_SHARE_<VAR>`,
//! as `element:count` pairs).
//!
//! Owns: the values and what changed since the start. Pure: never reads or writes the
//! process's environment (the binary hands the variables in and prints the changes).

use std::collections::BTreeMap;

/// The variables, as they are now and as they were at the start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
    original: BTreeMap<String, String>,
}

/// One difference between the start and now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Set(String, String),
    Unset(String),
}

impl Env {
    /// The environment made of `vars`.
    pub fn new(vars: impl IntoIterator<Item = (String, String)>) -> Env {
        let vars: BTreeMap<String, String> = vars.into_iter().collect();
        Env { original: vars.clone(), vars }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    pub fn set(&mut self, name: &str, value: &str) {
        self.vars.insert(name.to_string(), value.to_string());
    }

    pub fn unset(&mut self, name: &str) {
        self.vars.remove(name);
    }

    /// Every variable now (for a modulefile's `env` array).
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// What changed since the start, by name.
    pub fn changes(&self) -> Vec<Change> {
        let mut changes = Vec::new();
        for (name, value) in &self.vars {
            if self.original.get(name) != Some(value) {
                changes.push(Change::Set(name.clone(), value.clone()));
            }
        }
        for name in self.original.keys() {
            if !self.vars.contains_key(name) {
                changes.push(Change::Unset(name.clone()));
            }
        }
        changes.sort_by(|a, b| change_name(a).cmp(change_name(b)));
        changes
    }

    /// The elements of a path-like variable (none when unset).
    pub fn elements(&self, name: &str, delim: &str) -> Vec<String> {
        match self.get(name) {
            Some(value) => split(value, delim),
            None => Vec::new(),
        }
    }

    /// Adds `values` in front (in their order) or at the end of `name`. An element already
    /// there is not moved: its reference count goes up.
    pub fn add_path(&mut self, name: &str, values: &[String], delim: &str, front: bool) {
        let mut elements = self.elements(name, delim);
        let mut counts = self.share_counts(name, delim);
        let mut added = Vec::new();
        for value in values {
            if elements.contains(value) || added.contains(value) {
                *counts.entry(value.clone()).or_insert(1) += 1;
            } else {
                added.push(value.clone());
            }
        }
        if front {
            added.extend(elements);
            elements = added;
        } else {
            elements.extend(added);
        }
        self.store_path(name, &elements, delim);
        self.store_counts(name, &counts, delim);
    }

    /// Takes one reference to each of `values` away (unload of an add); an element whose
    /// count reaches zero leaves the variable, and an empty variable is unset.
    pub fn release_path(&mut self, name: &str, values: &[String], delim: &str) {
        let mut elements = self.elements(name, delim);
        let mut counts = self.share_counts(name, delim);
        for value in values {
            match counts.get_mut(value) {
                Some(count) if *count > 2 => *count -= 1,
                Some(_) => {
                    counts.remove(value);
                }
                None => elements.retain(|element| element != value),
            }
        }
        self.store_path(name, &elements, delim);
        self.store_counts(name, &counts, delim);
    }

    /// Removes `values` whatever their count (`remove-path` at load).
    pub fn remove_path(&mut self, name: &str, values: &[String], delim: &str) {
        let mut elements = self.elements(name, delim);
        let mut counts = self.share_counts(name, delim);
        elements.retain(|element| !values.contains(element));
        counts.retain(|element, _| !values.contains(element));
        self.store_path(name, &elements, delim);
        self.store_counts(name, &counts, delim);
    }

    fn store_path(&mut self, name: &str, elements: &[String], delim: &str) {
        if elements.is_empty() {
            self.unset(name);
        } else {
            self.set(name, &elements.join(delim));
        }
    }

    fn share_counts(&self, name: &str, delim: &str) -> BTreeMap<String, u32> {
        let Some(text) = self.get(&share_name(name)) else { return BTreeMap::new() };
        let parts = split(text, delim);
        parts.chunks(2).filter_map(|pair| Some((pair.first()?.clone(), pair.get(1)?.parse().ok()?))).collect()
    }

    fn store_counts(&mut self, name: &str, counts: &BTreeMap<String, u32>, delim: &str) {
        let pairs: Vec<String> = counts
            .iter()
            .filter(|(_, count)| **count > 1)
            .map(|(element, count)| format!("{element}{delim}{count}"))
            .collect();
        if pairs.is_empty() {
            self.unset(&share_name(name));
        } else {
            self.set(&share_name(name), &pairs.join(delim));
        }
    }
}

fn change_name(change: &Change) -> &str {
    match change {
        Change::Set(name, _) | Change::Unset(name) => name,
    }
}

/// `__MODULES_SHARE_<name>`.
fn share_name(name: &str) -> String {
    format!("__MODULES_SHARE_{name}")
}

/// Splits a path-like value; an empty value has no elements.
pub fn split(value: &str, delim: &str) -> Vec<String> {
    if value.is_empty() || delim.is_empty() {
        return if value.is_empty() { Vec::new() } else { vec![value.to_string()] };
    }
    value.split(delim).map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::new(vars.iter().map(|(name, value)| (name.to_string(), value.to_string())))
    }

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| item.to_string()).collect()
    }

    #[test]
    fn shared_elements_stay_until_the_last_reference_goes() {
        let mut env = env(&[("PATH", "/usr/bin:/bin")]);
        env.add_path("PATH", &list(&["/a/bin", "/usr/bin"]), ":", true);
        assert_eq!(env.get("PATH"), Some("/a/bin:/usr/bin:/bin"), "a present element is not moved");
        assert_eq!(env.get("__MODULES_SHARE_PATH"), Some("/usr/bin:2"));
        env.add_path("PATH", &list(&["/a/bin"]), ":", false);
        assert_eq!(env.get("__MODULES_SHARE_PATH"), Some("/a/bin:2:/usr/bin:2"));
        env.release_path("PATH", &list(&["/a/bin", "/usr/bin"]), ":");
        assert_eq!(env.get("PATH"), Some("/a/bin:/usr/bin:/bin"));
        assert_eq!(env.get("__MODULES_SHARE_PATH"), None);
        env.release_path("PATH", &list(&["/a/bin"]), ":");
        assert_eq!(env.get("PATH"), Some("/usr/bin:/bin"));
        env.release_path("PATH", &list(&["/usr/bin", "/bin"]), ":");
        assert_eq!(env.get("PATH"), None, "an emptied variable is unset");
    }

    #[test]
    fn changes_name_what_differs_from_the_start() {
        let mut env = env(&[("KEEP", "1"), ("GONE", "x"), ("SAME", "s")]);
        env.set("KEEP", "2");
        env.unset("GONE");
        env.set("SAME", "s");
        env.set("NEW", "n");
        assert_eq!(
            env.changes(),
            [
                Change::Unset("GONE".into()),
                Change::Set("KEEP".into(), "2".into()),
                Change::Set("NEW".into(), "n".into())
            ]
        );
    }

    #[test]
    fn remove_path_removes_whatever_the_count_and_other_delimiters_work() {
        let mut env = env(&[("L", "a;b;c"), ("__MODULES_SHARE_L", "b;3")]);
        env.remove_path("L", &list(&["b"]), ";");
        assert_eq!((env.get("L"), env.get("__MODULES_SHARE_L")), (Some("a;c"), None));
        env.add_path("L", &list(&["z"]), ";", true);
        assert_eq!(env.get("L"), Some("z;a;c"));
    }
}
