//! The scheduling policy of minipbs as a pure function: a `ClusterView` (nodes with their free
//! slots, GPUs and memory, the running and the queued jobs) goes in, an `Outcome` (which jobs
//! start where, which are preempted or resumed, why the others wait and when the top ones are
//! planned to start) comes out. `can_ever_run` answers at submit whether a request could ever be
//! placed.
//!
//! Architecture invariant: this crate is pure and deterministic. No tokio, no I/O, no clock
//! (time is an argument: `ClusterView::now`), no `proto`; it depends only on `job`.
//! The server builds the view, calls `schedule`, and carries the decisions out.
//!
//! Layout (the order a reader should follow):
//! - `view`: input and output types.
//! - `pass`: `schedule`, the policy (priority order, first fit now, skip failed request
//!   classes, wait reasons, top jobs and backfill, strict order).
//! - `plan`: the time profile of node resources (running jobs' ends, reservations), the
//!   earliest start of a request and the backfill rule; `reason`: why a request does not fit.
//! - `class`: grouping identical requests and planning each group once per pass.
//! - `place`: first-fit placement of one plan, all or nothing.
//! - `mps`: placing an MPS share (one node, a share of one GPU of the same user's).
//! - `work`: the working copy of free resources and the per-job transaction.
//! - `work/nodeset.rs` (a part of `work`), `captree`: nodes matching a host/property set, with a max segment tree so
//!   "first node where this fits" costs about O(log nodes).
//! - `feasible`: `can_ever_run`.
//! - `preempt`: the phase before the pass: resuming suspended jobs, preemptors taking the place
//!   of lower-queue jobs.
//! - `simulate`: `minipbs simulate`, replaying an SWF trace through `schedule` on a virtual clock.
//! - `order`: the priority order; `formula`: `job_sort_formula`; `fairshare`: the share tree
//!   and each entity's standing (the server measures usage).
//!
//! Performance (design.md sections 5 and 11): a pass over 100,000 jobs and 5,000 nodes should
//! take well under 100 ms; `examples/sched_pass.rs` measures it.

mod captree;
mod class;
pub mod fairshare;
mod feasible;
pub mod formula;
mod mps;
mod order;
mod pass;
mod place;
mod plan;
mod preempt;
mod reason;
pub mod simulate;
mod view;
mod work;

pub use feasible::can_ever_run;
pub use formula::Formula;
pub use order::priority_order;
pub use pass::schedule;
pub use view::{
    Assignment, ClusterView, Decision, Estimate, EstimatedHost, FairShare, MpsGpu, NodeView, Outcome, PendingJob,
    PreemptHow, Preemption, RunningJob, SiteAmount, Wait, WaitReason,
};

#[cfg(test)]
mod tests;
