//! The preemption phase (`preempt.rs`) through `schedule`: which running jobs a preemptor
//! takes the place of, that equal and higher queues are never touched, that nothing goes
//! when going would not help, resumption of suspended jobs, exclusive nodes and GPUs.

use job::Placement;

use super::{chunk, exclusive, gpu_chunk, gpu_node, job, keys, node, request};
use crate::schedule;
use crate::view::{Assignment, ClusterView, NodeView, Outcome, PendingJob, PreemptHow, Preemption, RunningJob};

/// A running job of queue priority `queue_priority`, started at `start`, holding `slots` of
/// node `node` (and `gpus`), preemptable by suspension.
fn running(key: u64, queue_priority: i32, start: i64, node: usize, slots: &[u32], gpus: &[u32]) -> RunningJob {
    RunningJob {
        key,
        start,
        end: start + 3600,
        assignments: vec![Assignment {
            node,
            slots: slots.to_vec(),
            gpus: gpus.to_vec(),
            mpiprocs: 1,
            ..Assignment::default()
        }],
        exclusive: false,
        queue_priority,
        preempt: Some(PreemptHow::Suspend),
    }
}

/// `nodes` with what `jobs` hold taken out, as the server builds the view.
fn holding(mut nodes: Vec<NodeView>, jobs: &[RunningJob]) -> Vec<NodeView> {
    for job in jobs {
        for assignment in &job.assignments {
            let node = &mut nodes[assignment.node];
            node.free_slots.retain(|slot| !assignment.slots.contains(slot));
            node.free_gpus.retain(|gpu| !assignment.gpus.contains(gpu));
            node.mem_free -= assignment.mem;
            node.busy = true;
            node.exclusive |= job.exclusive;
        }
    }
    nodes
}

/// A preemptor of queue priority 200.
fn high<'a>(key: u64, request: &'a job::ResourceRequest) -> PendingJob<'a> {
    PendingJob { queue_priority: 200, preemptor: true, ..job(key, request) }
}

fn pass(nodes: Vec<NodeView>, jobs: Vec<PendingJob>, running: Vec<RunningJob>, suspended: Vec<RunningJob>) -> Outcome {
    let nodes = holding(nodes, &running);
    schedule(&ClusterView { nodes, jobs, running, suspended, now: 10_000, ..ClusterView::default() })
}

fn victims(outcome: &Outcome) -> Vec<u64> {
    outcome.preempted.iter().map(|preemption| preemption.key).collect()
}

#[test]
fn the_lowest_queue_then_the_latest_started_goes_first_and_no_more_than_needed() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let running = vec![
        running(1, 50, 100, 0, &[0, 1], &[]),
        running(2, 10, 100, 0, &[2, 3], &[]),
        running(3, 10, 300, 0, &[4, 5], &[]),
        running(4, 10, 200, 0, &[6, 7], &[]),
    ];
    let outcome = pass(vec![node("n0", 8)], vec![high(9, &two)], running, Vec::new());
    assert_eq!(outcome.preempted, vec![Preemption { key: 3, how: PreemptHow::Suspend, by: 9 }]);
    assert_eq!(keys(&outcome.starts), [9]);
    assert_eq!(outcome.starts[0].assignments[0].slots, [4, 5], "it runs on what the victim held");
}

#[test]
fn victims_it_can_do_without_are_kept() {
    // Job 1 (lowest queue) sits on n0, where the preemptor's 4 cpus cannot fit anyway after it
    // goes; job 2 on n1 is enough on its own.
    let four = request(vec![chunk(1, 4)], Placement::Free);
    let running = vec![running(1, 0, 500, 0, &[0], &[]), running(2, 10, 100, 1, &[0, 1, 2, 3], &[])];
    let mut nodes = vec![node("n0", 2), node("n1", 4)];
    nodes[0].free_slots = vec![0];
    let outcome = pass(nodes, vec![high(9, &four)], running, Vec::new());
    assert_eq!(victims(&outcome), [2]);
    assert_eq!(keys(&outcome.starts), [9]);
}

#[test]
fn equal_and_higher_queues_and_unpreemptable_jobs_are_never_preempted() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let mut unpreemptable = running(3, 0, 100, 0, &[4, 5], &[]);
    unpreemptable.preempt = None;
    let running = vec![running(1, 200, 100, 0, &[0, 1], &[]), running(2, 300, 100, 0, &[2, 3], &[]), unpreemptable];
    let outcome = pass(vec![node("n0", 6)], vec![high(9, &two)], running, Vec::new());
    assert!(outcome.preempted.is_empty() && outcome.starts.is_empty(), "{outcome:?}");
}

#[test]
fn nothing_is_preempted_when_it_would_not_be_enough() {
    let eight = request(vec![chunk(1, 8)], Placement::Free);
    let running = vec![running(1, 0, 100, 0, &[0, 1], &[]), running(2, 0, 100, 0, &[2, 3], &[])];
    let mut nodes = vec![node("n0", 8)];
    nodes[0].free_slots = vec![4, 5, 6]; // slot 7 held by a job that may not be preempted
    let outcome = pass(nodes, vec![high(9, &eight)], running, Vec::new());
    assert!(outcome.preempted.is_empty() && outcome.starts.is_empty(), "{outcome:?}");
}

#[test]
fn only_preemptors_preempt_and_one_that_fits_preempts_nothing() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let running = vec![running(1, 0, 100, 0, &[0, 1], &[])];
    // A job of a higher queue that is no preemptor waits.
    let not_preemptor = PendingJob { queue_priority: 200, ..job(8, &two) };
    let outcome = pass(vec![node("n0", 2)], vec![not_preemptor], running.clone(), Vec::new());
    assert!(outcome.preempted.is_empty() && outcome.starts.is_empty(), "{outcome:?}");
    // A preemptor that fits on free cpus just starts.
    let outcome = pass(vec![node("n0", 4)], vec![high(9, &two)], running, Vec::new());
    assert!(outcome.preempted.is_empty());
    assert_eq!(keys(&outcome.starts), [9]);
    assert_eq!(outcome.starts[0].assignments[0].slots, [2, 3]);
}

#[test]
fn the_main_pass_starts_the_rest_on_what_is_left_and_not_the_preemptor_twice() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let running = vec![running(1, 0, 100, 0, &[0, 1, 2, 3], &[])];
    let jobs = vec![job(5, &two), high(9, &two)];
    let outcome = pass(vec![node("n0", 4)], jobs, running, Vec::new());
    assert_eq!(victims(&outcome), [1]);
    // The victim's 4 cpus came back: the preemptor takes 2, the queued low job the others.
    assert_eq!(keys(&outcome.starts), [9, 5]);
    assert_eq!(outcome.starts[1].assignments[0].slots, [2, 3]);
}

#[test]
fn a_suspended_job_resumes_when_all_it_holds_is_free_and_keeps_its_free_part_otherwise() {
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let suspended = running(1, 0, 100, 0, &[0, 1], &[]);
    // Slot 1 is held by another job: it cannot resume, and the queued job may not take slot 0.
    let other = running(2, 200, 500, 0, &[1], &[]);
    let outcome = pass(vec![node("n0", 2)], vec![job(5, &one)], vec![other], vec![suspended.clone()]);
    assert!(outcome.resumes.is_empty() && outcome.starts.is_empty(), "{outcome:?}");
    // Once free, it resumes before a queued job of its level starts.
    let outcome = pass(vec![node("n0", 2)], vec![job(5, &one)], Vec::new(), vec![suspended]);
    assert_eq!(outcome.resumes, [1]);
    assert!(outcome.starts.is_empty());
}

#[test]
fn a_higher_preemptor_goes_before_a_resume_and_a_lower_one_after() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let suspended = running(1, 100, 100, 0, &[0, 1], &[]);
    let outcome = pass(vec![node("n0", 2)], vec![high(9, &two)], Vec::new(), vec![suspended.clone()]);
    assert_eq!(keys(&outcome.starts), [9], "the queue above the suspended job's comes first");
    assert!(outcome.resumes.is_empty());
    let low_preemptor = PendingJob { queue_priority: 100, ..high(9, &two) };
    let outcome = pass(vec![node("n0", 2)], vec![low_preemptor], Vec::new(), vec![suspended]);
    assert_eq!(outcome.resumes, [1], "its own level: preempted work first");
    assert!(outcome.starts.is_empty());
}

#[test]
fn an_exclusive_preemptor_needs_the_whole_node_and_an_exclusive_victim_frees_it() {
    let one_excl = exclusive(vec![chunk(1, 1)], Placement::Free);
    let running_jobs = vec![running(1, 0, 100, 0, &[0], &[]), running(2, 0, 200, 0, &[1], &[])];
    let outcome = pass(vec![node("n0", 4)], vec![high(9, &one_excl)], running_jobs, Vec::new());
    let mut gone = victims(&outcome);
    gone.sort();
    assert_eq!(gone, [1, 2], "every job on the node goes");
    assert_eq!(keys(&outcome.starts), [9]);
    // A non-exclusive preemptor on a node held exclusively: the exclusive victim goes.
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let mut excl = running(3, 0, 100, 0, &[0], &[]);
    excl.exclusive = true;
    let outcome = pass(vec![node("n0", 4)], vec![high(9, &one)], vec![excl], Vec::new());
    assert_eq!(victims(&outcome), [3]);
    assert_eq!(keys(&outcome.starts), [9]);
}

#[test]
fn gpus_are_what_is_preempted_for() {
    let gpu = request(vec![gpu_chunk(1, 1)], Placement::Free);
    // Job 1 (more recent, same queue) holds cpus only; job 2 holds the GPU.
    let running = vec![running(1, 0, 900, 0, &[0], &[]), running(2, 0, 100, 0, &[1], &[0])];
    let outcome = pass(vec![gpu_node("g0", 4, 1)], vec![high(9, &gpu)], running, Vec::new());
    assert_eq!(victims(&outcome), [2]);
    assert_eq!(outcome.starts[0].assignments[0].gpus, [0]);
}

#[test]
fn requeue_is_passed_on_and_a_victim_goes_once() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let mut victim = running(1, 0, 100, 0, &[0, 1], &[]);
    victim.preempt = Some(PreemptHow::Requeue);
    let jobs = vec![high(8, &two), high(9, &two)];
    let outcome = pass(vec![node("n0", 2)], jobs, vec![victim], Vec::new());
    assert_eq!(outcome.preempted, vec![Preemption { key: 1, how: PreemptHow::Requeue, by: 8 }]);
    assert_eq!(keys(&outcome.starts), [8]);
}

#[test]
fn preemption_attempts_per_pass_are_bounded() {
    // Preemptors that cannot fit even with every victim gone each use one attempt; once the
    // bound is reached, a later one that preempting would help waits for the next pass.
    let huge = request(vec![chunk(1, 64)], Placement::Free);
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let bound = crate::preempt::MAX_PREEMPT_ATTEMPTS as u64;
    for (hopeless, helped) in [(bound - 1, true), (bound, false)] {
        let mut jobs: Vec<PendingJob> = (0..hopeless).map(|key| high(key, &huge)).collect();
        jobs.push(PendingJob { priority: -1, ..high(1000, &one) });
        let outcome = pass(vec![node("n0", 2)], jobs, vec![running(1, 0, 100, 0, &[0, 1], &[])], Vec::new());
        assert_eq!(victims(&outcome) == [1], helped, "{hopeless} hopeless before it: {outcome:?}");
        assert_eq!(keys(&outcome.starts) == [1000], helped);
    }
}

#[test]
fn a_preemptor_held_by_a_limit_or_a_pool_preempts_nothing_and_one_that_starts_uses_them_up() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let limits = [0usize];
    let takes = [(0usize, 5u64)];
    let victims_of = |limits_left: u32, pool_left: u64| {
        let jobs = vec![PendingJob { limits: &limits, takes: &takes, ..high(9, &two) }];
        let nodes = holding(vec![node("n0", 2)], &[running(1, 0, 100, 0, &[0, 1], &[])]);
        let view = ClusterView {
            nodes,
            jobs,
            running: vec![running(1, 0, 100, 0, &[0, 1], &[])],
            limits: vec![limits_left],
            pools: vec![pool_left],
            now: 10_000,
            ..ClusterView::default()
        };
        let outcome = schedule(&view);
        (victims(&outcome), keys(&outcome.starts))
    };
    assert_eq!(victims_of(0, 5), (vec![], vec![]), "its max_run is used up");
    assert_eq!(victims_of(1, 4), (vec![], vec![]), "its pool holds too little");
    assert_eq!(victims_of(1, 5), (vec![1], vec![9]));
    // Started by the phase, it uses up the counter: a second job of the same limit waits.
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs = vec![PendingJob { limits: &limits, ..high(9, &two) }, PendingJob { limits: &limits, ..job(5, &one) }];
    let view = ClusterView {
        nodes: holding(vec![node("n0", 3)], &[running(1, 0, 100, 0, &[0, 1], &[])]),
        jobs,
        running: vec![running(1, 0, 100, 0, &[0, 1], &[])],
        limits: vec![1],
        now: 10_000,
        ..ClusterView::default()
    };
    assert_eq!(keys(&schedule(&view).starts), [9]);
}

#[test]
fn a_suspended_job_resumes_between_the_preemptors_above_and_below_its_queue() {
    let two = request(vec![chunk(1, 2)], Placement::Free);
    let suspended = running(1, 200, 100, 0, &[2, 3], &[]);
    let above = PendingJob { queue_priority: 300, ..high(8, &two) };
    let below = PendingJob { queue_priority: 100, ..high(9, &two) };
    let outcome = pass(vec![node("n0", 4)], vec![below, above], Vec::new(), vec![suspended]);
    assert_eq!(keys(&outcome.starts), [8], "the one above starts first, on slots 0-1");
    assert_eq!(outcome.starts[0].assignments[0].slots, [0, 1]);
    assert_eq!(outcome.resumes, [1], "then the suspended job, before the one below takes its slots");
    assert!(outcome.preempted.is_empty());
}

#[test]
fn many_preemptors_that_fit_start_in_priority_order_as_the_main_pass_would() {
    let one = request(vec![chunk(1, 1)], Placement::Free);
    let jobs: Vec<PendingJob> = (0..6).map(|key| PendingJob { priority: -(key as i32), ..high(key, &one) }).collect();
    let outcome = pass(vec![node("n0", 2), node("n1", 2)], jobs, Vec::new(), Vec::new());
    assert_eq!(keys(&outcome.starts), [0, 1, 2, 3], "the first four fit; the rest have nothing to preempt");
    let placed: Vec<(usize, Vec<u32>)> =
        outcome.starts.iter().map(|start| (start.assignments[0].node, start.assignments[0].slots.clone())).collect();
    assert_eq!(placed, [(0, vec![0]), (0, vec![1]), (1, vec![0]), (1, vec![1])]);
}
