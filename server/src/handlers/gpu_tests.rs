//! GPU handling in the server: GPUs go only where the mom reported them free, by UUID; a GPU
//! that turns busy with a foreign process or is draining is skipped; a start the mom refuses
//! (`JOB_EXEC_RETRY`) or a share a sister refuses requeues the job; MPS shares of one user fill
//! a GPU to 100 %. Snapshots of `gpu_status`, `exec_gpus` and `exec_vnode`.

use super::tests::{cluster, submit, ALICE};
use super::*;
use crate::sched_loop::schedule_pass;
use crate::state::outbox::Outbox;
use crate::state::ServerState;
use job::JobState;
use proto::gpu::{GpuInfo, GpuReport, GpuUse};
use proto::mom::{JobObit, Registration};
use proto::ServerToMom;

const BOB: u32 = 1001;

fn uuid(node: &str, index: u32) -> String {
    format!("GPU-{node}-{index}")
}

fn report(node: &str, index: u32, state: GpuUse, reason: &str) -> GpuReport {
    GpuReport { uuid: uuid(node, index), state, mem_used: 0, utilization: Some(0), reason: reason.into() }
}

/// A server with `nodes` nodes of 8 slots and `gpus` GPUs each, all reported free.
fn gpu_cluster(nodes: usize, gpus: u32) -> ServerState {
    let mut state = cluster(0);
    for number in 1..=nodes {
        let node = format!("node{number}");
        let infos = (0..gpus)
            .map(|index| GpuInfo {
                index,
                uuid: uuid(&node, index),
                name: "Fake A100".into(),
                pci_bus_id: format!("00000000:0{index}:00.0"),
                mem_total: 40 << 30,
            })
            .collect();
        let registration = Registration {
            node: node.clone(),
            np: 8,
            mem_bytes: 64 << 30,
            ngpus: gpus,
            properties: vec![],
            start_id: "a".into(),
            jobs: vec![],
            port: 0,
            gpus: infos,
            gpu_states: (0..gpus).map(|index| report(&node, index, GpuUse::Free, "")).collect(),
            task_socket: None,
            heartbeat_ms: 0,
        };
        register_mom::register_mom(&mut state, &mut Outbox::default(), registration, 0);
    }
    state
}

/// Runs one scheduling pass; returns the RunJob launches sent.
fn pass(state: &mut ServerState, now: i64) -> Vec<proto::JobLaunch> {
    let mut out = Outbox::default();
    schedule_pass(state, &mut out, now);
    state.sanity_check();
    out.to_moms
        .into_iter()
        .filter_map(|(_, message)| match message {
            ServerToMom::RunJob(launch) => Some(*launch),
            _ => None,
        })
        .collect()
}

fn end(state: &mut ServerState, id: &str, exit_status: i32) -> Outbox {
    let mut out = Outbox::default();
    let obit = JobObit { job_id: id.into(), exit_status, ..Default::default() };
    job_ended::job_ended(state, &mut out, "node1", obit, 50);
    state.sanity_check();
    out
}

fn gpu_status_of(state: &mut ServerState, node: &str, reports: Vec<GpuReport>) {
    gpu_status::gpu_status(state, &mut Outbox::default(), node, reports);
}

fn job_state(state: &ServerState, id: &str) -> JobState {
    state.jobs()[&state.find_job(id).unwrap()].state()
}

#[test]
fn gpus_go_by_uuid_only_where_reported_free() {
    let mut state = gpu_cluster(1, 4);
    let ids: Vec<String> = (0..8).map(|_| submit(&mut state, ALICE, &[("nodes", "1:ppn=1:gpus=1")])).collect();
    let launches = pass(&mut state, 20);
    let given: Vec<(Vec<u32>, Vec<String>)> =
        launches.iter().map(|launch| (launch.hosts[0].gpus.clone(), launch.hosts[0].gpu_uuids.clone())).collect();
    let expected: Vec<(Vec<u32>, Vec<String>)> = (0..4).map(|i| (vec![i], vec![uuid("node1", i)])).collect();
    assert_eq!(given, expected, "four jobs, four distinct GPUs, named by UUID");
    // GPU 2 turns busy with a foreign process while its job runs; the job is untouched.
    gpu_status_of(&mut state, "node1", vec![report("node1", 2, GpuUse::BusyForeign, "pid 42 holds 1 GiB")]);
    assert_eq!(job_state(&state, &ids[2]), JobState::Running);
    // Jobs 0 and 2 end: the mom reported GPU 0 free (after its job) but GPU 2 still busy.
    end(&mut state, &ids[0], 0);
    end(&mut state, &ids[2], 0);
    let launches = pass(&mut state, 60);
    assert_eq!(launches.len(), 1);
    assert_eq!(launches[0].hosts[0].gpus, vec![0], "GPU 2 is not handed out while busy");
    // A draining GPU is not handed out either; once reported free it is.
    end(&mut state, &ids[1], 0);
    gpu_status_of(&mut state, "node1", vec![report("node1", 1, GpuUse::Draining, "job memory still allocated")]);
    assert!(pass(&mut state, 70).is_empty());
    gpu_status_of(
        &mut state,
        "node1",
        vec![report("node1", 1, GpuUse::Free, ""), report("node1", 2, GpuUse::Free, "")],
    );
    let gpus: Vec<Vec<u32>> = pass(&mut state, 80).iter().map(|launch| launch.hosts[0].gpus.clone()).collect();
    assert_eq!(gpus, vec![vec![1], vec![2]]);
}

#[test]
fn a_start_the_mom_refuses_is_retried_elsewhere() {
    let mut state = gpu_cluster(1, 2);
    let id = submit(&mut state, ALICE, &[("nodes", "1:ppn=1:gpus=1")]);
    assert_eq!(pass(&mut state, 20)[0].hosts[0].gpus, vec![0]);
    // The mom found a foreign process on GPU 0 at start: it reports it and does not start.
    gpu_status_of(&mut state, "node1", vec![report("node1", 0, GpuUse::BusyForeign, "pid 7")]);
    let out = end(&mut state, &id, proto::exit_status::JOB_EXEC_RETRY);
    assert!(out.to_moms.iter().any(|(_, message)| matches!(message, ServerToMom::ObitAck { .. })));
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!(job.state(), JobState::Queued);
    assert_eq!(job.comment.as_deref(), Some("requeued: node1 could not start the job; it will be retried"));
    assert_eq!(pass(&mut state, 30)[0].hosts[0].gpus, vec![1], "retried on the other GPU");
}

#[test]
fn a_job_no_node_can_start_is_held_after_twenty_failed_starts() {
    let mut state = gpu_cluster(1, 1);
    let id = submit(&mut state, ALICE, &[("nodes", "1:ppn=1")]);
    for attempt in 1..=job_ended::MAX_FAILED_STARTS + 1 {
        assert_eq!(pass(&mut state, 20 + i64::from(attempt)).len(), 1, "attempt {attempt} is started");
        end(&mut state, &id, proto::exit_status::JOB_EXEC_RETRY);
    }
    let job = &state.jobs()[&state.find_job(&id).unwrap()];
    assert_eq!((job.state(), job.hold_types.as_str()), (JobState::Held, "s"));
    assert_eq!(job.comment.as_deref(), Some("job held, too many failed attempts to run"));
    assert!(pass(&mut state, 100).is_empty(), "a held job is not tried again");
}

#[test]
fn a_share_a_sister_refuses_requeues_the_job() {
    let mut state = gpu_cluster(2, 2);
    let id = submit(&mut state, ALICE, &[("nodes", "2:ppn=1:gpus=1")]);
    assert_eq!(pass(&mut state, 20).len(), 1);
    let mut out = Outbox::default();
    gpu_status::share_refused(&mut state, &mut out, "node2", &id, 0, "GPU-node2-0 is busy-foreign", 25);
    assert_eq!(super::tests::sent_kinds(&out), ["RerunJob->node1"]);
    let again = JobObit { job_id: id.clone(), exit_status: -11, ..Default::default() };
    job_ended::job_ended(&mut state, &mut Outbox::default(), "node1", again, 30);
    assert_eq!(job_state(&state, &id), JobState::Queued);
    // A refusal from a node that is not a sister of the job changes nothing.
    gpu_status::share_refused(&mut state, &mut Outbox::default(), "node2", &id, 0, "late", 31);
    assert_eq!(job_state(&state, &id), JobState::Queued);
    state.sanity_check();
}

#[test]
fn mps_shares_of_one_user_fill_a_gpu_and_others_wait() {
    let mut state = gpu_cluster(1, 1);
    let alice: Vec<String> = (0..5).map(|_| submit(&mut state, ALICE, &[("nodes", "1:ppn=1:gpus=1:mps=25")])).collect();
    let bob = submit(&mut state, BOB, &[("select", "1:ncpus=1:ngpus=1:mps=10")]);
    let launches = pass(&mut state, 20);
    assert_eq!(launches.len(), 4, "four quarters run together");
    assert!(launches.iter().all(|launch| launch.hosts[0].mps == Some(25) && launch.hosts[0].gpus == [0]));
    assert_eq!(job_state(&state, &alice[4]), JobState::Queued, "a fifth waits");
    assert_eq!(job_state(&state, &bob), JobState::Queued, "another user never joins");
    gpu_status_of(&mut state, "node1", vec![report("node1", 0, GpuUse::Shared, "")]);
    let node = crate::status::node_status(&state.nodes()["node1"], "head", &state.resources);
    insta::assert_snapshot!("mps_gpu_status", node.get("gpu_status").unwrap());
    let job = &state.jobs()[&state.find_job(&alice[0]).unwrap()];
    assert_eq!(job.exec_vnode().unwrap(), "(node1:ncpus=1:ngpus=1:mps=25)");
    assert_eq!(crate::status_gpus::exec_gpus(job).unwrap(), "node1-gpu/0");
    // Alice's first share ends: her fifth job takes its place, bob still waits.
    end(&mut state, &alice[0], 0);
    assert_eq!(pass(&mut state, 60).len(), 1);
    assert_eq!(job_state(&state, &alice[4]), JobState::Running);
    for id in &alice[1..] {
        end(&mut state, id, 0);
    }
    // The mom reports the GPU free again only after its last share is gone.
    gpu_status_of(&mut state, "node1", vec![report("node1", 0, GpuUse::Free, "")]);
    assert_eq!(pass(&mut state, 90).len(), 1);
    assert_eq!(job_state(&state, &bob), JobState::Running);
}

#[test]
fn gpu_status_shows_use_jobs_and_reasons() {
    let mut state = gpu_cluster(1, 3);
    submit(&mut state, ALICE, &[("nodes", "1:ppn=1:gpus=1")]);
    pass(&mut state, 20);
    gpu_status_of(
        &mut state,
        "node1",
        vec![
            report("node1", 0, GpuUse::Job, ""),
            report("node1", 1, GpuUse::BusyForeign, "pid 4242 (python); 2048 MiB"),
            report("node1", 2, GpuUse::Down, "GPU lost"),
        ],
    );
    let node = crate::status::node_status(&state.nodes()["node1"], "head", &state.resources);
    insta::assert_snapshot!(node.get("gpu_status").unwrap().replace(";gpu[", "\n;gpu["));
    assert_eq!(node.get("resources_assigned.ngpus"), Some("1"));
}
