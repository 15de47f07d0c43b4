//! The server's counters and histograms for `/metrics` (`http/metrics.rs` adds the gauges it
//! computes at scrape time): submissions and job ends (counted from a handler's notices in
//! `Shared::apply`), the scheduling pass duration (`lib.rs`'s scheduler loop) and the store's
//! commit latency (kept by `store/handle.rs`). Each update is an atomic add: no lock, no
//! allocation on the paths they measure.

use crate::state::outbox::{Notice, NoticeKind};
use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, Opts, Registry};

/// How a job ended, the `how` label of `minipbs_job_ends_total`.
pub const END_KINDS: [&str; 3] = ["ended", "deleted", "aborted"];

/// The server's long-lived metrics. Cheap to clone (each metric is an `Arc` inside).
#[derive(Clone)]
pub struct ServerMetrics {
    submissions: IntCounter,
    job_ends: IntCounterVec,
    /// `job_ends`' series in the order of [`END_KINDS`], resolved once: counting an end under
    /// the state lock is then an atomic add, not a label lookup.
    ends: [IntCounter; 3],
    sched_pass: Histogram,
    store_commit: Histogram,
}

impl ServerMetrics {
    /// The metrics of one server, with the store thread's commit histogram.
    pub fn new(store_commit: Histogram) -> ServerMetrics {
        // Invariant: the names, help texts and buckets below are valid (unit tests build them).
        let submissions = IntCounter::new("minipbs_submissions_total", "Jobs accepted (qsub; an array counts once).")
            .expect("a valid counter");
        let job_ends = IntCounterVec::new(
            Opts::new("minipbs_job_ends_total", "Jobs that finished, by how: ended (ran and ended), deleted, aborted."),
            &["how"],
        )
        .expect("a valid counter");
        let ends = END_KINDS.map(|how| job_ends.with_label_values(&[how]));
        let sched_pass = Histogram::with_opts(
            HistogramOpts::new(
                "minipbs_scheduling_pass_seconds",
                "Time one scheduling pass took under the state lock (passes with nothing queued included).",
            )
            .buckets(vec![0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0]),
        )
        .expect("a valid histogram");
        ServerMetrics { submissions, job_ends, ends, sched_pass, store_commit }
    }

    /// Counts what a handler's notices record: a `Queued` notice is a submission; a notice
    /// whose job is now finished is an end (once per job: a job finishes once per outbox).
    pub fn count(&self, notices: &[Notice]) {
        for notice in notices {
            match &notice.kind {
                NoticeKind::Queued => self.submissions.inc(),
                kind if notice.job.state().is_finished() => {
                    // Indices into END_KINDS.
                    let how = match kind {
                        NoticeKind::Deleted { .. } => 1,
                        NoticeKind::Aborted => 2,
                        _ => 0,
                    };
                    self.ends[how].inc();
                }
                _ => {}
            }
        }
    }

    /// Jobs submitted so far.
    pub fn submissions(&self) -> u64 {
        self.submissions.get()
    }

    /// Jobs that ended `how` (one of [`END_KINDS`]) so far.
    pub fn job_ends(&self, how: &str) -> u64 {
        self.job_ends.with_label_values(&[how]).get()
    }

    /// Records one scheduling pass that took `seconds`.
    pub fn observe_pass(&self, seconds: f64) {
        self.sched_pass.observe(seconds);
    }

    /// Adds these metrics to `registry` (a scrape's).
    pub fn register(&self, registry: &Registry) -> prometheus::Result<()> {
        registry.register(Box::new(self.submissions.clone()))?;
        registry.register(Box::new(self.job_ends.clone()))?;
        registry.register(Box::new(self.sched_pass.clone()))?;
        registry.register(Box::new(self.store_commit.clone()))
    }
}
