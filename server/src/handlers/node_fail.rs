//! Jobs whose mother superior's node stays down (OpenPBS `node_fail_requeue`): once the node
//! has been down for that many seconds, each job it ran as mother superior is requeued if
//! rerunnable, else ended with status -20 (JOB_EXEC_RERUN_MS_FAIL), exactly as when the mom
//! comes back without the job (`register_mom.rs`). Run on the server's slow timer. A node's
//! down time counts from when it went down, or from the server's start for a node loaded from
//! the store (its `last_state_change` is not stored), so a restarted server gives moms the
//! whole delay to come back.

use crate::state::outbox::Outbox;
use crate::state::requeue::end_lost_job;
use crate::state::ServerState;
use job::JobKey;

/// Requeues or ends the jobs of nodes down for at least `node_fail_requeue` seconds.
pub fn requeue_on_failed_nodes(state: &mut ServerState, out: &mut Outbox, now: i64) {
    let after = state.attrs.node_fail_requeue;
    if after <= 0 {
        return;
    }
    let failed: Vec<(String, i64)> = state
        .nodes()
        .values()
        .filter(|node| !node.up && now - node.last_state_change >= after)
        .map(|node| (node.name.clone(), now - node.last_state_change))
        .collect();
    for (node, down_for) in failed {
        // The node's own job list, not a scan of every job: a node scaled away stays down.
        let lost: Vec<JobKey> = state.nodes()[&node]
            .jobs
            .iter()
            .filter(|key| {
                state.jobs().get(key).is_some_and(|job| {
                    job.state().is_active() && job.exec.first().is_some_and(|share| share.node == node)
                })
            })
            .copied()
            .collect();
        for key in lost {
            let why = format!("node {node} was down for {down_for} s (node_fail_requeue {after})");
            end_lost_job(state, out, key, now, &why);
            crate::state::depend::job_changed(state, out, key, now);
            out.schedule = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::tests::{cluster, submit, ALICE};
    use crate::sched_loop::schedule_pass;
    use job::JobState;

    #[test]
    fn jobs_of_a_node_down_past_node_fail_requeue_are_requeued_or_ended() {
        let mut state = cluster(2);
        let rerunnable = submit(&mut state, ALICE, &[("ncpus", "4")]);
        let once = submit(&mut state, ALICE, &[("ncpus", "4")]);
        let key = state.find_job(&once).unwrap();
        std::sync::Arc::make_mut(&mut state.job_mut(key).unwrap().spec).rerunnable = false;
        schedule_pass(&mut state, &mut Outbox::default(), 20);
        let node_of = |state: &ServerState, id: &str| state.jobs()[&state.find_job(id).unwrap()].exec[0].node.clone();
        let (first, second) = (node_of(&state, &rerunnable), node_of(&state, &once));
        assert_ne!(first, second);
        for node in [&first, &second] {
            let node = state.node_mut(node).unwrap();
            node.up = false;
            node.last_state_change = 100;
        }
        requeue_on_failed_nodes(&mut state, &mut Outbox::default(), 100 + 309);
        let state_of = |state: &ServerState, id: &str| state.jobs()[&state.find_job(id).unwrap()].state();
        assert_eq!(state_of(&state, &rerunnable), JobState::Running, "not yet 310 s");
        let mut out = Outbox::default();
        requeue_on_failed_nodes(&mut state, &mut out, 100 + 310);
        assert_eq!(state_of(&state, &rerunnable), JobState::Queued);
        let job = &state.jobs()[&state.find_job(&once).unwrap()];
        assert_eq!((job.state(), job.exit_status), (JobState::Finished, Some(-20)));
        assert_eq!(
            job.comment.as_deref(),
            Some(format!("ended: node {second} was down for 310 s (node_fail_requeue 310)").as_str())
        );
        assert!(out.schedule);
        state.sanity_check();
    }
}
