//! Why a request does not fit now: the first resource that is short, as OpenPBS's scheduler
//! names it (`ncpus`, `ngpus`, `mem`, a site resource's name; `nodes` when no node that
//! matches the request's hosts and properties is up and, for an exclusive request, idle).
//!
//! Owns: reading the working copy for that reason. Called once per failed request class, so
//! a scan of the matching nodes is affordable.
//! Must not know: priorities, limits, reservations, how the reason is worded.

use std::borrow::Cow;

use crate::captree::Capacity;
use crate::class::{Plan, Step};
use crate::view::WaitReason;
use crate::work::Work;

/// The reason `plan` does not fit on `work` now. Each step in turn: no usable matching node
/// gives `nodes`; else the first of cpus, GPUs and memory that no node holds for one unit (the
/// set's tree maxima, no scan); else the first of cpus, GPUs, memory and site amounts whose free
/// units, summed over the usable matching nodes (one per node for scatter), are fewer than the
/// step's count.
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
    WaitReason::Resource(Cow::Borrowed("ncpus"))
}

fn short_in(step: &Step, scatter: bool, work: &mut Work) -> Option<Cow<'static, str>> {
    work.matching(step.set);
    let work = &*work;
    let matching = work.sets.matching_known(step.set);
    let usable = || {
        matching
            .iter()
            .map(|&node| &work.nodes[node as usize])
            .filter(|node| node.usable && (node.idle || !step.need.idle))
    };
    if usable().next().is_none() {
        return Some(Cow::Borrowed("nodes"));
    }
    let need = &step.need;
    // The maxima over the set's members: no node holds one unit's cpus, GPUs or memory.
    // An empty set (every matching node lacks a cpu or GPU) says nothing: scan.
    let most = work.set_capacity(step.set);
    if most != Capacity::default() {
        let cpus_plus_one = if need.idle { most.idle_cpus_plus_one } else { most.cpus_plus_one };
        if u64::from(cpus_plus_one) <= need.cpus {
            return Some(Cow::Borrowed("ncpus"));
        }
        if u64::from(most.gpus) < need.gpus {
            return Some(Cow::Borrowed("ngpus"));
        }
        if most.mem < need.mem {
            return Some(Cow::Borrowed("mem"));
        }
    }
    let units = |free: u64, each: u64| {
        let units = free.checked_div(each).unwrap_or(u64::MAX);
        if scatter {
            units.min(1)
        } else {
            units
        }
    };
    // Units each resource alone would allow, summed over the usable matching nodes: cpus,
    // GPUs, memory, then each site amount.
    let mut sums = vec![0u64; 3 + step.amounts.len()];
    for node in usable() {
        let free = [node.slots.free() as u64, node.gpus.free() as u64, node.mem_free];
        for (sum, (free, each)) in sums.iter_mut().zip(free.into_iter().zip([need.cpus, need.gpus, need.mem])) {
            *sum = sum.saturating_add(units(free, each));
        }
        for (sum, (name, each)) in sums[3..].iter_mut().zip(&step.amounts) {
            *sum = sum.saturating_add(units(node.amount_free(name), *each));
        }
    }
    let count = u64::from(step.count);
    let names = ["ncpus", "ngpus", "mem"]
        .into_iter()
        .map(Cow::Borrowed)
        .chain(step.amounts.iter().map(|(name, _)| Cow::Owned(name.clone())));
    sums.iter().zip(names).find(|(sum, _)| **sum < count).map(|(_, name)| name)
}
