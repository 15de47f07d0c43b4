//! The text form of the node list kept under the `meta` key `nodes`: one line per node,
//! `name|np|mem_bytes|ngpus|prop1,prop2`. Mapped by hand, refusing garbage with an error.

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
        lines.push(format!(
            "{}|{}|{}|{}|{}",
            node.name,
            node.np,
            node.mem_bytes,
            node.ngpus,
            node.properties.join(",")
        ));
    }
    Ok(lines.join("\n"))
}

/// Decodes the list; any malformed line is an error naming it.
pub(super) fn decode(text: &str) -> Result<Vec<StoredNode>, String> {
    text.lines()
        .filter(|line| !line.is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('|').collect();
            let [name, np, mem, ngpus, properties] = fields[..] else {
                return Err(format!("malformed node line {line:?}"));
            };
            let number = |field: &str| field.parse::<u64>().map_err(|_| format!("bad number {field:?} in {line:?}"));
            Ok(StoredNode {
                name: name.to_string(),
                np: u32::try_from(number(np)?).map_err(|_| format!("np out of range in {line:?}"))?,
                mem_bytes: number(mem)?,
                ngpus: u32::try_from(number(ngpus)?).map_err(|_| format!("ngpus out of range in {line:?}"))?,
                properties: properties.split(',').filter(|p| !p.is_empty()).map(str::to_string).collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_garbage() {
        let nodes = vec![
            StoredNode {
                name: "node1".into(),
                np: 4,
                mem_bytes: 1 << 33,
                ngpus: 2,
                properties: vec!["gpu".into(), "fast".into()],
            },
            StoredNode { name: "node2".into(), np: 1, mem_bytes: 0, ngpus: 0, properties: vec![] },
        ];
        assert_eq!(decode(&encode(&nodes).unwrap()).unwrap(), nodes);
        assert!(
            encode(&[StoredNode { name: "a|b".into(), np: 1, mem_bytes: 0, ngpus: 0, properties: vec![] }]).is_err()
        );
        for garbage in ["node1|4", "node1|x|0|0|", "node1|4|0|0|a|b", "n|99999999999|0|0|"] {
            assert!(decode(garbage).is_err(), "{garbage:?}");
        }
    }
}
