//! Attribute value grammar shared by queue and server attributes: booleans (`True`, `false`,
//! `t`, `1`), lists with `=`/`+=`/`-=`, OpenPBS limit lists (`[o:PBS_ALL=10],[u:PBS_GENERIC=2]`)
//! and resource values (`resources_max.walltime = 1:00:00`), with qmgr's errors.
//!
//! Must not know: which object an attribute belongs to, jobs, the store.

use proto::error::{ErrorCode, RequestError};
use proto::manage::{AttrOp, SetOp};
use std::collections::BTreeMap;

/// `Illegal attribute or resource value <name>` (PBSE_BADATVAL), with the reason.
pub fn bad_value(attr: &AttrOp, reason: &str) -> RequestError {
    RequestError::new(
        ErrorCode::BadAttributeValue,
        format!("{} {} ({reason})", ErrorCode::BadAttributeValue.text(), attr.full_name()),
    )
}

/// `Undefined attribute <name>` (PBSE_NOATTR).
pub fn unknown_attribute(attr: &AttrOp) -> RequestError {
    RequestError::new(ErrorCode::NoAttribute, format!("{} {}", ErrorCode::NoAttribute.text(), attr.full_name()))
}

/// A PBS boolean.
pub fn parse_bool(attr: &AttrOp, value: &str) -> Result<bool, RequestError> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "t" | "y" | "yes" | "1" => Ok(true),
        "false" | "f" | "n" | "no" | "0" => Ok(false),
        _ => Err(bad_value(attr, "expected True or False")),
    }
}

/// `True` / `False`.
pub fn show_bool(value: bool) -> &'static str {
    if value {
        "True"
    } else {
        "False"
    }
}

/// A plain limit (`max_running = 10`), `None` when unset.
pub fn limit_value(attr: &AttrOp, unset: bool) -> Result<Option<u32>, RequestError> {
    if unset {
        return Ok(None);
    }
    if attr.op != SetOp::Set {
        return Err(bad_value(attr, "only = applies to a number"));
    }
    attr.value.trim().parse::<u32>().map(Some).map_err(|_| bad_value(attr, "not a non-negative integer"))
}

/// Applies `=`, `+=`, `-=` or unset to a comma-separated list attribute.
pub fn list_op(list: &mut Vec<String>, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
    if unset {
        list.clear();
        return Ok(());
    }
    let items: Vec<String> = attr.value.split(',').map(|item| item.trim().to_string()).collect();
    if items.iter().any(|item| item.is_empty() || item.contains(char::is_whitespace)) {
        return Err(bad_value(attr, "empty entry or blank in the list"));
    }
    match attr.op {
        SetOp::Set => *list = dedup(items),
        SetOp::Incr => {
            for item in items {
                if !list.contains(&item) {
                    list.push(item);
                }
            }
        }
        SetOp::Decr => list.retain(|entry| !items.contains(entry)),
    }
    Ok(())
}

fn dedup(items: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Whether an ACL entry (`user`, `user@host`, `*@host`, `*`) names `user` (hosts are not
/// checked: every request comes over the local socket).
pub fn user_matches(entry: &str, user: &str) -> bool {
    let name = entry.split('@').next().unwrap_or_default();
    name == "*" || name == user
}

/// A count limit for everyone together and one for each user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Limits {
    /// `[o:PBS_ALL=N]`.
    pub total: Option<u32>,
    /// `[u:PBS_GENERIC=N]`.
    pub per_user: Option<u32>,
}

impl Limits {
    /// Applies an OpenPBS limit list (`[o:PBS_ALL=10],[u:PBS_GENERIC=2]`) or a plain number
    /// (the total) with `=`, `+=` (set these entries) or `-=` (remove them).
    pub fn apply_entlim(&mut self, attr: &AttrOp, unset: bool) -> Result<(), RequestError> {
        if unset {
            *self = Limits::default();
            return Ok(());
        }
        let value = attr.value.trim();
        let mut given = Limits::default();
        if let Ok(total) = value.parse::<u32>() {
            given.total = Some(total);
        } else {
            for entry in value.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
                let inner = entry
                    .strip_prefix('[')
                    .and_then(|rest| rest.strip_suffix(']'))
                    .ok_or_else(|| bad_value(attr, "expected [o:PBS_ALL=N] or [u:PBS_GENERIC=N]"))?;
                let (entity, number) = inner.split_once('=').ok_or_else(|| bad_value(attr, "missing ="))?;
                let number: u32 = number.trim().parse().map_err(|_| bad_value(attr, "not a non-negative integer"))?;
                match entity.trim() {
                    "o:PBS_ALL" => given.total = Some(number),
                    "u:PBS_GENERIC" => given.per_user = Some(number),
                    _ => return Err(bad_value(attr, "only [o:PBS_ALL=N] and [u:PBS_GENERIC=N] limits are supported")),
                }
            }
            if given == Limits::default() {
                return Err(bad_value(attr, "no limit given"));
            }
        }
        match attr.op {
            SetOp::Set => *self = given,
            SetOp::Incr => {
                self.total = given.total.or(self.total);
                self.per_user = given.per_user.or(self.per_user);
            }
            SetOp::Decr => {
                if given.total.is_some() {
                    self.total = None;
                }
                if given.per_user.is_some() {
                    self.per_user = None;
                }
            }
        }
        Ok(())
    }

    /// The OpenPBS text, `None` when neither limit is set.
    pub fn entlim(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(total) = self.total {
            parts.push(format!("[o:PBS_ALL={total}]"));
        }
        if let Some(per_user) = self.per_user {
            parts.push(format!("[u:PBS_GENERIC={per_user}]"));
        }
        (!parts.is_empty()).then(|| parts.join(","))
    }
}

/// Resources a queue may default or limit.
const RESOURCES: [&str; 11] =
    ["walltime", "cput", "ncpus", "ngpus", "nodect", "mem", "vmem", "pmem", "nodes", "select", "place"];

/// Sets or unsets `map[resource]`, the value checked and normalised (durations as
/// `HH:MM:SS`, counts as numbers, sizes as given in lower case).
pub fn set_resource(
    map: &mut BTreeMap<String, String>,
    attr: &AttrOp,
    resource: &str,
    value: &str,
    unset: bool,
    site: &job::resources::site::SiteResources,
) -> Result<(), RequestError> {
    if let Some(def) = site.get(resource) {
        if unset {
            map.remove(resource);
            return Ok(());
        }
        if attr.op != SetOp::Set {
            return Err(bad_value(attr, "only = applies to a resource"));
        }
        let shown = def.normalize(value).map_err(|reason| bad_value(attr, &reason))?;
        map.insert(resource.to_string(), shown);
        return Ok(());
    }
    let resource = resource.to_ascii_lowercase();
    if !RESOURCES.contains(&resource.as_str()) {
        return Err(RequestError::new(
            ErrorCode::UnknownResource,
            format!("{} {}", ErrorCode::UnknownResource.text(), attr.full_name()),
        ));
    }
    if unset {
        map.remove(&resource);
        return Ok(());
    }
    if attr.op != SetOp::Set {
        return Err(bad_value(attr, "only = applies to a resource"));
    }
    let normal = match resource.as_str() {
        "walltime" | "cput" => {
            job::duration::format_hms(job::duration::parse_duration(value).map_err(|reason| bad_value(attr, &reason))?)
        }
        "ncpus" | "ngpus" | "nodect" => {
            value.parse::<u32>().map_err(|_| bad_value(attr, "not a non-negative integer"))?.to_string()
        }
        "mem" | "vmem" | "pmem" => {
            job::size::Size::parse(value).map_err(|reason| bad_value(attr, &reason))?;
            value.to_ascii_lowercase()
        }
        _ if value.is_empty() => return Err(bad_value(attr, "empty value")),
        _ => value.to_string(),
    };
    map.insert(resource, normal);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, op: SetOp, value: &str) -> AttrOp {
        AttrOp { name: name.into(), resource: None, op, value: value.into() }
    }

    #[test]
    fn entlim_lists_and_plain_numbers() {
        let mut limits = Limits::default();
        limits.apply_entlim(&op("max_run", SetOp::Set, "[u:PBS_GENERIC=2]"), false).unwrap();
        assert_eq!(limits, Limits { total: None, per_user: Some(2) });
        limits.apply_entlim(&op("max_run", SetOp::Incr, "[o:PBS_ALL=10]"), false).unwrap();
        assert_eq!(limits.entlim().unwrap(), "[o:PBS_ALL=10],[u:PBS_GENERIC=2]");
        limits.apply_entlim(&op("max_run", SetOp::Decr, "[u:PBS_GENERIC=2]"), false).unwrap();
        assert_eq!(limits, Limits { total: Some(10), per_user: None });
        limits.apply_entlim(&op("max_run", SetOp::Set, "4"), false).unwrap();
        assert_eq!(limits, Limits { total: Some(4), per_user: None });
        for bad in ["[u:alice=3]", "x", "[u:PBS_GENERIC=-1]", "[o:PBS_ALL=3"] {
            assert!(limits.apply_entlim(&op("max_run", SetOp::Set, bad), false).is_err(), "{bad}");
        }
        assert_eq!(limits, Limits { total: Some(4), per_user: None }, "a refused value changes nothing");
    }

    #[test]
    fn lists_and_booleans() {
        let mut list = vec![];
        list_op(&mut list, &op("acl_users", SetOp::Set, "alice,bob"), false).unwrap();
        list_op(&mut list, &op("acl_users", SetOp::Incr, "carol,alice"), false).unwrap();
        list_op(&mut list, &op("acl_users", SetOp::Decr, "bob"), false).unwrap();
        assert_eq!(list, ["alice", "carol"]);
        assert!(list_op(&mut list, &op("acl_users", SetOp::Set, "a,,b"), false).is_err());
        assert!(parse_bool(&op("enabled", SetOp::Set, "t"), "t").unwrap());
        assert!(parse_bool(&op("enabled", SetOp::Set, "maybe"), "maybe").is_err());
        assert!(user_matches("alice@*", "alice") && user_matches("*", "bob") && !user_matches("alice", "bob"));
    }
}
