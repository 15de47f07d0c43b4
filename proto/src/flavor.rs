//! The PBS dialect a server follows where OpenPBS and TORQUE conflict (pbs-reference section
//! 0). The server decides it; status replies carry it so the commands print the same dialect.
//!
//! Owns: the flavor's names on the wire and on command lines. Must not: know what differs
//! between the flavors (the server's `flavor.rs` and the commands' `output/` do).

use serde::{Deserialize, Serialize};

/// Which dialect conflicting outputs follow. OpenPBS unless the site chose TORQUE.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// OpenPBS / PBS Pro (the default).
    #[default]
    OpenPbs,
    /// TORQUE 6.1.
    Torque,
}

impl Flavor {
    /// The name used on command lines and in settings: `openpbs` or `torque`.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::OpenPbs => "openpbs",
            Flavor::Torque => "torque",
        }
    }
}

/// A flavor name that is neither `openpbs` nor `torque`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown flavor {0:?}: use openpbs or torque")]
pub struct UnknownFlavor(pub String);

impl std::str::FromStr for Flavor {
    type Err = UnknownFlavor;

    fn from_str(text: &str) -> Result<Flavor, UnknownFlavor> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openpbs" | "pbspro" => Ok(Flavor::OpenPbs),
            "torque" => Ok(Flavor::Torque),
            _ => Err(UnknownFlavor(text.to_string())),
        }
    }
}

impl std::fmt::Display for Flavor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for flavor in [Flavor::OpenPbs, Flavor::Torque] {
            assert_eq!(flavor.name().parse::<Flavor>(), Ok(flavor));
            assert_eq!(serde_json::to_string(&flavor).unwrap(), format!("\"{}\"", flavor.name()));
        }
        assert_eq!("TORQUE".parse::<Flavor>(), Ok(Flavor::Torque));
        // A reply from a server that predates flavors reads as OpenPBS.
        let old = r#"{"Jobs":{"server":"s","jobs":[],"errors":[]}}"#;
        match serde_json::from_str::<crate::ServerReply>(old).unwrap() {
            crate::ServerReply::Jobs { flavor, more, .. } => assert_eq!((flavor, more), (Flavor::OpenPbs, false)),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            "slurm".parse::<Flavor>().unwrap_err().to_string(),
            "unknown flavor \"slurm\": use openpbs or torque"
        );
    }
}
