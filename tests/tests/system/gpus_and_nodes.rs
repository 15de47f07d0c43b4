//! Multi-node jobs, their environment, output naming, and GPU exclusivity.

use std::time::Duration;
use tests::{Cluster, Shape};

#[test]
fn two_node_gpu_job_sees_its_allocation() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 4, gpus: 2 });
    let script = cluster.script(
        "gpujob.sh",
        "#!/bin/bash\n#PBS -l nodes=2:ppn=2:gpus=1\n#PBS -l walltime=00:05:00\n\
         echo \"NODEFILE $(cat $PBS_NODEFILE | tr '\\n' ' ')\"\n\
         echo \"GPUFILE $(cat $PBS_GPUFILE | tr '\\n' ' ')\"\n\
         echo \"CUDA [$CUDA_VISIBLE_DEVICES] $CUDA_DEVICE_ORDER\"\n\
         echo \"NUM $PBS_NUM_NODES $PBS_NUM_PPN $PBS_NP\"\n\
         echo \"IDS $PBS_JOBID $PBS_JOBNAME $PBS_QUEUE $PBS_ENVIRONMENT\"\n\
         echo \"PWD $(pwd) HOME $HOME WORKDIR $PBS_O_WORKDIR\"\n",
    );
    let id = cluster.qsub(&script, &[]);
    let seq = id.split('.').next().unwrap();
    assert_eq!(id, format!("{seq}.testsrv"));
    let status = cluster.wait_finished(&id, Duration::from_secs(30));
    assert_eq!(status, 0, "{}", cluster.logs());
    let output_path = cluster.work.path().join(format!("gpujob.sh.o{seq}"));
    let output = tests::wait_for(Duration::from_secs(10), "output file", || std::fs::read_to_string(&output_path).ok());
    let line = |prefix: &str| output.lines().find(|line| line.starts_with(prefix)).unwrap_or_default().to_string();
    assert_eq!(line("NODEFILE"), "NODEFILE node1 node1 node2 node2 ", "{output}");
    assert_eq!(line("GPUFILE"), "GPUFILE node1-gpu0 node2-gpu0 ", "{output}");
    assert_eq!(line("CUDA"), "CUDA [0] PCI_BUS_ID", "{output}");
    assert_eq!(line("NUM"), "NUM 2 2 4", "{output}");
    assert_eq!(line("IDS"), format!("IDS {id} gpujob.sh workq PBS_BATCH"), "{output}");
    let home = std::env::var("HOME").unwrap_or_default();
    assert_eq!(line("PWD"), format!("PWD {home} HOME {home} WORKDIR {}", cluster.work.path().display()), "{output}");
    assert!(cluster.work.path().join(format!("gpujob.sh.e{seq}")).exists(), "error file delivered");
}

/// Reads `start end` pairs (seconds with fractions) that jobs appended to a file.
fn intervals(path: &std::path::Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().map(|field| field.parse::<f64>().ok());
            Some((fields.next()??, fields.next()??))
        })
        .collect()
}

#[test]
fn jobs_wanting_all_gpus_of_a_node_never_overlap() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 2 });
    let record = cluster.work.path().join("intervals");
    let script = cluster.script(
        "allgpus.sh",
        &format!(
            "#PBS -l nodes=1:ppn=1:gpus=2\nstart=$(date +%s.%N)\nsleep 1\necho \"$start $(date +%s.%N) $CUDA_VISIBLE_DEVICES\" >> {}\n",
            record.display()
        ),
    );
    let ids: Vec<String> = (0..3).map(|_| cluster.qsub(&script, &[])).collect();
    for id in &ids {
        assert_eq!(cluster.wait_finished(id, Duration::from_secs(30)), 0);
    }
    let mut spans = intervals(&record);
    assert_eq!(spans.len(), 3, "every job recorded its interval");
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    for pair in spans.windows(2) {
        assert!(pair[0].1 <= pair[1].0, "two all-GPU jobs overlapped: {spans:?}");
    }
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(text.lines().all(|line| line.ends_with(" 0,1")), "each job saw both GPUs: {text}");
}

#[test]
fn pbsnodes_lists_every_node() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 3, gpus: 1 });
    let output = cluster.run("pbsnodes", &["-a"]);
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for node in ["node1", "node2"] {
        assert!(text.lines().any(|line| line == node), "{node} missing: {text}");
    }
    assert_eq!(text.matches("     state = free").count(), 2, "{text}");
    assert_eq!(text.matches("     resources_available.ncpus = 3").count(), 2, "{text}");
    assert_eq!(text.matches("     resources_available.ngpus = 1").count(), 2, "{text}");
}
