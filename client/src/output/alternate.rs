//! The alternate `qstat` table (`-a`, and what `-u`, `-i`, `-r`, `-n`, `-s`, `-H`, `-T` imply),
//! OpenPBS non-wide flavor, with the `-n` node lines, the `-s` comment lines and `-1` (PBS
//! reference sections 6.2 and 6.3), and `-T`'s `Est Start` column in place of the elapsed time
//! (OpenPBS `altdsp_statjob` with `ALT_DISPLAY_T`; the caller sorts the jobs).
//!
//! Owns: that table. Must not: filter jobs (`-u`, `-i`, `-r` are the caller's business), talk
//! to the server, or print.

use proto::JobStatus;

use super::columns::{before_at, left, right, size_column_in, truncate, SizeUnit};
use super::time::{est_start_text, EstClock};

/// What OpenPBS prints for a value the job does not have. It is four characters wide on
/// purpose: right-aligned in a column it leaves a blank after the dashes (`   -- `).
const BLANK: &str = " -- ";

/// The column titles and rules under the `Req'd  Req'd   Elap` line.
pub const ALT_COLUMNS: &str = "\
Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time
--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----
";

/// Comments longer than this are cut for `-s` (three blanks before and after fill 80 columns).
const COMMENT_SCOPE: usize = 74;

/// Characters of a cut comment kept before `...`.
const COMMENT_KEEP: usize = 71;

/// The line length exec_host lines stay under (OpenPBS `CHAR_LINE_LIMIT - 1`).
const NODE_LINE_LIMIT: usize = 77;

/// Options of the alternate display.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AltOptions {
    /// `-n`: the job's `exec_host` under its row, host domains stripped, folded near 78
    /// columns.
    pub nodes: bool,
    /// `-1`: with `-n` or `-s`, the node list goes on the row's own line. Ignored alone.
    pub one_line: bool,
    /// `-s`: the job's `comment` under its row, indented by three blanks.
    pub comment: bool,
    /// The server's `comment` attribute, printed after `<server>: ` in the heading.
    pub server_comment: Option<String>,
    /// `-G` / `-M`: the Memory column in gigabytes or megawords.
    pub sizes: SizeUnit,
    /// `-T`: the last column is the estimated start (`Est Start`), told against this clock.
    pub estimated: Option<EstClock>,
}

/// The alternate display of one server's jobs, in the order given. Empty when there is no job.
/// Starts with an empty line and `<server>: `, then the headings, then per job the row
/// `%-15.15s %-8.8s %-8.8s %-10.10s %6.6s %3.3s %3.3s %6.6s %5.5s %1.1s %5.5s` (id, user,
/// queue, name, session, nodes, cpus, memory, requested and elapsed time cut to `HH:MM`),
/// followed by the `-n` and `-s` lines that `opts` asks for.
pub fn qstat_alternate(server: &str, jobs: &[JobStatus], opts: &AltOptions) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let server_comment = opts.server_comment.as_deref().unwrap_or("");
    let mut out = format!("\n{server}: {server_comment}\n");
    if opts.estimated.is_some() {
        out.push_str(&format!("{}Est\n{}Req'd  Req'd   Start\n", " ".repeat(75), " ".repeat(60)));
    } else {
        out.push_str(&format!("{}Req'd  Req'd   Elap\n", " ".repeat(60)));
    }
    out.push_str(ALT_COLUMNS);
    for job in jobs {
        push_job(&mut out, job, opts);
    }
    out
}

/// One job: its row, then its node and comment lines.
fn push_job(out: &mut String, job: &JobStatus, opts: &AltOptions) {
    out.push_str(&alt_row(job, opts.sizes, opts.estimated));
    let same_line = opts.one_line && (opts.nodes || opts.comment);
    out.push(if same_line { ' ' } else { '\n' });
    let mut line_open = same_line;
    if opts.nodes {
        let nodes = exec_host_lines(job.get("exec_host").unwrap_or(BLANK), same_line);
        line_open &= nodes.is_empty();
        out.push_str(&nodes);
    }
    if opts.comment {
        let comment = job_comment(job);
        if !comment.is_empty() {
            out.push_str(&format!("   {comment}\n"));
            line_open = false;
        }
    }
    if line_open {
        out.push('\n');
    }
}

/// The row of one job, without the newline. With `estimated`, the last column is the
/// estimated start of a job in state `Q`, `S` or `B` (`--` for the others).
fn alt_row(job: &JobStatus, sizes: SizeUnit, estimated: Option<EstClock>) -> String {
    let cut = |name: &str, width: usize| job.get(name).map_or(BLANK.to_string(), |v| truncate(v, width));
    let user = job.get("Job_Owner").map_or(BLANK.to_string(), |v| truncate(before_at(v), 8));
    let tasks = match job.get("Resource_List.ncpus") {
        Some(ncpus) if ncpus != "0" => truncate(ncpus, 3),
        _ => BLANK.to_string(),
    };
    let memory = job.get("Resource_List.mem").map_or(BLANK.to_string(), |mem| size_column_in(mem, sizes));
    // A cput limit makes both time columns about cpu time instead of wall time.
    let (requested, elapsed) = match job.get("Resource_List.cput") {
        Some(cput) => (cput, job.get("resources_used.cput")),
        None => (job.get("Resource_List.walltime").unwrap_or(BLANK), job.get("resources_used.walltime")),
    };
    let last = match estimated {
        Some(clock) if matches!(job.get("job_state"), Some("Q" | "S" | "B")) => {
            est_start_text(job.get("estimated.start_time"), clock)
        }
        Some(_) => "--".to_string(),
        None => elapsed.unwrap_or(BLANK).to_string(),
    };
    [
        left(&truncate(&job.id, 15), 15),
        left(&user, 8),
        left(&cut("queue", 8), 8),
        left(&cut("Job_Name", 10), 10),
        right(&cut("session_id", 6), 6),
        right(&cut("Resource_List.nodect", 3), 3),
        right(&tasks, 3),
        right(&memory, 6),
        right(requested, 5),
        right(job.get("job_state").unwrap_or(BLANK), 1),
        right(&last, 5),
    ]
    .join(" ")
}

/// The `-s` text of a job: its comment, cut to 74 characters with `...`, or ` -- `.
fn job_comment(job: &JobStatus) -> String {
    let Some(comment) = job.get("comment") else {
        return BLANK.to_string();
    };
    if comment.chars().count() <= COMMENT_SCOPE {
        return comment.to_string();
    }
    let kept: String = comment.chars().take(COMMENT_KEEP).collect();
    kept + "..."
}

/// The `-n` text of an `exec_host` value: hosts without their domain (IPv4 addresses kept),
/// joined by `+`. Folded into lines indented by three blanks, each under 77 characters and
/// ending in `+` when continued; on one line ended by a newline when `same_line`.
pub(super) fn exec_host_lines(exec_host: &str, same_line: bool) -> String {
    let chunks: Vec<String> = exec_host.split('+').filter(|c| !c.is_empty()).map(strip_domain).collect();
    if chunks.is_empty() {
        return String::new();
    }
    if same_line {
        return chunks.join("+") + "\n";
    }
    let mut out = String::new();
    let mut line = String::new();
    for chunk in chunks {
        if !line.is_empty() && line.chars().count() + chunk.chars().count() >= NODE_LINE_LIMIT {
            out.push_str(&format!("   {line}\n"));
            line.clear();
        }
        line.push_str(&chunk);
        line.push('+');
    }
    line.pop();
    out.push_str(&format!("   {line}\n"));
    out
}

/// `node1.example.com/0*2` -> `node1/0*2`; `10.0.0.5/0` stays as it is.
fn strip_domain(chunk: &str) -> String {
    let (host, slots) = chunk.split_at(chunk.find('/').unwrap_or(chunk.len()));
    if host.parse::<std::net::Ipv4Addr>().is_ok() {
        return chunk.to_string();
    }
    let short = host.split('.').find(|label| !label.is_empty()).unwrap_or(host);
    format!("{short}{slots}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::samples;

    fn opts(nodes: bool, one_line: bool, comment: bool) -> AltOptions {
        AltOptions { nodes, one_line, comment, ..AltOptions::default() }
    }

    #[test]
    fn no_jobs_prints_nothing() {
        assert_eq!(qstat_alternate("head", &[], &AltOptions::default()), "");
    }

    #[test]
    fn reference_example_byte_for_byte() {
        let jobs = [samples::running_job(), samples::queued_job()];
        let text = qstat_alternate("head", &jobs, &AltOptions::default());
        let expected = [
            "",
            "head: ",
            "                                                            Req'd  Req'd   Elap",
            "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
            "--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
            "123.head        alice    workq    myjob       24567   2   4    2gb 01:00 R 00:12",
            "124.head        alice    workq    STDIN         --    1   1    --  00:10 Q   -- ",
        ];
        assert_eq!(text, expected.join("\n") + "\n");
    }

    #[test]
    fn server_comment_follows_the_server_name() {
        let options = AltOptions { server_comment: Some("Maintenance at 18:00".into()), ..AltOptions::default() };
        let text = qstat_alternate("head", &[samples::queued_job()], &options);
        assert!(text.starts_with("\nhead: Maintenance at 18:00\n"), "{text:?}");
    }

    #[test]
    fn long_values_are_cut_with_a_star() {
        let row = alt_row(&samples::long_names_job(), SizeUnit::AsGiven, None);
        assert_eq!(row, "1234567[].head* averyve* long_qu* exactly_s* 41943* 10* 10*  118gb 200:0 R 154:1");
    }

    #[test]
    fn memory_in_gigabytes_or_megawords() {
        let row = |sizes| alt_row(&samples::long_names_job(), sizes, None);
        assert!(row(SizeUnit::Gigabytes).contains("  118gb "), "{}", row(SizeUnit::Gigabytes));
        assert!(row(SizeUnit::Megawords).contains("   15gw "), "{}", row(SizeUnit::Megawords));
    }

    #[test]
    fn node_lines_are_indented_and_folded() {
        let text = exec_host_lines(samples::long_names_job().get("exec_host").unwrap_or(""), false);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 1, "{text}");
        for line in &lines {
            assert!(line.starts_with("   compute-node-"), "{line:?}");
            assert!(line.len() < 3 + NODE_LINE_LIMIT, "{line:?}");
        }
        assert!(lines[0].ends_with('+'));
        let joined: String = lines.iter().map(|l| l.trim_start()).collect();
        let expected: Vec<String> = (1..=12).map(|n| format!("compute-node-{n:02}/0*8")).collect();
        assert_eq!(joined, expected.join("+"));
    }

    #[test]
    fn domains_are_stripped_but_addresses_kept() {
        assert_eq!(strip_domain("node1.example.com/0*2"), "node1/0*2");
        assert_eq!(strip_domain("10.0.0.5/1"), "10.0.0.5/1");
        assert_eq!(exec_host_lines("node1/0*2+node2/0*2", false), "   node1/0*2+node2/0*2\n");
        assert_eq!(exec_host_lines(BLANK, false), "    -- \n");
    }

    #[test]
    fn one_line_puts_nodes_after_the_row() {
        let text = qstat_alternate("head", &[samples::running_job()], &opts(true, true, false));
        let last = text.lines().last().unwrap_or_default();
        assert!(last.starts_with("123.head        alice"), "{last:?}");
        assert!(last.ends_with("R 00:12 node1/0*2+node2/0*2"), "{last:?}");
    }

    #[test]
    fn one_line_alone_changes_nothing() {
        let jobs = samples::reference_jobs();
        assert_eq!(
            qstat_alternate("head", &jobs, &opts(false, true, false)),
            qstat_alternate("head", &jobs, &AltOptions::default())
        );
    }

    #[test]
    fn long_comments_are_cut_to_74_characters() {
        let comment = job_comment(&samples::finished_job());
        assert_eq!(comment.chars().count(), 74);
        assert!(comment.ends_with("..."));
        assert_eq!(job_comment(&samples::held_job()), "job held, too many failed attempts to run");
    }

    #[test]
    fn estimated_start_replaces_the_elapsed_time() {
        let clock = EstClock { now: samples::T0, tm: pbslog::time::Tm::utc };
        let options = AltOptions { estimated: Some(clock), ..AltOptions::default() };
        let jobs = [samples::running_job(), samples::planned_job(), samples::queued_job(), samples::held_job()];
        let text = qstat_alternate("head", &jobs, &options);
        let expected = [
            "",
            "head: ",
            "                                                                           Est",
            "                                                            Req'd  Req'd   Start",
            "Job ID          Username Queue    Jobname    SessID NDS TSK Memory Time  S Time",
            "--------------- -------- -------- ---------- ------ --- --- ------ ----- - -----",
            "123.head        alice    workq    myjob       24567   2   4    2gb 01:00 R    --",
            "127.head        bob      workq    big           --    1   1    --  00:30 Q 23:26",
            "124.head        alice    workq    STDIN         --    1   1    --  00:10 Q    --",
            "125.head        alice    workq    a_very_lo*    --    1   1    --  02:00 H    --",
        ];
        assert_eq!(text, expected.join("\n") + "\n");
    }

    #[test]
    fn snapshot_estimated_with_comments() {
        let clock = EstClock { now: samples::T0, tm: pbslog::time::Tm::utc };
        let options = AltOptions { estimated: Some(clock), comment: true, ..AltOptions::default() };
        let mut jobs = samples::all_jobs();
        jobs.insert(1, samples::planned_job());
        insta::assert_snapshot!(qstat_alternate("head", &jobs, &options));
    }

    #[test]
    fn snapshot_plain() {
        insta::assert_snapshot!(qstat_alternate("head", &samples::all_jobs(), &AltOptions::default()));
    }

    #[test]
    fn snapshot_nodes_and_comments() {
        insta::assert_snapshot!(qstat_alternate("head", &samples::all_jobs(), &opts(true, false, true)));
    }

    #[test]
    fn snapshot_nodes_and_comments_one_line() {
        insta::assert_snapshot!(qstat_alternate("head", &samples::all_jobs(), &opts(true, true, true)));
    }
}
