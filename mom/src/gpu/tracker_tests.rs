//! The tracker's rules, step by step with explicit times.

use super::*;
use crate::gpu::GpuProcess;

const HOLD: Duration = Duration::from_secs(60);
const DRAIN: Duration = Duration::from_secs(300);

fn tracker(count: u32) -> GpuTracker {
    let devices: Vec<GpuInfo> = (0..count)
        .map(|index| GpuInfo {
            index,
            uuid: format!("GPU-{index}"),
            name: "g".into(),
            pci_bus_id: String::new(),
            mem_total: 16 << 30,
        })
        .collect();
    let settings = TrackerSettings { foreign_hold: HOLD, drain_timeout: DRAIN, idle_memory: 512 << 20 };
    GpuTracker::new(&devices, settings)
}

fn clean(index: u32) -> GpuSample {
    GpuSample { uuid: format!("GPU-{index}"), mem_used: 0, utilization: Some(0), processes: Vec::new(), fault: None }
}

fn with_process(index: u32, pid: u32) -> GpuSample {
    GpuSample { processes: vec![GpuProcess { pid, used_memory: Some(1 << 30) }], ..clean(index) }
}

fn all_clean(tracker: &GpuTracker) -> Vec<GpuSample> {
    (0..tracker.infos().len() as u32).map(clean).collect()
}

fn exclusive(job: &str, gpus: &[u32]) -> GpuClaim {
    GpuClaim {
        job_id: job.into(),
        user: "alice".into(),
        gpus: gpus.iter().map(|&index| (index, Some(format!("GPU-{index}")))).collect(),
        mps: None,
    }
}

fn share(job: &str, user: &str, percent: u8) -> GpuClaim {
    GpuClaim { job_id: job.into(), user: user.into(), gpus: vec![(0, None)], mps: Some(percent) }
}

fn states(tracker: &GpuTracker, now: Instant) -> Vec<GpuUse> {
    tracker.reports(now).into_iter().map(|report| report.state).collect()
}

#[test]
fn a_gpu_is_one_jobs_until_released_then_drains_until_clean() {
    let t0 = Instant::now();
    let mut gpus = tracker(2);
    gpus.observe(all_clean(&gpus), t0);
    assert_eq!(gpus.claim(&exclusive("1.s", &[0]), t0), Ok(vec![]));
    assert_eq!(states(&gpus, t0), [GpuUse::Job, GpuUse::Free]);
    let err = gpus.claim(&exclusive("2.s", &[1, 0]), t0).unwrap_err();
    assert_eq!(err, "GPU 0 (GPU-0) is held by job 1.s");
    assert_eq!(states(&gpus, t0), [GpuUse::Job, GpuUse::Free], "all or nothing: GPU 1 stays free");
    // The job's process is still there after the job: draining, then free once it is gone.
    gpus.observe(vec![with_process(0, 4242), clean(1)], t0);
    assert!(gpus.release("1.s", t0).is_empty());
    gpus.observe(vec![with_process(0, 4242), clean(1)], t0 + Duration::from_secs(1));
    let (state, reason) = gpus.state(0, t0 + Duration::from_secs(1));
    assert_eq!(state, GpuUse::Draining);
    assert!(reason.starts_with("its job ended; waiting until it is clean: pid 4242"), "{reason}");
    assert!(gpus.claim(&exclusive("2.s", &[0]), t0).is_err(), "a draining GPU is not handed out");
    gpus.observe(all_clean(&gpus), t0 + Duration::from_secs(2));
    assert_eq!(states(&gpus, t0 + Duration::from_secs(2)), [GpuUse::Free, GpuUse::Free]);
}

#[test]
fn a_gpu_dirty_past_the_drain_timeout_is_down_until_clean() {
    let t0 = Instant::now();
    let mut gpus = tracker(1);
    gpus.claim(&exclusive("1.s", &[0]), t0).unwrap();
    gpus.release("1.s", t0);
    let dirty = GpuSample { mem_used: 4 << 30, ..clean(0) };
    gpus.observe(vec![dirty.clone()], t0 + DRAIN);
    assert_eq!(gpus.state(0, t0 + DRAIN).0, GpuUse::Draining);
    let late = t0 + DRAIN + Duration::from_secs(1);
    gpus.observe(vec![dirty], late);
    let (state, reason) = gpus.state(0, late);
    assert_eq!((state, reason.as_str()), (GpuUse::Down, "still in use 300 s after its job ended: 4.0 GiB in use"));
    gpus.observe(vec![clean(0)], late);
    assert_eq!(gpus.state(0, late).0, GpuUse::Free);
}

#[test]
fn a_foreign_process_keeps_a_gpu_busy_until_clean_for_the_hold_time() {
    let t0 = Instant::now();
    let mut gpus = tracker(2);
    gpus.observe(vec![clean(0), with_process(1, 99)], t0);
    let (state, reason) = gpus.state(1, t0);
    assert_eq!(state, GpuUse::BusyForeign);
    assert!(reason.starts_with("used outside the queue: pid 99"), "{reason}");
    assert!(gpus.claim(&exclusive("1.s", &[1]), t0).unwrap_err().contains("is busy-foreign"));
    let gone = t0 + Duration::from_secs(5);
    gpus.observe(all_clean(&gpus), gone);
    assert_eq!(gpus.state(1, gone + HOLD - Duration::from_millis(1)).0, GpuUse::BusyForeign);
    assert_eq!(gpus.state(1, gone + HOLD).0, GpuUse::Free);
    // Seen again within the hold: the clock starts over.
    gpus.observe(vec![clean(0), with_process(1, 99)], gone + Duration::from_secs(10));
    gpus.observe(all_clean(&gpus), gone + Duration::from_secs(20));
    assert_eq!(gpus.state(1, gone + HOLD).0, GpuUse::BusyForeign);
    gpus.observe(all_clean(&gpus), gone + Duration::from_secs(20) + HOLD);
    assert_eq!(gpus.state(1, gone + Duration::from_secs(20) + HOLD).0, GpuUse::Free);
}

#[test]
fn processes_on_a_held_gpu_are_its_jobs() {
    let t0 = Instant::now();
    let mut gpus = tracker(1);
    gpus.claim(&exclusive("1.s", &[0]), t0).unwrap();
    gpus.observe(vec![with_process(0, 7)], t0);
    assert_eq!(gpus.state(0, t0).0, GpuUse::Job);
}

#[test]
fn a_lost_gpu_is_down_even_when_held() {
    let t0 = Instant::now();
    let mut gpus = tracker(1);
    gpus.claim(&exclusive("1.s", &[0]), t0).unwrap();
    gpus.observe(vec![GpuSample { fault: Some("fallen off the bus".into()), ..clean(0) }], t0);
    assert_eq!(gpus.state(0, t0), (GpuUse::Down, "fallen off the bus".to_string()));
}

#[test]
fn claims_name_missing_or_renamed_gpus() {
    let t0 = Instant::now();
    let mut gpus = tracker(2);
    gpus.observe(all_clean(&gpus), t0);
    assert_eq!(gpus.claim(&exclusive("1.s", &[2]), t0).unwrap_err(), "GPU 2 does not exist on this node (2 GPUs)");
    let mut renamed = exclusive("1.s", &[1]);
    renamed.gpus[0].1 = Some("GPU-other".into());
    assert_eq!(gpus.claim(&renamed, t0).unwrap_err(), "GPU 1 is GPU-1, not GPU-other");
    assert!(!gpus.holds("1.s"));
}

#[test]
fn mps_shares_of_one_user_add_up_to_a_hundred() {
    let t0 = Instant::now();
    let mut gpus = tracker(1);
    gpus.observe(all_clean(&gpus), t0);
    assert_eq!(gpus.claim(&share("1.s", "alice", 25), t0), Ok(vec![0]), "the first share starts MPS");
    for job in ["2.s", "3.s", "4.s"] {
        assert_eq!(gpus.claim(&share(job, "alice", 25), t0), Ok(vec![]));
    }
    assert_eq!(gpus.state(0, t0).0, GpuUse::Shared);
    assert_eq!(gpus.claim(&share("5.s", "alice", 25), t0).unwrap_err(), "GPU 0 (GPU-0) has 0% left for MPS, not 25%");
    assert_eq!(gpus.claim(&share("6.s", "bob", 10), t0).unwrap_err(), "GPU 0 (GPU-0) is shared by alice's MPS jobs");
    assert!(gpus.claim(&exclusive("7.s", &[0]), t0).is_err(), "a shared GPU is never given whole");
    for job in ["1.s", "2.s", "3.s"] {
        assert!(gpus.release(job, t0).is_empty());
    }
    assert_eq!(gpus.release("4.s", t0), vec![0], "the last share stops MPS");
    gpus.observe(all_clean(&gpus), t0);
    assert_eq!(gpus.claim(&share("6.s", "bob", 10), t0), Ok(vec![0]), "another user once the GPU is clean");
}
