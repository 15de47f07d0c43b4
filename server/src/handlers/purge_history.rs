//! Forgetting finished jobs once they have been in history longer than `job_history_duration`
//! (OpenPBS keeps finished jobs for `qstat -x`; design.md section 4: 14 days by default).
//! Run by the scheduler loop's slow timer.

use crate::state::outbox::Outbox;
use crate::state::ServerState;
use crate::store::StoreOp;
use job::JobKey;

/// Removes finished jobs that ended before `now - keep_secs`; returns how many went.
pub fn purge_history(state: &mut ServerState, out: &mut Outbox, now: i64, keep_secs: i64) -> usize {
    let cutoff = now - keep_secs;
    let expired: Vec<JobKey> = state
        .jobs()
        .values()
        // Subjobs go with their array parent.
        .filter(|job| !matches!(job.id.array, Some(job::id::ArrayPart::Sub(_))))
        .filter(|job| job.state().is_finished() && job.times.obittime.unwrap_or(job.times.mtime) < cutoff)
        .map(|job| job.id.key())
        .collect();
    for key in &expired {
        for removed in state.remove_finished_job(*key) {
            out.persist(StoreOp::DeleteJob(removed));
        }
    }
    if !expired.is_empty() {
        // Ids are never reused: the counter is stored with the deletions.
        out.persist(StoreOp::SetNextSeq(state.next_seq()));
        tracing::info!(count = expired.len(), "finished jobs purged from history");
    }
    expired.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_old_finished_jobs_go() {
        let mut state = crate::handlers::tests::cluster(1);
        let old = crate::handlers::tests::submit(&mut state, 1000, &[]);
        let young = crate::handlers::tests::submit(&mut state, 1000, &[]);
        let queued = crate::handlers::tests::submit(&mut state, 1000, &[]);
        let requester = crate::handlers::tests::requester(1000);
        crate::handlers::delete_job::delete_job(
            &mut state,
            &mut Outbox::default(),
            &requester,
            100,
            std::slice::from_ref(&old),
            Default::default(),
        );
        crate::handlers::delete_job::delete_job(
            &mut state,
            &mut Outbox::default(),
            &requester,
            500,
            std::slice::from_ref(&young),
            Default::default(),
        );
        let mut out = Outbox::default();
        assert_eq!(purge_history(&mut state, &mut out, 1000, 600), 1);
        assert!(state.find_job(&old).is_err());
        assert!(state.find_job(&young).is_ok() && state.find_job(&queued).is_ok());
        assert!(
            matches!(out.persist[..], [StoreOp::DeleteJob(key), StoreOp::SetNextSeq(4)] if key.raw() == 0x1_0000_0000)
        );
        state.sanity_check();
    }
}
