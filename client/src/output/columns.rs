//! Cell helpers shared by the `qstat` tables: shortening ids and owners, cutting values to a
//! column with the OpenPBS `*` marker, C `printf`-style padding, and the Memory column's size
//! text.
//!
//! Owns: the character-level rules of section 6 of the PBS reference. Must not: know which
//! attribute goes into which column, or print anything. Widths count characters, not bytes
//! (the same for the ASCII names PBS allows).

/// The marker OpenPBS puts in the last kept position of a value that was cut.
pub const TRUNC_MARK: char = '*';

/// `value` cut to at most `width` characters; a value that was cut ends in `*`
/// (`truncate("a_very_long_job_name", 16)` = `a_very_long_job*`).
pub fn truncate(value: &str, width: usize) -> String {
    if width == 0 || value.chars().count() <= width {
        return value.to_string();
    }
    let mut cut: String = value.chars().take(width - 1).collect();
    cut.push(TRUNC_MARK);
    cut
}

/// A job id as the default `qstat` display shows it: cut after the first label of the server
/// name (`123.head.example.com` -> `123.head`, `12[].head.x` -> `12[].head`). An id without a
/// dot is returned whole.
pub fn short_job_id(id: &str) -> &str {
    let Some(first_dot) = id.find('.') else {
        return id;
    };
    match id[first_dot + 1..].find('.') {
        Some(second_dot) => &id[..first_dot + 1 + second_dot],
        None => id,
    }
}

/// The part of `value` before the first `@`: the user of `Job_Owner` (`alice@login1`), the
/// queue of a `queue@server` destination.
pub fn before_at(value: &str) -> &str {
    value.split('@').next().unwrap_or(value)
}

/// C's `%-W.Ps` with W = P = `width`: cut (without marker) and padded on the right.
pub fn left(value: &str, width: usize) -> String {
    let cut: String = value.chars().take(width).collect();
    format!("{cut:<width$}")
}

/// C's `%W.Ps` with W = P = `width`: cut (without marker) and padded on the left.
pub fn right(value: &str, width: usize) -> String {
    let cut: String = value.chars().take(width).collect();
    format!("{cut:>width$}")
}

/// The unit the Memory column is shown in: as given (plain `-a`), gigabytes (`-G`) or
/// megawords of 8 bytes (`-M`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SizeUnit {
    #[default]
    AsGiven,
    Gigabytes,
    Megawords,
}

/// The Memory column of `qstat -a` (OpenPBS `cnv_size`): `<number><k|m|g|t><b|w>` kept in its
/// unit unless the number exceeds 9999, in which case it is divided by 1024 (rounding up) and
/// the unit raised until it fits: `16384mb` -> `16gb`, `4312kb` -> `4312kb`. A value without
/// a unit letter is in bytes and, as in OpenPBS, printed with a blank unit letter (`100 b`).
pub fn size_column(value: &str) -> String {
    size_column_in(value, SizeUnit::AsGiven)
}

/// [`size_column`] converted to `unit` first, rounding up (`-G`: `1536mb` -> `2gb`; `-M`:
/// `8mb` -> `1mw`), as `cnv_size` does for `qstat -G` and `-M` (pbs-reference 6.2).
pub fn size_column_in(value: &str, unit: SizeUnit) -> String {
    const UNITS: &[u8] = b" kmgtp?";
    let digits_end = value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len());
    let mut number: u64 = value[..digits_end].parse().unwrap_or(0);
    let suffix = &value.as_bytes()[digits_end..];
    let given: i32 = match suffix.first() {
        Some(b'k') => 1,
        Some(b'm') => 2,
        Some(b'g') => 3,
        Some(b't') => 4,
        Some(b'p') => 5,
        _ => 0,
    };
    let words = suffix.first() == Some(&b'w') || suffix.get(1) == Some(&b'w');
    if words {
        number = number.saturating_mul(8);
    }
    let (mut shown, in_words) = match unit {
        SizeUnit::AsGiven => (given, words),
        SizeUnit::Gigabytes => (3, false),
        SizeUnit::Megawords => (2, true),
    };
    let shift = 10 * (given - shown);
    if shift < 0 {
        number = number.div_ceil(1u64 << -shift);
    } else {
        number =
            number.checked_shl(shift as u32).filter(|_| number.leading_zeros() >= shift as u32).unwrap_or(u64::MAX);
    }
    if in_words {
        number = number.div_ceil(8);
    }
    while number > 9999 {
        number = number.div_ceil(1024);
        shown += 1;
    }
    let unit_letter = char::from(UNITS[(shown as usize).min(UNITS.len() - 1)]);
    format!("{number}{unit_letter}{}", if in_words { 'w' } else { 'b' })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_marks_cut_values() {
        assert_eq!(truncate("myjob", 16), "myjob");
        assert_eq!(truncate("exactly_sixteen_", 16), "exactly_sixteen_");
        assert_eq!(truncate("a_very_long_job_name", 16), "a_very_long_job*");
        assert_eq!(truncate("QR", 1), "*");
        assert_eq!(truncate("anything", 0), "anything");
    }

    #[test]
    fn short_job_id_keeps_the_first_server_label() {
        assert_eq!(short_job_id("123.head.example.com"), "123.head");
        assert_eq!(short_job_id("123[].head.example.com"), "123[].head");
        assert_eq!(short_job_id("123.head"), "123.head");
        assert_eq!(short_job_id("123"), "123");
    }

    #[test]
    fn before_at_strips_the_host() {
        assert_eq!(before_at("alice@login1.example.com"), "alice");
        assert_eq!(before_at("workq"), "workq");
    }

    #[test]
    fn printf_padding() {
        assert_eq!(left("alice", 8), "alice   ");
        assert_eq!(left("averylongname", 8), "averylon");
        assert_eq!(right("24567", 6), " 24567");
        assert_eq!(right("01:00:00", 5), "01:00");
        assert_eq!(right(" -- ", 6), "   -- ");
    }

    #[test]
    fn size_column_fits_six_characters() {
        assert_eq!(size_column("2gb"), "2gb");
        assert_eq!(size_column("4312kb"), "4312kb");
        assert_eq!(size_column("16384mb"), "16gb");
        assert_eq!(size_column("10000kb"), "10mb");
        assert_eq!(size_column("1048576b"), "1024kb");
        assert_eq!(size_column("100"), "100 b");
        assert_eq!(size_column("8mw"), "8mw");
        // Sizes are shown in the unit the user wrote, so every multiplier reaches the column.
        assert_eq!(size_column("2pb"), "2pb");
        assert_eq!(size_column("3tb"), "3tb");
        assert_eq!(size_column("1tb"), "1tb");
    }

    #[test]
    fn gigabytes_and_megawords_round_up() {
        let g = |value| size_column_in(value, SizeUnit::Gigabytes);
        let m = |value| size_column_in(value, SizeUnit::Megawords);
        assert_eq!(g("2gb"), "2gb");
        assert_eq!(g("1536mb"), "2gb");
        assert_eq!(g("4312kb"), "1gb");
        assert_eq!(g("1tb"), "1024gb");
        assert_eq!(g("20tb"), "20tb", "too wide for the column: the unit goes up");
        assert_eq!(g("100"), "1gb");
        assert_eq!(g("8gw"), "64gb");
        assert_eq!(m("8mb"), "1mw");
        assert_eq!(m("9mb"), "2mw");
        assert_eq!(m("2gb"), "256mw");
        assert_eq!(m("3mw"), "3mw");
        assert_eq!(m("1kb"), "1mw");
        assert_eq!(g("99999999999999999999tb"), g("0"), "an unreadable number is 0, as strtol's overflow is not ours");
        assert!(g("18446744073709551615tb").len() <= 7, "no overflow panic");
    }
}
