//! The `-a` date-time grammar `[[[[CC]YY]MM]DD]hhmm[.SS]` (OpenPBS and TORQUE qsub, `qalter -a`),
//! read against the current local date. Pure: the caller turns the result into a time stamp
//! (`mktime`) and, when it is already past, moves it by [`DateTime::roll`] once.

/// A local date and time as written (month 1-12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTime {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// The smallest unit the user left out, by which a time already past moves forward
    /// (`hhmm` earlier than now means tomorrow); `None` when the year was given.
    pub roll: Option<Roll>,
}

/// The unit a past [`DateTime`] moves by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roll {
    Day,
    Month,
    Year,
}

/// Parses `text` against `today` (year, month, day). `None`: not of the grammar, or a field
/// out of range (month 13, hour 24, minute 60, second 61, day 32).
pub fn parse(text: &str, today: (i32, u32, u32)) -> Option<DateTime> {
    let (digits, second) = match text.split_once('.') {
        Some((digits, seconds)) => (digits, two_digits(seconds)?),
        None => (text, 0),
    };
    if !digits.chars().all(|c| c.is_ascii_digit()) || !matches!(digits.len(), 4 | 6 | 8 | 10 | 12) {
        return None;
    }
    let field = |from_end: usize| two_digits(&digits[digits.len() - from_end..digits.len() - from_end + 2]);
    let (hour, minute) = (field(4)?, field(2)?);
    let mut at = DateTime { year: today.0, month: today.1, day: today.2, hour, minute, second, roll: Some(Roll::Day) };
    if digits.len() >= 6 {
        at.day = field(6)?;
        at.roll = Some(Roll::Month);
    }
    if digits.len() >= 8 {
        at.month = field(8)?;
        at.roll = Some(Roll::Year);
    }
    if digits.len() >= 10 {
        let yy = field(10)? as i32;
        let century = if digits.len() == 12 {
            field(12)? as i32
        } else if yy < 69 {
            20
        } else {
            19
        };
        at.year = century * 100 + yy;
        at.roll = None;
    }
    let valid = (1..=12).contains(&at.month) && (1..=31).contains(&at.day) && hour < 24 && minute < 60 && second < 61;
    valid.then_some(at)
}

fn two_digits(text: &str) -> Option<u32> {
    (text.len() == 2 && text.chars().all(|c| c.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TODAY: (i32, u32, u32) = (2026, 11, 25);

    #[test]
    fn each_form_fills_what_was_left_out_from_today() {
        let at = parse("1730", TODAY).unwrap();
        assert_eq!((at.year, at.month, at.day, at.hour, at.minute, at.second), (2026, 11, 25, 17, 30, 0));
        assert_eq!(at.roll, Some(Roll::Day));
        assert_eq!(parse("1730.45", TODAY).unwrap().second, 45);
        let at = parse("031730", TODAY).unwrap();
        assert_eq!((at.day, at.roll), (3, Some(Roll::Month)));
        let at = parse("12031730", TODAY).unwrap();
        assert_eq!((at.month, at.day, at.roll), (12, 3, Some(Roll::Year)));
        let at = parse("2701020304.05", TODAY).unwrap();
        assert_eq!((at.year, at.month, at.day, at.hour, at.minute, at.second, at.roll), (2027, 1, 2, 3, 4, 5, None));
        assert_eq!(parse("9901020304", TODAY).unwrap().year, 1999);
        assert_eq!(parse("202701020304", TODAY).unwrap().year, 2027);
    }

    #[test]
    fn anything_else_is_refused() {
        for bad in [
            "",
            "1",
            "173",
            "17300",
            "2400",
            "1760",
            "1730.6",
            "1730.61",
            "1730.",
            "abcd",
            "13011730",
            "00011730",
            "321730",
            "0001730",
            "17:30",
            "+1730",
            "1730 ",
            "20270102030405",
            "1730.4a",
            "é730",
        ] {
            assert_eq!(parse(bad, TODAY), None, "{bad:?}");
        }
    }
}
