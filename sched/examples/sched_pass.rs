//! Benchmark: one `sched::schedule` pass over 100,000 queued jobs and 5,000 nodes (design.md
//! section 11 and issue 16 hold us to under 100 ms), greedy (`backfill_depth` 0) and with
//! backfill (depth 1: a reservation for the top job, every lower job checked against it), with
//! the nodes' used slots held by running jobs that end over the next two hours; and the same
//! where nothing fits.
//!
//! Owns: building the synthetic cluster and printing timings. Prints figures only; it asserts
//! nothing about time. Run with `cargo run --release -p sched --example sched_pass`.

use std::time::{Duration, Instant};

use job::{Chunk, Placement, ResourceRequest};
use sched::{schedule, Assignment, ClusterView, Decision, NodeView, PendingJob, RunningJob};

const N_NODES: usize = 5_000;
const N_JOBS: usize = 100_000;
const GB: u64 = 1 << 30;
const RUNS: usize = 5;

/// A seeded `fastrand` generator: every run builds the same cluster (a deterministic workload,
/// so timings compare across runs and commits).
type Rng = fastrand::Rng;

/// 4,000 cpu nodes (16 slots, 64gb; a quarter `fast`, an eighth `bigmem` with 512gb) and
/// 1,000 GPU nodes (32 slots, 4 GPUs, 256gb, `gpu`). About 60% are partly busy, 2% down,
/// 1% held by an exclusive job.
fn nodes(rng: &mut Rng) -> Vec<NodeView> {
    (0..N_NODES)
        .map(|index| {
            let gpu = index % 5 == 4;
            let (np, ngpus, mut mem_total) = if gpu { (32, 4, 256 * GB) } else { (16, 0, 64 * GB) };
            let mut properties = Vec::new();
            if gpu {
                properties.push("gpu".to_string());
            } else if index % 4 == 0 {
                properties.push("fast".to_string());
            } else if index % 8 == 1 {
                properties.push("bigmem".to_string());
                mem_total = 512 * GB;
            }
            let busy = rng.u64(..100) < 60;
            let keep = |rng: &mut Rng| !busy || rng.u64(..100) < 40;
            let free_slots: Vec<u32> = (0..np).filter(|_| keep(rng)).collect();
            let free_gpus: Vec<u32> = (0..ngpus).filter(|_| keep(rng)).collect();
            let used = (np as usize - free_slots.len()) as u64;
            NodeView {
                name: format!("node{index:04}"),
                properties,
                available: rng.u64(..100) >= 2,
                np,
                mem_free: mem_total - mem_total * used / u64::from(np),
                free_slots,
                mem_total,
                ngpus,
                free_gpus,
                mps_gpus: Vec::new(),
                busy,
                exclusive: busy && rng.u64(..100) < 2,
                amounts: Vec::new(),
            }
        })
        .collect()
}

fn chunk(count: u32, ncpus: u32) -> Chunk {
    Chunk { count, ncpus, mpiprocs: 1, ..Chunk::default() }
}

fn request(chunks: Vec<Chunk>, place: Placement, exclusive: bool) -> ResourceRequest {
    let first_ppn = chunks[0].ncpus;
    ResourceRequest {
        chunks,
        place,
        exclusive,
        walltime: Some(3600),
        cput: None,
        first_ppn,
        display: Default::default(),
    }
}

/// One request per job (as the server has them), drawn from a mix of shapes; memory sizes
/// and named hosts vary so there are a few thousand distinct request classes.
fn requests(rng: &mut Rng) -> Vec<ResourceRequest> {
    (0..N_JOBS)
        .map(|_| {
            let roll = rng.u64(..100);
            let with = |properties: &[&str], chunk: Chunk| Chunk {
                properties: properties.iter().map(|p| p.to_string()).collect(),
                ..chunk
            };
            match roll {
                0..=39 => request(vec![chunk(1, 1)], Placement::Free, false),
                40..=54 => {
                    let mem = Some((1 + rng.u64(..16)) * GB);
                    request(vec![Chunk { mem, ..chunk(1, 4) }], Placement::Pack, false)
                }
                55..=64 => request(vec![Chunk { mpiprocs: 8, ..chunk(2, 8) }], Placement::Scatter, false),
                65..=74 => {
                    let gpus = Chunk { ngpus: 1 + rng.u64(..2) as u32, ..chunk(1, 4) };
                    // Half name the `gpu` property, half only ask for a GPU.
                    let properties: &[&str] = if rng.u64(..2) == 0 { &["gpu"] } else { &[] };
                    request(vec![with(properties, gpus)], Placement::Free, false)
                }
                75..=79 => request(vec![chunk(4, 16)], Placement::Scatter, true),
                80..=89 => {
                    let mem = Some((1 + rng.u64(..20)) * GB / 2);
                    let property = ["fast", "bigmem"][rng.u64(..2) as usize];
                    request(vec![with(&[property], Chunk { mem, ..chunk(2, 2) })], Placement::Free, false)
                }
                90..=94 => {
                    let host = Some(format!("node{:04}", rng.u64(..N_NODES as u64)));
                    request(vec![Chunk { host, ..chunk(1, 2) }], Placement::Free, false)
                }
                _ => request(vec![chunk(1 + rng.u64(..64) as u32, 1)], Placement::Free, false),
            }
        })
        .collect()
}

/// Limit indices 0..20 (one per user), so jobs can borrow one-element slices.
const USER_LIMITS: [usize; 20] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19];

fn jobs<'a>(rng: &mut Rng, requests: &'a [ResourceRequest]) -> Vec<PendingJob<'a>> {
    requests
        .iter()
        .enumerate()
        .map(|(index, request)| PendingJob {
            key: index as u64,
            queue_priority: (rng.u64(..10) == 0) as i32,
            priority: rng.u64(..5) as i32 - 2,
            order: index as u64,
            request,
            // One job in ten counts against a per-user run limit of 20 (one of 20 users), so some
            // are held back by their limit.
            limits: if index % 10 == 0 { &USER_LIMITS[index / 10 % 20..][..1] } else { &[] },
            user: "u",
            takes: &[],
            walltime: 600 + rng.u64(..7200),
            eligible_time: 0,
            fairshare: sched::FairShare::default(),
            queue: usize::MAX,
            preemptor: false,
        })
        .collect()
}

/// The jobs holding what is not free: on each node, its used slots and GPUs (and the memory
/// not free) split into jobs of up to 4 slots, each ending within the next two hours.
fn running(rng: &mut Rng, nodes: &[NodeView]) -> Vec<RunningJob> {
    let mut jobs = Vec::new();
    for (index, node) in nodes.iter().enumerate() {
        let used_slots: Vec<u32> = (0..node.np).filter(|slot| !node.free_slots.contains(slot)).collect();
        let mut used_gpus: Vec<u32> = (0..node.ngpus).filter(|gpu| !node.free_gpus.contains(gpu)).collect();
        let pieces = used_slots.chunks(4).count().max(1) as u64;
        let mem_each = (node.mem_total - node.mem_free) / pieces;
        for slots in used_slots.chunks(4) {
            let gpus = used_gpus.drain(..used_gpus.len().min(1)).collect();
            let assignment =
                Assignment { node: index, slots: slots.to_vec(), gpus, mem: mem_each, ..Assignment::default() };
            jobs.push(RunningJob {
                key: 1_000_000 + jobs.len() as u64,
                end: 60 + rng.i64(..7200),
                assignments: vec![assignment],
                exclusive: node.exclusive,
                ..RunningJob::default()
            });
        }
    }
    jobs
}

/// Runs `schedule` RUNS times; returns the decisions and each run's time.
fn time_passes(view: &ClusterView) -> (Vec<Decision>, Vec<Duration>) {
    let mut times = Vec::new();
    let mut decisions = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        decisions = schedule(view).starts;
        times.push(start.elapsed());
    }
    (decisions, times)
}

fn report(label: &str, decisions: &[Decision], times: &[Duration]) {
    let mut sorted = times.to_vec();
    sorted.sort();
    let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
    println!(
        "{label}: {} jobs started; first {:.1} ms, median {:.1} ms, best {:.1} ms over {} runs",
        decisions.len(),
        ms(times[0]),
        ms(sorted[sorted.len() / 2]),
        ms(sorted[0]),
        times.len()
    );
}

fn main() {
    let mut rng = Rng::with_seed(5_000_100_000);
    let requests = requests(&mut rng);
    let nodes = nodes(&mut rng);
    let jobs = jobs(&mut rng, &requests);
    let running = running(&mut rng, &nodes);
    let mut view = ClusterView { nodes, jobs, limits: vec![20; 20], running, ..ClusterView::default() };
    let free: usize = view.nodes.iter().map(|node| node.free_slots.len()).sum();
    println!("{N_JOBS} queued jobs, {N_NODES} nodes, {free} free cpu slots, {} running jobs", view.running.len());
    // 100: the first hundred waiting jobs each get a reservation (towards conservative).
    for depth in [0, 1, 100] {
        view.backfill_depth = depth;
        let (decisions, times) = time_passes(&view);
        report(&format!("full pass, backfill_depth {depth}"), &decisions, &times);
    }

    for node in &mut view.nodes {
        node.free_slots.clear();
        node.free_gpus.clear();
        node.busy = true;
    }
    for depth in [0, 1] {
        view.backfill_depth = depth;
        let (decisions, times) = time_passes(&view);
        report(&format!("nothing fits (every slot taken), backfill_depth {depth}"), &decisions, &times);
    }
}
