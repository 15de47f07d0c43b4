//! Durations (`walltime`, `cput`) per pbs-reference section 3.6: `S`, `M:S`, `H:M:S`,
//! `D:H:M:S`, optional fraction of a second (rounded), fields not range checked.

/// Seconds per field, counted from the right: seconds, minutes, hours, days.
const FIELD_SECONDS: [u64; 4] = [1, 60, 3600, 86400];

/// Parses a duration into whole seconds. `90:00` is 5400, `1:12:00:00` (TORQUE days) is
/// 129600, `00:00:30.6` rounds to 31. Fields are not range checked (`0:90:00` is 5400). Errors
/// name the text.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let bad = |why: String| format!("bad duration '{text}': {why}");
    if text.is_empty() {
        return Err(bad("it is empty".to_string()));
    }
    let fields: Vec<&str> = text.split(':').collect();
    if fields.len() > FIELD_SECONDS.len() {
        return Err(bad("more than 3 colons; expected [[[D:]H:]M:]S".to_string()));
    }
    let mut total: u64 = 0;
    for (index, field) in fields.iter().rev().enumerate() {
        // Only the seconds (last) field may carry a fraction.
        let (whole, fraction) = match field.split_once('.') {
            Some((whole, fraction)) if index == 0 => (whole, Some(fraction)),
            _ => (*field, None),
        };
        let value = parse_field(whole).map_err(&bad)?;
        let seconds = value.checked_mul(FIELD_SECONDS[index]).ok_or_else(|| bad("too large".to_string()))?;
        total = total.checked_add(seconds).ok_or_else(|| bad("too large".to_string()))?;
        if let Some(fraction) = fraction {
            if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("fraction '{fraction}' is not a number")));
            }
            // Round half up on the first fractional digit, as OpenPBS does.
            if fraction.as_bytes()[0] >= b'5' {
                total = total.checked_add(1).ok_or_else(|| bad("too large".to_string()))?;
            }
        }
    }
    Ok(total)
}

/// One colon-separated field: a non-empty run of ASCII digits.
fn parse_field(field: &str) -> Result<u64, String> {
    if field.is_empty() {
        return Err("empty field".to_string());
    }
    if !field.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{field}' is not a number"));
    }
    field.parse().map_err(|_| "too large".to_string())
}

/// Formats seconds as `HH:MM:SS` with at least two hour digits (`120:00:00` allowed).
pub fn format_hms(seconds: u64) -> String {
    format!("{:02}:{:02}:{:02}", seconds / 3600, (seconds / 60) % 60, seconds % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_reference_examples() {
        let cases = [
            ("45", 45),
            ("90:00", 5400),
            ("1:00:00", 3600),
            ("36:00:00", 129600),
            ("1:12:00:00", 129600),
            ("00:00:30.6", 31),
            ("00:00:30.4", 30),
            ("30.5", 31),
            ("30.49", 30),
            ("0:90:00", 5400),
            ("0", 0),
            ("00:00", 0),
            ("120:00:00", 432000),
            ("2:00:00:01", 172801),
            ("59.999", 60),
        ];
        for (text, seconds) in cases {
            assert_eq!(parse_duration(text), Ok(seconds), "{text}");
        }
    }

    #[test]
    fn rejects_bad_durations() {
        let bad = [
            "",
            ":",
            "1:",
            ":30",
            "1::00",
            "-5",
            "1:-5",
            "+5",
            "1h",
            "abc",
            "1:00:00:00:00",
            " 45",
            "45 ",
            "1.5:00",
            "30.",
            "30.x",
            "30.-1",
            "1.2.3",
            "99999999999999999999",
            "213503982334602:00:00:00",
            "é",
        ];
        for text in bad {
            let err = parse_duration(text).expect_err(text);
            assert!(err.contains(&format!("'{text}'")), "{err} does not name {text:?}");
        }
    }

    #[test]
    fn largest_duration_fits() {
        assert_eq!(parse_duration("18446744073709551615"), Ok(u64::MAX));
        assert!(parse_duration("18446744073709551615.5").is_err());
        assert!(parse_duration("1:18446744073709551615").is_err());
    }

    #[test]
    fn formats_hms() {
        assert_eq!(format_hms(0), "00:00:00");
        assert_eq!(format_hms(3600), "01:00:00");
        assert_eq!(format_hms(5400), "01:30:00");
        assert_eq!(format_hms(432000), "120:00:00");
        assert_eq!(format_hms(3661), "01:01:01");
    }

    #[test]
    fn error_messages() {
        let text: String = ["", "1::00", "1h", "1:00:00:00:00", "30.x", "99999999999999999999"]
            .iter()
            .map(|input| format!("{}\n", parse_duration(input).unwrap_err()))
            .collect();
        insta::assert_snapshot!(text);
    }
}
