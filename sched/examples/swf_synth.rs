//! A synthetic Standard Workload Format trace for timing `minipbs simulate` (bench/simulate):
//! deterministic (fastrand seeded with 16), printed to stdout. Not a workload model: only a
//! load of the right size and shape to time the replay with. Usage:
//! `cargo run --release -p sched --example swf_synth -- [JOBS] [PROCS] > synth.swf`
//! (defaults 100000 jobs, a machine of 1024 processors).
//!
//! Each job: processors 2^k, k uniform in 0..=8 (1 to 256; mean 56.8); run time log-uniform
//! in 10 s..10 h (mean about 4,400 s); requested time the run time times a factor uniform in
//! 1..5 (users overestimate), at most 36 h; inter-arrival times exponential with the mean that
//! offers 80% of the machine (mean processors x mean run time / (0.8 x PROCS)).

use std::fmt::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let jobs: u64 = args.next().map_or(100_000, |text| text.parse().expect("JOBS is a number"));
    let procs: u64 = args.next().map_or(1024, |text| text.parse().expect("PROCS is a number"));
    let mut rng = fastrand::Rng::with_seed(16);
    let (min_run, max_run) = (10f64, 36_000f64);
    let mean_procs = 511.0 / 9.0;
    let mean_run = (max_run - min_run) / (max_run / min_run).ln();
    let mean_gap = mean_procs * mean_run / (0.8 * procs as f64);
    let mut out = String::new();
    let _ = writeln!(out, "; Version: 2.2\n; Computer: synthetic (minipbs sched/examples/swf_synth.rs, seed 16)");
    let _ = writeln!(out, "; MaxJobs: {jobs}\n; MaxRecords: {jobs}\n; MaxNodes: {procs}\n; MaxProcs: {procs}");
    let mut submit = 0f64;
    for id in 1..=jobs {
        let size = 1u64 << rng.u32(0..=8);
        let run = (min_run.ln() + rng.f64() * (max_run / min_run).ln()).exp().round() as u64;
        let requested = ((run as f64) * (1.0 + 4.0 * rng.f64())).min(129_600.0).round() as u64;
        let _ = writeln!(
            out,
            "{id} {} -1 {run} {size} -1 -1 {size} {requested} -1 1 1 1 -1 -1 -1 -1 -1",
            submit.round() as u64
        );
        submit += -mean_gap * (1.0 - rng.f64()).ln();
    }
    print!("{out}");
}
