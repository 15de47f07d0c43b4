//! Placing one planned request on the working copy: first fit, unit by unit, all or nothing.
//!
//! Owns: the order units are tried in and the all-or-nothing rule.
//! Must not know: priorities, classes, or how sets and trees are kept (see `work`, `nodeset`).

use crate::class::Plan;
use crate::view::Assignment;
use crate::work::Work;

/// Places every unit of `plan` (steps in chunk order, units in order, each on the first node
/// of its set where it fits now) and keeps the result, or changes nothing and returns `None`.
///
/// Scatter units skip nodes this job already uses; free units may share them; a packed plan
/// is a single unit. Greedy first fit can miss an arrangement that would fit (it never moves
/// an earlier unit to make room); that is the documented policy, not a bug.
pub(crate) fn place(plan: &Plan, work: &mut Work) -> Option<Vec<Assignment>> {
    if plan.steps.is_empty() {
        return None;
    }
    // O(1) per step: nothing in the set is large enough, so do not start.
    if plan.steps.iter().any(|step| !work.set_capacity(step.set).fits(&step.need)) {
        return None;
    }
    work.begin(plan.scatter);
    for step in &plan.steps {
        for _ in 0..step.count {
            let Some(node) = work.first_fit(step.set, &step.need) else {
                work.rollback();
                return None;
            };
            work.take(node, &step.need, step.mpiprocs);
        }
    }
    Some(work.commit(plan.exclusive))
}
