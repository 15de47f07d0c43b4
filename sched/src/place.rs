//! Placing one planned request on the working copy: first fit, identical units in bulk, all or
//! nothing.
//!
//! Owns: the order units are tried in, the all-or-nothing rule, and taking as many identical
//! units at once as the first fitting node holds (so the work is bounded by the nodes a step
//! uses, not by its chunk count: `select=1000000000:ncpus=0` is one take, not a billion).
//! Must not know: priorities, classes, or how sets and trees are kept (see `work`, `nodeset`).

use crate::class::Plan;
use crate::view::Assignment;
use crate::work::Work;

/// Places every unit of `plan` (steps in chunk order, units in order, each on the first node
/// of its set where it fits now) and keeps the result, or changes nothing and returns `None`.
///
/// Scatter units skip nodes this job already uses; free units may share them; a packed plan
/// is a single unit. Units of one step are taken in bulk: while one more unit fits on the
/// first fitting node it stays the first fit (nodes before it did not fit, and free resources
/// only shrink in a transaction), so taking `Work::room` units there at once gives exactly
/// what one-by-one first fit gives; each round fills a node or ends the step. Greedy first fit can miss an arrangement that would fit (it never moves
/// an earlier unit to make room); that is the documented policy, not a bug.
pub(crate) fn place(plan: &Plan, work: &mut Work) -> Option<Vec<Assignment>> {
    try_place(plan, work).then(|| work.commit(plan.exclusive))
}

/// [`place`] without the commit: on `true` the transaction is left open (its units in
/// `Work::pending`) for the caller to commit or roll back; on `false` nothing changed.
pub(crate) fn try_place(plan: &Plan, work: &mut Work) -> bool {
    if plan.steps.is_empty() {
        return false;
    }
    // O(1) per step: nothing in the set is large enough, so do not start.
    if plan.steps.iter().any(|step| !work.set_capacity(step.set).fits(&step.need)) {
        return false;
    }
    work.begin(plan.scatter);
    for step in &plan.steps {
        let mut left = u64::from(step.count);
        while left > 0 {
            let Some(node) = work.first_fit(step.set, &step.need, &step.amounts) else {
                work.rollback();
                return false;
            };
            let units = work.room(node, &step.need, &step.amounts, left);
            work.take(node, &step.need, &step.amounts, units, step.mpiprocs);
            left -= units;
        }
    }
    true
}
