//! A JSON value printed exactly as cJSON's `cJSON_Print` does, which is what OpenPBS's
//! `qstat -F json` emits (PBS reference section 6.5): TAB indentation, a TAB after each `:`,
//! `[a, b]` arrays on one line, numbers as C doubles.
//!
//! Owns: the value tree, cJSON's printer, and cJSON's rule for turning an attribute text into
//! a typed value ([`parse_value`]). Must not: know about jobs or attributes.
//!
//! We print by hand instead of through serde_json because the layout must match cJSON's
//! byte for byte and objects must keep the server's order (and, like cJSON, may repeat keys).

/// A JSON value as cJSON holds it: numbers are doubles, objects keep insertion order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The document as `cJSON_Print` formats it, without a trailing newline.
    pub fn print(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out
    }

    /// Writes the value; `depth` is cJSON's nesting depth at this value.
    fn write(&self, out: &mut String, depth: usize) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
            Json::Number(value) => out.push_str(&number_text(*value)),
            Json::String(text) => write_string(out, text),
            Json::Array(items) => {
                out.push('[');
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        out.push_str(", ");
                    }
                    item.write(out, depth + 1);
                }
                out.push(']');
            }
            Json::Object(entries) => {
                out.push_str("{\n");
                for (index, (key, value)) in entries.iter().enumerate() {
                    out.push_str(&"\t".repeat(depth + 1));
                    write_string(out, key);
                    out.push_str(":\t");
                    value.write(out, depth + 1);
                    if index + 1 < entries.len() {
                        out.push(',');
                    }
                    out.push('\n');
                }
                out.push_str(&"\t".repeat(depth));
                out.push('}');
            }
        }
    }
}

/// The typed value of an attribute text, as `cJSON_ParseWithOpts(text, NULL, 1)` would give
/// it, or `None` when cJSON would not parse it (the caller then keeps it as a string).
///
/// Surrounding blanks and control characters are ignored. Numbers follow cJSON, which is more
/// lenient than JSON: `05`, `1.` and `1e3` are numbers, `+5`, `.5` and `00:10:00` are not.
/// `true`, `false`, `null`, quoted strings, arrays and objects are parsed as JSON (objects of
/// such values come out with sorted keys).
pub fn parse_value(text: &str) -> Option<Json> {
    let trimmed = text.trim_matches(|c: char| u32::from(c) <= 32);
    match trimmed.chars().next()? {
        '-' | '0'..='9' => match strtod_prefix(trimmed) {
            Some((number, used)) if used == trimmed.len() => Some(Json::Number(number)),
            _ => None,
        },
        't' | 'f' | 'n' | '"' | '[' | '{' => serde_json::from_str(trimmed).ok().map(from_serde),
        _ => None,
    }
}

/// The longest prefix of `text` that C's `strtod` reads as a decimal number, and its length.
fn strtod_prefix(text: &str) -> Option<(f64, usize)> {
    let bytes = text.as_bytes();
    let digits_from = |start: usize| start + bytes[start..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut end = usize::from(matches!(bytes.first(), Some(b'-' | b'+')));
    let int_end = digits_from(end);
    let mut has_digits = int_end > end;
    end = int_end;
    if bytes.get(end) == Some(&b'.') {
        let frac_end = digits_from(end + 1);
        has_digits |= frac_end > end + 1;
        if has_digits {
            end = frac_end;
        }
    }
    if !has_digits {
        return None;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(end + 1), Some(b'-' | b'+')));
        let exp_end = digits_from(end + 1 + sign);
        if exp_end > end + 1 + sign {
            end = exp_end;
        }
    }
    text[..end].parse().ok().map(|number| (number, end))
}

/// cJSON's value for a serde_json value (numbers become doubles).
fn from_serde(value: serde_json::Value) -> Json {
    match value {
        serde_json::Value::Null => Json::Null,
        serde_json::Value::Bool(value) => Json::Bool(value),
        serde_json::Value::Number(number) => Json::Number(number.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(text) => Json::String(text),
        serde_json::Value::Array(items) => Json::Array(items.into_iter().map(from_serde).collect()),
        serde_json::Value::Object(map) => {
            Json::Object(map.into_iter().map(|(key, value)| (key, from_serde(value))).collect())
        }
    }
}

/// cJSON's `print_number`: `null` for infinities and NaN, `%d` when the double equals its
/// (saturated) `int` value, else `%1.15g`, or `%1.17g` when 15 digits do not read back.
fn number_text(value: f64) -> String {
    if !value.is_finite() {
        return "null".to_string();
    }
    // `as` saturates at the i32 bounds, like cJSON's valueint.
    let int_value = value as i32;
    if value == f64::from(int_value) {
        return int_value.to_string();
    }
    let short = format_g(value, 15);
    match short.parse::<f64>() {
        Ok(back) if (back - value).abs() <= back.abs().max(value.abs()) * f64::EPSILON => short,
        _ => format_g(value, 17),
    }
}

/// C's `%1.<precision>g`.
fn format_g(value: f64, precision: usize) -> String {
    let scientific = format!("{:.*e}", precision - 1, value);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_fraction_zeros(mantissa), exponent.unsigned_abs())
    } else {
        let decimals = (precision as i32 - 1 - exponent) as usize;
        strip_fraction_zeros(&format!("{value:.decimals$}")).to_string()
    }
}

/// `1.2500` -> `1.25`, `3.000` -> `3`; text without a point is kept.
fn strip_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// A JSON string as cJSON escapes it: `"`, `\`, the short escapes, other control characters
/// as `\u00xx`; everything else (including `/` and non-ASCII) as it is.
fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for character in text.chars() {
        match character {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            control if u32::from(control) < 32 => out.push_str(&format!("\\u{:04x}", u32::from(control))),
            other => out.push(other),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(text: &str) -> Option<String> {
        match parse_value(text) {
            Some(Json::Number(value)) => Some(number_text(value)),
            _ => None,
        }
    }

    #[test]
    fn numbers_follow_cjson() {
        assert_eq!(number("0").as_deref(), Some("0"));
        assert_eq!(number("271").as_deref(), Some("271"));
        assert_eq!(number("-29").as_deref(), Some("-29"));
        assert_eq!(number("1e3").as_deref(), Some("1000"));
        assert_eq!(number(" 24567 ").as_deref(), Some("24567"));
        assert_eq!(number("05").as_deref(), Some("5"));
        assert_eq!(number("1.").as_deref(), Some("1"));
        assert_eq!(number("0.5").as_deref(), Some("0.5"));
        assert_eq!(number("0.1").as_deref(), Some("0.1"));
        assert_eq!(number("3000000000").as_deref(), Some("3000000000"));
        assert_eq!(number("1e20").as_deref(), Some("1e+20"));
        assert_eq!(number("1.5e-7").as_deref(), Some("1.5e-07"));
        assert_eq!(number("-0").as_deref(), Some("0"));
        assert_eq!(number("1e999").as_deref(), Some("null"));
        // cJSON keeps 15 digits when they read back within one epsilon, else prints 17.
        assert_eq!(number("0.30000000000000004").as_deref(), Some("0.3"));
        assert_eq!(number("0.123456789012345678").as_deref(), Some("0.12345678901234568"));
    }

    #[test]
    fn non_numbers_stay_strings() {
        for text in ["00:10:00", "4312kb", "+5", ".5", "1e", "-", "0x10", "1.2.3", "True", "", "2:ncpus=2"] {
            assert_eq!(parse_value(text), None, "{text:?}");
        }
    }

    #[test]
    fn other_json_values_are_parsed() {
        assert_eq!(parse_value("true"), Some(Json::Bool(true)));
        assert_eq!(parse_value("null"), Some(Json::Null));
        assert_eq!(parse_value("\"quoted\""), Some(Json::String("quoted".into())));
        assert_eq!(parse_value("[1,2]"), Some(Json::Array(vec![Json::Number(1.0), Json::Number(2.0)])));
        assert_eq!(parse_value("nothing"), None);
    }

    #[test]
    fn layout_matches_cjson_print() {
        let document = Json::Object(vec![
            ("a".into(), Json::Number(1.0)),
            ("b".into(), Json::Object(vec![("c".into(), Json::String("d\"\\\n\u{1}/é".into()))])),
            ("e".into(), Json::Array(vec![Json::Bool(false), Json::Null])),
            ("f".into(), Json::Object(vec![])),
        ]);
        let expected = "{\n\t\"a\":\t1,\n\t\"b\":\t{\n\t\t\"c\":\t\"d\\\"\\\\\\n\\u0001/é\"\n\t},\n\t\"e\":\t[false, null],\n\t\"f\":\t{\n\t}\n}";
        assert_eq!(document.print(), expected);
        assert!(serde_json::from_str::<serde_json::Value>(&document.print()).is_ok());
    }
}
