//! The TORQUE layouts of the `qstat` tables, used when the server's flavor is `torque` (PBS
//! reference sections 6.1 and 6.2):
//!
//! ```text
//! Job ID                    Name             User            Time Use S Queue
//! ------------------------- ---------------- --------------- -------- - -----
//! 123.head.example.com       myjob            alice           00:00:01 R batch
//! ```
//!
//! Full job ids, no `*` marks, and TORQUE's header one column narrower than the data (so data
//! sits one character right of its title); the alternate table with wide columns, full
//! `HH:MM:SS` times and the elapsed time computed from `Walltime.Remaining`.
//!
//! Owns: those two tables. Must not: filter or sort jobs, talk to the server, or print.
//! Invariant (as for OpenPBS): every default row splits into exactly six fields.

use proto::JobStatus;

use super::alternate::{exec_host_lines, AltOptions};
use super::columns::{before_at, left, right, size_column_in, SizeUnit};
use super::default::field;
use super::listed::Listed;

/// TORQUE's default header (`display_statjob`): 25 + 1 columns where the rows use 26 + 1.
pub const TORQUE_DEFAULT_HEADER: &str = "\
Job ID                    Name             User            Time Use S Queue
------------------------- ---------------- --------------- -------- - -----
";

/// Ids longer than this are cut (`PBS_MAXSEQNUM + PBS_MAXJOBARRAYLEN + 8`) ...
const ID_CUT_ABOVE: usize = 23;

/// ... to this many characters (`PBS_MAXSEQNUM + PBS_MAXJOBARRAYLEN + 14`), without a mark.
const ID_CUT_TO: usize = 29;

/// Names longer than this are shortened to `...` and their tail.
const NAME_WIDTH: usize = 16;

/// The default `qstat` display in TORQUE's layout. Empty when there is no job. Rows follow
/// `%-26s %-16s %-15s %8s %1s %-15s` and keep the trailing blanks of the last column.
/// Of status records or of rows ([`Listed`]).
pub fn qstat_default_torque<J: Listed>(jobs: &[J]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let mut out = String::from(TORQUE_DEFAULT_HEADER);
    for job in jobs {
        out.push_str(&default_row(job));
        out.push('\n');
    }
    out
}

fn default_row(job: &impl Listed) -> String {
    let id = job.id();
    let id = if id.chars().count() > ID_CUT_ABOVE { id.chars().take(ID_CUT_TO).collect() } else { id.to_string() };
    let name = short_name(job.get("Job_Name").unwrap_or(""));
    let user = cut(before_at(job.get("Job_Owner").unwrap_or("")), 15);
    let time_use = cut(job.get("resources_used.cput").unwrap_or("0"), 8);
    let state = cut(job.get("job_state").unwrap_or("-"), 1);
    let queue = cut(before_at(job.get("queue").unwrap_or("")), 15);
    format!(
        "{:<26} {:<16} {:<15} {:>8} {:>1} {:<15}",
        field(&id),
        field(&name),
        field(&user),
        field(&time_use),
        field(&state),
        field(&queue)
    )
}

/// TORQUE's short job name: a name over 16 characters becomes `...` and its last 13
/// characters, or `...` and its tail from the first `/` within those 13 characters.
pub fn short_name(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    if chars.len() <= NAME_WIDTH {
        return name.to_string();
    }
    let start = chars.len() - NAME_WIDTH + 3;
    let from = chars[start..].iter().position(|c| *c == '/').map_or(start, |offset| start + offset);
    format!("...{}", chars[from..].iter().collect::<String>())
}

fn cut(value: &str, width: usize) -> String {
    value.chars().take(width).collect()
}

/// What TORQUE prints for a value the job does not have.
const BLANK: &str = " -- ";

/// The alternate display in TORQUE's layout. Empty when there is no job. Starts with an empty
/// line and `<server>: `, then the headings, then per job the row
/// `%-23.22s %-11.11s %-8.8s %-16.16s %6.6s %5.5s %6.6s %9.9s %9.9s %1.1s %9.9s` and the `-n`
/// and `-s` lines `opts` asks for.
pub fn qstat_alternate_torque(server: &str, jobs: &[JobStatus], opts: &AltOptions) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let server_comment = opts.server_comment.as_deref().unwrap_or("");
    let mut out = format!("\n{server}: {server_comment}\n{}Req'd       Req'd       Elap\n", " ".repeat(82));
    out.push_str("Job ID                  Username    Queue    Jobname          SessID  NDS   TSK   Memory      Time    S   Time\n");
    out.push_str("----------------------- ----------- -------- ---------------- ------ ----- ------ --------- --------- - ---------\n");
    for job in jobs {
        out.push_str(&alt_row(job, opts.sizes));
        if opts.nodes && opts.one_line {
            let nodes = exec_host_lines(job.get("exec_host").unwrap_or(BLANK), true);
            out.push_str(&format!("   {}", if nodes.is_empty() { "\n" } else { &nodes }));
        } else {
            out.push('\n');
            if opts.nodes {
                out.push_str(&exec_host_lines(job.get("exec_host").unwrap_or(BLANK), false));
            }
        }
        if opts.comment {
            out.push_str(&format!("   {}\n", job.get("comment").unwrap_or(BLANK)));
        }
    }
    out
}

fn alt_row(job: &JobStatus, sizes: SizeUnit) -> String {
    let get = |name: &str| job.get(name).unwrap_or(BLANK);
    let user = job.get("Job_Owner").map_or(BLANK, before_at);
    let state = get("job_state");
    let cput_limit = job.get("Resource_List.cput");
    let requested = cput_limit.unwrap_or(get("Resource_List.walltime"));
    let elapsed = match cput_limit {
        Some(_) => get("resources_used.cput").to_string(),
        None if matches!(state, "Q" | "C" | "H") => BLANK.to_string(),
        None => {
            let limit = job.get("Resource_List.walltime").map_or(0, hms_seconds);
            let remaining = job.get("Walltime.Remaining").and_then(|v| v.trim().parse::<i64>().ok()).unwrap_or(0);
            hms(limit - remaining)
        }
    };
    [
        left(&cut(&job.id, 22), 23),
        left(user, 11),
        left(get("queue"), 8),
        left(get("Job_Name"), 16),
        right(get("session_id"), 6),
        right(get("Resource_List.nodect"), 5),
        right(&tasks(job), 6),
        right(&memory(job, sizes), 9),
        right(requested, 9),
        right(state, 1),
        right(&elapsed, 9),
    ]
    .join(" ")
}

/// TSK: the sum of count x ppn over the `nodes` spec, else `procs`, else `ncpus` (not `0`).
fn tasks(job: &JobStatus) -> String {
    if let Some(total) = job.get("Resource_List.nodes").map(nodes_tasks).filter(|total| *total > 0) {
        return total.to_string();
    }
    ["Resource_List.procs", "Resource_List.ncpus"]
        .iter()
        .filter_map(|name| job.get(name))
        .find(|value| *value != "0")
        .unwrap_or(BLANK)
        .to_string()
}

/// Tasks of a TORQUE node spec: `2:ppn=4+node5` = 2 x 4 + 1 x 1.
fn nodes_tasks(spec: &str) -> u64 {
    spec.split('+')
        .map(|part| {
            let mut items = part.split(':');
            let count = items.next().and_then(|first| first.parse::<u64>().ok()).filter(|n| *n > 0).unwrap_or(1);
            let ppn = items.find_map(|item| item.strip_prefix("ppn=")?.parse::<u64>().ok()).filter(|n| *n > 0);
            count.saturating_mul(ppn.unwrap_or(1))
        })
        .fold(0, u64::saturating_add)
}

/// Memory: the last of `mem`, `pmem`, `dmem`, `vmem`, `pvmem` the job requested, as given, or
/// in gigabytes (`-G`) or megawords (`-M`).
fn memory(job: &JobStatus, sizes: SizeUnit) -> String {
    let names = ["mem", "pmem", "dmem", "vmem", "pvmem"];
    job.attrs
        .iter()
        .rfind(|attr| attr.name == "Resource_List" && attr.resource.as_deref().is_some_and(|r| names.contains(&r)))
        .map_or(BLANK.to_string(), |attr| match sizes {
            SizeUnit::AsGiven => attr.value.clone(),
            _ => size_column_in(&attr.value, sizes),
        })
}

/// Seconds of `HH:MM:SS` (TORQUE's `timestring_to_int`; other shapes count as 0).
fn hms_seconds(text: &str) -> i64 {
    let parts: Vec<i64> = text.split(':').map(|part| part.trim().parse().unwrap_or(0)).collect();
    match parts[..] {
        [hours, minutes, seconds] => hours * 3600 + minutes * 60 + seconds,
        _ => 0,
    }
}

/// `%.2d:%.2d:%.2d` of seconds, as TORQUE's `time_to_string`.
fn hms(seconds: i64) -> String {
    let sign = if seconds < 0 { "-" } else { "" };
    let seconds = seconds.unsigned_abs();
    format!("{sign}{:02}:{:02}:{:02}", seconds / 3600, seconds % 3600 / 60, seconds % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;

    fn opts(nodes: bool, one_line: bool, comment: bool) -> AltOptions {
        AltOptions { nodes, one_line, comment, ..AltOptions::default() }
    }

    #[test]
    fn reference_default_rows_byte_for_byte() {
        let mut jobs = samples::torque_reference_jobs();
        // The reference's completed job has no cpu time recorded: the column shows 0.
        jobs[1].attrs.retain(|attr| attr.full_name() != "resources_used.cput");
        let text = qstat_default_torque(&jobs);
        let expected = [
            "Job ID                    Name             User            Time Use S Queue",
            "------------------------- ---------------- --------------- -------- - -----",
            "123.head.example.com       myjob            alice           00:00:01 R batch          ",
            "124.head.example.com       STDIN            alice                  0 C batch          ",
        ];
        assert_eq!(text, expected.join("\n") + "\n");
    }

    #[test]
    fn no_jobs_prints_nothing() {
        assert_eq!(qstat_default_torque::<JobStatus>(&[]), "");
        assert_eq!(qstat_alternate_torque("head", &[], &AltOptions::default()), "");
    }

    #[test]
    fn every_default_row_has_six_fields_and_full_ids() {
        let jobs = samples::torque_jobs();
        let text = qstat_default_torque(&jobs);
        for (row, job) in text.lines().skip(2).zip(&jobs) {
            let fields: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(fields.len(), 6, "{row:?}");
            assert!(job.id.starts_with(fields[0]), "{row:?}");
        }
    }

    #[test]
    fn long_values_are_cut_without_marks() {
        assert_eq!(short_name("exactly_sixteen_"), "exactly_sixteen_");
        assert_eq!(short_name("a_very_long_job_name_here"), "...job_name_here");
        assert_eq!(short_name("run/pipeline/step_one_two"), ".../step_one_two");
        let id = "1234567890123456[].head.example.com";
        let row = default_row(&proto::JobStatus { id: id.into(), attrs: vec![] });
        assert!(row.starts_with("1234567890123456[].head.examp "), "{row:?}");
    }

    #[test]
    fn reference_alternate_row_byte_for_byte() {
        let text = qstat_alternate_torque("head.example.com", &[samples::torque_running_job()], &AltOptions::default());
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0], "");
        assert_eq!(rows[1], "head.example.com: ");
        assert_eq!(rows[2], format!("{}Req'd       Req'd       Elap", " ".repeat(82)));
        assert_eq!(
            rows[5],
            "123.head.example.com    alice       batch    myjob             24567     2      4       2gb  01:00:00 R  00:12:31"
        );
    }

    #[test]
    fn memory_in_megawords_with_m() {
        let opts = AltOptions { sizes: SizeUnit::Megawords, ..AltOptions::default() };
        let text = qstat_alternate_torque("head.example.com", &[samples::torque_running_job()], &opts);
        assert!(text.lines().nth(5).unwrap().contains("     256mw  01:00:00 R"), "{text}");
    }

    #[test]
    fn tasks_come_from_the_nodes_spec() {
        assert_eq!(nodes_tasks("2:ppn=4+node5"), 9);
        assert_eq!(nodes_tasks("1"), 1);
        assert_eq!(nodes_tasks("node1:gpu:ppn=2"), 2);
        assert_eq!(hms(754), "00:12:34");
        assert_eq!(hms(-5), "-00:00:05");
        assert_eq!(hms_seconds("01:00:00"), 3600);
    }

    /// The same jobs in both layouts, OpenPBS first (each as its server sends them).
    #[test]
    fn snapshot_flavors_side_by_side() {
        use crate::output::{qstat_alternate, qstat_default};
        let openpbs = samples::reference_jobs();
        let torque = samples::torque_reference_jobs();
        let none = AltOptions::default();
        let text = [
            "--- openpbs: qstat".to_string(),
            qstat_default(&openpbs),
            "--- torque: qstat".to_string(),
            qstat_default_torque(&torque),
            "--- openpbs: qstat -a".to_string(),
            qstat_alternate("head", &openpbs, &none),
            "--- torque: qstat -a".to_string(),
            qstat_alternate_torque("head.example.com", &torque, &none),
        ]
        .join("\n");
        insta::assert_snapshot!(text);
    }

    #[test]
    fn snapshot_default() {
        insta::assert_snapshot!(qstat_default_torque(&samples::torque_jobs()));
    }

    #[test]
    fn snapshot_alternate_with_nodes_and_comments() {
        let jobs = samples::torque_jobs();
        let mut text = qstat_alternate_torque("head.example.com", &jobs, &opts(true, false, true));
        text.push_str("--- -n -1\n");
        text.push_str(&qstat_alternate_torque("head.example.com", &jobs, &opts(true, true, false)));
        insta::assert_snapshot!(text);
    }
}
