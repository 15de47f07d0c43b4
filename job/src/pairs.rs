//! `PairList`: an ordered list of `name=value` pairs kept in one allocation. The server holds
//! one `Variable_List` and one `Resource_List` per job, for tens of thousands of jobs; a
//! `Vec<(String, String)>` would cost two allocations per pair.
//!
//! On the wire it is a JSON array of `[name, value]` arrays, exactly as a
//! `Vec<(String, String)>`. Invariant: names and values contain no NUL character (they come
//! from environment variables and command lines, which cannot hold one); decoding refuses NUL.

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Pairs stored as `name\0value\0name\0value\0...`.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct PairList {
    text: String,
}

/// A name or value holding a NUL character, which a `PairList` cannot store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} contains a NUL character")]
pub struct NulInPair(pub String);

impl PairList {
    pub fn new() -> PairList {
        PairList::default()
    }

    /// Appends a pair. NUL characters are refused (see [`PairList::try_push`]); this variant
    /// drops anything after a NUL, for callers whose input cannot contain one.
    pub fn push(&mut self, name: &str, value: &str) {
        let cut = |text: &str| text.split('\0').next().unwrap_or_default().to_string();
        self.text.push_str(&cut(name));
        self.text.push('\0');
        self.text.push_str(&cut(value));
        self.text.push('\0');
    }

    /// Appends a pair, refusing NUL characters.
    pub fn try_push(&mut self, name: &str, value: &str) -> Result<(), NulInPair> {
        for text in [name, value] {
            if text.contains('\0') {
                return Err(NulInPair(text.to_string()));
            }
        }
        self.push(name, value);
        Ok(())
    }

    /// The pairs in order.
    pub fn iter(&self) -> Pairs<'_> {
        Pairs { rest: &self.text }
    }

    /// The value of the first pair called `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(key, _)| *key == name).map(|(_, value)| value)
    }

    /// Keeps only the pairs for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(&str, &str) -> bool) {
        let mut kept = PairList::new();
        for (name, value) in self.iter().filter(|(name, value)| keep(name, value)) {
            kept.push(name, value);
        }
        *self = kept;
    }

    /// Replaces the value of `name`, or appends the pair.
    pub fn set(&mut self, name: &str, value: &str) {
        if self.get(name).is_some() {
            let mut updated = PairList::new();
            for (key, old) in self.iter() {
                updated.push(key, if key == name { value } else { old });
            }
            *self = updated;
        } else {
            self.push(name, value);
        }
    }

    pub fn len(&self) -> usize {
        self.text.bytes().filter(|byte| *byte == 0).count() / 2
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Releases spare capacity (call once a list is complete).
    pub fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
    }

    /// The pairs as owned strings.
    pub fn to_vec(&self) -> Vec<(String, String)> {
        self.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }
}

/// Iterator over a [`PairList`].
pub struct Pairs<'a> {
    rest: &'a str,
}

impl<'a> Iterator for Pairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let (name, rest) = self.rest.split_once('\0')?;
        let (value, rest) = rest.split_once('\0')?;
        self.rest = rest;
        Some((name, value))
    }
}

impl<'a> IntoIterator for &'a PairList {
    type Item = (&'a str, &'a str);
    type IntoIter = Pairs<'a>;

    fn into_iter(self) -> Pairs<'a> {
        self.iter()
    }
}

impl<N: AsRef<str>, V: AsRef<str>> FromIterator<(N, V)> for PairList {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(iter: I) -> PairList {
        let mut list = PairList::new();
        for (name, value) in iter {
            list.push(name.as_ref(), value.as_ref());
        }
        list.shrink_to_fit();
        list
    }
}

impl From<Vec<(String, String)>> for PairList {
    fn from(pairs: Vec<(String, String)>) -> PairList {
        pairs.into_iter().collect()
    }
}

impl fmt::Debug for PairList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for PairList {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for pair in self.iter() {
            seq.serialize_element(&pair)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for PairList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PairList, D::Error> {
        struct PairsVisitor;
        impl<'de> Visitor<'de> for PairsVisitor {
            type Value = PairList;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of [name, value] pairs")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PairList, A::Error> {
                let mut list = PairList::new();
                while let Some((name, value)) =
                    seq.next_element::<(std::borrow::Cow<'de, str>, std::borrow::Cow<'de, str>)>()?
                {
                    list.try_push(&name, &value).map_err(serde::de::Error::custom)?;
                }
                list.shrink_to_fit();
                Ok(list)
            }
        }
        deserializer.deserialize_seq(PairsVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_empty_values() {
        let mut list: PairList = vec![("A".to_string(), "1".to_string()), ("EMPTY".to_string(), String::new())].into();
        list.push("B", "x=y,z");
        assert_eq!(
            list.to_vec(),
            vec![("A".into(), "1".into()), ("EMPTY".into(), "".into()), ("B".into(), "x=y,z".into())]
        );
        assert_eq!(list.len(), 3);
        assert_eq!(list.get("EMPTY"), Some(""));
        list.set("A", "2");
        list.set("C", "3");
        list.retain(|name, _| name != "EMPTY");
        assert_eq!(format!("{list:?}"), r#"[("A", "2"), ("B", "x=y,z"), ("C", "3")]"#);
    }

    #[test]
    fn wire_form_is_that_of_a_vec_of_pairs() {
        let pairs = vec![("PATH".to_string(), "/bin".to_string()), ("E".to_string(), String::new())];
        let list: PairList = pairs.clone().into();
        assert_eq!(serde_json::to_string(&list).unwrap(), serde_json::to_string(&pairs).unwrap());
        let back: PairList = serde_json::from_str(r#"[["PATH","/bin"],["E",""]]"#).unwrap();
        assert_eq!(back, list);
        assert!(serde_json::from_str::<PairList>(r#"[["A","x\u0000y"]]"#).is_err(), "NUL refused");
        assert!(serde_json::from_str::<PairList>(r#"[["A"]]"#).is_err());
    }
}
