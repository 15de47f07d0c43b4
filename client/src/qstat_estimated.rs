//! `qstat -T`'s order (OpenPBS `cmp_est_time`, applied with a stable insertion sort): jobs
//! that have started (`stime`) first, by start time; then jobs by estimated start time, those
//! without an estimate or with one already past last; ties keep the server's order.
//!
//! Must not: print, talk to the server (the caller passes `now`).

use proto::JobStatus;
use std::cmp::Ordering;

fn epoch(job: &JobStatus, name: &str) -> Option<i64> {
    job.get(name).and_then(|value| value.trim().parse().ok())
}

/// OpenPBS's comparison of two jobs for `-T` at time `now`.
fn compare(a: &JobStatus, b: &JobStatus, now: i64) -> Ordering {
    match (epoch(a, "stime"), epoch(b, "stime")) {
        (None, None) => {}
        (Some(_), None) => return Ordering::Less,
        (None, Some(_)) => return Ordering::Greater,
        (Some(a), Some(b)) => return a.cmp(&b),
    }
    let (est_a, est_b) = (epoch(a, "estimated.start_time"), epoch(b, "estimated.start_time"));
    if est_a == est_b {
        return Ordering::Equal;
    }
    // Late (no estimate, or one already past): after the others, equal among themselves (so
    // the order is total, as `sort_by` requires; OpenPBS's insertion sort keeps them as they
    // came too).
    let late = |estimate: Option<i64>| estimate.is_none_or(|at| at < now);
    match (late(est_a), late(est_b)) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => est_a.cmp(&est_b),
    }
}

/// Sorts `jobs` into `qstat -T`'s order (stable).
pub fn sort_by_estimated_start(jobs: &mut [JobStatus], now: i64) {
    jobs.sort_by(|a, b| compare(a, b, now));
}

#[cfg(test)]
mod tests {
    use super::*;
    use job::Attr;

    fn job(id: &str, attrs: &[(&str, &str)]) -> JobStatus {
        let attrs = attrs
            .iter()
            .map(|(name, value)| match name.split_once('.') {
                Some((name, resource)) => Attr::resource(name, resource, *value),
                None => Attr::new(*name, *value),
            })
            .collect();
        JobStatus { id: id.to_string(), attrs }
    }

    #[test]
    fn started_first_then_soonest_estimate_then_the_rest_in_server_order() {
        let mut jobs = vec![
            job("1", &[]),
            job("2", &[("estimated.start_time", "900")]),
            job("3", &[("stime", "50")]),
            job("4", &[("estimated.start_time", "50")]),
            job("5", &[("estimated.start_time", "300")]),
            job("6", &[("stime", "20")]),
            job("7", &[]),
        ];
        sort_by_estimated_start(&mut jobs, 100);
        let order: Vec<&str> = jobs.iter().map(|job| job.id.as_str()).collect();
        assert_eq!(order, ["6", "3", "5", "2", "1", "4", "7"], "4's estimate is past: it goes with the unknown ones");
    }
}
