//! The text form of the node list kept under the `meta` key `nodes`: one line per node,
//! `name|np|mem_bytes|ngpus|prop1,prop2|offline|comment` (`offline` is `0` or `1`; the comment
//! is last so it may hold `|`; lines of the older five-field form load as online, no comment).
//! Mapped by hand, refusing garbage with an error.

use super::StoredNode;

/// The `meta` key holding the node list.
pub(super) const NODES_KEY: &str = "nodes";

/// Encodes the list; names and properties with `|`, `,` or line breaks are refused.
pub(super) fn encode(nodes: &[StoredNode]) -> Result<String, String> {
    let bad = |text: &str| text.is_empty() || text.contains(['|', ',', '\n', '\r']);
    let mut lines = Vec::with_capacity(nodes.len());
    for node in nodes {
        if bad(&node.name) || node.properties.iter().any(|property| bad(property)) {
            return Err(format!("node {:?} or one of its properties cannot be stored", node.name));
        }
        let comment = node.comment.as_deref().unwrap_or("");
        if comment.contains(['\n', '\r']) {
            return Err(format!("the comment of node {:?} has a line break", node.name));
        }
        lines.push(format!(
            "{}|{}|{}|{}|{}|{}|{}",
            node.name,
            node.np,
            node.mem_bytes,
            node.ngpus,
            node.properties.join(","),
            u8::from(node.offline),
            comment
        ));
    }
    Ok(lines.join("\n"))
}

/// Decodes the list; any malformed line is an error naming it.
pub(super) fn decode(text: &str) -> Result<Vec<StoredNode>, String> {
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.splitn(7, '|').collect();
            let (name, np, mem, ngpus, properties, offline, comment) = match fields[..] {
                [name, np, mem, ngpus, properties] => (name, np, mem, ngpus, properties, "0", ""),
                [name, np, mem, ngpus, properties, offline, comment] => {
                    (name, np, mem, ngpus, properties, offline, comment)
                }
                _ => return Err(format!("malformed node line {line:?}")),
            };
            let offline = match offline {
                "0" => false,
                "1" => true,
                other => return Err(format!("bad offline flag {other:?} in {line:?}")),
            };
            let number = |field: &str| field.parse::<u64>().map_err(|_| format!("bad number {field:?} in {line:?}"));
            Ok(StoredNode {
                name: name.to_string(),
                np: u32::try_from(number(np)?).map_err(|_| format!("np out of range in {line:?}"))?,
                mem_bytes: number(mem)?,
                ngpus: u32::try_from(number(ngpus)?).map_err(|_| format!("ngpus out of range in {line:?}"))?,
                properties: properties.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect(),
                offline,
                comment: Some(comment.to_string()).filter(|comment| !comment.is_empty()),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(name: &str) -> StoredNode {
        StoredNode {
            name: name.into(),
            np: 1,
            mem_bytes: 0,
            ngpus: 0,
            properties: vec![],
            offline: false,
            comment: None,
        }
    }

    #[test]
    fn round_trip_and_garbage() {
        let nodes = vec![
            StoredNode {
                name: "node1".into(),
                np: 4,
                mem_bytes: 1 << 33,
                ngpus: 2,
                properties: vec!["gpu".into(), "fast".into()],
                offline: true,
                comment: Some("fan | broken".into()),
            },
            plain("node2"),
        ];
        assert_eq!(decode(&encode(&nodes).unwrap()).unwrap(), nodes);
        assert!(encode(&[plain("a|b")]).is_err());
        let multi_line = StoredNode { comment: Some("a\nb".into()), ..plain("n") };
        assert!(encode(&[multi_line]).is_err());
        assert_eq!(decode("node2|1|0|0|").unwrap(), vec![plain("node2")], "the five-field form still loads");
        for garbage in ["node1|4", "node1|x|0|0|", "node1|4|0|0|a|b", "n|99999999999|0|0|", "n|1|0|0||2|"] {
            assert!(decode(garbage).is_err(), "{garbage:?}");
        }
    }
}
