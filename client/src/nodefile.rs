//! The job's host list as `PBS_NODEFILE` gives it (one host per line, one line per vnode) and
//! how a host name given by a user or an MPI runtime is matched against it: the same name, the
//! short name of the other (`n1` and `n1.example.com`), or a shared address.
//!
//! Owns: parsing (bounded), unique hosts, matching. Must not know: sockets, the task protocol,
//! either launcher. Name resolution is passed in, so matching stays pure.

use std::collections::BTreeSet;
use std::net::IpAddr;

/// Most bytes of a nodefile read (the mom writes it; a bound all the same).
pub const MAX_NODEFILE_BYTES: usize = 16 * 1024 * 1024;
/// Most vnodes (lines) of a nodefile.
pub const MAX_VNODES: usize = 65536;

/// Why the nodefile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NodefileError {
    #[error("the node file has more than {MAX_NODEFILE_BYTES} bytes")]
    TooLarge,
    #[error("the node file has more than {MAX_VNODES} lines")]
    TooManyLines,
    #[error("the node file lists no host")]
    Empty,
}

/// The hosts of a job, one entry per vnode, in nodefile order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nodefile {
    pub vnodes: Vec<String>,
}

impl Nodefile {
    /// Parses a nodefile's text: one host per line, blank lines and surrounding blanks ignored.
    pub fn parse(text: &str) -> Result<Nodefile, NodefileError> {
        if text.len() > MAX_NODEFILE_BYTES {
            return Err(NodefileError::TooLarge);
        }
        let vnodes: Vec<String> =
            text.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_string).collect();
        if vnodes.len() > MAX_VNODES {
            return Err(NodefileError::TooManyLines);
        }
        if vnodes.is_empty() {
            return Err(NodefileError::Empty);
        }
        Ok(Nodefile { vnodes })
    }

    /// The distinct hosts in order of first appearance.
    pub fn unique_hosts(&self) -> Vec<&str> {
        let mut seen = BTreeSet::new();
        self.vnodes.iter().map(String::as_str).filter(|host| seen.insert(*host)).collect()
    }

    /// The first vnode of the host `wanted` names, by name first (exact, then short and full
    /// forms) and then by address (`resolve` gives a name's addresses; an address literal is
    /// its own).
    pub fn find(&self, wanted: &str, resolve: impl Fn(&str) -> Vec<IpAddr>) -> Option<usize> {
        if let Some(index) = self.vnodes.iter().position(|host| same_name(host, wanted)) {
            return Some(index);
        }
        let addresses_of = |name: &str| match name.parse::<IpAddr>() {
            Ok(address) => vec![address],
            Err(_) => resolve(name),
        };
        let wanted_addresses = addresses_of(wanted);
        if wanted_addresses.is_empty() {
            return None;
        }
        self.vnodes.iter().position(|host| addresses_of(host).iter().any(|address| wanted_addresses.contains(address)))
    }
}

/// Whether two host names name the same host: equal (ignoring case), or one is the first label
/// of the other (`n1` and `n1.example.com`). Two different full names never match by name.
pub fn same_name(a: &str, b: &str) -> bool {
    let a = a.trim_end_matches('.');
    let b = b.trim_end_matches('.');
    if a.eq_ignore_ascii_case(b) {
        return true;
    }
    let short = |name: &str| name.split('.').next().unwrap_or(name).to_string();
    match (a.contains('.'), b.contains('.')) {
        (false, true) => a.eq_ignore_ascii_case(&short(b)) && b.parse::<IpAddr>().is_err(),
        (true, false) => b.eq_ignore_ascii_case(&short(a)) && a.parse::<IpAddr>().is_err(),
        _ => false,
    }
}

/// The addresses a name resolves to through the system resolver (none when it does not).
pub fn resolve(name: &str) -> Vec<IpAddr> {
    use std::net::ToSocketAddrs;
    (name, 0u16).to_socket_addrs().map(|found| found.map(|address| address.ip()).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Nodefile {
        Nodefile::parse("n1.example.com\nn1.example.com\nn2\n\nn2\n").unwrap()
    }

    #[test]
    fn parses_lines_and_unique_hosts() {
        let nodes = job();
        assert_eq!(nodes.vnodes.len(), 4);
        assert_eq!(nodes.unique_hosts(), ["n1.example.com", "n2"]);
        assert_eq!(Nodefile::parse(" \n\n"), Err(NodefileError::Empty));
    }

    #[test]
    fn bounds_lines_and_bytes() {
        let many = "n\n".repeat(MAX_VNODES + 1);
        assert_eq!(Nodefile::parse(&many), Err(NodefileError::TooManyLines));
        assert!(Nodefile::parse(&"n\n".repeat(MAX_VNODES)).is_ok());
        let huge = "x".repeat(MAX_NODEFILE_BYTES + 1);
        assert_eq!(Nodefile::parse(&huge), Err(NodefileError::TooLarge));
    }

    #[test]
    fn matches_short_full_and_case() {
        let none = |_: &str| Vec::new();
        let nodes = job();
        assert_eq!(nodes.find("n1", none), Some(0));
        assert_eq!(nodes.find("N1.example.com", none), Some(0));
        assert_eq!(nodes.find("n2.example.com", none), Some(2));
        assert_eq!(nodes.find("n2", none), Some(2));
        assert_eq!(nodes.find("n1.other.org", none), None);
        assert_eq!(nodes.find("n3", none), None);
        assert!(!same_name("10.0.0.1", "10"));
    }

    #[test]
    fn matches_by_address() {
        let table = |name: &str| match name {
            "n2" => vec!["10.0.0.2".parse().unwrap()],
            "n2-ib" => vec!["10.0.0.2".parse().unwrap(), "10.1.0.2".parse().unwrap()],
            _ => Vec::new(),
        };
        let nodes = job();
        assert_eq!(nodes.find("10.0.0.2", table), Some(2));
        assert_eq!(nodes.find("n2-ib", table), Some(2));
        assert_eq!(nodes.find("10.0.0.9", table), None);
        assert_eq!(nodes.find("unknown", table), None);
    }
}
