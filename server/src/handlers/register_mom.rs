//! `Register` from a mom: add or update the node, mark it up, and reconcile its jobs with ours
//! (design.md section 4): jobs the mom runs that we do not consider running there are stale
//! (the mom kills them); jobs we think run there as mother superior that the mom no longer
//! knows were lost with it (requeued if rerunnable, else ended with status -20).

use crate::state::node_gpus::registered;
use crate::state::outbox::Outbox;
use crate::state::requeue::end_lost_job;
use crate::state::{Node, ServerState};
use crate::store::StoreOp;
use job::JobKey;
use proto::mom::Registration;
use proto::ServerToMom;

/// Handles a mom's registration; returns the `Registered` answer.
pub fn register_mom(state: &mut ServerState, out: &mut Outbox, registration: Registration, now: i64) -> ServerToMom {
    let name = registration.node.clone();
    let changed = state.node(&name).is_none_or(|node| {
        (node.np, node.mem_bytes, node.ngpus, &node.properties)
            != (registration.np, registration.mem_bytes, registration.ngpus, &registration.properties)
    });
    let node = state.node_or_insert_with(&name, || {
        Node::new(&name, registration.np, registration.mem_bytes, registration.ngpus, Vec::new(), now)
    });
    node.resize(registration.np, registration.mem_bytes, registration.ngpus, registration.properties.clone());
    let gpus = registered(&node.gpus, registration.ngpus, &registration.gpus, &registration.gpu_states);
    node.set_gpus(gpus);
    if !node.up {
        node.last_state_change = now;
    }
    node.up = true;
    node.comment = None;
    let restarted = !node.start_id.is_empty() && node.start_id != registration.start_id;
    node.start_id = registration.start_id.clone();
    state.claim_shares_on(&name);
    if changed {
        out.persist(StoreOp::SetNodes(state.stored_nodes()));
    }
    tracing::info!(node = %name, np = registration.np, ngpus = registration.ngpus, restarted, "mom registered");

    let mut stale_jobs = Vec::new();
    for reported in &registration.jobs {
        let known_here = state
            .find_job(reported)
            .ok()
            .and_then(|key| state.jobs().get(&key))
            .is_some_and(|job| job.state().is_active() && job.exec.iter().any(|share| share.node == name));
        if !known_here {
            stale_jobs.push(reported.clone());
        }
    }
    let lost: Vec<JobKey> = state
        .jobs()
        .values()
        .filter(|job| job.state().is_active() && job.exec.first().is_some_and(|share| share.node == name))
        .filter(|job| !registration.jobs.contains(&job.id.to_string()))
        .map(|job| job.id.key())
        .collect();
    for key in lost {
        end_lost_job(state, out, key, now, "its mother superior lost the job");
        crate::state::depend::job_changed(state, out, key, now);
    }
    // A qdel that arrived while this mom was away: ask again.
    for job in state.jobs().values() {
        let mother_here = job.exec.first().is_some_and(|share| share.node == name);
        if job.state().is_active() && job.delete_requested && mother_here {
            out.send(&name, ServerToMom::KillJob { job_id: job.id.to_string() });
        } else if job.state().is_active() && job.rerun_requested && mother_here {
            out.send(&name, ServerToMom::RerunJob { job_id: job.id.to_string() });
        }
    }
    out.schedule = true;
    ServerToMom::Registered { server_name: state.server_name.clone(), stale_jobs }
}
