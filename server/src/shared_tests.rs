//! [`Shared::apply`] with a real store: when the scheduling pass a handler asks for runs in
//! the handler's own turn (its starts in the handler's commit) and when it is left to the loop.

use super::*;
use crate::handlers::submit_job::submit_job;
use crate::handlers::tests::{cluster, requester, spec, ALICE};
use crate::store::Store;
use job::JobState;
use proto::ServerReply;

struct Fixture {
    _dir: tempfile::TempDir,
    shared: Shared,
}

fn fixture(state: ServerState) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_sqlite(&dir.path().join("server.db")).unwrap();
    let config = ServerConfig::new(dir.path().to_path_buf(), "head".to_string());
    Fixture { shared: Shared::new(config, state, StoreHandle::spawn(store)), _dir: dir }
}

/// Submits a one-slot job through [`Shared::apply`]; its id and the transactions it took.
async fn submit(shared: &Shared) -> (String, u64) {
    let before = shared.store.transactions();
    let reply = shared.apply(|state, out| submit_job(state, out, &requester(ALICE), 10, spec(&[("ncpus", "1")]))).await;
    let ServerReply::JobSubmitted { id } = reply else { panic!("refused: {reply:?}") };
    (id, shared.store.transactions() - before)
}

fn state_of(shared: &Shared, id: &str) -> JobState {
    let state = shared.state();
    state.jobs()[&state.find_job(id).unwrap()].state()
}

/// Whether the scheduler loop was asked for a pass (takes the permit). `apply` stores the
/// permit before it returns, and a stored permit completes `notified()` at its first poll, which
/// `timeout` makes before it looks at the (zero) deadline: no waiting either way.
async fn loop_woken(shared: &Shared) -> bool {
    tokio::time::timeout(std::time::Duration::ZERO, shared.sched_wakeup.notified()).await.is_ok()
}

#[tokio::test]
async fn a_job_submitted_to_a_cluster_with_room_is_stored_and_started_in_one_commit() {
    let f = fixture(cluster(1));
    let (id, transactions) = submit(&f.shared).await;
    assert_eq!(state_of(&f.shared, &id), JobState::Running);
    assert_eq!(transactions, 1, "the submission and the start share one transaction");
    assert!(!loop_woken(&f.shared).await, "the pass ran in the request's turn: nothing left for the loop");
}

#[tokio::test]
async fn a_long_queue_or_a_slow_last_pass_leaves_the_pass_to_the_loop() {
    let mut state = cluster(1);
    state.node_mut("node1").unwrap().offline = true;
    let f = fixture(state);
    // Nothing can start: each submission's pass runs in its turn and finds no node.
    for _ in 0..INLINE_PASS_MAX_QUEUED {
        let (id, _) = submit(&f.shared).await;
        assert_eq!(state_of(&f.shared, &id), JobState::Queued);
    }
    assert!(!loop_woken(&f.shared).await);
    f.shared.state().node_mut("node1").unwrap().offline = false;
    // One more job queued than a pass in the request's turn takes: the loop is asked.
    let (id, transactions) = submit(&f.shared).await;
    assert_eq!((state_of(&f.shared, &id), transactions), (JobState::Queued, 1));
    assert!(loop_woken(&f.shared).await, "the loop is asked for the pass");

    // A short queue again, but the last pass was slow: the loop's too.
    let f = fixture(cluster(1));
    f.shared.last_pass_nanos.store(INLINE_PASS_MAX.as_nanos() as u64 + 1, Ordering::Relaxed);
    let (id, _) = submit(&f.shared).await;
    assert_eq!(state_of(&f.shared, &id), JobState::Queued);
    assert!(loop_woken(&f.shared).await);
}
