//! Lists of names in a request (job ids, destinations, node, queue, user and attribute names),
//! read so that repeating a name costs nothing: each name is kept once, in order, as it is
//! decoded, and at most [`MAX_NAMES`] + 1 distinct names are kept (the rest are read and
//! dropped), so a 16 MiB frame of one name repeated decodes to one string, and a receiver can
//! still tell a list over the limit (`server/src/bounds.rs` refuses it).

use serde::de::{Deserializer, SeqAccess, Visitor};
use std::collections::HashSet;

/// Most distinct names one list of a request may hold.
pub const MAX_NAMES: usize = 100_000;

/// Reads a list of names, each kept once (first occurrence, in order), at most
/// [`MAX_NAMES`] + 1 of them.
pub fn distinct<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    deserializer.deserialize_seq(Distinct)
}

/// [`distinct`] for an optional list.
pub fn distinct_option<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Vec<String>>, D::Error> {
    struct Optional;
    impl<'de> Visitor<'de> for Optional {
        type Value = Option<Vec<String>>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("null or a list of names")
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
            distinct(deserializer).map(Some)
        }
    }
    deserializer.deserialize_option(Optional)
}

struct Distinct;

impl<'de> Visitor<'de> for Distinct {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of names")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut seen = HashSet::new();
        let mut names = Vec::new();
        while let Some(name) = seq.next_element::<String>()? {
            if names.len() <= MAX_NAMES && !seen.contains(&name) {
                seen.insert(name.clone());
                names.push(name);
            }
        }
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use crate::ClientRequest;

    #[test]
    fn repeated_names_decode_once_and_long_lists_are_cut_past_the_limit() {
        let body = format!(r#"{{"DeleteJob":{{"ids":[{}"2"]}}}}"#, r#""1","1.s","1","#.repeat(100_000));
        let request: ClientRequest = serde_json::from_str(&body).unwrap();
        assert_eq!(
            request,
            ClientRequest::DeleteJob { ids: vec!["1".into(), "1.s".into(), "2".into()], force: false, history: false }
        );
        let many: Vec<String> = (0..super::MAX_NAMES + 50).map(|n| n.to_string()).collect();
        let body =
            serde_json::json!({"StatusJob": {"selectors": many, "history": false, "users": [], "attrs": ["a", "a"]}});
        match serde_json::from_value(body).unwrap() {
            ClientRequest::StatusJob { selectors, attrs, .. } => {
                assert_eq!(selectors.len(), super::MAX_NAMES + 1, "one past the limit, so it can be refused");
                assert_eq!(attrs, Some(vec!["a".to_string()]));
            }
            other => panic!("{other:?}"),
        }
        let body = r#"{"StatusJob":{"selectors":[],"history":false,"users":[],"attrs":null}}"#;
        assert!(matches!(serde_json::from_str(body).unwrap(), ClientRequest::StatusJob { attrs: None, .. }));
    }
}
