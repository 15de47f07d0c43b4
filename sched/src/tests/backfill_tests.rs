//! Reservations, backfill, wait reasons and strict order, on small hand-made clusters.
//!
//! Owns: `occupy` (node views with running jobs taken out, as the server builds them) and the
//! running-job builder the backfill tests share.

use job::{Chunk, Placement};

use super::{chunk, exclusive, gpu_chunk, gpu_node, job, keys, node, request, GB};
use crate::{
    schedule, Assignment, ClusterView, Estimate, EstimatedHost, NodeView, Outcome, PendingJob, RunningJob, SiteAmount,
    Wait, WaitReason,
};

/// A running job holding `slots` cpus and `gpus` GPUs on `node` (the lowest indices still
/// free there when [`occupy`] applies it) until `end`.
pub(crate) fn running(key: u64, node: usize, slots: u32, gpus: u32, end: i64) -> RunningJob {
    let assignment = Assignment {
        node,
        slots: (0..slots).collect(),
        gpus: (0..gpus).collect(),
        mpiprocs: slots,
        ..Assignment::default()
    };
    RunningJob { key, start: 0, end, assignments: vec![assignment], ..RunningJob::default() }
}

/// The node views with each running job's resources taken out (its slot and GPU indices
/// renumbered to the lowest free ones), busy, and exclusive for an exclusive job.
pub(crate) fn occupy(mut nodes: Vec<NodeView>, running: &mut [RunningJob]) -> Vec<NodeView> {
    for job in running.iter_mut() {
        for assignment in &mut job.assignments {
            let node = &mut nodes[assignment.node];
            let slots = assignment.slots.len().min(node.free_slots.len());
            assignment.slots = node.free_slots.drain(..slots).collect();
            let gpus = assignment.gpus.len().min(node.free_gpus.len());
            assignment.gpus = node.free_gpus.drain(..gpus).collect();
            node.mem_free -= assignment.mem.min(node.mem_free);
            for (name, amount) in &assignment.amounts {
                let site = node.amounts.iter_mut().find(|site| &site.name == name).expect("known amount");
                site.assigned += amount;
            }
            node.busy = true;
            node.exclusive |= job.exclusive;
        }
    }
    nodes
}

/// One pass at `now` with `depth` reservations over `nodes` with `running` jobs.
fn pass(now: i64, depth: u32, nodes: Vec<NodeView>, mut running: Vec<RunningJob>, jobs: Vec<PendingJob>) -> Outcome {
    let nodes = occupy(nodes, &mut running);
    schedule(&ClusterView { nodes, jobs, now, running, backfill_depth: depth, ..ClusterView::default() })
}

fn wait_of(outcome: &Outcome, key: u64) -> &Wait {
    outcome.waits.iter().find(|wait| wait.key == key).unwrap_or_else(|| panic!("no wait for {key}: {outcome:?}"))
}

fn start_of(outcome: &Outcome, key: u64) -> Option<i64> {
    wait_of(outcome, key).estimate.as_ref().map(|estimate| estimate.start)
}

fn resource(name: &str) -> WaitReason {
    WaitReason::Resource(name.to_string().into())
}

fn with_walltime(key: u64, request: &job::ResourceRequest, walltime: u64) -> PendingJob<'_> {
    PendingJob { walltime, ..job(key, request) }
}

/// Issue 16's first scenario: 4 slots, a 2-slot job until 60, a 4-slot job queued first.
#[test]
fn a_short_job_backfills_and_a_long_one_waits_for_the_reservation() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![with_walltime(1, &four, 3600), with_walltime(2, &one, 10), with_walltime(3, &one, 120)];
    let outcome = pass(0, 1, vec![node("n1", 4)], vec![running(100, 0, 2, 0, 60)], jobs);
    assert_eq!(keys(&outcome.starts), [2], "{outcome:?}");
    let top = wait_of(&outcome, 1);
    assert_eq!(top.reason, resource("ncpus"));
    let hosts = vec![EstimatedHost { node: 0, ncpus: 4, ngpus: 0, mem: 0 }];
    assert_eq!(top.estimate, Some(Estimate { start: 60, hosts }));
    assert_eq!(wait_of(&outcome, 3), &Wait { key: 3, reason: WaitReason::Backfill, estimate: None });
    // Without reservations, the long job starts too (greedy), and nobody has an estimate.
    let jobs = vec![with_walltime(1, &four, 3600), with_walltime(2, &one, 10), with_walltime(3, &one, 120)];
    let greedy = pass(0, 0, vec![node("n1", 4)], vec![running(100, 0, 2, 0, 60)], jobs);
    assert_eq!(keys(&greedy.starts), [2, 3]);
    assert_eq!(greedy.waits, [Wait { key: 1, reason: resource("ncpus"), estimate: None }]);
}

/// The class shortcut must not stop a shorter job of the same class after a longer one
/// failed only because of the reservation.
#[test]
fn a_longer_job_failing_on_the_reservation_does_not_stop_a_shorter_one() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![with_walltime(1, &four, 3600), with_walltime(2, &one, 120), with_walltime(3, &one, 30)];
    let outcome = pass(0, 1, vec![node("n1", 4)], vec![running(100, 0, 2, 0, 60)], jobs);
    assert_eq!(keys(&outcome.starts), [3]);
    assert_eq!(wait_of(&outcome, 2).reason, WaitReason::Backfill);
}

/// A job on nodes the reservation does not need starts whatever its walltime.
#[test]
fn a_long_job_on_other_resources_backfills() {
    let two_nodes = request(vec![chunk(2, 4)], Placement::Scatter);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let nodes = vec![node("n1", 4), node("n2", 4), node("n3", 4)];
    // n1 busy until 50, n2 until 80, n3 until 500: the 2-node job is planned on n1 and n2 at 80.
    let busy = vec![running(100, 0, 4, 0, 50), running(101, 1, 4, 0, 80), running(102, 2, 2, 0, 500)];
    let jobs = vec![with_walltime(1, &two_nodes, 100), with_walltime(2, &one, 10_000), with_walltime(3, &one, 10_000)];
    let outcome = pass(0, 1, nodes, busy, jobs);
    let estimate = wait_of(&outcome, 1).estimate.clone().expect("reserved");
    assert_eq!(estimate.start, 80);
    assert_eq!(estimate.hosts.iter().map(|host| host.node).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(keys(&outcome.starts), [2, 3], "n3's two free slots are not planned for");
    assert!(outcome.starts.iter().all(|start| start.assignments[0].node == 2));
}

#[test]
fn reservations_count_gpus_memory_and_site_amounts() {
    let scratch = |available| vec![SiteAmount { name: "scratch".into(), available, assigned: 0 }];
    let nodes = vec![
        NodeView { amounts: scratch(100), ..gpu_node("g1", 8, 4) },
        NodeView { amounts: scratch(100), ..gpu_node("g2", 8, 4) },
    ];
    let mut on_g1 = running(100, 0, 1, 3, 40);
    on_g1.assignments[0].mem = 10 * GB;
    let mut on_g2 = running(101, 1, 1, 1, 70);
    on_g2.assignments[0].amounts = vec![("scratch".into(), 80)];
    let gpus = request(vec![gpu_chunk(1, 4)], Placement::Free);
    let memory = request(vec![Chunk { mem: Some(8 * GB), ..chunk(1, 1) }], Placement::Free);
    let site = request(vec![Chunk { amounts: vec![("scratch".into(), 50)], ..chunk(1, 1) }], Placement::Free);
    let jobs = vec![with_walltime(1, &gpus, 100), with_walltime(2, &memory, 100), with_walltime(3, &site, 100)];
    // Conservative: every job that cannot start gets a reservation.
    let outcome = pass(0, 10, nodes.clone(), vec![on_g1.clone(), on_g2.clone()], jobs);
    assert_eq!(wait_of(&outcome, 1).reason, resource("ngpus"));
    assert_eq!(start_of(&outcome, 1), Some(40), "g1's 3 GPUs come back at 40");
    assert_eq!(wait_of(&outcome, 1).estimate.as_ref().unwrap().hosts[0].ngpus, 4);
    // 8gb does not fit g1 now (16 - 10 = 6gb free): it goes to g2, which nothing reserves.
    // 50 of scratch fits g1 beside the reservation (it takes none there): it starts on g1.
    assert_eq!(keys(&outcome.starts), [2, 3]);
    assert_eq!(outcome.starts[0].assignments[0].node, 1);
    assert_eq!(outcome.starts[1].assignments[0].node, 0);
    // Memory and a site amount short everywhere: the reasons name them.
    let big_memory = request(vec![Chunk { mem: Some(12 * GB), ..chunk(1, 1) }], Placement::Free);
    let big_site = request(vec![Chunk { amounts: vec![("scratch".into(), 90)], ..chunk(1, 1) }], Placement::Free);
    let mut both = vec![on_g1, on_g2];
    both[0].assignments[0].amounts = vec![("scratch".into(), 20)];
    let mut g2_memory = running(102, 1, 1, 0, 90);
    g2_memory.assignments[0].mem = 10 * GB;
    g2_memory.assignments[0].amounts = vec![("scratch".into(), 20)];
    both.push(g2_memory);
    let outcome = pass(0, 10, nodes, both, vec![with_walltime(4, &big_memory, 10), with_walltime(5, &big_site, 10)]);
    assert_eq!(wait_of(&outcome, 4).reason, resource("mem"));
    assert_eq!(start_of(&outcome, 4), Some(40), "g1's 10gb come back at 40");
    assert_eq!(wait_of(&outcome, 5).reason, resource("scratch"));
    assert_eq!(start_of(&outcome, 5), Some(40), "g1's 20 of scratch come back at 40 (g2's 80 at 70)");
}

#[test]
fn an_exclusive_reservation_keeps_its_node_idle() {
    let alone = exclusive(vec![chunk(1, 1)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![with_walltime(1, &alone, 100), with_walltime(2, &one, 40), with_walltime(3, &one, 30)];
    let outcome = pass(0, 1, vec![node("n1", 4)], vec![running(100, 0, 1, 0, 30)], jobs);
    assert_eq!(wait_of(&outcome, 1).reason, resource("nodes"), "no idle node for an exclusive job");
    assert_eq!(start_of(&outcome, 1), Some(30));
    assert_eq!(wait_of(&outcome, 2).reason, WaitReason::Backfill, "would keep n1 busy past 30");
    assert_eq!(keys(&outcome.starts), [3], "ends at 30, when the reservation starts");
    // An exclusive job running: the node comes back whole when it ends.
    let mut held = running(100, 0, 1, 0, 30);
    held.exclusive = true;
    let outcome = pass(0, 1, vec![node("n1", 4)], vec![held], vec![with_walltime(2, &one, 20)]);
    assert_eq!(wait_of(&outcome, 2).reason, resource("nodes"));
    assert_eq!(start_of(&outcome, 2), Some(30));
}

#[test]
fn a_running_job_past_its_end_is_planned_to_end_in_a_second() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let outcome = pass(1000, 1, vec![node("n1", 4)], vec![running(100, 0, 2, 0, 900)], vec![job(1, &four)]);
    assert_eq!(start_of(&outcome, 1), Some(1001));
}

#[test]
fn conservative_gives_every_waiting_job_an_estimate_never_before_now() {
    let shapes = [
        request(vec![chunk(1, 3)], Placement::Free),
        request(vec![chunk(2, 2)], Placement::Scatter),
        request(vec![chunk(1, 1)], Placement::Free),
    ];
    let nodes = vec![node("n1", 4), node("n2", 4)];
    let busy = vec![running(100, 0, 3, 0, 500), running(101, 1, 2, 0, 50), running(102, 1, 1, 0, 2000)];
    let jobs: Vec<_> = (0..30).map(|key| with_walltime(key, &shapes[key as usize % 3], 100 + 37 * key)).collect();
    let outcome = pass(100, 1000, nodes, busy, jobs);
    assert_eq!(outcome.starts.len() + outcome.waits.len(), 30);
    for wait in &outcome.waits {
        let start = wait.estimate.as_ref().unwrap_or_else(|| panic!("no estimate: {wait:?}")).start;
        assert!(start >= 100, "{wait:?}");
    }
    // Reservations are made in priority order and each fits beside the earlier ones: a later
    // job of the same shape is never planned before an earlier one.
    for shape in 0..3 {
        let starts: Vec<i64> = outcome
            .waits
            .iter()
            .filter(|wait| wait.key as usize % 3 == shape)
            .map(|wait| wait.estimate.as_ref().unwrap().start)
            .collect();
        assert!(starts.windows(2).all(|pair| pair[0] <= pair[1]), "shape {shape}: {starts:?}");
    }
}

#[test]
fn strict_order_stops_at_the_first_job_that_cannot_start() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let none = request(vec![chunk(0, 1)], Placement::Free);
    let jobs = vec![with_walltime(0, &none, 5), with_walltime(1, &one, 5), job(2, &four), with_walltime(3, &one, 5)];
    let mut running_jobs = vec![running(100, 0, 2, 0, 60)];
    let nodes = occupy(vec![node("n1", 4)], &mut running_jobs);
    let view = ClusterView { nodes, jobs, running: running_jobs, strict: true, ..ClusterView::default() };
    let outcome = schedule(&view);
    assert_eq!(keys(&outcome.starts), [1], "a job that can never run does not block");
    assert_eq!(wait_of(&outcome, 0).reason, WaitReason::Never);
    assert_eq!(wait_of(&outcome, 2), &Wait { key: 2, reason: resource("ncpus"), estimate: None });
    assert_eq!(wait_of(&outcome, 3).reason, WaitReason::StrictOrder);
    // With a depth, the blocking job has its estimate.
    let outcome = schedule(&ClusterView { backfill_depth: 1, ..view });
    assert_eq!(start_of(&outcome, 2), Some(60));
    assert_eq!(wait_of(&outcome, 3).reason, WaitReason::StrictOrder);
}

#[test]
fn reasons_name_what_holds_a_job_back() {
    let mut down = node("n2", 4);
    down.available = false;
    let on_down = request(vec![Chunk { host: Some("n2".into()), ..chunk(1, 1) }], Placement::Free);
    let gpu = request(vec![gpu_chunk(1, 1)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let limits: &[usize] = &[0];
    let takes: &[(usize, u64)] = &[(0, 5)];
    let jobs = vec![
        job(1, &on_down),
        job(2, &gpu),
        PendingJob { limits, ..job(3, &one) },
        PendingJob { takes, ..job(4, &one) },
        PendingJob { limits: &[7], ..job(5, &one) },
    ];
    let view = ClusterView {
        nodes: vec![node("n1", 4), down],
        jobs,
        limits: vec![0],
        pools: vec![4],
        ..ClusterView::default()
    };
    let outcome = schedule(&view);
    assert!(outcome.starts.is_empty());
    let reasons: Vec<WaitReason> = outcome.waits.iter().map(|wait| wait.reason.clone()).collect();
    let expected =
        [resource("nodes"), resource("ngpus"), WaitReason::Limit(0), WaitReason::Pool(0), WaitReason::Limit(7)];
    assert_eq!(reasons, expected);
    // Limits, pools and impossible requests are not top jobs: the next job gets the reservation.
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let mut running_jobs = vec![running(100, 0, 1, 0, 60)];
    let nodes = occupy(vec![node("n1", 4)], &mut running_jobs);
    let jobs = vec![PendingJob { limits, ..job(1, &four) }, job(2, &four)];
    let view = ClusterView {
        nodes,
        jobs,
        running: running_jobs,
        limits: vec![0],
        backfill_depth: 1,
        ..ClusterView::default()
    };
    let outcome = schedule(&view);
    assert_eq!(wait_of(&outcome, 1).estimate, None);
    assert_eq!(start_of(&outcome, 2), Some(60));
}

#[test]
fn a_queue_with_its_own_depth_reserves_apart() {
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let in_queue = |key, queue| PendingJob { queue, ..job(key, &four) };
    let jobs = vec![in_queue(1, 0), in_queue(2, 1), in_queue(3, 0), in_queue(4, 1), in_queue(5, usize::MAX)];
    let mut running_jobs = vec![running(100, 0, 1, 0, 60)];
    let nodes = occupy(vec![node("n1", 4)], &mut running_jobs);
    let view = ClusterView {
        nodes,
        jobs,
        running: running_jobs,
        backfill_depth: 1,
        queue_depths: vec![Some(2), None],
        ..ClusterView::default()
    };
    let outcome = schedule(&view);
    let planned: Vec<u64> = outcome.waits.iter().filter(|wait| wait.estimate.is_some()).map(|wait| wait.key).collect();
    // Queue 0 has two of its own; queue 1 and the job of no queue share the server's one.
    assert_eq!(planned, [1, 2, 3]);
    assert_eq!(
        [start_of(&outcome, 1), start_of(&outcome, 2), start_of(&outcome, 3)],
        [Some(60), Some(3660), Some(7260)]
    );
}

/// First fit picks a node the reservation needs: the job is placed again without it, on a
/// node further on that the reservation does not need.
#[test]
fn a_job_moves_off_the_reserved_node() {
    let four = request(vec![chunk(1, 4)], Placement::Pack);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![
        with_walltime(1, &four, 100),
        with_walltime(2, &one, 1000),
        with_walltime(3, &one, 1000),
        with_walltime(4, &one, 1000),
    ];
    // n1: 2 of 4 slots busy until 60 (the 4-slot job's only home); n2: 2 slots, idle.
    let outcome = pass(0, 1, vec![node("n1", 4), node("n2", 2)], vec![running(100, 0, 2, 0, 60)], jobs);
    assert_eq!(start_of(&outcome, 1), Some(60));
    assert_eq!(keys(&outcome.starts), [2, 3]);
    assert!(outcome.starts.iter().all(|start| start.assignments[0].node == 1), "{outcome:?}");
    assert_eq!(wait_of(&outcome, 4).reason, WaitReason::Backfill);
}
