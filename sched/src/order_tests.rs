//! Tests of `order.rs`: the default keys, the formula, ties and fair share.

use super::*;
use crate::formula::Formula;
use crate::tests::{chunk, job, request};
use crate::view::{FairShare, PendingJob};
use job::Placement;

fn keys_in_order(view: &ClusterView) -> Vec<u64> {
    priority_order(view).into_iter().map(|index| view.jobs[index].key).collect()
}

fn share(factor: f64) -> FairShare {
    FairShare { perc: 0.5, usage: 0.0, factor }
}

#[test]
fn default_order_is_queue_then_job_priority_then_fair_share_then_submission() {
    let request = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![
        PendingJob { fairshare: share(0.9), ..job(1, &request) },
        PendingJob { fairshare: share(0.1), ..job(2, &request) },
        PendingJob { priority: 5, fairshare: share(0.1), ..job(3, &request) },
        PendingJob { queue_priority: 1, fairshare: share(0.0), ..job(4, &request) },
        PendingJob { fairshare: share(0.9), ..job(5, &request) },
    ];
    let view = ClusterView { jobs, ..ClusterView::default() };
    assert_eq!(keys_in_order(&view), vec![4, 3, 1, 5, 2]);
}

#[test]
fn less_used_owner_goes_first() {
    let request = request(vec![chunk(1, 1)], Placement::Free);
    let heavy = FairShare { perc: 0.5, usage: 0.9, factor: 2f64.powf(-0.9 / 0.5) };
    let light = FairShare { perc: 0.5, usage: 0.1, factor: 2f64.powf(-0.1 / 0.5) };
    let mut jobs: Vec<PendingJob> =
        (1..=200).map(|key| PendingJob { user: "alice", fairshare: heavy, ..job(key, &request) }).collect();
    jobs.extend((201..=210).map(|key| PendingJob { user: "bob", fairshare: light, ..job(key, &request) }));
    let view = ClusterView { jobs, ..ClusterView::default() };
    let order = keys_in_order(&view);
    assert_eq!(order[..10], (201..=210).collect::<Vec<u64>>()[..]);
    assert_eq!(order[10], 1);
}

#[test]
fn formula_orders_within_queue_priority() {
    let small = request(vec![chunk(1, 1)], Placement::Free);
    let big = request(vec![chunk(1, 8)], Placement::Free);
    let formula = Formula::parse("ncpus + eligible_time / 100").unwrap();
    let jobs = vec![
        PendingJob { priority: 100, ..job(1, &small) },
        job(2, &big),
        PendingJob { eligible_time: 1000, ..job(3, &small) },
        PendingJob { queue_priority: 1, ..job(4, &small) },
        job(5, &big),
    ];
    let view = ClusterView { jobs, formula: Some(&formula), ..ClusterView::default() };
    // Job priority counts only through the formula (here it does not).
    assert_eq!(keys_in_order(&view), vec![4, 3, 2, 5, 1]);
}

#[test]
fn formula_errors_sort_as_zero_and_keep_submission_order() {
    let request = request(vec![chunk(1, 1)], Placement::Free);
    let formula = Formula::parse("1 / (eligible_time - 5)").unwrap();
    let jobs = vec![
        PendingJob { eligible_time: 5, ..job(1, &request) },
        PendingJob { eligible_time: 4, ..job(2, &request) },
        PendingJob { eligible_time: 5, ..job(3, &request) },
        PendingJob { eligible_time: 6, ..job(4, &request) },
    ];
    let view = ClusterView { jobs, formula: Some(&formula), ..ClusterView::default() };
    assert_eq!(keys_in_order(&view), vec![4, 1, 3, 2]);
}

#[test]
fn a_nan_fair_share_never_breaks_the_sort() {
    let request = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![
        PendingJob { fairshare: share(f64::NAN), ..job(1, &request) },
        PendingJob { fairshare: share(0.5), ..job(2, &request) },
        PendingJob { fairshare: share(f64::INFINITY), ..job(3, &request) },
    ];
    let view = ClusterView { jobs, ..ClusterView::default() };
    assert_eq!(keys_in_order(&view), vec![2, 1, 3]);
}

#[test]
fn ties_keep_view_order() {
    let request = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![
        PendingJob { order: 7, ..job(9, &request) },
        PendingJob { order: 7, ..job(3, &request) },
        PendingJob { order: 7, ..job(5, &request) },
    ];
    let view = ClusterView { jobs, ..ClusterView::default() };
    assert_eq!(keys_in_order(&view), vec![9, 3, 5]);
}
