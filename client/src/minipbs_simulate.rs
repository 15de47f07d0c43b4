//! `minipbs simulate TRACE.swf`: replays a Standard Workload Format trace (plain or gzip'd,
//! as the Parallel Workloads Archive ships them) through the scheduler on a virtual clock
//! (`sched::simulate`) and prints its metrics, one `key value` per line or as JSON.
//!
//! Owns: reading the file (bounded, gzip detected by its magic bytes), the options, the
//! output. The one command that uses `sched` (a pure library: no server is involved).
//! Must not know: the replay's semantics (see `sched/src/simulate/mod.rs`).

use std::io::Read;
use std::path::{Path, PathBuf};

use sched::simulate::{simulate, Policy, Report, SimOptions};

/// Most bytes of trace text read (after decompression): a gzip bomb stops here.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

/// `minipbs simulate` options.
#[derive(clap::Parser, Debug, Clone)]
pub struct SimulateArgs {
    /// The trace, in the Parallel Workloads Archive's Standard Workload Format (.swf or .swf.gz).
    pub trace: PathBuf,
    /// Nodes of the simulated machine (default: the header's MaxProcs as nodes of 1 slot).
    #[arg(long)]
    pub nodes: Option<u64>,
    /// Cpu slots per node (with --nodes).
    #[arg(long, default_value_t = 1, requires = "nodes")]
    pub ppn: u64,
    /// fifo (strict first come, first served), easy (backfill, one reservation) or
    /// conservative (backfill, a reservation for every waiting job).
    #[arg(long, value_enum, default_value = "easy")]
    pub policy: PolicyArg,
    /// Only the first N job records of the trace.
    #[arg(long)]
    pub first: Option<usize>,
    /// Print the metrics as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also print one `start JOB SUBMIT START END` line per job, in the order they started
    /// (times in seconds since the first submission).
    #[arg(long, conflicts_with = "json")]
    pub starts: bool,
}

/// `--policy`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyArg {
    Fifo,
    Easy,
    Conservative,
}

/// Runs the replay and prints the report; `Err` is the message for `minipbs: ...`.
pub fn run(args: &SimulateArgs) -> Result<(), String> {
    let text = read_trace(&args.trace)?;
    let policy = match args.policy {
        PolicyArg::Fifo => Policy::Fifo,
        PolicyArg::Easy => Policy::Easy,
        PolicyArg::Conservative => Policy::Conservative,
    };
    let options = SimOptions { nodes: args.nodes, ppn: args.ppn, policy, first: args.first };
    let report = simulate(&text, &options).map_err(|error| format!("{}: {error}", args.trace.display()))?;
    if args.json {
        println!("{}", json(&report));
    } else {
        print!("{}", text_lines(&report, args.starts));
    }
    Ok(())
}

/// The trace's text: gunzipped when it starts with gzip's magic bytes; at most
/// [`MAX_TRACE_BYTES`].
fn read_trace(path: &Path) -> Result<String, String> {
    read_bounded(path, MAX_TRACE_BYTES)
}

/// [`read_trace`] with the bound as an argument (tests use a small one).
fn read_bounded(path: &Path, max: u64) -> Result<String, String> {
    let cannot = |error: std::io::Error| format!("cannot read {}: {error}", path.display());
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut magic = [0u8; 2];
    let head = read_up_to(&mut file, &mut magic).map_err(cannot)?;
    let start = std::io::Cursor::new(magic[..head].to_vec()).chain(file);
    let reader: Box<dyn Read> = if magic[..head] == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(start))
    } else {
        Box::new(start)
    };
    let mut bytes = Vec::new();
    reader.take(max + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > max {
        return Err(format!("{}: more than {max} bytes of trace", path.display()));
    }
    String::from_utf8(bytes).map_err(|_| format!("{}: not a text file (SWF is plain text)", path.display()))
}

/// Fills as much of `buf` as the reader gives before its end.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..])? {
            0 => break,
            count => filled += count,
        }
    }
    Ok(filled)
}

/// `key value` lines: the issue's metrics, then `skipped`, then (with `starts`) the jobs.
pub fn text_lines(report: &Report, starts: bool) -> String {
    let mut out = format!(
        "jobs {}\nutilization {:.4}\nmean_wait_s {:.1}\nmean_bounded_slowdown {:.2}\nmax_wait_s {}\nmakespan_s {}\nskipped {}\n",
        report.jobs,
        report.utilization,
        report.mean_wait_s,
        report.mean_bounded_slowdown,
        report.max_wait_s,
        report.makespan_s,
        report.skipped
    );
    if starts {
        for job in &report.starts {
            out += &format!("start {} {} {} {}\n", job.id, job.submit, job.start, job.end);
        }
    }
    out
}

/// The metrics as one JSON object, with exactly the issue's keys plus `skipped`.
pub fn json(report: &Report) -> serde_json::Value {
    serde_json::json!({
        "jobs": report.jobs,
        "utilization": report.utilization,
        "mean_wait_s": report.mean_wait_s,
        "mean_bounded_slowdown": report.mean_bounded_slowdown,
        "max_wait_s": report.max_wait_s,
        "makespan_s": report.makespan_s,
        "skipped": report.skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TRACE: &str = "; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n\
                         2 10 -1 50 4 -1 -1 4 50 -1 1 1 1 -1 -1 -1 -1 -1\n";

    fn args(path: &Path) -> SimulateArgs {
        SimulateArgs {
            trace: path.to_path_buf(),
            nodes: None,
            ppn: 1,
            policy: PolicyArg::Fifo,
            first: None,
            json: false,
            starts: false,
        }
    }

    #[test]
    fn plain_and_gzipped_traces_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("t.swf");
        std::fs::write(&plain, TRACE).unwrap();
        let gz = dir.path().join("t.swf.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(TRACE.as_bytes()).unwrap();
        std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
        assert_eq!(read_trace(&plain).unwrap(), TRACE);
        assert_eq!(read_trace(&gz).unwrap(), TRACE);
        let empty = dir.path().join("empty.swf");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(read_trace(&empty).unwrap(), "");
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.swf");
        assert!(run(&args(&missing)).unwrap_err().starts_with(&format!("cannot read {}", missing.display())));
        let bad = dir.path().join("bad.swf");
        std::fs::write(&bad, "; MaxProcs: 4\n1 0 -1 100\n").unwrap();
        assert_eq!(run(&args(&bad)).unwrap_err(), format!("{}: line 2: 4 fields, a job record has 18", bad.display()));
        let binary = dir.path().join("binary.swf");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert!(run(&args(&binary)).unwrap_err().ends_with("not a text file (SWF is plain text)"));
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_bound() {
        // 8 MiB of spaces compress to a few kilobytes; the reader stops at the bound (here
        // 1 MiB, in the command 1 GiB), whatever the file claims to hold.
        let dir = tempfile::tempdir().unwrap();
        let bomb = dir.path().join("bomb.swf.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![b' '; 8 << 20]).unwrap();
        let compressed = encoder.finish().unwrap();
        assert!(compressed.len() < 100_000);
        std::fs::write(&bomb, compressed).unwrap();
        assert_eq!(
            read_bounded(&bomb, 1 << 20).unwrap_err(),
            format!("{}: more than 1048576 bytes of trace", bomb.display())
        );
        assert_eq!(read_bounded(&bomb, 8 << 20).unwrap().len(), 8 << 20);
        let plain = dir.path().join("big.swf");
        std::fs::write(&plain, vec![b' '; (1 << 20) + 1]).unwrap();
        assert!(read_bounded(&plain, 1 << 20).is_err());
    }

    #[test]
    fn text_and_json_carry_the_issue_keys_and_skipped() {
        let options = SimOptions { policy: Policy::Fifo, ..SimOptions::default() };
        let report = simulate(TRACE, &options).unwrap();
        let text = text_lines(&report, true);
        assert_eq!(
            text,
            "jobs 2\nutilization 0.6667\nmean_wait_s 45.0\nmean_bounded_slowdown 1.90\nmax_wait_s 90\n\
             makespan_s 150\nskipped 0\nstart 1 0 0 100\nstart 2 10 100 150\n"
        );
        let value = json(&report);
        let mut keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["jobs", "makespan_s", "max_wait_s", "mean_bounded_slowdown", "mean_wait_s", "skipped", "utilization"]
        );
        assert_eq!(value["max_wait_s"], 90);
    }
}
