//! qalter of an array parent, the part that reaches its subjobs (OpenPBS creates a subjob
//! from its parent when it starts, so a change to the parent applies to the subjobs that have
//! not started).
//!
//! Owns the rule: a subjob that has never started (`run_count` 0) takes the parent's new spec
//! (the same `Arc`), request and file names; one that has started keeps the spec it ran with,
//! and its row then stores that spec (`StoreOp::UpdateJobSpec`), since a subjob row without a
//! spec loads with its parent's. Hold changes reach every subjob not started or requeued
//! (Q, H, W), as qhold of the parent does. Must not: validate the change (`alter_job` did, on
//! the parent) or touch the parent.

use crate::state::holds::{hold_event, new_holds};
use crate::state::outbox::Outbox;
use crate::state::{ServerState, StdPath};
use crate::store::StoreOp;
use job::id::ArrayPart;
use job::JobKey;
use job::{JobSpec, JobState};
use proto::JobAlteration;
use std::sync::Arc;

/// Brings the subjobs of altered array `parent_key` in line with it. `old_spec` is the
/// parent's spec before the change (what the started subjobs keep).
pub(super) fn follow_parent(
    state: &mut ServerState,
    out: &mut Outbox,
    parent_key: JobKey,
    old_spec: &Arc<JobSpec>,
    changes: &JobAlteration,
    hold_letters: &str,
    now: i64,
) {
    let Some(parent) = state.job(parent_key).cloned() else { return };
    for key in state.subjob_keys(parent_key) {
        let Some(sub) = state.job(key) else { continue };
        let waiting = matches!(sub.state(), JobState::Queued | JobState::Held | JobState::Waiting);
        let mut altered = sub.clone();
        let mut spec_changed = false;
        if sub.run_count == 0 {
            let Some(ArrayPart::Sub(index)) = sub.id.array else { continue };
            altered.spec = Arc::clone(&parent.spec);
            altered.request = parent.request.clone();
            altered.output_path = StdPath::of_subjob(&parent.output_path, index);
            altered.error_path = StdPath::of_subjob(&parent.error_path, index);
        } else if Arc::ptr_eq(&sub.spec, old_spec) && !Arc::ptr_eq(&sub.spec, &parent.spec) {
            // Keeps the spec it started with: stored on its own row from now on.
            spec_changed = true;
        }
        let event = match &changes.hold_types {
            Some(holds) if waiting => {
                altered.hold_types =
                    new_holds(&sub.hold_types, holds, hold_letters).map_or_else(|_| sub.hold_types.clone(), Into::into);
                hold_event(&altered)
            }
            _ => None,
        };
        altered.times.mtime = now;
        if !state.replace_job_keeping_state(key, altered) {
            continue;
        }
        if let Some(event) = event {
            if state.transition(key, event, now).is_err() {
                tracing::error!(job_key = %key, ?event, "subjob cannot follow its parent's holds");
            }
        }
        let Some(sub) = state.job(key) else { continue };
        out.persist(if spec_changed {
            StoreOp::UpdateJobSpec(Box::new(sub.clone()))
        } else {
            StoreOp::UpdateJob(Box::new(sub.clone()))
        });
    }
}
