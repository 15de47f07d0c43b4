//! `qstat -f -F dsv [-D delim]` (PBS reference section 6.5): one line per job,
//! `Job Id: 123.head|Job_Name=myjob|...|Submit_Host=login1`, as OpenPBS's `qstat.c` prints it
//! (`prt_attr`, `FORMAT_DSV`): time stamps as in the full display, the delimiter (and a
//! backslash not before `'`, `"` or `,`) escaped with a backslash (`escape_delimiter` in
//! `src/lib/Libutil/misc_utils.c`), line and form feeds written `\n` and `\f`.
//!
//! Owns: that display. Must not: choose or reorder attributes, talk to the server, or print.

use proto::JobStatus;

use super::time::{display_value, TimeText};

/// The delimiter when `-D` is not given.
pub const DEFAULT_DELIMITER: &str = "|";

/// The DSV lines of `jobs`, fields separated by `delimiter`, time stamps through `time`.
pub fn qstat_dsv_with(jobs: &[JobStatus], delimiter: &str, time: TimeText) -> String {
    let mut out = String::new();
    for job in jobs {
        out.push_str(&format!("Job Id: {}{delimiter}", job.id));
        let fields: Vec<String> = job
            .attrs
            .iter()
            .map(|attr| {
                let name = attr.full_name();
                let value = display_value(&name, &attr.value, time);
                format!("{name}={}", feeds(&escaped(&value, delimiter)))
            })
            .collect();
        out.push_str(&fields.join(delimiter));
        out.push('\n');
    }
    out
}

/// `value` with each `delimiter` and each backslash not before `'`, `"` or `,` preceded by a
/// backslash.
fn escaped(value: &str, delimiter: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(c) = rest.chars().next() {
        let next = rest[c.len_utf8()..].chars().next();
        if c == '\\' && !matches!(next, Some('\'' | '"' | ',')) {
            out.push_str("\\\\");
            rest = &rest[1..];
        } else if !delimiter.is_empty() && rest.starts_with(delimiter) {
            out.push('\\');
            out.push_str(delimiter);
            rest = &rest[delimiter.len()..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Line and form feeds as `\n` and `\f` (OpenPBS `convert_feed_chars`).
fn feeds(value: &str) -> String {
    value.replace('\n', "\\n").replace('\x0c', "\\f")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;
    use crate::output::time::ctime_text_utc;
    use job::Attr;

    #[test]
    fn reference_jobs_one_line_each() {
        let text = qstat_dsv_with(&samples::reference_jobs(), DEFAULT_DELIMITER, ctime_text_utc);
        assert_eq!(text.lines().count(), samples::reference_jobs().len());
        insta::assert_snapshot!(text);
    }

    #[test]
    fn delimiters_backslashes_and_feeds_are_escaped() {
        let job = JobStatus {
            id: "7.head".into(),
            attrs: vec![
                Attr::new("Job_Name", "a|b"),
                Attr::new("comment", "line one\nline\x0ctwo"),
                Attr::new("Variable_List", "A=x\\,y,B=c:\\d"),
                Attr::resource("Resource_List", "select", "1:ncpus=2:mem=2gb:ompthreads=2"),
                Attr::new("Mail_Users", "a@b.org,c@d.org"),
            ],
        };
        let text = qstat_dsv_with(std::slice::from_ref(&job), DEFAULT_DELIMITER, ctime_text_utc);
        assert_eq!(
            text,
            "Job Id: 7.head|Job_Name=a\\|b|comment=line one\\nline\\ftwo|Variable_List=A=x\\,y,B=c:\\\\d|\
             Resource_List.select=1:ncpus=2:mem=2gb:ompthreads=2|Mail_Users=a@b.org,c@d.org\n"
        );
        let text = qstat_dsv_with(&[job], "::", ctime_text_utc);
        assert!(text.starts_with("Job Id: 7.head::Job_Name=a|b::"), "{text}");
        assert!(text.contains("::Resource_List.select=1:ncpus=2:mem=2gb:ompthreads=2::"), "{text}");
    }
}
