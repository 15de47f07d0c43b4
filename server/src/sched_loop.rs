//! Glue between the server state and the pure policy in crate `sched`: build a `ClusterView`
//! from the state (running jobs, walltimes and queues: `sched_view.rs`), run `sched::schedule`,
//! and carry its outcome out: preemptions and resumptions (`state/preempt.rs`), starts (allocate
//! node shares, mark jobs running, tell the moms; at most [`MAX_STARTS_PER_PASS`] a pass, the
//! rest in the next one) and the notes on waiting jobs. The async loop wakes on a `Notify` after events, coalesces
//! them for a few milliseconds, and has a slow safety-net timer. No policy lives here. A
//! `RunJob` is built without its script (the state keeps none): the store thread fills it in
//! just before sending (`shared.rs`).

use crate::state::outbox::{NoticeKind, Outbox};
use crate::state::{Job, Node, NodeShare, ServerState};
use crate::store::JobProgress;
use job::id::ArrayPart;
use job::resources::site::SiteResources;
use job::JobKey;
use job::{JobEvent, JobId};
use proto::mom::{HostAlloc, JobLaunch};
use proto::ServerToMom;
use std::collections::HashMap;

/// The most jobs one pass starts. A pass that finds room for more (64,000 free slots after a
/// qrls of 100,000 jobs) starts this many and asks for another pass: one pass's commit, its
/// RunJob frames and its hold of the state lock stay bounded, and qstat and the moms' reports
/// are served between passes (bench/scale).
pub const MAX_STARTS_PER_PASS: usize = 5_000;

/// A node as the scheduler sees it now.
pub fn node_view(node: &Node, site: &SiteResources) -> sched::NodeView {
    sched::NodeView {
        name: node.name.clone(),
        properties: crate::state::site::node_words(node, site),
        available: node.up && !node.offline,
        np: node.np,
        free_slots: node.free_slots(),
        mem_total: node.mem_bytes,
        mem_free: node.mem_bytes.saturating_sub(node.mem_used),
        ngpus: node.ngpus,
        free_gpus: node.free_gpus(),
        mps_gpus: node.mps_gpus(),
        busy: !node.jobs.is_empty(),
        exclusive: !node.exclusive_jobs.is_empty(),
        amounts: crate::state::site::node_amounts(node, site),
    }
}

/// One scheduling pass: build the view, run the policy, and carry its outcome out: preempt,
/// resume, start, and keep its notes on the jobs that wait (`state/sched_notes.rs`). Returns
/// how many jobs started.
pub fn schedule_pass(state: &mut ServerState, out: &mut Outbox, now: i64) -> usize {
    // Most wake-ups (job ends with nothing queued) need no views at all, unless a job that
    // preemption suspended waits to resume (no index of those: a walk of the jobs, only when
    // nothing is queued).
    if state.queued_jobs().next().is_none() && !any_preempted_suspended(state) {
        return 0;
    }
    crate::state::eligible::settle(state, out, now);
    let names: Vec<String> = state.nodes().keys().cloned().collect();
    let (outcome, notes) = {
        let nodes: Vec<sched::NodeView> =
            state.nodes().values().map(|node| node_view(node, &state.resources)).collect();
        if !nodes.iter().any(|node| node.available) {
            return 0;
        }
        // Jobs of stopped (or vanished) queues are not considered; `scheduling = False`
        // starts nothing.
        if !state.attrs.scheduling {
            return 0;
        }
        let facts = crate::sched_view::PassFacts::new(state);
        let node_index: HashMap<&str, usize> = names.iter().enumerate().map(|(at, name)| (name.as_str(), at)).collect();
        let running = crate::sched_view::running_jobs(state, &facts, &node_index, now);
        let mut room = SlotLimits::default();
        let queued: Vec<&Job> = state
            .queued_jobs()
            .filter(|job| crate::run_limits::queue_started(state, &job.queue))
            .filter(|job| room.admits(state, job))
            .collect();
        let limits = crate::run_limits::run_limits(state, &queued);
        let pools = state.server_pools(&queued);
        let jobs: Vec<sched::PendingJob> = queued
            .iter()
            .zip(limits.per_job.iter().zip(&pools.takes))
            .map(|(job, (job_limits, takes))| pending_job(state, &facts, job, job_limits, takes, now))
            .collect();
        let view = sched::ClusterView {
            nodes,
            jobs,
            limits: limits.capacities,
            pools: pools.left,
            now,
            running,
            // Jobs suspended by preemption (their shares are given back, so not in `running`).
            suspended: crate::state::preempt::suspended_by_scheduler(state)
                .into_iter()
                .map(|job| crate::sched_view::running_job(state, &facts, &node_index, job, now))
                .collect(),
            backfill_depth: state.attrs.sched.backfill_depth,
            queue_depths: facts.queue_depths.clone(),
            formula: state.attrs.sched.job_sort_formula.as_ref(),
            max_starts: Some(MAX_STARTS_PER_PASS),
            ..sched::ClusterView::default()
        };
        let outcome = sched::schedule(&view);
        let mut maker = crate::sched_view::NoteMaker::new(&limits.what, &pools.names, &names);
        let notes: Vec<_> = outcome.waits.iter().map(|wait| maker.note(wait)).collect();
        (outcome, notes)
    };
    // Preemptions first: they free what the starts below were placed on.
    for preemption in &outcome.preempted {
        let (key, by) = (JobKey::from_raw(preemption.key), JobKey::from_raw(preemption.by));
        crate::state::preempt::preempt_job(state, out, key, preemption.how, by, now);
    }
    for &key in &outcome.resumes {
        crate::state::preempt::resume_job(state, out, JobKey::from_raw(key), now);
    }
    if outcome.starts.len() >= MAX_STARTS_PER_PASS {
        // The pass stopped at its bound: the next one starts the rest, once this one's starts
        // are committed and sent.
        out.schedule = true;
    }
    let started = apply_starts(state, out, outcome.starts, &names, now);
    state.replace_sched_notes(notes);
    started
}

/// `job` as the scheduler sees it, with its run-limit counters and server-pool takes (the web
/// view passes none: it only orders, `http/web/view.rs`).
pub fn pending_job<'a>(
    state: &ServerState,
    facts: &crate::sched_view::PassFacts,
    job: &'a Job,
    limits: &'a [usize],
    takes: &'a [(usize, u64)],
    now: i64,
) -> sched::PendingJob<'a> {
    let of = facts.job(job);
    sched::PendingJob {
        key: job.id.key().raw(),
        queue_priority: of.queue_priority,
        priority: job.spec.priority,
        order: job.id.key().raw(),
        request: &job.request,
        limits,
        user: &job.owner,
        takes,
        walltime: of.walltime,
        eligible_time: job.eligible_seconds(now),
        fairshare: crate::state::fairshare::standing(state, &job.owner, &job.group, now),
        queue: of.queue,
        preemptor: of.preemptor,
    }
}

/// Whether some job is suspended by preemption (and so waits for a pass to resume it).
fn any_preempted_suspended(state: &ServerState) -> bool {
    state.jobs().values().any(|job| job.state() == job::JobState::Suspended && job.shares_released)
}

/// Starts the decided jobs. Returns how many started.
fn apply_starts(
    state: &mut ServerState,
    out: &mut Outbox,
    decisions: Vec<sched::Decision>,
    names: &[String],
    now: i64,
) -> usize {
    let mut started = 0;
    for decision in decisions {
        // The scheduler keeps keys as plain integers (its order key); back to a key here.
        let key = JobKey::from_raw(decision.key);
        // `-a`: never before its execution time, whatever its state letter says (a job released
        // from a hold early is queued until the timer defers it). Checked on the few decisions,
        // not on every queued job: reading each one's options cost the pass a cache miss per
        // job, 1.5x its time at 10,000 queued jobs (bench/lock_hold).
        if state.job(key).is_some_and(|job| job.spec.options.execution_time.is_some_and(|at| at > now)) {
            continue;
        }
        let shares: Vec<NodeShare> = decision
            .assignments
            .iter()
            .map(|assignment| NodeShare {
                node: names[assignment.node].as_str().into(),
                slots: assignment.slots.clone(),
                gpus: assignment.gpus.clone(),
                mem_bytes: assignment.mem,
                mpiprocs: assignment.mpiprocs,
                mps: assignment.mps,
                amounts: assignment.amounts.clone(),
            })
            .collect();
        if start_job(state, out, key, shares, now) {
            started += 1;
        }
    }
    started
}

/// `%max` of arrays during one pass: the scheduler is offered at most `max - active` queued
/// subjobs of each array (all subjobs of an array request the same, so this is exact), lowest
/// indices first (the queued index is in key order).
#[derive(Default)]
struct SlotLimits {
    /// Parent key -> how many more subjobs may be offered.
    left: std::collections::HashMap<JobKey, u32>,
}

impl SlotLimits {
    fn admits(&mut self, state: &ServerState, job: &Job) -> bool {
        let Some(ArrayPart::Sub(_)) = job.id.array else { return true };
        let Some(limit) = job.spec.array.as_ref().and_then(|array| array.limit) else { return true };
        let parent_key = JobId::parent_key(job.id.key());
        let left = self
            .left
            .entry(parent_key)
            .or_insert_with(|| limit.saturating_sub(state.array_counts(parent_key).active()));
        if *left == 0 {
            return false;
        }
        *left -= 1;
        true
    }
}

/// Takes the shares on the nodes, marks the job running and sends it to its moms.
fn start_job(state: &mut ServerState, out: &mut Outbox, key: JobKey, shares: Vec<NodeShare>, now: i64) -> bool {
    // Checked before anything is taken, so the transition below cannot fail half-way.
    let Some(job) = state.job(key).filter(|job| job.state().apply(JobEvent::Run).is_ok()) else {
        return false;
    };
    let exclusive = job.request.exclusive;
    let owner = job.owner.clone();
    for (index, share) in shares.iter().enumerate() {
        let node = state.node_mut(&share.node).expect("scheduler placed a job on a known node");
        if !node.assign(key, share, &owner, exclusive) {
            // Invariant broken between view and apply: undo and leave the job queued.
            tracing::error!(job_id = %key, node = %share.node, "scheduler decision conflicts with node state");
            for earlier in &shares[..index] {
                if let Some(node) = state.node_mut(&earlier.node) {
                    node.release(key, earlier);
                }
            }
            return false;
        }
    }
    let kill_delay = state.kill_delay;
    let flavor = state.flavor;
    let root_allowed = state.root_allowed(&owner);
    // Invariant: checked legal above, before any share was taken.
    let job = state.transition(key, JobEvent::Run, now).expect("checked above");
    job.exec = shares;
    job.times.stime = Some(now);
    job.run_count += 1;
    job.used = Default::default();
    job.used.ncpus = job.request.total_ncpus();
    job.session_id = None;
    job.exit_status = None;
    if flavor == crate::config::Flavor::OpenPbs {
        // OpenPBS's server writes this at every start (TORQUE writes nothing).
        job.comment = Some(crate::sched_text::run_comment(now, &job.exec_vnode().unwrap_or_default()));
    }
    tracing::debug!(job_id = %job.id, exec_host = %job.exec_host().unwrap_or_default(), "job run");
    out.persist(JobProgress::op(job));
    out.notice(NoticeKind::Started, job, now);
    // Read-only from here, beside the nodes.
    let Some(job) = state.job(key) else { return false };
    let mut launch = job_launch(job, kill_delay);
    // The moms check at start that these are the GPUs they reported free.
    for host in &mut launch.hosts {
        let gpus = state.node(&host.node).map(|node| node.gpus.as_slice()).unwrap_or_default();
        host.gpu_uuids =
            host.gpus.iter().filter_map(|&index| gpus.get(index as usize)).map(|gpu| gpu.info.uuid.clone()).collect();
        host.mom_addr = state.node(&host.node).and_then(peer_address);
    }
    // The mom checks again: it runs a job as uid 0 only with this.
    launch.root_allowed = root_allowed;
    if let (crate::config::Flavor::Torque, Some(ArrayPart::Sub(index))) = (flavor, job.id.array) {
        // TORQUE names a subjob `<name>-<index>` (PBS_JOBNAME; pbs-reference 4.1).
        launch.name = format!("{}-{index}", launch.name);
    }
    launch.output_name = std_file_name(job, 'o', flavor);
    launch.error_name = std_file_name(job, 'e', flavor);
    let mother = job.exec[0].node.clone();
    for share in &job.exec[1..] {
        out.send(&share.node, ServerToMom::JoinJob(Box::new(launch.clone())));
    }
    out.send(&mother, ServerToMom::RunJob(Box::new(launch)));
    crate::state::depend::job_changed(state, out, key, now);
    true
}

/// Where a job's other moms reach this node's mom for tasks (proto::task): its TCP address
/// and port when it registered over TCP with a port, else `unix:<task socket>` (a mom on the
/// server's machine), else `None`.
fn peer_address(node: &crate::state::Node) -> Option<String> {
    match (&node.mom_addr, node.mom_port, &node.task_socket) {
        (Some(ip), port, _) if port != 0 => Some(std::net::SocketAddr::new(ip.parse().ok()?, port).to_string()),
        (None, _, Some(socket)) => Some(format!("unix:{socket}")),
        _ => None,
    }
}

/// The shell of `Shell_Path_List` for the job's mother superior (`None`: the login shell).
fn shell_of(job: &Job) -> Option<String> {
    let mother = job.exec.first().map_or("", |share| share.node.as_str());
    job.spec.shell.as_deref().and_then(|list| job::shell::shell_for_node(list, mother)).map(str::to_string)
}

/// What the moms need to run `job`.
pub fn job_launch(job: &Job, kill_delay: u64) -> JobLaunch {
    JobLaunch {
        job_id: job.id.to_string(),
        name: job.spec.name.clone(),
        queue: job.queue.to_string(),
        user: job.owner.to_string(),
        group: Some(job.group.to_string()),
        // Filled from the store just before sending (`shared.rs`): the state keeps no scripts.
        script: String::new(),
        variables: job.spec.variables.clone(),
        hosts: job
            .exec
            .iter()
            .map(|share| HostAlloc {
                node: share.node.to_string(),
                ncpus: share.slots.len() as u32,
                mpiprocs: share.mpiprocs,
                gpus: share.gpus.clone(),
                mem_bytes: (share.mem_bytes > 0).then_some(share.mem_bytes),
                gpu_uuids: Vec::new(),
                mps: share.mps,
                mom_addr: None,
            })
            .collect(),
        walltime: job.request.walltime,
        kill_delay,
        output_path: strip_host(&job.output_path.text()),
        error_path: strip_host(&job.error_path.text()),
        join: job.spec.join,
        shell: shell_of(job),
        init_dir: job.spec.init_dir.clone(),
        num_ppn: job.request.first_ppn,
        first_ncpus: job.request.chunks.first().map(|chunk| chunk.ncpus).unwrap_or(1),
        omp_threads: Some(job.request.omp_threads()),
        cookie: cookie(),
        array_index: match job.id.array {
            Some(ArrayPart::Sub(index)) => Some(index),
            _ => None,
        },
        array_id: matches!(job.id.array, Some(ArrayPart::Sub(_))).then(|| job.id.to_parent().to_string()),
        interactive: job.spec.interactive.clone(),
        root_allowed: false,
        run_count: job.run_count,
        script_args: job.spec.options.script_args.clone(),
        // Named in `launch_job`, where the flavor is known.
        output_name: String::new(),
        error_name: String::new(),
        exec: job.spec.exec.clone(),
        keep: job.spec.keep.clone(),
    }
}

/// The name of a job's stdout (`kind` `o`) or stderr (`e`) file in a directory destination
/// (pbs-reference section 0, `-o dir/`): `<jobname>.o<seq>`, a subjob's `<jobname>.o<seq>.<index>`
/// (TORQUE flavor `-<index>`), as the default path names it.
pub(crate) fn std_file_name(job: &Job, kind: char, flavor: crate::config::Flavor) -> String {
    let index = match (job.id.array, flavor) {
        (Some(ArrayPart::Sub(index)), crate::config::Flavor::Torque) => format!("-{index}"),
        (Some(ArrayPart::Sub(index)), _) => format!(".{index}"),
        _ => String::new(),
    };
    format!("{}.{kind}{}{index}", job.spec.name, job.id.seq)
}

fn strip_host(path: &str) -> String {
    match path.split_once(':') {
        Some((_, rest)) if rest.starts_with('/') => rest.to_string(),
        _ => path.to_string(),
    }
}

/// `PBS_JOBCOOKIE`: 64 bits from the kernel (`getrandom`), 16 upper-case hex digits. Jobs may
/// use it as a secret, so a failed random source stops here rather than yield a guessable one
/// (on Linux it does not fail once the kernel's pool is seeded, long before the server starts).
fn cookie() -> String {
    let value = getrandom::u64().expect("the kernel's random source (getrandom) failed: no job cookie");
    format!("{value:016X}")
}

#[cfg(test)]
mod tests {
    use super::peer_address;
    use crate::state::Node;

    #[test]
    fn moms_are_reached_over_tcp_or_their_task_socket() {
        let mut node = Node::new("n1", 1, 0, 0, Vec::new(), 0);
        assert_eq!(peer_address(&node), None, "neither known");
        node.task_socket = Some("/spool/task.sock".into());
        assert_eq!(peer_address(&node).as_deref(), Some("unix:/spool/task.sock"));
        node.mom_addr = Some("10.0.0.2".into());
        node.mom_port = 15002;
        assert_eq!(peer_address(&node).as_deref(), Some("10.0.0.2:15002"), "TCP wins");
        node.mom_addr = Some("fd00::2".into());
        assert_eq!(peer_address(&node).as_deref(), Some("[fd00::2]:15002"));
        node.mom_port = 0;
        assert_eq!(peer_address(&node), None, "a TCP mom without a port cannot be reached");
    }
}
