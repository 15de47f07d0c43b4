//! Site-defined resources (OpenPBS `qmgr -c "create resource NAME type=T, flag=F"`): a
//! definition's name grammar, type and flags, the table of definitions a server holds, and the
//! value grammar of each type (what `-l NAME=v`, `select=...:NAME=v` and a node's
//! `resources_available.NAME = v` accept, in their shown form).
//!
//! Owns: [`ResourceDef`], [`SiteResources`], their bounds and OpenPBS's texts for bad flags.
//! Must not know: where definitions are stored, who may change them, nodes or scheduling.

use crate::size::Size;
use std::collections::BTreeMap;

/// Most site resources a server holds. Every definition is looked up for each site resource
/// of every job and node at each scheduling pass; a real site defines a few dozen (OpenPBS
/// ships about forty built-ins). 256 leaves room for any real site and bounds the table a
/// manager's script gone wrong could grow.
pub const MAX_SITE_RESOURCES: usize = 256;

/// Longest resource name. OpenPBS bounds names only by its buffers; names people use are
/// short (`gpu_type`, `mppwidth`), and each is copied into every job and node that uses it.
pub const MAX_RESOURCE_NAME: usize = 64;

/// Longest value of a site resource (a string, a whole string_array, a number's text). A value
/// is kept in every job that asks for it and compared at every pass.
pub const MAX_SITE_VALUE: usize = 256;

/// Names the server itself gives a meaning; `create resource` refuses them (OpenPBS: they are
/// defined already, `Duplicate entry in list`).
pub const BUILTIN: [&str; 24] = [
    "walltime",
    "cput",
    "mem",
    "vmem",
    "pmem",
    "pvmem",
    "ncpus",
    "ngpus",
    "nodes",
    "procs",
    "select",
    "place",
    "software",
    "arch",
    "host",
    "nodect",
    "file",
    "vnode",
    "mpiprocs",
    "ompthreads",
    "mps",
    "naccelerators",
    "accelerator",
    "ppn",
];

/// A resource's value type (OpenPBS `resc_type_map`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceType {
    String,
    Long,
    Size,
    Boolean,
    Float,
    StringArray,
}

impl ResourceType {
    /// The type from qmgr's word (`string`, `long`, `size`, `boolean`, `float`, `string_array`).
    pub fn parse(word: &str) -> Option<ResourceType> {
        Some(match word {
            "string" => ResourceType::String,
            "long" => ResourceType::Long,
            "size" => ResourceType::Size,
            "boolean" => ResourceType::Boolean,
            "float" => ResourceType::Float,
            "string_array" => ResourceType::StringArray,
            _ => return None,
        })
    }

    /// qmgr's word for the type.
    pub fn word(self) -> &'static str {
        match self {
            ResourceType::String => "string",
            ResourceType::Long => "long",
            ResourceType::Size => "size",
            ResourceType::Boolean => "boolean",
            ResourceType::Float => "float",
            ResourceType::StringArray => "string_array",
        }
    }

    /// Whether an amount of this type can be consumed (long, size, float).
    pub fn is_numeric(self) -> bool {
        matches!(self, ResourceType::Long | ResourceType::Size | ResourceType::Float)
    }
}

/// Where a host-level resource is consumed (flags `n` and `f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Consumed {
    /// Not consumable at host level.
    #[default]
    No,
    /// `n`: on every node of the job.
    EachNode,
    /// `f`: on the first node only.
    FirstNode,
}

/// Why qmgr's words for a definition (`type=`, `flag=`, the name) are refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WordsError {
    /// Flags that contradict each other or the type, in OpenPBS's own words (`Erroneous to
    /// have flag ...`), which its server sends alone.
    #[error("{0}")]
    InconsistentFlags(String),
    /// Any other bad word or name, with our detail.
    #[error("{0}")]
    Invalid(String),
}

fn inconsistent(text: String) -> WordsError {
    WordsError::InconsistentFlags(text)
}

/// A definition's flags (OpenPBS `parse_resc_flags`, shown in `find_resc_flag_map` order
/// `h q n|f i|r m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResourceFlags {
    /// `h`: a host-level resource, requested in `select` chunks and matched against nodes.
    pub host: bool,
    /// `q`: consumable at server and queue level.
    pub queue: bool,
    pub consumed: Consumed,
    /// `i`: invisible to users.
    pub invisible: bool,
    /// `r`: users may see it but not request it.
    pub read_only: bool,
    /// `m`: sent to the mom.
    pub mom: bool,
}

impl ResourceFlags {
    /// Parses a flag word (`nh`, `hq`, ...) for resource `name`, with OpenPBS's texts for
    /// inconsistent combinations (`verify_resc_type_and_flags`, checked when `kind` is known).
    pub fn parse(word: &str, name: &str, kind: ResourceType) -> Result<ResourceFlags, WordsError> {
        let mut flags = ResourceFlags::default();
        let (mut each, mut first) = (false, false);
        for letter in word.chars() {
            match letter {
                'h' => flags.host = true,
                'q' => flags.queue = true,
                'n' => each = true,
                'f' => first = true,
                'i' => flags.invisible = true,
                'r' => flags.read_only = true,
                'm' => flags.mom = true,
                _ => return Err(WordsError::Invalid(format!("flag '{letter}' is not one of h, q, n, f, i, r, m"))),
            }
        }
        if flags.invisible && flags.read_only {
            return Err(inconsistent(format!("Erroneous to have flag 'i' and 'r' on resource \"{name}\".")));
        }
        if (each || first) && !flags.host {
            let letter = if each { 'n' } else { 'f' };
            return Err(inconsistent(format!("Erroneous to have flag '{letter}' without 'h' on resource \"{name}\".")));
        }
        if each && first {
            return Err(inconsistent(format!("Erroneous to have flag 'n' and 'f' on resource \"{name}\".")));
        }
        if !kind.is_numeric() && (each || first || flags.queue) {
            return Err(inconsistent(format!(
                "Erroneous to have flag 'n', 'f', or 'q' on resource \"{name}\" which is type string, \
                 string_array, or boolean."
            )));
        }
        flags.consumed = match (each, first) {
            (true, _) => Consumed::EachNode,
            (_, true) => Consumed::FirstNode,
            _ => Consumed::No,
        };
        Ok(flags)
    }

    /// The flag word as qmgr prints it (empty when no flag is set).
    pub fn word(&self) -> String {
        let mut word = String::new();
        let letters = [
            (self.host, 'h'),
            (self.queue, 'q'),
            (self.consumed == Consumed::EachNode, 'n'),
            (self.consumed == Consumed::FirstNode, 'f'),
            (self.invisible, 'i'),
            (self.read_only, 'r'),
            (self.mom, 'm'),
        ];
        word.extend(letters.iter().filter(|(set, _)| *set).map(|(_, letter)| letter));
        word
    }
}

/// One site resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDef {
    pub name: String,
    pub kind: ResourceType,
    pub flags: ResourceFlags,
}

impl ResourceDef {
    /// A definition from qmgr's words (`create resource NAME type=WORD, flag=WORD`; the type
    /// defaults to `string` as in OpenPBS), checked as `create resource` checks it.
    pub fn from_words(name: &str, kind: Option<&str>, flags: Option<&str>) -> Result<ResourceDef, WordsError> {
        check_name(name).map_err(WordsError::Invalid)?;
        let kind = match kind {
            None => ResourceType::String,
            Some(word) => ResourceType::parse(word).ok_or_else(|| {
                WordsError::Invalid(format!(
                    "type '{word}' is not one of string, long, size, boolean, float, string_array"
                ))
            })?,
        };
        let flags = ResourceFlags::parse(flags.unwrap_or(""), name, kind)?;
        Ok(ResourceDef { name: name.to_string(), kind, flags })
    }
}

/// Checks a new resource's name: OpenPBS's `verify_resc_name` (a letter, then letters, digits,
/// `_` or `-`), at most [`MAX_RESOURCE_NAME`] bytes, not a built-in.
pub fn check_name(name: &str) -> Result<(), String> {
    let grammar = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if !grammar {
        return Err(format!("resource name {name:?}: a letter, then letters, digits, _ or -"));
    }
    if name.len() > MAX_RESOURCE_NAME {
        return Err(format!("resource name is longer than {MAX_RESOURCE_NAME} characters"));
    }
    Ok(())
}

impl ResourceDef {
    /// Whether the resource is requested per chunk and matched against nodes without being
    /// counted (host-level string, boolean, string_array, or a numeric one without `n`/`f`).
    pub fn is_host_match(&self) -> bool {
        self.flags.host && self.flags.consumed == Consumed::No
    }

    /// Checks a value of this resource and returns its shown form: booleans `True`/`False`,
    /// sizes normalised (`8GB` -> `8gb`), numbers as given, strings as given.
    pub fn normalize(&self, value: &str) -> Result<String, String> {
        if value.len() > MAX_SITE_VALUE {
            return Err(format!("value of {} is longer than {MAX_SITE_VALUE} bytes", self.name));
        }
        if value.chars().any(char::is_control) {
            return Err(format!("value of {} has a control character", self.name));
        }
        match self.kind {
            ResourceType::Boolean => parse_bool(value)
                .map(|on| if on { "True" } else { "False" }.to_string())
                .ok_or_else(|| format!("'{value}' is not a boolean (True or False)")),
            ResourceType::Long => value
                .parse::<i64>()
                .map(|number| number.to_string())
                .map_err(|_| format!("'{value}' is not an integer")),
            ResourceType::Float => match value.parse::<f64>() {
                Ok(number) if number.is_finite() && !value.contains(['e', 'E', 'n', 'N', 'i', 'I']) => {
                    Ok(value.to_string())
                }
                _ => Err(format!("'{value}' is not a number")),
            },
            ResourceType::Size => Size::parse(value).map(|size| size.to_string()),
            ResourceType::String if value.is_empty() => Err("an empty string".to_string()),
            ResourceType::String => Ok(value.to_string()),
            ResourceType::StringArray => {
                let items: Vec<&str> = value.split(',').map(str::trim).collect();
                if items.iter().any(|item| item.is_empty()) {
                    return Err(format!("'{value}' has an empty item"));
                }
                Ok(items.join(","))
            }
        }
    }

    /// What a chunk asking for a shown value of a host-level matched resource requires of a
    /// node, as property words: a true boolean its name (as TORQUE's properties and `gpu=True`
    /// are), `False` `!name` (the node must not have it true); a string `name=value`; each item
    /// of a string_array `name=item`; a number at least that much, `name>=AMOUNT` (OpenPBS
    /// compares numbers by amount), or `name=value` for a negative one.
    pub fn match_keys(&self, shown: &str) -> Vec<String> {
        match self.kind {
            ResourceType::Boolean if shown == "True" => vec![self.name.clone()],
            ResourceType::Boolean => vec![format!("!{}", self.name)],
            ResourceType::StringArray => shown.split(',').map(|item| format!("{}={item}", self.name)).collect(),
            _ if self.kind.is_numeric() && self.amount(shown).is_some() => {
                vec![format!("{}>={}", self.name, self.amount(shown).unwrap_or(0))]
            }
            _ => vec![format!("{}={shown}", self.name)],
        }
    }

    /// The property words a node with this value has (what [`ResourceDef::match_keys`] of a
    /// chunk is checked against): a false boolean none; a number both `name=value` and
    /// `name:AMOUNT`, which `name>=N` matches when AMOUNT is at least N.
    pub fn node_words(&self, shown: &str) -> Vec<String> {
        match self.kind {
            ResourceType::Boolean if shown != "True" => Vec::new(),
            _ if self.kind.is_numeric() => {
                let mut words = vec![format!("{}={shown}", self.name)];
                words.extend(self.amount(shown).map(|amount| format!("{}:{amount}", self.name)));
                words
            }
            _ => self.match_keys(shown),
        }
    }

    /// The amount a normalised numeric value stands for, in the unit the scheduler counts
    /// (bytes for sizes, thousandths for floats); `None` for negative or non-numeric values.
    pub fn amount(&self, shown: &str) -> Option<u64> {
        match self.kind {
            ResourceType::Long => shown.parse::<u64>().ok(),
            ResourceType::Size => Size::parse(shown).ok()?.checked_bytes(),
            ResourceType::Float => {
                let number = shown.parse::<f64>().ok()?;
                (0.0..1e15).contains(&number).then(|| (number * 1000.0).round() as u64)
            }
            _ => None,
        }
    }
}

impl ResourceDef {
    /// An amount in counted units shown as OpenPBS shows a sum of this type (a node's
    /// `resources_assigned`): sizes in kb as `mem` is (`b` when not whole kb), floats from
    /// thousandths without trailing zeros, longs as they are.
    pub fn show_amount(&self, amount: u64) -> String {
        match self.kind {
            ResourceType::Size if amount.is_multiple_of(1024) => format!("{}kb", amount / 1024),
            ResourceType::Size => format!("{amount}b"),
            ResourceType::Float if amount.is_multiple_of(1000) => (amount / 1000).to_string(),
            ResourceType::Float => {
                let text = format!("{}.{:03}", amount / 1000, amount % 1000);
                text.trim_end_matches('0').to_string()
            }
            _ => amount.to_string(),
        }
    }
}

/// A chunk requirement word as a select item: `gpu` -> `gpu=True`, `!gpu` -> `gpu=False`,
/// `gpu_type=a100` as it is.
pub fn chunk_item(property: &str) -> String {
    match property.strip_prefix('!') {
        Some(name) => format!("{name}=False"),
        None if property.contains(">=") => property.replacen(">=", "=", 1),
        None if property.contains('=') => property.to_string(),
        None => format!("{property}=True"),
    }
}

/// OpenPBS's boolean words (`attr_fn_b.c`): true, t, y, 1 / false, f, n, 0, any case.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "t" | "y" | "1" => Some(true),
        "false" | "f" | "n" | "0" => Some(false),
        _ => None,
    }
}

/// The site resources a server defined, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SiteResources {
    defs: BTreeMap<String, ResourceDef>,
}

/// Why a definition cannot be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefineError {
    #[error("{0}")]
    BadName(String),
    #[error("resource {0} is already defined")]
    Exists(String),
    #[error("the server already holds {MAX_SITE_RESOURCES} resource definitions")]
    Full,
}

impl SiteResources {
    /// The definition of `name`, if the site defined it.
    pub fn get(&self, name: &str) -> Option<&ResourceDef> {
        self.defs.get(name)
    }

    /// Adds a definition (name checked, not a built-in, not defined yet, within the bound).
    pub fn define(&mut self, def: ResourceDef) -> Result<(), DefineError> {
        check_name(&def.name).map_err(DefineError::BadName)?;
        if BUILTIN.contains(&def.name.as_str()) || self.defs.contains_key(&def.name) {
            return Err(DefineError::Exists(def.name));
        }
        if self.defs.len() >= MAX_SITE_RESOURCES {
            return Err(DefineError::Full);
        }
        self.defs.insert(def.name.clone(), def);
        Ok(())
    }

    /// Replaces a definition that exists (`set resource NAME type=..`).
    pub fn replace(&mut self, def: ResourceDef) {
        if let Some(slot) = self.defs.get_mut(&def.name) {
            *slot = def;
        }
    }

    /// Forgets `name`; the definition if there was one.
    pub fn remove(&mut self, name: &str) -> Option<ResourceDef> {
        self.defs.remove(name)
    }

    /// All definitions in name order.
    pub fn iter(&self) -> impl Iterator<Item = &ResourceDef> {
        self.defs.values()
    }

    pub fn len(&self) -> usize {
        self.defs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }
}

#[cfg(test)]
mod tests;
