//! Helpers for the crate's unit tests: a minimal job launch, a job user, the root check.

use proto::mom::{HostAlloc, JobLaunch};

/// A launch of `job_id` for user `u` with nothing but the given hosts.
pub fn launch(job_id: &str, hosts: Vec<HostAlloc>) -> Box<JobLaunch> {
    Box::new(JobLaunch {
        job_id: job_id.to_string(),
        name: "x".into(),
        queue: "q".into(),
        user: "u".into(),
        group: None,
        script: String::new(),
        variables: Default::default(),
        hosts,
        walltime: None,
        kill_delay: 0,
        output_path: String::new(),
        error_path: String::new(),
        join: Default::default(),
        shell: None,
        init_dir: None,
        num_ppn: 1,
        first_ncpus: 1,
        omp_threads: None,
        cookie: String::new(),
        array_index: None,
        array_id: None,
        interactive: None,
        root_allowed: false,
        run_count: 1,
        script_args: Vec::new(),
        output_name: String::new(),
        error_name: String::new(),
        exec: Default::default(),
        keep: "n".to_string(),
    })
}

/// A host entry of `node` with GPUs `gpus` (named by UUID `uuids`) and an optional MPS share.
pub fn gpu_host(node: &str, gpus: &[u32], uuids: &[&str], mps: Option<u8>) -> HostAlloc {
    HostAlloc {
        node: node.into(),
        ncpus: 1,
        mpiprocs: 1,
        gpus: gpus.to_vec(),
        mem_bytes: None,
        gpu_uuids: uuids.iter().map(|uuid| uuid.to_string()).collect(),
        mps,
        mom_addr: None,
    }
}

/// User alice (uid and gid 1000, bash, /home/alice), as the environment tests expect her.
pub fn alice() -> crate::exec::user::JobUser {
    crate::exec::user::JobUser {
        name: "alice".into(),
        uid: 1000,
        gid: 1000,
        groups: vec![1000],
        home: "/home/alice".into(),
        login_shell: "/bin/bash".into(),
    }
}

/// Whether this test runs as root (identity changes, host groups); when not, it fails under
/// `CI` (a test that needs root must not pass by skipping there) and says `false` otherwise.
pub fn is_root() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none(), "needs root under CI");
    false
}
