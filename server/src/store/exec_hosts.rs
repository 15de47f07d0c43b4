//! The text form of a job's allocation (`Job::exec`) in the `jobs.exec_hosts` column:
//! `node|slots|gpus|mem_bytes|mpiprocs[|mps]` per share, shares joined by `;`, slot and GPU
//! indices joined by `,`; e.g. `n1|0,1|0|1073741824|2;n2|0,1||0|2`; an MPS share of 25 % of
//! GPU 0 is `n1|3|0|0|1|25` (the sixth field only then). Consumable site resources held on the
//! node make a seventh field, `name=amount` joined by `,` (the sixth then empty without MPS):
//! `n1|0|||1||scratch=64424509440`. Rows written before it existed (5 or 6 fields) still load.
//! An empty string is no allocation.
//!
//! Pure text in, text out; no diesel. Invariant: `decode(encode(x)) == x` for every allocation
//! `encode` accepts, and `decode` refuses anything else with an error instead of panicking.

use crate::state::NodeShare;
use job::resources::site::{check_name, MAX_SITE_RESOURCES};

/// Separates the shares of one allocation.
const SHARE_SEPARATOR: char = ';';
/// Separates the five fields of one share.
const FIELD_SEPARATOR: char = '|';
/// Separates the indices of a slot or GPU list, and the amounts of the seventh field.
const INDEX_SEPARATOR: char = ',';
/// Separates a consumable's name from its amount.
const AMOUNT_SEPARATOR: char = '=';

/// Why an allocation cannot be written, or a stored text cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExecHostsError(pub String);

/// Writes `shares` in the column format. Refuses node names the format cannot carry (empty,
/// or containing whitespace or one of `;|,`), so nothing is stored that `decode` would reject.
pub fn encode(shares: &[NodeShare]) -> Result<String, ExecHostsError> {
    let mut parts = Vec::with_capacity(shares.len());
    for share in shares {
        check_node_name(&share.node)?;
        parts.push(format!(
            "{node}{sep}{slots}{sep}{gpus}{sep}{mem}{sep}{mpiprocs}",
            node = share.node,
            sep = FIELD_SEPARATOR,
            slots = join_indices(&share.slots),
            gpus = join_indices(&share.gpus),
            mem = share.mem_bytes,
            mpiprocs = share.mpiprocs,
        ));
        let part = parts.last_mut().expect("just pushed");
        if let Some(percent) = share.mps {
            part.push_str(&format!("{FIELD_SEPARATOR}{percent}"));
        }
        if !share.amounts.is_empty() {
            if share.mps.is_none() {
                part.push(FIELD_SEPARATOR);
            }
            part.push(FIELD_SEPARATOR);
            part.push_str(&encode_amounts(&share.amounts)?);
        }
    }
    Ok(parts.join(&SHARE_SEPARATOR.to_string()))
}

/// Reads the column format back. Every field must be present and well formed; anything else
/// (a missing or extra field, a non-number, an empty share, a bad node name) is an error.
pub fn decode(text: &str) -> Result<Vec<NodeShare>, ExecHostsError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(SHARE_SEPARATOR)
        .enumerate()
        .map(|(index, share)| {
            decode_share(share).map_err(|err| ExecHostsError(format!("share {} {share:?}: {}", index + 1, err.0)))
        })
        .collect()
}

/// Reads one `node|slots|gpus|mem_bytes|mpiprocs` share.
fn decode_share(text: &str) -> Result<NodeShare, ExecHostsError> {
    let fields: Vec<&str> = text.split(FIELD_SEPARATOR).collect();
    let (node, slots, gpus, mem, mpiprocs, mps, amounts) = match fields.as_slice() {
        [node, slots, gpus, mem, mpiprocs] => (node, slots, gpus, mem, mpiprocs, None, None),
        [node, slots, gpus, mem, mpiprocs, mps] => (node, slots, gpus, mem, mpiprocs, Some(*mps), None),
        [node, slots, gpus, mem, mpiprocs, mps, amounts] => {
            (node, slots, gpus, mem, mpiprocs, Some(*mps).filter(|mps| !mps.is_empty()), Some(*amounts))
        }
        _ => {
            return Err(ExecHostsError(format!(
                "expected 5 to 7 fields separated by '{FIELD_SEPARATOR}', found {}",
                fields.len()
            )))
        }
    };
    let mps = mps.map(|text| parse_number::<u8>(text, "mps")).transpose()?;
    if mps.is_some_and(|percent| percent == 0 || percent > 100) {
        return Err(ExecHostsError(format!("mps: {:?} is not a percentage from 1 to 100", fields[5])));
    }
    check_node_name(node)?;
    Ok(NodeShare {
        node: (*node).into(),
        slots: split_indices(slots, "slots")?,
        gpus: split_indices(gpus, "gpus")?,
        mem_bytes: parse_number(mem, "mem_bytes")?,
        mpiprocs: parse_number(mpiprocs, "mpiprocs")?,
        mps,
        amounts: amounts.map(decode_amounts).transpose()?.unwrap_or_default(),
    })
}

/// `[("scratch", 1024)]` -> `scratch=1024`. Refuses what `decode_amounts` would: a name that
/// is not a resource name, a name twice, more than there can be definitions.
fn encode_amounts(amounts: &[(String, u64)]) -> Result<String, ExecHostsError> {
    let texts: Vec<String> = amounts.iter().map(|(name, amount)| format!("{name}{AMOUNT_SEPARATOR}{amount}")).collect();
    let text = texts.join(&INDEX_SEPARATOR.to_string());
    decode_amounts(&text)?;
    Ok(text)
}

/// `scratch=1024,lic=2` -> the amounts; names as `create resource` takes them, each once, at
/// most `MAX_SITE_RESOURCES`; amounts plain decimal `u64`.
fn decode_amounts(text: &str) -> Result<Vec<(String, u64)>, ExecHostsError> {
    let mut amounts: Vec<(String, u64)> = Vec::new();
    for item in text.split(INDEX_SEPARATOR) {
        let Some((name, amount)) = item.split_once(AMOUNT_SEPARATOR) else {
            return Err(ExecHostsError(format!("amounts: {item:?} is not name=amount")));
        };
        check_name(name).map_err(|why| ExecHostsError(format!("amounts: {why}")))?;
        if amounts.iter().any(|(known, _)| known == name) {
            return Err(ExecHostsError(format!("amounts: {name} given twice")));
        }
        if amounts.len() == MAX_SITE_RESOURCES {
            return Err(ExecHostsError(format!("amounts: more than {MAX_SITE_RESOURCES}")));
        }
        amounts.push((name.to_string(), parse_number(amount, "amounts")?));
    }
    Ok(amounts)
}

/// Node names are host names: non-empty, no whitespace, none of the separators.
fn check_node_name(node: &str) -> Result<(), ExecHostsError> {
    let is_bad = |c: char| {
        c.is_whitespace() || c.is_control() || [SHARE_SEPARATOR, FIELD_SEPARATOR, INDEX_SEPARATOR].contains(&c)
    };
    if node.is_empty() {
        return Err(ExecHostsError("empty node name".to_string()));
    }
    if node.contains(is_bad) {
        return Err(ExecHostsError(format!("node name {node:?} contains a separator or blank")));
    }
    Ok(())
}

/// `[0, 1]` -> `0,1`; `[]` -> ``.
fn join_indices(indices: &[u32]) -> String {
    let texts: Vec<String> = indices.iter().map(u32::to_string).collect();
    texts.join(&INDEX_SEPARATOR.to_string())
}

/// `0,1` -> `[0, 1]`; `` -> `[]`.
fn split_indices(text: &str, field: &str) -> Result<Vec<u32>, ExecHostsError> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    text.split(INDEX_SEPARATOR).map(|index| parse_number(index, field)).collect()
}

/// A plain decimal number: digits only (no sign, no blanks), within the type's range.
fn parse_number<T: std::str::FromStr>(text: &str, field: &str) -> Result<T, ExecHostsError> {
    let bad = || ExecHostsError(format!("{field}: {text:?} is not a number"));
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    text.parse::<T>().map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(node: &str, slots: &[u32], gpus: &[u32], mem_bytes: u64, mpiprocs: u32) -> NodeShare {
        NodeShare {
            node: node.into(),
            slots: slots.to_vec(),
            gpus: gpus.to_vec(),
            mem_bytes,
            mpiprocs,
            mps: None,
            amounts: Vec::new(),
        }
    }

    #[test]
    fn consumable_amounts_are_a_seventh_field() {
        let held = vec![("scratch".to_string(), 60u64 << 30), ("lic-2".to_string(), u64::MAX)];
        let plain = NodeShare { amounts: held.clone(), ..share("n1", &[0], &[], 0, 1) };
        let text = format!("n1|0||0|1||scratch={},lic-2={}", 60u64 << 30, u64::MAX);
        assert_eq!(encode(std::slice::from_ref(&plain)).unwrap(), text);
        assert_eq!(decode(&text).unwrap(), [plain]);
        let shared = NodeShare { amounts: held, mps: Some(25), ..share("n1", &[0], &[0], 0, 1) };
        let text = encode(std::slice::from_ref(&shared)).unwrap();
        assert!(text.starts_with("n1|0|0|0|1|25|scratch="), "{text}");
        assert_eq!(decode(&text).unwrap(), [shared]);
        let bad = ["n1|0||0|1||", "n1|0||0|1||scratch", "n1|0||0|1||1x=2", "n1|0||0|1||a=1,a=2", "n1|0||0|1||a=-1"];
        for text in bad {
            assert!(decode(text).is_err(), "{text} was accepted");
        }
        let many: String = (0..=MAX_SITE_RESOURCES).map(|n| format!("r{n}=1")).collect::<Vec<_>>().join(",");
        assert!(decode(&format!("n1|0||0|1||{many}")).is_err(), "more amounts than definitions");
        let evil = NodeShare { amounts: vec![("a|b".into(), 1)], ..share("n1", &[0], &[], 0, 1) };
        assert!(encode(&[evil]).is_err(), "a name that would break the format is not written");
    }

    #[test]
    fn empty_allocation_is_empty_text() {
        assert_eq!(encode(&[]).unwrap(), "");
        assert_eq!(decode("").unwrap(), Vec::new());
    }

    #[test]
    fn round_trip_keeps_every_field() {
        let shares = vec![
            share("n1", &[0, 1], &[0], 1 << 30, 2),
            share("n2.example", &[], &[], 0, 0),
            share("n3", &[7], &[1, 3], u64::MAX, u32::MAX),
        ];
        let text = encode(&shares).unwrap();
        let expected = format!("n1|0,1|0|1073741824|2;n2.example|||0|0;n3|7|1,3|{}|{}", u64::MAX, u32::MAX);
        assert_eq!(text, expected);
        assert_eq!(decode(&text).unwrap(), shares);
        let mps = vec![NodeShare { mps: Some(25), ..share("n1", &[3], &[0], 0, 1) }];
        assert_eq!(encode(&mps).unwrap(), "n1|3|0|0|1|25");
        assert_eq!(decode("n1|3|0|0|1|25").unwrap(), mps);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let bad = [
            "garbage",
            "n1|0|0|1",
            "n1|0|0|1|2|3|4",
            "n1|0|0|1|2|0",
            "n1|0|0|1|2|101",
            "n1|0|0|1|2|",
            "n1|0,|0|1|2",
            "n1|x|0|1|2",
            "n1|0|0|-1|2",
            "n1|0|0| 1|2",
            "n1|0|0|1|99999999999",
            "n1|0|0|1|2;",
            ";n1|0|0|1|2",
            "|0|0|1|2",
            "n 1|0|0|1|2",
            "n1|0|0|99999999999999999999|2",
        ];
        for text in bad {
            assert!(decode(text).is_err(), "{text:?} was accepted");
        }
    }

    #[test]
    fn encode_refuses_names_the_format_cannot_carry() {
        for node in ["", "a|b", "a;b", "a,b", "a b"] {
            assert!(encode(&[share(node, &[0], &[], 0, 1)]).is_err(), "{node:?} was accepted");
        }
    }
}
