//! TORQUE node specs (`nodes=2:ppn=2:gpus=1+node3`), pbs-reference section 3.2. Each `+` part
//! becomes one [`Chunk`]; a leading word that is not a count is a property, which the
//! scheduler also matches against node names (so `nodes=node01` selects that host).

use super::{check_spec_count, parse_u32, pieces, Chunk, ResourceError, Span, MPS_DEFAULT_PERCENT};

/// Words accepted (and ignored) after `gpus=` in a part.
const GPU_MODES: [&str; 6] = ["exclusive_thread", "exclusive", "exclusive_process", "default", "shared", "reseterr"];

/// A parsed `nodes=` value.
#[derive(Debug)]
pub(super) struct NodeSpec {
    pub chunks: Vec<Chunk>,
    /// OpenPBS's `#excl` modifier was given.
    pub exclusive: bool,
}

/// Parses a `nodes=` value located by `span`.
pub(super) fn parse_nodes(span: Span, value: &str) -> Result<NodeSpec, ResourceError> {
    let (spec, exclusive) = match value.find('#') {
        Some(at) => (&value[..at], parse_modifiers(span, &value[at + 1..], at + 1)?),
        None => (value, false),
    };
    check_spec_count(span, "nodes", spec)?;
    let chunks = pieces(spec, '+').map(|(offset, part)| parse_part(span, part, offset)).collect::<Result<_, _>>()?;
    Ok(NodeSpec { chunks, exclusive })
}

/// OpenPBS global modifiers after `#` (`#excl`, `#shared`), separated by `#`.
fn parse_modifiers(span: Span, text: &str, base: usize) -> Result<bool, ResourceError> {
    let mut exclusive = false;
    for (offset, word) in pieces(text, '#') {
        match word {
            "excl" => exclusive = true,
            "shared" => {}
            _ => {
                let detail = format!("node spec modifier '#{word}' is not recognised (expected #excl or #shared)");
                return Err(span.bad_value("nodes", detail, base + offset, word));
            }
        }
    }
    Ok(exclusive)
}

/// What the items of one part have set so far.
#[derive(Default)]
struct Part {
    ppn: Option<u32>,
    /// OpenPBS's `cpp=`/`ncpus=`: cpus per process (`ncpus = ppn * cpp`).
    cpp: Option<u32>,
    gpus: Option<u32>,
    mics: Option<u32>,
    mps: Option<u32>,
    properties: Vec<String>,
}

/// One `+` part starting at byte `base` of the value: `(count | word) (':' item)*`.
fn parse_part(span: Span, part: &str, base: usize) -> Result<Chunk, ResourceError> {
    if part.is_empty() {
        return Err(span.bad_value("nodes", "empty part in node spec", base, part));
    }
    let mut items = pieces(part, ':');
    let (_, first) = items.next().unwrap_or((0, ""));
    let mut state = Part::default();
    let count = if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
        parse_u32(first).filter(|count| *count > 0).ok_or_else(|| {
            span.bad_value("nodes", format!("node count '{first}' is not a positive integer"), base, first)
        })?
    } else {
        add_property(span, &mut state, first, base)?;
        1
    };
    for (offset, item) in items {
        parse_item(span, &mut state, item, base + offset)?;
    }
    let ppn = state.ppn.unwrap_or(1);
    let ncpus = ppn.checked_mul(state.cpp.unwrap_or(1)).ok_or_else(|| {
        span.bad_value("nodes", format!("ppn={ppn} times cpp={} is too many cpus", state.cpp.unwrap_or(1)), base, part)
    })?;
    Ok(Chunk {
        count,
        ncpus,
        ngpus: state.gpus.unwrap_or(0),
        mem: None,
        mpiprocs: ppn,
        host: None,
        properties: state.properties,
        mps: state.mps.map(|percent| percent as u8),
        amounts: Vec::new(),
    })
}

/// One `:` item starting at byte `base` of the value.
fn parse_item(span: Span, state: &mut Part, item: &str, base: usize) -> Result<(), ResourceError> {
    let Some((key, number)) = item.split_once('=') else {
        if state.gpus.is_some() && GPU_MODES.contains(&item) {
            return Ok(());
        }
        if item == "mps" {
            return set_mps(span, state, item, base, u32::from(MPS_DEFAULT_PERCENT));
        }
        return add_property(span, state, item, base);
    };
    let value_at = base + key.len() + 1;
    let (slot, minimum) = match key {
        "ppn" => (&mut state.ppn, 1),
        // OpenPBS takes both words for cpus per process (`proplist`, src/server/node_manager.c:5479-5486).
        "cpp" | "ncpus" => (&mut state.cpp, 0),
        "gpus" => (&mut state.gpus, 0),
        "mics" => (&mut state.mics, 0),
        "mps" => {
            let Some(percent) = parse_u32(number).filter(|n| (1..=100).contains(n)) else {
                let detail = format!("mps value '{number}' is not a percentage from 1 to 100");
                return Err(span.bad_value("nodes", detail, value_at, number));
            };
            return set_mps(span, state, item, base, percent);
        }
        _ => {
            let detail = format!(
                "node spec item '{item}' is not recognised (expected ppn=, cpp=, ncpus=, gpus=, mics=, mps, mps= or a property)"
            );
            return Err(span.bad_value("nodes", detail, base, item));
        }
    };
    if slot.is_some() {
        return Err(span.bad_value("nodes", format!("{key} given twice in one node spec part"), base, item));
    }
    let Some(parsed) = parse_u32(number).filter(|n| *n >= minimum) else {
        let expected = if minimum == 0 { "a non-negative integer" } else { "a positive integer" };
        return Err(span.bad_value("nodes", format!("{key} value '{number}' is not {expected}"), value_at, number));
    };
    *slot = Some(parsed);
    Ok(())
}

/// Records an MPS share (`mps` or `mps=P`), once per part.
fn set_mps(span: Span, state: &mut Part, item: &str, base: usize, percent: u32) -> Result<(), ResourceError> {
    if state.mps.is_some() {
        return Err(span.bad_value("nodes", "mps given twice in one node spec part".to_string(), base, item));
    }
    state.mps = Some(percent);
    Ok(())
}

/// A property or node name: starts with a letter or digit; letters, digits, `_ - .` follow.
fn add_property(span: Span, state: &mut Part, word: &str, base: usize) -> Result<(), ResourceError> {
    let valid = word.starts_with(|c: char| c.is_ascii_alphanumeric())
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !valid {
        let detail = if word.is_empty() {
            "empty item in node spec".to_string()
        } else {
            format!("'{word}' is not a node count, node name or property")
        };
        return Err(span.bad_value("nodes", detail, base, word));
    }
    if !state.properties.iter().any(|known| known == word) {
        state.properties.push(word.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: &str) -> Result<NodeSpec, ResourceError> {
        let input = format!("nodes={value}");
        parse_nodes(Span { input: &input, base: 6 }, value)
    }

    /// `count/ncpus/ngpus/mpiprocs/properties` per chunk, `;` separated.
    fn summary(spec: &NodeSpec) -> String {
        let chunks: Vec<String> = spec
            .chunks
            .iter()
            .map(|c| format!("{}/{}/{}/{}/{}", c.count, c.ncpus, c.ngpus, c.mpiprocs, c.properties.join(",")))
            .collect();
        format!("{}{}", chunks.join(";"), if spec.exclusive { " excl" } else { "" })
    }

    #[test]
    fn parses_node_specs() {
        let cases = [
            ("1", "1/1/0/1/"),
            ("2:ppn=2:gpus=1", "2/2/1/2/"),
            ("node01:ppn=2+node02:ppn=2", "1/2/0/2/node01;1/2/0/2/node02"),
            ("2:ppn=2+1:ppn=4", "2/2/0/2/;1/4/0/4/"),
            ("1:gpu", "1/1/0/1/gpu"),
            ("4:blue:ppn=2", "4/2/0/2/blue"),
            ("node3", "1/1/0/1/node3"),
            ("1:ppn=2:gpus=2:exclusive_process", "1/2/2/2/"),
            ("1:gpus=1:reseterr:exclusive_thread", "1/1/1/1/"),
            ("1:shared:gpus=1", "1/1/1/1/shared"),
            ("1:ppn=4:mics=2", "1/4/0/4/"),
            ("1:gpus=0", "1/1/0/1/"),
            ("1:gpu:gpu:blue", "1/1/0/1/gpu,blue"),
            ("n1.example.com:ppn=3", "1/3/0/3/n1.example.com"),
            ("2x:ppn=1", "1/1/0/1/2x"),
            ("2:ppn=2#excl", "2/2/0/2/ excl"),
            ("2:ppn=2#shared", "2/2/0/2/"),
            ("007", "7/1/0/1/"),
            ("1:ncpus=16", "1/16/0/1/"),
            ("2:ppn=4:cpp=2", "2/8/0/4/"),
            ("1:cpp=0", "1/0/0/1/"),
        ];
        for (value, expected) in cases {
            let spec = parse(value).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!(summary(&spec), expected, "{value}");
        }
    }

    #[test]
    fn errors_name_the_bad_value_and_its_column() {
        let cases = [
            ("2:ppn=x", 12, "x"),
            ("2:ppn=0", 12, "0"),
            ("2:ppn=-1", 12, "-1"),
            ("2:ppn=", 12, ""),
            ("0", 6, "0"),
            ("0:ppn=2", 6, "0"),
            ("-1", 6, "-1"),
            ("1:gpus=abc", 13, "abc"),
            ("1:gpus=-1", 13, "-1"),
            ("1:mics=x", 13, "x"),
            ("1:ppn=2:foo=bar", 14, "foo=bar"),
            ("1:cpp=2:ncpus=3", 14, "ncpus=3"),
            ("1:ppn=65536:cpp=65536", 6, "1:ppn=65536:cpp=65536"),
            ("1:cpp=x", 12, "x"),
            ("1:ppn=2:ppn=3", 14, "ppn=3"),
            ("", 6, ""),
            ("1+", 8, ""),
            ("+1", 6, ""),
            ("1++1", 8, ""),
            ("1::ppn=2", 8, ""),
            ("1:ppn=2:", 14, ""),
            ("ppn=2", 6, "ppn=2"),
            ("1:b@d", 8, "b@d"),
            ("1: ppn=2", 8, " ppn=2"),
            ("99999999999", 6, "99999999999"),
            ("2:ppn=99999999999", 12, "99999999999"),
            ("2#bogus", 8, "bogus"),
            ("1:é", 8, "é"),
        ];
        for (value, column, token) in cases {
            let err = parse(value).expect_err(value);
            assert_eq!((err.column, err.token.as_str()), (column, token), "{value}: {err}");
            assert_eq!(err.input, format!("nodes={value}"));
        }
    }

    #[test]
    fn error_messages() {
        let inputs = [
            "2:ppn=x",
            "2:ppn=0",
            "2:ppn=-1",
            "0",
            "1:gpus=abc",
            "1:ppn=2:foo=bar",
            "1:ppn=2:ppn=3",
            "1++1",
            "2#bogus",
        ];
        let text: String = inputs
            .iter()
            .map(|value| {
                let err = parse(value).unwrap_err();
                format!("{}\n{}\n\n", err, err.caret_display())
            })
            .collect();
        insta::assert_snapshot!(text);
    }
}
