//! What `tracejob` prints (pbs-reference section 8.5, OpenPBS `src/tools/tracejob.c`): a blank
//! line, `Job: <id>`, a blank line, then one line per log entry, `%-20s %-5c` (time stamp and
//! source letter: `A` accounting, `S` server, `M` mom, `L` scheduler) followed by the message,
//! wrapped at blanks to the terminal width with continuation lines indented 26 columns.
//!
//! Owns: those bytes and the not-found message. Must not: read files, sort or select entries.

/// One line of a job's trace, already selected and in display order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine {
    /// `MM/DD/YYYY HH:MM:SS` as written in the log.
    pub date: String,
    /// `A`, `S`, `M` or `L`.
    pub source: char,
    pub message: String,
}

/// Indent of wrapped continuation lines (20 + 1 + 5).
const INDENT: usize = 26;

/// The trace of job `id`; `columns` 0 = do not wrap.
pub fn trace(id: &str, lines: &[TraceLine], columns: usize) -> String {
    let mut out = format!("\nJob: {id}\n\n");
    for line in lines {
        out.push_str(&format!("{:<20} {:<5}", line.date, line.source));
        out.push_str(&wrap(&line.message, INDENT, columns));
    }
    out
}

/// The stderr text when no log names the job.
pub fn not_found(id: &str, days: u32) -> String {
    let plural = if days == 1 { "" } else { "s" };
    format!("\ntracejob: Couldn't find Job Id {id} in logs of past {days} day{plural}\n\n")
}

/// OpenPBS's `line_wrap`: pieces of at most `columns - start` characters broken at the last
/// blank (or, in a word longer than that, at the next blank); the first piece as is, the
/// others indented by `start`; every piece ends with a newline.
fn wrap(message: &str, start: usize, columns: usize) -> String {
    let width = columns.saturating_sub(start);
    if columns == 0 || width == 0 {
        return format!("{message}\n");
    }
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::new();
    let mut begin = 0;
    while begin < chars.len() {
        let end = if begin + width < chars.len() {
            let mut cut = begin + width;
            while cut > begin && chars[cut] != ' ' {
                cut -= 1;
            }
            if cut == begin {
                cut = begin + width;
                while cut < chars.len() && chars[cut] != ' ' {
                    cut += 1;
                }
            }
            cut
        } else {
            chars.len()
        };
        let piece: String = chars[begin..end].iter().collect();
        if begin == 0 {
            out.push_str(&piece);
        } else {
            out.push_str(&format!("{:start$}{piece}", ""));
        }
        out.push('\n');
        begin = end + 1;
    }
    if out.is_empty() {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use insta::assert_snapshot;

    fn sample() -> Vec<TraceLine> {
        let line = |date: &str, source, message: &str| TraceLine { date: date.into(), source, message: message.into() };
        vec![
            line("11/21/2023 22:26:00", 'S', "Job Queued at request of alice@login1, owner = alice@login1, job name = myjob, queue = workq"),
            line("11/21/2023 22:26:00", 'A', "queue=workq"),
            line("11/21/2023 22:26:05", 'M', "job started session_id=24567 user=alice"),
            line("11/21/2023 22:26:12", 'S', "Exit_status=0 resources_used.cpupercent=0 resources_used.cput=00:00:00 resources_used.mem=4312kb resources_used.ncpus=4 resources_used.vmem=12960kb resources_used.walltime=00:00:07"),
        ]
    }

    #[test]
    fn unwrapped_trace() {
        assert_snapshot!(trace("123.head", &sample(), 0));
    }

    #[test]
    fn trace_wrapped_at_80_columns() {
        assert_snapshot!(trace("123.head", &sample(), 80));
    }

    #[test]
    fn a_long_word_is_not_cut() {
        assert_eq!(wrap("aaaaaaaaaa bb", 2, 6), "aaaaaaaaaa\n  bb\n");
        assert_eq!(wrap("", 2, 6), "\n");
    }

    #[test]
    fn not_found_texts() {
        assert_eq!(not_found("9.head", 1), "\ntracejob: Couldn't find Job Id 9.head in logs of past 1 day\n\n");
        assert_eq!(not_found("9.head", 3), "\ntracejob: Couldn't find Job Id 9.head in logs of past 3 days\n\n");
    }
}
