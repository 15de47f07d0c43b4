//! Tests of the trace simulator: SWF parsing and its bounds, the replay's semantics (skips,
//! `first`, ends before starts), and the metrics of hand-computed traces for each policy.
//!
//! Must not know: files outside the repository's own `bench/traces/`.

use super::swf::{parse, parse_bounded, SwfError};
use super::{simulate, JobStart, Policy, SimError, SimOptions, MAX_SLOTS};

/// An SWF record with the fields the simulator reads; every other field -1.
fn line(id: i64, submit: i64, run: i64, procs: i64, requested: i64) -> String {
    format!("{id} {submit} -1 {run} {procs} -1 -1 {procs} {requested} -1 1 1 1 -1 -1 -1 -1 -1")
}

fn trace(max_procs: u32, lines: &[String]) -> String {
    format!("; Version: 2.2\n; MaxNodes: {max_procs}\n; MaxProcs: {max_procs}\n;\n{}\n", lines.join("\n"))
}

fn options(policy: Policy) -> SimOptions {
    SimOptions { policy, ..SimOptions::default() }
}

fn close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-9, "{actual} != {expected}");
}

/// (job number, start) in start order.
fn order(starts: &[JobStart]) -> Vec<(i64, i64)> {
    starts.iter().map(|job| (job.id, job.start)).collect()
}

#[test]
fn a_record_reads_fields_1_2_4_8_9_and_the_header_max_procs() {
    let text = "; MaxNodes: 64\n; MaxProcs: 128\n  7 100 5 3600 16 -1 -1 32 7200 -1 1 2 3 -1 -1 -1 -1 -1\n";
    let trace = parse(text, None).unwrap();
    assert_eq!((trace.max_procs, trace.max_nodes), (Some(128), Some(64)));
    let record = trace.records[0];
    assert_eq!((record.line, record.id, record.submit, record.run), (3, 7, 100, 3600));
    assert_eq!((record.procs, record.requested), (32, 7200));
}

#[test]
fn unknown_requested_procs_fall_back_to_allocated_and_unknowns_stay_minus_one() {
    let text = "1 0 -1 50 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    let record = parse(text, None).unwrap().records[0];
    assert_eq!((record.procs, record.requested), (8, -1));
}

#[test]
fn decimals_are_numbers_and_empty_and_comment_lines_are_ignored() {
    let text = ";\n; Note: anything: here\n\n   \n1 0 -1 50.7 8 12.5 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    let trace = parse(text, None).unwrap();
    assert_eq!(trace.records.len(), 1);
    assert_eq!(trace.records[0].run, 50);
    assert_eq!(trace.max_procs, None);
}

#[test]
fn a_bad_line_is_an_error_naming_it() {
    let short = "; MaxProcs: 4\n1 0 -1 50 8\n";
    assert_eq!(parse(short, None), Err(SwfError::FieldCount { line: 2, found: 5 }));
    let word = "1 0 -1 fifty 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    assert!(matches!(parse(word, None), Err(SwfError::NotANumber { line: 1, field: 4, .. })));
    let nan = "1 0 -1 50 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 NaN\n";
    assert!(matches!(parse(nan, None), Err(SwfError::NotANumber { line: 1, field: 18, .. })));
    let header = "; MaxProcs: many\n";
    assert!(matches!(parse(header, None), Err(SwfError::BadHeader { line: 1, .. })));
    let message = parse(short, None).unwrap_err().to_string();
    assert_eq!(message, "line 2: 5 fields, a job record has 18");
}

#[test]
fn values_out_of_range_are_errors() {
    let negative = "1 -5 -1 50 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    assert!(matches!(parse(negative, None), Err(SwfError::OutOfRange { line: 1, field: 2, .. })));
    let huge_time = "1 0 -1 99999999999 8 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    assert!(matches!(parse(huge_time, None), Err(SwfError::OutOfRange { field: 4, .. })));
    let huge_procs = "1 0 -1 50 -1 -1 -1 1e12 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    assert!(matches!(parse(huge_procs, None), Err(SwfError::OutOfRange { field: 8, .. })));
    let huge_header = "; MaxProcs: 100000000000\n";
    assert!(matches!(parse(huge_header, None), Err(SwfError::BadHeader { .. })));
}

#[test]
fn a_line_longer_than_the_bound_is_an_error() {
    let long = format!("; {}\n", "x".repeat(super::MAX_LINE));
    assert_eq!(parse(&long, None), Err(SwfError::LongLine { line: 1 }));
    let padded = format!("{}{}\n", " ".repeat(super::MAX_LINE), line(1, 0, 5, 1, 5));
    assert_eq!(parse(&padded, None), Err(SwfError::LongLine { line: 1 }));
}

#[test]
fn more_records_than_the_bound_is_an_error_and_first_stops_reading() {
    let lines: Vec<String> = (1..=4).map(|id| line(id, id, 5, 1, 5)).collect();
    let text = trace(4, &lines);
    assert!(matches!(parse_bounded(&text, None, 3), Err(SwfError::TooManyRecords { line: 8, max: 3 })));
    assert_eq!(parse_bounded(&text, Some(3), 3).unwrap().records.len(), 3);
    // Lines after the first N records are not even read.
    let broken = format!("{}garbage\n", trace(4, &lines[..2]));
    assert_eq!(parse(&broken, Some(2)).unwrap().records.len(), 2);
    assert!(parse(&broken, None).is_err());
}

#[test]
fn jobs_without_procs_too_big_without_run_time_or_submit_time_are_skipped_and_counted() {
    let lines = [
        line(1, 0, 10, 2, 10),
        line(2, 0, 10, 0, 10),  // no processors
        line(3, 0, 10, -1, 10), // unknown processors (field 5 too)
        line(4, 0, 10, 5, 10),  // more than the machine
        line(5, 0, -1, 1, 10),  // no run time
        line(6, 0, 0, 1, 10),   // zero run time
        line(7, -1, 10, 1, 10), // no submit time
        line(8, 5, 10, 4, 10),
    ];
    let report = simulate(&trace(4, &lines), &options(Policy::Fifo)).unwrap();
    assert_eq!((report.jobs, report.skipped), (2, 6));
    assert_eq!(order(&report.starts), [(1, 0), (8, 10)]);
}

#[test]
fn first_n_takes_the_first_n_records_skipped_ones_included() {
    let lines = [line(1, 0, 10, 1, 10), line(2, 1, 10, 9, 10), line(3, 2, 10, 1, 10), line(4, 3, 10, 1, 10)];
    let report = simulate(&trace(4, &lines), &SimOptions { first: Some(3), ..options(Policy::Easy) }).unwrap();
    assert_eq!((report.jobs, report.skipped), (2, 1));
    assert_eq!(order(&report.starts), [(1, 0), (3, 2)]);
}

#[test]
fn time_zero_is_the_first_submission_and_run_times_are_cut_at_the_request() {
    // Submitted at 1000 and 1010; the second asked for 20 s but ran 50: it ends at 20.
    let lines = [line(1, 1000, 30, 4, 60), line(2, 1010, 50, 4, 20)];
    let report = simulate(&trace(4, &lines), &options(Policy::Fifo)).unwrap();
    let times: Vec<(i64, i64, i64)> = report.starts.iter().map(|job| (job.submit, job.start, job.end)).collect();
    assert_eq!(times, [(0, 0, 30), (10, 30, 50)]);
    assert_eq!(report.makespan_s, 50);
    close(report.utilization, (4.0 * 30.0 + 4.0 * 20.0) / (4.0 * 50.0));
}

#[test]
fn at_one_instant_ends_come_before_starts() {
    // The machine is full until 100; the second job, submitted at 50, and the third, submitted
    // at 100 itself, start at 100 on the slots the first gives back.
    let lines = [line(1, 0, 100, 4, 100), line(2, 50, 10, 2, 10), line(3, 100, 10, 2, 10)];
    for policy in [Policy::Fifo, Policy::Easy, Policy::Conservative] {
        let report = simulate(&trace(4, &lines), &options(policy)).unwrap();
        assert_eq!(order(&report.starts), [(1, 0), (2, 100), (3, 100)], "{policy:?}");
        assert_eq!(report.max_wait_s, 50);
    }
}

/// 4 slots: a 2-slot job runs 0-100; a 4-slot job waits for it; a 2-slot job of 30 s
/// (asking 40) fits beside the first and ends long before the 4-slot job's reservation at 100.
fn three_jobs() -> String {
    trace(4, &[line(1, 0, 100, 2, 100), line(2, 10, 50, 4, 50), line(3, 20, 30, 2, 40)])
}

#[test]
fn fifo_metrics_of_three_jobs() {
    // The third job waits behind the second: starts 0, 100, 150; waits 0, 90, 130.
    let report = simulate(&three_jobs(), &options(Policy::Fifo)).unwrap();
    assert_eq!(order(&report.starts), [(1, 0), (2, 100), (3, 150)]);
    assert_eq!((report.jobs, report.skipped, report.max_wait_s, report.makespan_s), (3, 0, 130, 180));
    close(report.mean_wait_s, 220.0 / 3.0);
    close(report.utilization, (2.0 * 100.0 + 4.0 * 50.0 + 2.0 * 30.0) / (4.0 * 180.0));
    close(report.mean_bounded_slowdown, (1.0 + 140.0 / 50.0 + 160.0 / 30.0) / 3.0);
}

#[test]
fn easy_and_conservative_metrics_of_three_jobs() {
    // The third job backfills at once: starts 0, 100, 20; waits 0, 90, 0.
    for policy in [Policy::Easy, Policy::Conservative] {
        let report = simulate(&three_jobs(), &options(policy)).unwrap();
        assert_eq!(order(&report.starts), [(1, 0), (3, 20), (2, 100)], "{policy:?}");
        assert_eq!((report.jobs, report.max_wait_s, report.makespan_s), (3, 90, 150));
        close(report.mean_wait_s, 30.0);
        close(report.utilization, 460.0 / 600.0);
        close(report.mean_bounded_slowdown, (1.0 + 2.8 + 1.0) / 3.0);
    }
}

#[test]
fn easy_does_not_backfill_a_job_that_would_delay_the_reservation() {
    // As `three_jobs`, but the third asks 120 s: it would hold 2 slots past 100, when the
    // 4-slot job is due. EASY keeps it waiting until the 4-slot job ends at 150.
    let text = trace(4, &[line(1, 0, 100, 2, 100), line(2, 10, 50, 4, 50), line(3, 20, 30, 2, 120)]);
    let report = simulate(&text, &options(Policy::Easy)).unwrap();
    assert_eq!(order(&report.starts), [(1, 0), (2, 100), (3, 150)]);
}

/// 4 slots. Job 1 holds 3 until 100; job 2 (2 slots, 100 s) is reserved at 100; job 3
/// (4 slots, 10 s) can only run once job 2 ends, at 200; job 4 (1 slot, 250 s) fits now and
/// does not delay job 2, but would hold a slot at 200, delaying job 3.
fn four_jobs() -> String {
    trace(4, &[line(1, 0, 100, 3, 100), line(2, 1, 100, 2, 100), line(3, 2, 10, 4, 10), line(4, 3, 250, 1, 250)])
}

#[test]
fn easy_protects_only_the_oldest_waiting_job() {
    let report = simulate(&four_jobs(), &options(Policy::Easy)).unwrap();
    assert_eq!(order(&report.starts), [(1, 0), (4, 3), (2, 100), (3, 253)]);
}

#[test]
fn conservative_protects_every_waiting_job() {
    // Job 4 would delay job 3's reservation (200-210): it waits until 210.
    let report = simulate(&four_jobs(), &options(Policy::Conservative)).unwrap();
    assert_eq!(order(&report.starts), [(1, 0), (2, 100), (3, 200), (4, 210)]);
}

#[test]
fn the_machine_defaults_to_max_procs_nodes_of_one_slot_and_can_be_given() {
    let lines = [line(1, 0, 10, 2, 10), line(2, 0, 10, 2, 10)];
    let report = simulate(&trace(4, &lines), &options(Policy::Fifo)).unwrap();
    assert_eq!((report.nodes, report.ppn), (4, 1));
    assert_eq!(order(&report.starts), [(1, 0), (2, 0)]);
    let small = SimOptions { nodes: Some(1), ppn: 2, ..options(Policy::Fifo) };
    let report = simulate(&trace(4, &lines), &small).unwrap();
    assert_eq!(order(&report.starts), [(1, 0), (2, 10)]);
    // A job may span nodes: 3 procs on 2 nodes of 2.
    let span = SimOptions { nodes: Some(2), ppn: 2, ..options(Policy::Fifo) };
    let report = simulate(&trace(4, &[line(1, 0, 10, 3, 10)]), &span).unwrap();
    assert_eq!(report.jobs, 1);
    let no_header = line(1, 0, 10, 1, 10);
    assert_eq!(simulate(&no_header, &options(Policy::Fifo)), Err(SimError::NoMachine));
}

#[test]
fn machine_size_is_bounded() {
    let text = trace(4, &[line(1, 0, 10, 1, 10)]);
    for (nodes, ppn) in [(0, 1), (1, 0), (super::MAX_NODES + 1, 1), (1, super::MAX_PPN + 1), (MAX_SLOTS, 2)] {
        let machine = SimOptions { nodes: Some(nodes), ppn, ..options(Policy::Easy) };
        assert_eq!(simulate(&text, &machine), Err(SimError::MachineSize), "{nodes}x{ppn}");
    }
    let huge = SimOptions { nodes: Some(u64::MAX), ppn: u64::MAX, ..options(Policy::Easy) };
    assert_eq!(simulate(&text, &huge), Err(SimError::MachineSize));
}

#[test]
fn an_empty_trace_has_zero_metrics() {
    let report = simulate(&trace(4, &[]), &options(Policy::Easy)).unwrap();
    assert_eq!((report.jobs, report.makespan_s, report.max_wait_s), (0, 0, 0));
    close(report.utilization, 0.0);
    close(report.mean_wait_s, 0.0);
}

#[test]
fn every_job_starts_once_and_never_overlaps_the_machine() {
    // A busy pseudo-random trace: at every instant the running jobs hold at most 16 slots.
    let mut state = 12345u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as i64
    };
    let lines: Vec<String> =
        (1..=300).map(|id| line(id, id * 7, 1 + next() % 200, 1 + next() % 16, 1 + next() % 400)).collect();
    for policy in [Policy::Fifo, Policy::Easy, Policy::Conservative] {
        let options = SimOptions { nodes: Some(4), ppn: 4, ..options(policy) };
        let report = simulate(&trace(16, &lines), &options).unwrap();
        assert_eq!(report.jobs, 300);
        let mut ids: Vec<i64> = report.starts.iter().map(|job| job.id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (1..=300).collect::<Vec<_>>());
        for job in &report.starts {
            let busy: u32 = report
                .starts
                .iter()
                .filter(|other| other.start <= job.start && job.start < other.end)
                .map(|other| other.procs)
                .sum();
            assert!(busy <= 16, "{policy:?}: {busy} slots busy at {}", job.start);
            assert!(job.start >= job.submit);
        }
        if policy == Policy::Fifo {
            let starts: Vec<i64> = report.starts.iter().map(|job| job.start).collect();
            assert!(starts.windows(2).all(|pair| pair[0] <= pair[1]));
            assert!(report.starts.windows(2).all(|pair| pair[0].id < pair[1].id), "FIFO starts in order");
        }
    }
}

/// The first `jobs` records of the KTH SP2 trace committed under `bench/traces/`.
fn kth() -> String {
    use std::io::Read;
    let bytes = include_bytes!("../../../bench/traces/KTH-SP2-1996-2.1-cln.swf.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut text).unwrap();
    text
}

#[test]
fn easy_waits_less_than_fifo_on_a_real_trace() {
    let text = kth();
    let first = Some(3000);
    let fifo = simulate(&text, &SimOptions { first, ..options(Policy::Fifo) }).unwrap();
    let easy = simulate(&text, &SimOptions { first, ..options(Policy::Easy) }).unwrap();
    assert_eq!((fifo.nodes, fifo.jobs), (100, easy.jobs));
    assert!(easy.mean_wait_s < fifo.mean_wait_s, "EASY {} s, FIFO {} s", easy.mean_wait_s, fifo.mean_wait_s);
}
