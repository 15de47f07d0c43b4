//! The job's environment (pbs-reference 4.1) as a pure function of the launch, the user and
//! the job's file paths.
//!
//! Owns: which variables a job sees and their precedence: `JobLaunch.variables` first, then
//! the mom's own variables, which the user cannot override (every `PBS_*` but the submit-side
//! `PBS_O_*`, `HOME`, `LOGNAME`, `USER`, `SHELL`, `TMPDIR`, ...; `PATH` is the user's, as in
//! OpenPBS). A job that runs as root takes from its list only an allow-list
//! ([`root_may_take`]: `PBS_O_*`, locale, terminal, time zone) and gets root's own `PATH`:
//! whoever may set a root job's `Variable_List` (`qsub -V` from a tainted environment,
//! `qalter -v`) must not get code run as root. A user's own job keeps them all: it runs only with
//! the user's rights, and nothing the mom runs as root sees a job's variables. Must not: read the mom's own
//! environment, touch files, or log values (they may hold secrets).

use super::files::{distinct_hosts, local_gpus};
use super::launch_env::{launcher_variables, LauncherEnv};
use super::user::JobUser;
use proto::mom::JobLaunch;
use std::collections::BTreeMap;
use std::path::Path;

/// `PBS_MOMPORT`: the resource-manager port OpenPBS reports.
pub const MOM_PORT: u16 = 15003;

/// PATH given to jobs whose variables carry none (login shells usually reset it anyway).
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// PATH of every job that runs as root (never the job's own).
pub const ROOT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// What the environment is computed from, besides the launch itself.
#[derive(Debug, Clone, Copy)]
pub struct EnvInput<'a> {
    /// The job.
    pub launch: &'a JobLaunch,
    /// Its resolved user (HOME, LOGNAME, USER, SHELL).
    pub user: &'a JobUser,
    /// This node's name (selects this host's GPUs).
    pub node: &'a str,
    /// `PBS_NODEFILE`.
    pub nodefile: &'a Path,
    /// Set when the job has GPUs anywhere.
    pub gpufile: Option<&'a Path>,
    /// `TMPDIR`.
    pub tmpdir: &'a Path,
    /// An interactive job's `TERM`, from its qsub.
    pub term: Option<&'a str>,
    /// What the job's GPUs here set beyond the defaults (UUIDs, an MPS share): gpu/board.rs.
    pub gpu_variables: &'a [(String, String)],
    /// Variables the job gets only when its own list lacks them (the node's `module`).
    pub defaults: &'a [(String, String)],
    /// The node's launcher settings (task socket, `pbs_tmrsh`, MPI variables): launch_env.rs.
    pub launcher: &'a LauncherEnv,
    /// `MASTER_PORT`: the mother superior's pick for the job; `None` on a sister.
    pub master_port: Option<u16>,
}

/// The complete environment of the job's top shell, sorted by name.
pub fn job_environment(input: &EnvInput<'_>) -> Vec<(String, String)> {
    let launch = input.launch;
    // What the mom owns cannot come from the user's list, even where the mom sets it only
    // sometimes (a `-V` carrying CUDA_VISIBLE_DEVICES must not hand a GPU-less job a GPU).
    let mut env: BTreeMap<String, String> = launch
        .variables
        .iter()
        .filter(|(name, _)| !mom_owned(name))
        .filter(|(name, value)| input.user.uid != 0 || root_may_take(name, value))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let path = if input.user.uid == 0 { ROOT_PATH } else { DEFAULT_PATH };
    env.entry("PATH".into()).or_insert_with(|| path.into());
    for (name, value) in input.defaults {
        env.entry(name.clone()).or_insert_with(|| value.clone());
    }
    let mut set = |name: &str, value: String| {
        env.insert(name.to_string(), value);
    };
    let home = input.user.home.display().to_string();
    set("HOME", home.clone());
    set("LOGNAME", input.user.name.clone());
    set("USER", input.user.name.clone());
    set("SHELL", input.user.login_shell.display().to_string());
    if launch.interactive.is_some() {
        set("PBS_ENVIRONMENT", "PBS_INTERACTIVE".into());
        set("TERM", input.term.unwrap_or("unknown").into());
    } else {
        set("PBS_ENVIRONMENT", "PBS_BATCH".into());
        set("ENVIRONMENT", "BATCH".into());
    }
    set("PBS_JOBID", launch.job_id.clone());
    set("PBS_JOBNAME", launch.name.clone());
    set("PBS_QUEUE", launch.queue.clone());
    set("PBS_JOBCOOKIE", launch.cookie.clone());
    // This node's index in the job (0 on the mother superior; a sister's tasks see theirs).
    let node_num = launch.hosts.iter().position(|host| host.node == input.node).unwrap_or(0);
    set("PBS_NODENUM", node_num.to_string());
    set("PBS_TASKNUM", "1".into());
    set("PBS_VNODENUM", "0".into());
    set("PBS_MOMPORT", MOM_PORT.to_string());
    set("PBS_NODEFILE", input.nodefile.display().to_string());
    set("PBS_NUM_NODES", distinct_hosts(&launch.hosts).len().max(1).to_string());
    set("PBS_NUM_PPN", launch.num_ppn.to_string());
    set("PBS_NP", total_slots(launch).to_string());
    if let Some(walltime) = launch.walltime {
        set("PBS_WALLTIME", walltime.to_string());
    }
    set("PBS_JOBDIR", home);
    set("TMPDIR", input.tmpdir.display().to_string());
    // OpenPBS sets both to the chunk's thread count (`vn_threads`: `ompthreads`, else `ncpus`;
    // src/resmom/start_exec.c, "OMP_NUM_THREADS and NCPUS eq to number of cpus").
    let threads = launch.omp_threads.unwrap_or(launch.first_ncpus).to_string();
    set("NCPUS", threads.clone());
    set("OMP_NUM_THREADS", threads);
    if let Some(gpufile) = input.gpufile {
        set("PBS_GPUFILE", gpufile.display().to_string());
    }
    let gpus = local_gpus(&launch.hosts, input.node);
    let indices: Vec<String> = gpus.iter().map(u32::to_string).collect();
    // Empty when the job has no GPU here: CUDA then sees none, so no GPU of another job.
    set("CUDA_VISIBLE_DEVICES", indices.join(","));
    set("CUDA_DEVICE_ORDER", "PCI_BUS_ID".into());
    for (name, value) in input.gpu_variables {
        set(name, value.clone());
    }
    for (name, value) in launcher_variables(launch, input.launcher, input.nodefile, input.master_port) {
        set(&name, value);
    }
    if let Some(init_dir) = &launch.init_dir {
        set("PBS_O_INITDIR", init_dir.clone());
    }
    if let Some(index) = launch.array_index {
        set("PBS_ARRAY_INDEX", index.to_string());
        set("PBS_ARRAYID", index.to_string());
    }
    if let Some(array_id) = &launch.array_id {
        set("PBS_ARRAY_ID", array_id.clone());
    }
    env.into_iter().collect()
}

/// Names only the mom sets: `PBS_*` except the submit-side `PBS_O_*`, `CUDA_*`, and the
/// variables computed from the allocation.
fn mom_owned(name: &str) -> bool {
    (name.starts_with("PBS_") && !name.starts_with("PBS_O_"))
        || name.starts_with("CUDA_")
        || matches!(name, "TMPDIR" | "NCPUS" | "OMP_NUM_THREADS" | "ENVIRONMENT")
}

/// The variables a job that runs as root takes from its `Variable_List` (issue 12, item 9): an
/// allow-list, because whoever edits a root job's list must not get code run as root, and a
/// deny-list cannot keep up with every interpreter's hooks (`BASH_ENV`, `ENV`, `BASH_FUNC_*%%`,
/// `SHELLOPTS`, `PS4`, `PYTHONPATH`, `PERL5OPT`, `PATH`, the loader's `LD_*`, ...). Kept: the
/// submit-side `PBS_O_*` (data qsub recorded), and the locale and terminal (`LANG`, `LANGUAGE`,
/// `LC_*`, `TERM`, `TZ`) unless the value names a file (a locale or terminfo path, `TZ=:/file`,
/// `..`). `PATH` is [`ROOT_PATH`]; `HOME`, `USER`, `LOGNAME`, `SHELL` are the mom's anyway.
pub fn root_may_take(name: &str, value: &str) -> bool {
    let names_a_file = value.starts_with('/') || value.starts_with(":/") || value.contains("..");
    match name {
        _ if loader_variable(name) => false,
        _ if name.starts_with("PBS_O_") => true,
        "TZ" => !names_a_file,
        "LANG" | "LANGUAGE" | "TERM" => !value.contains('/'),
        _ if name.starts_with("LC_") => !value.contains('/'),
        _ => false,
    }
}

/// Variables that make the dynamic loader or the C library load or read files of the caller's
/// choosing (glibc's `UNSECURE_ENVVARS`, which it drops for set-uid programs).
pub fn loader_variable(name: &str) -> bool {
    name.starts_with("LD_")
        || matches!(
            name,
            "GCONV_PATH"
                | "GETCONF_DIR"
                | "HOSTALIASES"
                | "LOCALDOMAIN"
                | "LOCPATH"
                | "MALLOC_TRACE"
                | "NIS_PATH"
                | "NLSPATH"
                | "RESOLV_HOST_CONF"
                | "RES_OPTIONS"
                | "TZDIR"
        )
}

/// Total cpu slots of the job (`PBS_NP`, `resources_used.ncpus`): the sum of every host's
/// ncpus, at least 1.
pub fn total_slots(launch: &JobLaunch) -> u32 {
    launch.hosts.iter().map(|h| h.ncpus).sum::<u32>().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::mom::HostAlloc;

    fn host(node: &str, ncpus: u32, gpus: &[u32]) -> HostAlloc {
        HostAlloc {
            node: node.into(),
            ncpus,
            mpiprocs: ncpus,
            gpus: gpus.to_vec(),
            mem_bytes: None,
            gpu_uuids: Vec::new(),
            mps: None,
            mom_addr: None,
        }
    }

    fn launch() -> JobLaunch {
        JobLaunch {
            job_id: "7.head".into(),
            name: "run.sh".into(),
            queue: "workq".into(),
            user: "alice".into(),
            group: None,
            script: "echo secret".into(),
            variables: vec![
                ("PBS_O_WORKDIR", "/home/alice/run"),
                ("PBS_JOBID", "forged"),
                ("HOME", "/forged"),
                ("MY_VAR", "x"),
            ]
            .into_iter()
            .collect(),
            hosts: vec![host("node1", 2, &[1, 3]), host("node2", 2, &[0])],
            walltime: Some(3600),
            kill_delay: 10,
            output_path: "/home/alice/run/run.sh.o7".into(),
            error_path: "/home/alice/run/run.sh.e7".into(),
            join: Default::default(),
            shell: None,
            init_dir: None,
            num_ppn: 2,
            first_ncpus: 2,
            omp_threads: None,
            cookie: "c0ffee".into(),
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
        }
    }

    fn user() -> JobUser {
        crate::test_support::alice()
    }

    fn environment(launch: &JobLaunch, node: &str, gpufile: Option<&Path>) -> BTreeMap<String, String> {
        environment_of(&user(), launch, node, gpufile)
    }

    fn environment_of(
        user: &JobUser,
        launch: &JobLaunch,
        node: &str,
        gpufile: Option<&Path>,
    ) -> BTreeMap<String, String> {
        let input = EnvInput {
            launch,
            user,
            node,
            nodefile: Path::new("/spool/aux/7.head"),
            gpufile,
            tmpdir: Path::new("/var/tmp/pbs.7.head"),
            term: Some("xterm-256color"),
            gpu_variables: &[],
            defaults: &[
                ("MODULEPATH".to_string(), "/node/modules".to_string()),
                ("MY_VAR".to_string(), "node".to_string()),
            ],
            launcher: &LauncherEnv::default(),
            master_port: None,
        };
        job_environment(&input).into_iter().collect()
    }

    #[test]
    fn mom_variables_win_over_user_variables() {
        let env = environment(&launch(), "node1", None);
        assert_eq!(env["PBS_JOBID"], "7.head");
        assert_eq!(env["HOME"], "/home/alice");
        assert_eq!(env["MY_VAR"], "x", "a node default does not replace the job's own");
        assert_eq!(env["MODULEPATH"], "/node/modules", "a node default fills what the job lacks");
        assert_eq!(env["PBS_O_WORKDIR"], "/home/alice/run");
    }

    #[test]
    fn what_the_mom_sets_cannot_come_from_the_variable_list() {
        let mut launch = launch();
        for (name, value) in [
            ("PBS_JOBID", "x"),
            ("PBS_NODEFILE", "/etc/shadow"),
            ("PBS_ENVIRONMENT", "x"),
            ("HOME", "/root"),
            ("USER", "root"),
            ("LOGNAME", "root"),
            ("SHELL", "/bin/evil"),
            ("TMPDIR", "/"),
            ("ENVIRONMENT", "x"),
        ] {
            launch.variables.set(name, value);
        }
        let env = environment(&launch, "node1", None);
        assert_eq!(env["PBS_JOBID"], "7.head");
        assert_eq!(env["PBS_NODEFILE"], "/spool/aux/7.head");
        assert_eq!(env["PBS_ENVIRONMENT"], "PBS_BATCH");
        assert_eq!((env["HOME"].as_str(), env["USER"].as_str()), ("/home/alice", "alice"));
        assert_eq!((env["LOGNAME"].as_str(), env["SHELL"].as_str()), ("alice", "/bin/bash"));
        assert_eq!((env["TMPDIR"].as_str(), env["ENVIRONMENT"].as_str()), ("/var/tmp/pbs.7.head", "BATCH"));
    }

    #[test]
    fn loader_variables_reach_a_users_job_but_never_a_root_job() {
        let mut launch = launch();
        for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"] {
            launch.variables.set(name, "/tmp/x.so");
        }
        launch.variables.set("LDFLAGS", "-g");
        let env = environment(&launch, "node1", None);
        assert_eq!(env["LD_PRELOAD"], "/tmp/x.so", "the user's own process, with the user's rights");
        let root = JobUser { name: "root".into(), uid: 0, gid: 0, groups: vec![0], ..user() };
        let env = environment_of(&root, &launch, "node1", None);
        for name in ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH"] {
            assert!(!env.contains_key(name), "{name} reached a root job");
        }
        assert!(!env.contains_key("LDFLAGS"), "not on a root job's allow-list");
    }

    #[test]
    fn a_root_job_gets_only_allow_listed_variables_and_roots_path() {
        let mut launch = launch();
        let attacks = [
            ("BASH_ENV", "/tmp/evil"),
            ("ENV", "/tmp/evil"),
            ("BASH_FUNC_ls%%", "() { id; }"),
            ("PATH", "/tmp/evil:/usr/bin"),
            ("PYTHONPATH", "/tmp/evil"),
            ("PERL5OPT", "-Mevil"),
            ("SHELLOPTS", "xtrace"),
            ("PS4", "$(id)"),
            ("LC_ALL", "/tmp/locale"),
            ("TERM", "../../tmp/terminfo"),
        ];
        let kept = [("LANG", "en_US.UTF-8"), ("LC_TIME", "C"), ("TZ", "Europe/Paris"), ("PBS_O_HOST", "login1")];
        for (name, value) in attacks.iter().chain(&kept) {
            launch.variables.set(name, value);
        }
        let root = JobUser { name: "root".into(), uid: 0, gid: 0, groups: vec![0], ..user() };
        let env = environment_of(&root, &launch, "node1", None);
        for (name, _) in attacks.iter().filter(|(name, _)| *name != "PATH") {
            assert!(!env.contains_key(*name), "{name} reached a root job");
        }
        assert_eq!(env["MY_VAR"], "node", "the job's own is not on the allow-list: the node's default");
        for tz in [":/tmp/tz", "/tmp/tz", "../../tmp/tz"] {
            assert!(!root_may_take("TZ", tz), "{tz}");
        }
        assert_eq!(env["PATH"], ROOT_PATH);
        for (name, value) in kept {
            assert_eq!(env[name], value, "{name}");
        }
        assert_eq!(env["PBS_O_WORKDIR"], "/home/alice/run");
        assert_eq!(env["MODULEPATH"], "/node/modules", "the node's own defaults still apply");
        let env = environment(&launch, "node1", None);
        assert_eq!(env["BASH_ENV"], "/tmp/evil", "a user's own job keeps its variables");
        assert_eq!(env["PATH"], "/tmp/evil:/usr/bin");
    }

    #[test]
    fn subjobs_see_their_index_and_array_which_the_user_cannot_forge() {
        let mut launch = launch();
        assert!(!environment(&launch, "node1", None).contains_key("PBS_ARRAY_INDEX"), "not an array");
        launch.job_id = "7[4].head".into();
        launch.array_index = Some(4);
        launch.array_id = Some("7[].head".into());
        launch.variables.set("PBS_ARRAY_INDEX", "99");
        launch.variables.set("PBS_ARRAYID", "99");
        let env = environment(&launch, "node1", None);
        assert_eq!(env["PBS_JOBID"], "7[4].head");
        assert_eq!(env["PBS_ARRAY_INDEX"], "4");
        assert_eq!(env["PBS_ARRAYID"], "4");
        assert_eq!(env["PBS_ARRAY_ID"], "7[].head");
    }

    #[test]
    fn pbs_variables() {
        let env = environment(&launch(), "node1", Some(Path::new("/spool/aux/7.headgpu")));
        let expect = [
            ("LOGNAME", "alice"),
            ("USER", "alice"),
            ("SHELL", "/bin/bash"),
            ("PATH", DEFAULT_PATH),
            ("PBS_ENVIRONMENT", "PBS_BATCH"),
            ("ENVIRONMENT", "BATCH"),
            ("PBS_JOBNAME", "run.sh"),
            ("PBS_QUEUE", "workq"),
            ("PBS_JOBCOOKIE", "c0ffee"),
            ("PBS_NODENUM", "0"),
            ("PBS_TASKNUM", "1"),
            ("PBS_VNODENUM", "0"),
            ("PBS_MOMPORT", "15003"),
            ("PBS_NODEFILE", "/spool/aux/7.head"),
            ("PBS_NUM_NODES", "2"),
            ("PBS_NUM_PPN", "2"),
            ("PBS_NP", "4"),
            ("PBS_WALLTIME", "3600"),
            ("PBS_JOBDIR", "/home/alice"),
            ("TMPDIR", "/var/tmp/pbs.7.head"),
            ("NCPUS", "2"),
            ("OMP_NUM_THREADS", "2"),
            ("PBS_GPUFILE", "/spool/aux/7.headgpu"),
            ("CUDA_VISIBLE_DEVICES", "1,3"),
            ("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
        ];
        for (name, value) in expect {
            assert_eq!(env.get(name).map(String::as_str), Some(value), "{name}");
        }
        assert!(!env.contains_key("PBS_O_INITDIR"));
    }

    #[test]
    fn ncpus_and_omp_num_threads_come_from_ompthreads_when_the_server_sends_it() {
        let mut launch = launch();
        launch.omp_threads = Some(5);
        let env = environment(&launch, "node1", None);
        let shown = |name: &str| env.get(name).map(String::as_str);
        assert_eq!((shown("NCPUS"), shown("OMP_NUM_THREADS")), (Some("5"), Some("5")));
    }

    #[test]
    fn interactive_jobs_say_so_and_get_qsubs_terminal_type() {
        let batch = environment(&launch(), "node1", None);
        assert!(!batch.contains_key("TERM"), "a batch job has no terminal");
        let mut launch = launch();
        launch.interactive = Some(job::spec::Interactive { host: "login".into(), port: 4000, secret: "ab".repeat(16) });
        launch.variables.push("ENVIRONMENT", "forged");
        let env = environment(&launch, "node1", None);
        assert_eq!(env["PBS_ENVIRONMENT"], "PBS_INTERACTIVE");
        assert_eq!(env["TERM"], "xterm-256color");
        assert!(!env.contains_key("ENVIRONMENT"), "ENVIRONMENT=BATCH is for batch jobs");
        assert!(!env.values().any(|value| value.contains("abab")), "the secret stays out of the job");
    }

    #[test]
    fn cuda_lists_only_this_hosts_gpus() {
        let env = environment(&launch(), "node2", Some(Path::new("/g")));
        assert_eq!(env["CUDA_VISIBLE_DEVICES"], "0");
    }

    #[test]
    fn no_gpus_no_cuda_and_optional_variables() {
        let mut launch = launch();
        launch.hosts = vec![host("node1", 1, &[])];
        launch.walltime = None;
        launch.init_dir = Some("/scratch/alice".into());
        launch.variables.push("PATH", "/opt/bin");
        // What the mom owns cannot be supplied by the user, even when the mom leaves it unset.
        launch.variables.push("CUDA_VISIBLE_DEVICES", "0");
        launch.variables.push("PBS_GPUFILE", "/x");
        launch.variables.push("PBS_WALLTIME", "5");
        let env = environment(&launch, "node1", None);
        for absent in ["PBS_GPUFILE", "PBS_WALLTIME"] {
            assert!(!env.contains_key(absent), "{absent}");
        }
        assert_eq!(env["CUDA_VISIBLE_DEVICES"], "", "no GPU here: CUDA sees none");
        assert_eq!(env["PBS_O_INITDIR"], "/scratch/alice");
        assert_eq!(env["PATH"], "/opt/bin");
        assert_eq!(env["PBS_NUM_NODES"], "1");
        assert_eq!(env["PBS_NP"], "1");
    }

    #[test]
    fn a_host_listed_twice_counts_once() {
        let mut launch = launch();
        launch.hosts = vec![host("node1", 1, &[]), host("node2", 1, &[]), host("node1", 1, &[])];
        assert_eq!(environment(&launch, "node1", None)["PBS_NUM_NODES"], "2");
    }
}
