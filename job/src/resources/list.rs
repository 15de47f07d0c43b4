//! Splitting a `-l` argument (`name=value[,name=value...]`) into pairs, per pbs-reference
//! section 3.1. Only the list syntax is checked here; names and values are judged by
//! `request`. Errors point at the bad token with a 0-based column.

use super::{is_name, ResourceError};

/// Splits `name=value[,name=value...]` into pairs (values may be quoted to protect commas;
/// `nodes=2:ppn=2+1:ppn=4` keeps its `+`). Errors point at the bad token.
///
/// White space around names and values is trimmed; a value wrapped in `"..."` or `'...'` loses
/// its quotes and may contain commas and blanks. A name alone (`wd`) has an empty value.
/// Refused: an empty list or item (`a=1,,b=2`, trailing comma), an empty or malformed name, an empty unquoted value, an
/// unmatched quote and text after a closing quote.
pub fn parse_list(text: &str) -> Result<Vec<(String, String)>, ResourceError> {
    if text.trim().is_empty() {
        return Err(ResourceError::at("empty resource list", text, 0, text));
    }
    let mut pairs = Vec::new();
    let mut start = 0;
    loop {
        let (pair, next) = parse_item(text, start)?;
        pairs.push(pair);
        match next {
            Some(next) => start = next,
            None => return Ok(pairs),
        }
    }
}

/// Byte offset of the first non-blank character at or after `from`.
fn skip_blanks(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    from + rest.len() - rest.trim_start().len()
}

/// Parses the item starting at byte `start`; returns the pair and the byte offset after the
/// separating comma, if there is one.
fn parse_item(text: &str, start: usize) -> Result<((String, String), Option<usize>), ResourceError> {
    let begin = skip_blanks(text, start);
    let rest = &text[begin..];
    let item_end = begin + rest.find(',').unwrap_or(rest.len());
    if begin == item_end {
        return Err(ResourceError::at("empty item in resource list", text, begin, ""));
    }
    let Some(equals) = text[begin..item_end].find('=').map(|at| begin + at) else {
        return bare_name(text, begin, item_end);
    };
    let name = text[begin..equals].trim_end();
    if name.is_empty() {
        return Err(ResourceError::at("empty resource name", text, begin, "="));
    }
    if !is_name(name) {
        return Err(ResourceError::at(format!("invalid resource name '{name}'"), text, begin, name));
    }
    let (value, next) = parse_value(text, equals + 1, name)?;
    Ok(((name.to_string(), value), next))
}

/// An item without `=` (`-l wd`): the name with an empty value, as OpenPBS's qsub sends it
/// (`set_resources`, `src/lib/Libcmds/set_resource.c:136-137,174-182`); the server judges it.
fn bare_name(text: &str, begin: usize, end: usize) -> Result<((String, String), Option<usize>), ResourceError> {
    let name = text[begin..end].trim_end();
    if !is_name(name) {
        return Err(ResourceError::at(format!("invalid resource name '{name}'"), text, begin, name));
    }
    let next = (end < text.len()).then_some(end + 1);
    Ok(((name.to_string(), String::new()), next))
}

/// Parses the value starting at byte `start` (just after `=`) up to the next comma outside
/// quotes.
fn parse_value(text: &str, start: usize, name: &str) -> Result<(String, Option<usize>), ResourceError> {
    let begin = skip_blanks(text, start);
    let rest = &text[begin..];
    let quote = match rest.chars().next() {
        Some(quote @ ('"' | '\'')) => quote,
        _ => {
            let end = begin + rest.find(',').unwrap_or(rest.len());
            let value = text[begin..end].trim_end();
            if value.is_empty() {
                return Err(ResourceError::at(format!("empty value for '{name}'"), text, begin, ""));
            }
            let next = (end < text.len()).then_some(end + 1);
            return Ok((value.to_string(), next));
        }
    };
    let Some(close) = rest[1..].find(quote).map(|at| begin + 1 + at) else {
        return Err(ResourceError::at(format!("unmatched {quote} in value of '{name}'"), text, begin, rest));
    };
    let value = text[begin + 1..close].to_string();
    let after = skip_blanks(text, close + 1);
    match text[after..].chars().next() {
        None => Ok((value, None)),
        Some(',') => Ok((value, Some(after + 1))),
        Some(_) => {
            let tail = &text[after..];
            let token = &tail[..tail.find(',').unwrap_or(tail.len())];
            Err(ResourceError::at(format!("unexpected text after quoted value of '{name}'"), text, after, token))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceErrorKind;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn splits_lists() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("walltime=1:00:00", &[("walltime", "1:00:00")]),
            ("walltime=1:00:00,mem=1gb", &[("walltime", "1:00:00"), ("mem", "1gb")]),
            ("nodes=2:ppn=2+1:ppn=4", &[("nodes", "2:ppn=2+1:ppn=4")]),
            (" mem = 2gb , ncpus= 4 ", &[("mem", "2gb"), ("ncpus", "4")]),
            ("software=\"a,b\",mem=1gb", &[("software", "a,b"), ("mem", "1gb")]),
            ("software='x y, z' ,arch=linux", &[("software", "x y, z"), ("arch", "linux")]),
            ("software=\"it's\"", &[("software", "it's")]),
            ("software=''", &[("software", "")]),
            ("software=a=b", &[("software", "a=b")]),
            ("software=it's", &[("software", "it's")]),
            (
                "select=2:ncpus=2:mem=4gb,place=scatter:excl",
                &[("select", "2:ncpus=2:mem=4gb"), ("place", "scatter:excl")],
            ),
            ("mem=1gb,mem=2gb", &[("mem", "1gb"), ("mem", "2gb")]),
            ("my_res-1.x=é", &[("my_res-1.x", "é")]),
            ("wd", &[("wd", "")]),
            ("ncpus=48, wd ,mem=1gb", &[("ncpus", "48"), ("wd", ""), ("mem", "1gb")]),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_list(text), Ok(pairs(expected)), "{text}");
        }
    }

    #[test]
    fn empty_item_points_at_its_column() {
        let err = parse_list("walltime=1:00:00,,mem=1gb").unwrap_err();
        assert_eq!((err.column, err.token.as_str()), (17, ""));
        assert_eq!(err.input, "walltime=1:00:00,,mem=1gb");
        assert_eq!(err.caret_display(), "walltime=1:00:00,,mem=1gb\n                 ^");
    }

    #[test]
    fn errors_carry_column_and_token() {
        let cases = [
            ("", 0, ""),
            ("   ", 0, "   "),
            ("walltime=1:00:00,", 17, ""),
            (",mem=1gb", 0, ""),
            ("=5", 0, "="),
            ("mem=1gb, =5", 9, "="),
            ("mem=", 4, ""),
            ("mem=  ,ncpus=1", 6, ""),
            ("software=\"a,b", 9, "\"a,b"),
            ("mem=1gb,software='x", 17, "'x"),
            ("software=\"a\"b,mem=1", 12, "b"),
            ("wall time=1", 0, "wall time"),
            ("1mem=1", 0, "1mem"),
            ("é=1", 0, "é"),
            ("mem=1gb,é", 8, "é"),
        ];
        for (text, column, token) in cases {
            let err = parse_list(text).expect_err(text);
            assert_eq!((err.column, err.token.as_str()), (column, token), "{text}: {err}");
            assert_eq!(err.input, text);
            assert_eq!(err.kind, ResourceErrorKind::Syntax);
        }
    }

    #[test]
    fn error_messages() {
        let inputs = [
            "",
            "walltime=1:00:00,,mem=1gb",
            "walltime=1:00:00,",
            "=5",
            "mem=",
            "software=\"a,b",
            "software='a'b",
            "wall time=1",
        ];
        let text: String = inputs
            .iter()
            .map(|input| {
                let err = parse_list(input).unwrap_err();
                format!("{}\n{}\n\n", err, err.caret_display())
            })
            .collect();
        insta::assert_snapshot!(text);
    }
}
