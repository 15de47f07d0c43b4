//! `minipbs up --simulate` (benchmarks only): one `pbs_mom --simulate` serves 20 nodes, each
//! registered through a connection of its own; their jobs run nowhere. Jobs whose script is
//! `sleep 1` run about a second and end with exit 0 (`qstat -x`, accounting) without the
//! script's other lines having run; qdel ends a long one early. On both transports
//! (`MINIPBS_TEST_TRANSPORT=tcp`: every node's link TCP + MUNGE).

use std::time::{Duration, Instant};
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(60);
const JOBS: usize = 200;

#[test]
fn simulated_nodes_run_jobs_for_their_sleep_and_qdel_ends_one() {
    let cluster = Cluster::up_with(Shape { nodes: 20, ppn: 4, gpus: 0 }, &["--simulate"]);
    let nodes = String::from_utf8(cluster.run("pbsnodes", &["-a"]).stdout).unwrap();
    for index in 1..=20 {
        assert!(nodes.lines().any(|line| line == format!("node{index}")), "node{index} registered:\n{nodes}");
    }
    assert!(!nodes.contains("down"), "{nodes}");
    let moms: Vec<_> = std::fs::read_dir(cluster.state.path().join("pids")).unwrap().flatten().collect();
    assert_eq!(moms.iter().filter(|entry| entry.file_name().to_string_lossy().starts_with("node")).count(), 1);

    let long = cluster.script("long.sh", "#!/bin/sh\nsleep 600\n");
    let long_id = cluster.qsub(&long, &[]);
    let nap = cluster.script("nap.sh", "#!/bin/sh\nsleep 1\ntouch \"$PBS_O_WORKDIR/ran.$PBS_JOBID\"\n");
    let submitted = Instant::now();
    let ids: Vec<String> = (0..JOBS).map(|_| cluster.qsub(&nap, &[])).collect();
    for id in &ids {
        assert_eq!(cluster.wait_finished(id, LIMIT), 0, "{id}: {:?}", cluster.job_attrs(id));
    }
    // 200 one-second jobs on 79 free slots: three rounds at least.
    assert!(submitted.elapsed() >= Duration::from_secs(3), "the jobs did not take their second");
    for id in ids.iter().step_by(20) {
        let walltime = cluster.job_attr(id, "resources_used.walltime");
        assert_eq!(walltime.as_deref(), Some("00:00:01"), "{id}: {:?}", cluster.job_attrs(id));
    }
    let ends: Vec<String> = cluster.accounting().into_iter().filter(|line| line.contains(";E;")).collect();
    for id in &ids {
        let record = ends.iter().find(|line| line.contains(&format!(";E;{id};"))).expect("an E record");
        assert!(record.contains(" Exit_status=0 "), "{record}");
    }
    let ran = std::fs::read_dir(cluster.work.path()).unwrap().flatten();
    assert_eq!(ran.filter(|entry| entry.file_name().to_string_lossy().starts_with("ran.")).count(), 0);
    let outputs = std::fs::read_dir(cluster.work.path()).unwrap().flatten();
    assert_eq!(outputs.filter(|entry| entry.file_name().to_string_lossy().contains(".o")).count(), 0);

    assert_eq!(cluster.job_attr(&long_id, "job_state").as_deref(), Some("R"), "{:?}", cluster.job_attrs(&long_id));
    assert!(cluster.run("qdel", &[&long_id]).status.success());
    let status = cluster.wait_finished(&long_id, LIMIT);
    assert_ne!(status, 0, "{:?}", cluster.job_attrs(&long_id));
    let used = cluster.job_attr(&long_id, "resources_used.walltime");
    assert!(used.as_deref().is_none_or(|used| used < "00:10:00"), "qdel ended it early: {used:?}");
    wait_for(LIMIT, "the end of the deleted job in the accounting log", || {
        cluster.accounting().iter().any(|line| line.contains(&format!(";E;{long_id};"))).then_some(())
    });
}
