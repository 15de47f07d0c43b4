//! The default `qstat` table (OpenPBS flavor, PBS reference section 6.1):
//!
//! ```text
//! Job id            Name             User              Time Use S Queue
//! ----------------  ---------------- ----------------  -------- - -----
//! 123.head          myjob            alice             00:00:01 R workq
//! ```
//!
//! Owns: that table. Must not: filter or sort jobs, talk to the server, or print.
//!
//! Invariant: every row splits into exactly six whitespace-separated fields, because Parsl and
//! other clients parse it that way (section 6.1). A missing or empty value is shown as `--`
//! (`-` in the one-letter state column) and white space inside a value as `_`.

use std::borrow::Cow;

use super::columns::{before_at, short_job_id, truncate};
use super::listed::Listed;

/// The two header lines, exactly as OpenPBS prints them.
pub const DEFAULT_HEADER: &str = "\
Job id            Name             User              Time Use S Queue
----------------  ---------------- ----------------  -------- - -----
";

/// The default `qstat` display of one server's jobs, in the order given. Empty when there is no
/// job (the header is printed only above at least one row; there is no summary line). Rows
/// follow `%-17s %-16s %-16s  %8s %1s %-16s` and keep the trailing blanks of the last column.
/// Of status records or of rows ([`Listed`]).
pub fn qstat_default<J: Listed>(jobs: &[J]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    // 81 bytes a row: one allocation for the whole table.
    let mut out = String::with_capacity(DEFAULT_HEADER.len() + jobs.len() * 82);
    out.push_str(DEFAULT_HEADER);
    for job in jobs {
        write_row(&mut out, job);
        out.push('\n');
    }
    out
}

/// One row of the default display, without the newline.
#[cfg(test)]
fn default_row(job: &proto::JobStatus) -> String {
    let mut row = String::new();
    write_row(&mut row, job);
    row
}

/// Appends one row, without the newline. Values are borrowed unless they must be cut or
/// their blanks replaced (a listing of 10,000 jobs allocates next to nothing here).
fn write_row(out: &mut String, job: &impl Listed) {
    let id = cut(short_job_id(job.id()), 17);
    let name = job.get("Job_Name").unwrap_or("");
    // OpenPBS marks a name of 16 characters or more, even one that would fit: 15 + `*`.
    let name: Cow<str> =
        if chars(name) >= 16 { Cow::Owned(name.chars().take(15).collect::<String>() + "*") } else { name.into() };
    let user = cut(before_at(job.get("Job_Owner").unwrap_or("")), 16);
    let time_use = cut(job.get("resources_used.cput").unwrap_or("0"), 8);
    // One column wide, so a missing state is `-` rather than `--`.
    let state = match job.get("job_state").map(str::trim) {
        Some(letter) if !letter.is_empty() => cut(letter, 1),
        _ => Cow::Borrowed("-"),
    };
    let queue = cut(before_at(job.get("queue").unwrap_or("")), 16);
    // `%-17s %-16s %-16s  %8s %1s %-16s`
    push_left(out, &field(&id), 17);
    out.push(' ');
    push_left(out, &field(&name), 16);
    out.push(' ');
    push_left(out, &field(&user), 16);
    out.push_str("  ");
    push_right(out, &field(&time_use), 8);
    out.push(' ');
    push_right(out, &field(&state), 1);
    out.push(' ');
    push_left(out, &field(&queue), 16);
}

/// How many characters `value` has: its length when ASCII (nearly every value of a listing,
/// told by one word-at-a-time pass; counting `char`s was a tenth of a 10,000-row table).
fn chars(value: &str) -> usize {
    if value.is_ascii() {
        value.len()
    } else {
        value.chars().count()
    }
}

/// `value` padded with blanks to `width` characters on the right, as `{:<width}` writes it
/// (by hand: the formatter writes its padding a `char` at a time, a fifth of a long table).
fn push_left(out: &mut String, value: &str, width: usize) {
    out.push_str(value);
    push_blanks(out, width.saturating_sub(chars(value)));
}

/// `value` padded with blanks to `width` characters on the left, as `{:>width}` writes it.
fn push_right(out: &mut String, value: &str, width: usize) {
    push_blanks(out, width.saturating_sub(chars(value)));
    out.push_str(value);
}

fn push_blanks(out: &mut String, count: usize) {
    const BLANKS: &str = "                                ";
    if count <= BLANKS.len() {
        out.push_str(&BLANKS[..count]);
    } else {
        out.extend(std::iter::repeat_n(' ', count));
    }
}

/// [`truncate`], borrowing what fits.
fn cut(value: &str, width: usize) -> Cow<'_, str> {
    // Not more bytes than `width`: not more characters either.
    if width == 0 || value.len() <= width || chars(value) <= width {
        Cow::Borrowed(value)
    } else {
        Cow::Owned(truncate(value, width))
    }
}

/// Whether an ASCII byte is white space as `char::is_whitespace` says (tab, line feed,
/// vertical tab, form feed, carriage return, blank).
fn is_blank(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | b' ')
}

/// A value made safe for white-space splitting: never empty, never containing blanks.
pub(super) fn field(value: &str) -> Cow<'_, str> {
    if value.is_ascii() {
        // The same rule byte by byte: one pass, no `char` decoding.
        if !value.bytes().any(is_blank) {
            return if value.is_empty() { Cow::Borrowed("--") } else { Cow::Borrowed(value) };
        }
        if value.bytes().all(is_blank) {
            return Cow::Borrowed("--");
        }
    }
    if value.trim().is_empty() {
        return Cow::Borrowed("--");
    }
    if !value.contains(char::is_whitespace) {
        return Cow::Borrowed(value);
    }
    Cow::Owned(value.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::listed::{tests::as_rows, RowJob};
    use crate::output::samples;
    use proto::JobStatus;

    #[test]
    fn no_jobs_prints_nothing() {
        assert_eq!(qstat_default::<JobStatus>(&[]), "");
    }

    #[test]
    fn rows_print_the_same_table_as_records() {
        // The columns `qstat` asks for, in another order than the table's.
        let columns: Vec<String> =
            ["queue", "job_state", "resources_used.cput", "Job_Owner", "Job_Name"].map(str::to_string).to_vec();
        for jobs in [samples::all_jobs(), samples::reference_jobs(), vec![samples::long_names_job()]] {
            let rows = as_rows(&jobs, &columns);
            let rows: Vec<RowJob> = rows.iter().map(|row| RowJob { columns: &columns, row }).collect();
            assert_eq!(qstat_default(&rows), qstat_default(&jobs));
            assert_eq!(crate::output::qstat_default_torque(&rows), crate::output::qstat_default_torque(&jobs));
        }
    }

    #[test]
    fn reference_rows_byte_for_byte() {
        let text = qstat_default(&samples::reference_jobs());
        let expected = [
            "Job id            Name             User              Time Use S Queue",
            "----------------  ---------------- ----------------  -------- - -----",
            "123.head          myjob            alice             00:00:01 R workq           ",
            "124.head          STDIN            alice                    0 Q workq           ",
            "125.head          a_very_long_job* alice                    0 H workq           ",
        ];
        assert_eq!(text, expected.join("\n") + "\n");
    }

    #[test]
    fn header_is_printed_once() {
        let text = qstat_default(&samples::all_jobs());
        assert!(text.starts_with(DEFAULT_HEADER));
        assert_eq!(text.matches("Job id").count(), 1);
    }

    #[test]
    fn every_row_has_six_fields() {
        let mut jobs = samples::all_jobs();
        jobs.push(JobStatus { id: "9.head".into(), attrs: vec![job::Attr::new("Job_Name", "two words")] });
        let text = qstat_default(&jobs);
        for row in text.lines().skip(2) {
            assert_eq!(row.split_whitespace().count(), 6, "{row:?}");
            assert_eq!(row.chars().count(), 80, "{row:?}");
        }
        assert_eq!(text.lines().count(), jobs.len() + 2);
    }

    #[test]
    fn long_values_are_cut_with_a_star() {
        let row = default_row(&samples::long_names_job());
        let fields: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(
            fields,
            ["1234567[].head-n*", "exactly_sixteen*", "averyveryverylo*", "1234:56*", "R", "long_queue_name*"]
        );
    }

    #[test]
    fn ascii_shortcuts_agree_with_the_char_rules() {
        // Every ASCII byte alone and inside a value: the byte rules say what char's say.
        for byte in 0u8..128 {
            let c = char::from(byte);
            assert_eq!(is_blank(byte), c.is_whitespace(), "{byte:#x}");
            for value in [c.to_string(), format!("a{c}b"), format!("{c}{c}")] {
                let by_chars = if value.trim().is_empty() {
                    "--".to_string()
                } else {
                    value.chars().map(|c| if c.is_whitespace() { '_' } else { c }).collect()
                };
                assert_eq!(field(&value), by_chars, "{value:?}");
            }
        }
        assert_eq!(field(""), "--");
        assert_eq!(field("\u{a0}"), "--", "a non-ASCII blank takes the char rules");
        assert_eq!(field("é x"), "é_x");
        assert_eq!(chars("héllo"), 5);
        assert_eq!(cut("ééééé", 4), "ééé*", "cut by characters, not bytes");
        assert_eq!(cut("éé", 3), "éé", "4 bytes, 2 characters: fits");
        let mut out = String::new();
        push_right(&mut out, "é", 3);
        push_left(&mut out, "x", 40);
        assert_eq!(out, format!("  éx{}", " ".repeat(39)));
    }

    #[test]
    fn snapshot_all_jobs() {
        insta::assert_snapshot!(qstat_default(&samples::all_jobs()));
    }
}
