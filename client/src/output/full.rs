//! The full `qstat -f` display (PBS reference section 6.4):
//!
//! ```text
//! Job Id: 123.head
//!     Job_Name = myjob
//!     Variable_List = PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,PBS_O_LOGNAME=alice,
//! <TAB>PBS_O_PATH=/usr/local/bin:/usr/bin:/bin,...
//!
//! ```
//!
//! Owns: that display and OpenPBS's folding of long values. Must not: choose or reorder
//! attributes (the server's order is kept), talk to the server, or print.

use proto::{Flavor, JobStatus};

use super::time::{ctime_text, display_value, TimeText};

/// The column a folded line must stay under (OpenPBS `CHAR_LINE_LIMIT`).
const LINE_LIMIT: usize = 78;

/// TORQUE folds one column earlier (`linesize` 77 in its qstat).
const TORQUE_LINE_LIMIT: usize = 77;

/// `qstat -f` of the given jobs in the flavor's layout, with time stamps in local time. See
/// [`qstat_full_flavored_with`].
pub fn qstat_full(jobs: &[JobStatus], fold: bool, flavor: Flavor) -> String {
    qstat_full_flavored_with(jobs, fold, flavor, ctime_text)
}

/// `qstat -f` in OpenPBS's layout. See [`qstat_full_flavored_with`].
pub fn qstat_full_with(jobs: &[JobStatus], fold: bool, time: TimeText) -> String {
    qstat_full_flavored_with(jobs, fold, Flavor::OpenPbs, time)
}

/// `qstat -f` of the given jobs: per job a `Job Id: <id>` line, one `    name = value` line per
/// attribute in the order given (time stamps through `time`), and an empty line.
///
/// With `fold`, long values are broken as OpenPBS does: at commas once a line would reach
/// column 78, long comma-free pieces every ~70 characters, continuation lines starting with a
/// TAB (parsers re-join them). Without `fold` (`-w`, TORQUE's `-1`) every attribute stays on
/// one line and newlines inside values are shown as `\n`.
///
/// TORQUE (`flavor`) folds before column 77 instead, and shows a negative
/// `Walltime.Remaining` as `Walltime.Exceeded`.
pub fn qstat_full_flavored_with(jobs: &[JobStatus], fold: bool, flavor: Flavor, time: TimeText) -> String {
    let limit = if flavor == Flavor::Torque { TORQUE_LINE_LIMIT } else { LINE_LIMIT };
    let mut out = String::new();
    for job in jobs {
        out.push_str(&format!("Job Id: {}\n", job.id));
        for attr in &job.attrs {
            let mut name = attr.full_name();
            if flavor == Flavor::Torque && name == "Walltime.Remaining" && attr.value.starts_with('-') {
                name = "Walltime.Exceeded".to_string();
            }
            let value = display_value(&name, &attr.value, time);
            if fold {
                out.push_str(&folded_attr(&name, &value, limit));
            } else {
                out.push_str(&format!("    {name} = {}", value.replace('\n', "\\n").replace('\x0c', "\\f")));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// `    name = value`, folded the way OpenPBS's and TORQUE's `prt_attr` do, without the final
/// newline.
///
/// The value is split at commas (empty pieces vanish, as with C's `strtok`). A piece that fits
/// before column `limit` is appended; otherwise, unless it is the first piece, a new
/// TAB-indented line is started, and the piece is written character by character, breaking
/// the line whenever it passes column `limit`. As in PBS, the commas are not counted.
fn folded_attr(name: &str, value: &str, limit: usize) -> String {
    let mut out = format!("    {name} = ");
    let mut column = name.chars().count() + 7;
    let pieces: Vec<&str> = value.split(',').filter(|piece| !piece.is_empty()).collect();
    for (index, piece) in pieces.iter().enumerate() {
        let length = piece.chars().count();
        if length + column < limit {
            out.push_str(piece);
            column += length;
        } else {
            if index > 0 {
                out.push_str("\n\t");
                column = 9;
            }
            for character in piece.chars() {
                out.push(character);
                column += 1;
                if column > limit {
                    column = 8;
                    out.push_str("\n\t");
                }
            }
        }
        if index + 1 < pieces.len() {
            out.push(',');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;
    use crate::output::time::ctime_text_utc;

    /// Undoes the folding: continuation lines (TAB first) are glued to the line before.
    fn unfold(text: &str) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        for line in text.lines() {
            match (line.strip_prefix('\t'), lines.last_mut()) {
                (Some(rest), Some(last)) => last.push_str(rest),
                _ => lines.push(line.to_string()),
            }
        }
        lines
    }

    #[test]
    fn layout_of_one_job() {
        let text = qstat_full_with(&[samples::queued_job()], true, ctime_text_utc);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "Job Id: 124.head");
        assert_eq!(lines[1], "    Job_Name = STDIN");
        assert_eq!(lines[2], "    Job_Owner = alice@login1.example.com");
        assert!(lines.contains(&"    Resource_List.walltime = 00:10:00"));
        assert!(lines.contains(&"    ctime = Tue Nov 21 22:26:00 2023"));
        assert!(text.ends_with("Submit_Host = login1.example.com\n\n"), "{text}");
    }

    #[test]
    fn an_empty_line_follows_every_job() {
        let jobs = samples::all_jobs();
        let text = qstat_full_with(&jobs, true, ctime_text_utc);
        assert_eq!(text.matches("\n\nJob Id: ").count(), jobs.len() - 1);
        assert!(text.ends_with("\n\n"));
    }

    #[test]
    fn folded_lines_stay_short_and_unfold_to_the_value() {
        let jobs = samples::all_jobs();
        let folded = qstat_full_with(&jobs, true, ctime_text_utc);
        for line in folded.lines() {
            // A TAB counts as 8 columns; OpenPBS allows one character past column 78 and
            // does not count the commas it writes.
            let tab = if line.starts_with('\t') { 7 } else { 0 };
            let width = line.chars().count() + tab - line.matches(',').count();
            assert!(width <= LINE_LIMIT + 1, "{width}: {line:?}");
        }
        assert!(folded.contains("\n\tPBS_O_"), "Variable_List is folded at a comma");
        let one_line = qstat_full_with(&jobs, false, ctime_text_utc);
        assert_eq!(unfold(&folded), one_line.lines().map(str::to_string).collect::<Vec<_>>());
    }

    #[test]
    fn fold_breaks_at_commas_first() {
        let value = "PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,PBS_O_LOGNAME=alice,PBS_O_MAIL=/var/spool/mail/alice";
        assert_eq!(
            folded_attr("Variable_List", value, LINE_LIMIT),
            "    Variable_List = PBS_O_HOME=/home/alice,PBS_O_LANG=C.UTF-8,\n\
             \tPBS_O_LOGNAME=alice,PBS_O_MAIL=/var/spool/mail/alice"
        );
    }

    #[test]
    fn fold_breaks_long_pieces_every_seventy_characters() {
        let value = "x".repeat(200);
        let text = folded_attr("Output_Path", &value, LINE_LIMIT);
        let lines: Vec<&str> = text.split('\n').collect();
        assert_eq!(lines[0], format!("    Output_Path = {}", "x".repeat(61)));
        assert_eq!(lines[1], format!("\t{}", "x".repeat(71)));
        assert_eq!(lines[2], format!("\t{}", "x".repeat(68)));
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn unfolded_values_stay_on_one_line() {
        let job = JobStatus { id: "1.head".into(), attrs: vec![job::Attr::new("comment", "two\nlines")] };
        assert_eq!(qstat_full_with(&[job], false, ctime_text_utc), "Job Id: 1.head\n    comment = two\\nlines\n\n");
    }

    #[test]
    fn torque_folds_one_column_earlier_and_names_overrun_walltime() {
        let value = "x".repeat(200);
        let lines: Vec<String> =
            folded_attr("Output_Path", &value, TORQUE_LINE_LIMIT).split('\n').map(str::to_string).collect();
        assert_eq!(lines[0], format!("    Output_Path = {}", "x".repeat(60)));
        let text = qstat_full_flavored_with(&samples::torque_jobs(), true, Flavor::Torque, ctime_text_utc);
        assert!(text.contains("\n    Walltime.Exceeded = -3\n"), "{text}");
        assert!(text.contains("\n    Walltime.Remaining = 2849\n"), "{text}");
        assert!(text.contains("\n    comp_time = Tue Nov 21 22:27:10 2023\n"), "{text}");
        assert!(text.contains("\n    exit_status = 0\n"), "{text}");
    }

    #[test]
    fn estimates_are_shown_as_openpbs_shows_them() {
        let text = qstat_full_with(&[samples::planned_job()], true, ctime_text_utc);
        let lines: Vec<&str> = text.lines().collect();
        let at = |line: &str| lines.iter().position(|shown| *shown == line).unwrap_or_else(|| panic!("{line}\n{text}"));
        let vnode = at("    estimated.exec_vnode = (node1:ncpus=4)");
        assert_eq!(at("    estimated.start_time = Tue Nov 21 23:26:00 2023"), vnode + 1);
        assert_eq!(at("    project = _pbs_project_default"), vnode + 2);
    }

    #[test]
    fn snapshot_torque_folded() {
        insta::assert_snapshot!(qstat_full_flavored_with(
            &samples::torque_jobs(),
            true,
            Flavor::Torque,
            ctime_text_utc
        ));
    }

    #[test]
    fn snapshot_pinned() {
        insta::assert_snapshot!(qstat_full_with(&[samples::pinned_job()], true, ctime_text_utc));
    }

    #[test]
    fn snapshot_folded() {
        insta::assert_snapshot!(qstat_full_with(&samples::all_jobs(), true, ctime_text_utc));
    }

    #[test]
    fn snapshot_unfolded() {
        insta::assert_snapshot!(qstat_full_with(&samples::all_jobs(), false, ctime_text_utc));
    }
}
