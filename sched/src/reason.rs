//! Why a request does not fit now: the first resource that is short, as OpenPBS's scheduler
//! names it (`ncpus`, `ngpus`, `mem`, a site resource's name; `nodes` when no node that
//! matches the request's hosts and properties is up and, for an exclusive request, idle).
//!
//! Owns: reading the working copy for that reason. Called once per failed request class, so
//! a scan of the matching nodes is affordable.
//! Must not know: priorities, limits, reservations, how the reason is worded.

use crate::class::{Plan, Step};
use crate::view::WaitReason;
use crate::work::{Work, WorkNode};

/// The reason `plan` does not fit on `work` now. Each step in turn: no usable matching node
/// gives `nodes`; else the first of cpus, GPUs, memory and site amounts whose free units, summed
/// over the usable matching nodes (one per node for scatter), are fewer than the step's count.
/// When each resource alone would do but not all together, or the steps together do not fit
/// (first fit does not move earlier units), `ncpus`.
pub(crate) fn why_not(plan: &Plan, work: &mut Work) -> WaitReason {
    if plan.steps.is_empty() {
        return WaitReason::Never;
    }
    for step in &plan.steps {
        if let Some(name) = short_in(step, plan.scatter, work) {
            return WaitReason::Resource(name);
        }
    }
    WaitReason::Resource("ncpus".to_string())
}

fn short_in(step: &Step, scatter: bool, work: &mut Work) -> Option<String> {
    let matching = work.matching(step.set);
    let usable: Vec<&WorkNode> = matching
        .iter()
        .map(|&node| &work.nodes[node as usize])
        .filter(|node| node.usable && (node.idle || !step.need.idle))
        .collect();
    if usable.is_empty() {
        return Some("nodes".to_string());
    }
    let count = u64::from(step.count);
    let units = |free: u64, each: u64| {
        let units = free.checked_div(each).unwrap_or(u64::MAX);
        if scatter {
            units.min(1)
        } else {
            units
        }
    };
    let total = |per_node: &dyn Fn(&WorkNode) -> u64| {
        usable.iter().fold(0u64, |sum, node| sum.saturating_add(per_node(node)))
    };
    let need = &step.need;
    if total(&|node| units(node.slots.free() as u64, need.cpus)) < count {
        return Some("ncpus".to_string());
    }
    if total(&|node| units(node.gpus.free() as u64, need.gpus)) < count {
        return Some("ngpus".to_string());
    }
    if total(&|node| units(node.mem_free, need.mem)) < count {
        return Some("mem".to_string());
    }
    step.amounts
        .iter()
        .find(|(name, each)| total(&|node| units(node.amount_free(name), *each)) < count)
        .map(|(name, _)| name.clone())
}
