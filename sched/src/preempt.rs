//! Preemption and resumption, the first phase of a pass: resume suspended jobs whose resources
//! are free again, then let each queued preemptor that does not fit take the resources of
//! lower-queue running jobs (suspended or requeued, as each allows).
//!
//! Owns: choosing victims and what the node views look like once they are gone.
//! Must not know: how the server suspends or requeues a job, accounting, comments.
//!
//! CONTRACT STUB (issue 16): nothing is resumed or preempted yet.

use crate::view::{ClusterView, Decision, NodeView, Preemption};

/// What the preemption phase decided, for the main pass to continue from.
#[derive(Debug, Default)]
pub(crate) struct PreemptPhase {
    /// The node views after resumes, preemptions and the preemptors' starts; `None`: the
    /// view's own are unchanged.
    pub nodes: Option<Vec<NodeView>>,
    /// Suspended jobs resumed now.
    pub resumes: Vec<u64>,
    /// Preemptors started now (their resources are out of `nodes`).
    pub starts: Vec<Decision>,
    /// Who was preempted, and for whom.
    pub preempted: Vec<Preemption>,
}

/// Runs the phase on `view`.
pub(crate) fn phase(view: &ClusterView) -> PreemptPhase {
    let _ = view;
    PreemptPhase::default()
}
