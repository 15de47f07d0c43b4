//! Real MPI across two hosts with no sshd anywhere (network namespaces, `tests/src/netns.rs`):
//! Debian's OpenMPI (`mpirun.openmpi`) and MPICH (`mpiexec.mpich`) run `tests/mpi/hello.c` in a
//! `nodes=2:ppn=2` job with no options at all: the mom's job environment
//! (`OMPI_MCA_plm_rsh_agent=pbs_tmrsh`, `OMPI_MCA_orte_default_hostfile`, `HYDRA_LAUNCHER=rsh`,
//! `HYDRA_LAUNCHER_EXEC=pbs_tmrsh`, docs/gpu-mpi.md 4.2-4.3) makes them start the remote
//! daemons through the moms. Each prints 4 ranks from 2 hosts; qdel during a long run leaves no
//! rank (nor any other process of the job's owner) on either host.
//!
//! A first test checks the ground the others stand on without minipbs: the same MPI runs reach
//! the other namespace through a stand-in rsh agent (`ip netns exec`), so a failure of the job
//! tests is minipbs's, not the harness's or MPI's.
//!
//! Owns: building hello with each MPI's compiler, the [`TwoHosts`] fixture (also used by
//! `remote_tasks.rs`), reading ranks. Must not know the moms' internals: only what a user sees.
//! Needs root, `ip netns`, MUNGE and Debian's `openmpi-bin`, `libopenmpi-dev`, `mpich`,
//! `libmpich-dev` (installed by `.ci/run`); skips otherwise (a failure under CI).

use crate::users::TestUser;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tests::netcluster::NetCluster;
use tests::netns::Net;

/// The two compute hosts of every test here.
pub(crate) const HOSTS: [&str; 2] = ["hosta", "hostb"];
/// How long a job of these tests may take to start, run and deliver its output (2 cores
/// shared by parallel tests and several MPI daemons).
pub(crate) const JOB_LIMIT: Duration = Duration::from_secs(180);

/// One of Debian's two MPI implementations, by the names the packages install side by side
/// (never the `mpicc`/`mpirun` alternatives, which point at whichever was installed last).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mpi {
    OpenMpi,
    Mpich,
}

impl Mpi {
    fn compiler(self) -> &'static str {
        match self {
            Mpi::OpenMpi => "mpicc.openmpi",
            Mpi::Mpich => "mpicc.mpich",
        }
    }

    /// The launcher, as a user types it under PBS: no options.
    fn launcher(self) -> &'static str {
        match self {
            Mpi::OpenMpi => "mpirun.openmpi",
            Mpi::Mpich => "mpiexec.mpich",
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Mpi::OpenMpi => "openmpi",
            Mpi::Mpich => "mpich",
        }
    }
}

/// Compiles `tests/mpi/hello.c` with `mpi`'s compiler into `dir/hello-<mpi>`; `None` after
/// [`tests::skip`] when the compiler is not installed.
pub(crate) fn build_hello(mpi: Mpi, dir: &Path) -> Option<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("mpi/hello.c");
    let binary = dir.join(format!("hello-{}", mpi.tag()));
    let output = match Command::new(mpi.compiler()).arg("-o").arg(&binary).arg(&source).output() {
        Ok(output) => output,
        Err(error) => {
            tests::skip(&format!(
                "{} cannot run ({error}): apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev",
                mpi.compiler()
            ));
            return None;
        }
    };
    assert!(output.status.success(), "{} failed: {}", mpi.compiler(), String::from_utf8_lossy(&output.stderr));
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    Some(binary)
}

/// Checks a run's output: exactly the ranks `0..4` of a world of 4, two on each of [`HOSTS`]
/// (lines `hello rank <r> of <n> on <host> pid <pid>`, other lines ignored). Returns the
/// ranks' `(host, pid)` by rank.
pub(crate) fn four_ranks_on_two_hosts(text: &str) -> Result<BTreeMap<u32, (String, i32)>, String> {
    let mut ranks = BTreeMap::new();
    for line in text.lines().filter(|line| line.starts_with("hello rank ")) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let parsed = match words.as_slice() {
            ["hello", "rank", rank, "of", size, "on", host, "pid", pid] => {
                (rank.parse::<u32>(), size.parse::<u32>(), pid.parse::<i32>(), host.to_string())
            }
            _ => return Err(format!("malformed rank line {line:?}")),
        };
        let (Ok(rank), Ok(4), Ok(pid), host) = parsed else { return Err(format!("bad rank line {line:?}")) };
        if ranks.insert(rank, (host, pid)).is_some() {
            return Err(format!("rank {rank} printed twice"));
        }
    }
    let mut per_host: BTreeMap<&str, usize> = BTreeMap::new();
    for (host, _) in ranks.values() {
        *per_host.entry(host.as_str()).or_default() += 1;
    }
    let expected: BTreeMap<&str, usize> = HOSTS.iter().map(|host| (*host, 2)).collect();
    if ranks.keys().copied().collect::<Vec<_>>() != [0, 1, 2, 3] || per_host != expected {
        return Err(format!("expected ranks 0-3, two on each of {HOSTS:?}; got {ranks:?}"));
    }
    Ok(ranks)
}

/// A cluster of [`HOSTS`] (2 slots each) over namespaces, and a user who submits from the
/// login host. The job scripts find the minipbs commands (`pbs_tmrsh`, `pbsdsh`) first in
/// `PATH`, as on an installed cluster.
pub(crate) struct TwoHosts {
    pub(crate) cluster: NetCluster,
    pub(crate) user: TestUser,
}

impl TwoHosts {
    /// `None` (after a `SKIPPED:` line; a failure under CI) without root, namespaces or MUNGE.
    pub(crate) fn up(tag: &str) -> Option<TwoHosts> {
        let cluster = NetCluster::up_with_np(&HOSTS, 2)?;
        Some(TwoHosts { cluster, user: TestUser::create(tag) })
    }

    /// Writes job script `name` into the submit directory: `#PBS` lines `directives`, then
    /// `PATH` with the minipbs commands first, `cd` to the submit directory, then `body`.
    pub(crate) fn script(&self, name: &str, directives: &[&str], body: &str) -> PathBuf {
        let mut text = String::from("#!/bin/sh\n");
        for directive in directives {
            text.push_str(&format!("#PBS {directive}\n"));
        }
        text.push_str(&format!(
            "PATH={}:$PATH; export PATH\ncd {}\n{body}\n",
            self.cluster.bin.display(),
            self.cluster.work.display()
        ));
        let path = self.cluster.work.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// `program` on the login host as the user.
    pub(crate) fn as_user(&self, program: &str) -> Command {
        self.cluster.command_as(program, &self.user.name, self.user.uid, self.user.gid)
    }

    /// qsub of `script` as the user (stdout and stderr joined: `-j oe`); the job id.
    pub(crate) fn submit(&self, script: &Path) -> String {
        let output = self.as_user("qsub").args(["-j", "oe"]).arg(script).stdin(Stdio::null()).output().unwrap();
        let logs = self.cluster.logs();
        assert!(output.status.success(), "qsub: {}\n{logs}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    /// Waits until job `id` is in state `state`; its attributes. Polled with a deadline, past
    /// which it fails with the job's attributes and the daemons' logs.
    pub(crate) fn wait_state(&self, id: &str, state: &str) -> HashMap<String, String> {
        let deadline = Instant::now() + JOB_LIMIT;
        loop {
            let attrs = self.cluster.job_attrs(id);
            if attrs.get("job_state").map(String::as_str) == Some(state) {
                return attrs;
            }
            if Instant::now() >= deadline {
                panic!("job {id} not in state {state} after {JOB_LIMIT:?}: {attrs:?}\n{}", self.cluster.logs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until job `id` is finished and its output (`Output_Path`) delivered; its
    /// attributes and output.
    pub(crate) fn finished(&self, id: &str) -> (HashMap<String, String>, String) {
        let attrs = self.wait_state(id, "F");
        let output_path = attrs.get("Output_Path").cloned().unwrap_or_default();
        let path = PathBuf::from(output_path.split_once(':').map_or(output_path.as_str(), |(_, path)| path));
        let output = tests::wait_for(Duration::from_secs(30), &format!("{}", path.display()), || {
            std::fs::read_to_string(&path).ok()
        });
        (attrs, output)
    }

    /// The live processes of the user, on any host (the namespaces share one pid space):
    /// `(pid, command line)`.
    pub(crate) fn user_processes(&self) -> Vec<(i32, String)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
            let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
            let uid = status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().next().and_then(|uid| uid.parse::<u32>().ok()));
            if uid == Some(self.user.uid) && !tests::process_gone(pid) {
                let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
                found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
            }
        }
        found
    }
}

/// Debian's OpenMPI and MPICH reach the second namespace host through an rsh agent that is
/// not minipbs (`ip netns exec`, as root): 4 ranks from 2 hosts. The ground of the job tests.
#[test]
fn debian_mpi_spans_two_namespace_hosts_through_a_stand_in_agent() {
    let Some(net) = Net::new(&HOSTS) else { return };
    let dir = net.dir.path();
    let hosts: Vec<_> = HOSTS.iter().map(|name| net.host(name).clone()).collect();
    let cases: Vec<String> = hosts.iter().map(|host| format!("{}) ns={} ;;", host.name, host.ns)).collect();
    let agent = dir.join("agent");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\n# rsh agent: runs the words through a shell on the named host\necho \"$*\" >> {log}\n\
             case $1 in {cases} *) echo \"agent: unknown host $1\" >&2; exit 255 ;; esac\nhost=$1; shift\n\
             exec ip netns exec \"$ns\" unshare --uts sh -c 'hostname \"$0\" && exec sh -c \"$1\"' \"$host\" \"$*\"\n",
            log = dir.join("agent.log").display(),
            cases = cases.join(" ")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let nodefile = dir.join("nodefile");
    std::fs::write(&nodefile, "hosta\nhosta\nhostb\nhostb\n").unwrap();
    for mpi in [Mpi::OpenMpi, Mpi::Mpich] {
        let Some(hello) = build_hello(mpi, dir) else { return };
        let _ = std::fs::remove_file(dir.join("agent.log"));
        let output = net
            .command(&hosts[0], "timeout")
            .args(["120", mpi.launcher()])
            .arg(&hello)
            .current_dir(dir)
            .env("OMPI_MCA_plm_rsh_agent", &agent)
            .env("OMPI_MCA_orte_default_hostfile", &nodefile)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("PBS_NODEFILE", &nodefile)
            .env("HYDRA_LAUNCHER", "rsh")
            .env("HYDRA_LAUNCHER_EXEC", &agent)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        let report = format!("{}: {text}\n{}", mpi.launcher(), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{report}");
        four_ranks_on_two_hosts(&text).unwrap_or_else(|error| panic!("{error}\n{report}"));
        let calls = std::fs::read_to_string(dir.join("agent.log")).unwrap_or_default();
        assert!(calls.starts_with("hostb "), "{} did not use the agent for hostb: {calls:?}", mpi.launcher());
    }
}

/// `mpirun.openmpi ./hello` / `mpiexec.mpich ./hello`, no options, in a `nodes=2:ppn=2` job.
fn hello_runs_four_ranks_on_two_hosts(mpi: Mpi, tag: &str) {
    let Some(hosts) = TwoHosts::up(tag) else { return };
    let Some(hello) = build_hello(mpi, &hosts.cluster.work) else { return };
    let script = hosts.script(
        &format!("{}.sh", mpi.tag()),
        &["-l nodes=2:ppn=2", "-l walltime=00:05:00"],
        &format!("{} {}\necho \"exit=$?\"", mpi.launcher(), hello.display()),
    );
    let id = hosts.submit(&script);
    let (attrs, output) = hosts.finished(&id);
    let report = format!("job output:\n{output}\n{attrs:?}\n{}", hosts.cluster.logs());
    four_ranks_on_two_hosts(&output).unwrap_or_else(|error| panic!("{error}\n{report}"));
    assert!(output.contains("exit=0\n"), "{} failed\n{report}", mpi.launcher());
    assert_eq!(attrs.get("Exit_status").map(String::as_str), Some("0"), "{report}");
}

#[test]
fn openmpi_mpirun_with_no_options_runs_four_ranks_on_two_hosts_without_ssh() {
    hello_runs_four_ranks_on_two_hosts(Mpi::OpenMpi, "mo");
}

#[test]
fn mpich_mpiexec_with_no_options_runs_four_ranks_on_two_hosts_without_ssh() {
    hello_runs_four_ranks_on_two_hosts(Mpi::Mpich, "mm");
}

/// A long MPI run (each rank records its host and pid, then sleeps) is deleted: every rank on
/// both hosts, the MPI daemons and launchers, and every other process of the user are gone.
fn qdel_leaves_no_rank(mpi: Mpi, tag: &str) {
    let Some(hosts) = TwoHosts::up(tag) else { return };
    let Some(hello) = build_hello(mpi, &hosts.cluster.work) else { return };
    let ranks_dir = hosts.cluster.work.join(format!("ranks-{}", mpi.tag()));
    std::fs::create_dir(&ranks_dir).unwrap();
    std::fs::set_permissions(&ranks_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let script = hosts.script(
        &format!("long-{}.sh", mpi.tag()),
        &["-l nodes=2:ppn=2", "-l walltime=00:10:00"],
        &format!("{} {} 1000 {}", mpi.launcher(), hello.display(), ranks_dir.display()),
    );
    let id = hosts.submit(&script);
    let ranks = tests::wait_for(JOB_LIMIT, "4 ranks to record their pids", || {
        let lines: Vec<String> = (0..4)
            .map(|rank| std::fs::read_to_string(ranks_dir.join(format!("rank{rank}"))).ok())
            .collect::<Option<_>>()?;
        let text: String = lines
            .iter()
            .zip(0..)
            .map(|(line, rank)| match line.split_whitespace().collect::<Vec<_>>().as_slice() {
                [host, pid] => format!("hello rank {rank} of 4 on {host} pid {pid}\n"),
                _ => String::new(),
            })
            .collect();
        four_ranks_on_two_hosts(&text).ok()
    });
    for (rank, (host, pid)) in &ranks {
        assert!(!tests::process_gone(*pid), "rank {rank} on {host} (pid {pid}) is not running");
    }
    let output = hosts.as_user("qdel").arg(&id).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "qdel: {}", String::from_utf8_lossy(&output.stderr));
    let left = || {
        let ranks_left: Vec<_> = ranks.iter().filter(|(_, (_, pid))| !tests::process_gone(*pid)).collect();
        (ranks_left, hosts.user_processes())
    };
    // Polled with a deadline, saying what is left when it passes.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (ranks_left, processes) = left();
        if ranks_left.is_empty() && processes.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            panic!("60 s after qdel: ranks {ranks_left:?}, processes {processes:?}\n{}", hosts.cluster.logs());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    hosts.wait_state(&id, "F");
    let (ranks_left, processes) = left();
    assert!(ranks_left.is_empty() && processes.is_empty(), "after the job ended: {ranks_left:?} {processes:?}");
}

#[test]
fn qdel_during_a_long_openmpi_run_leaves_no_rank_on_either_host() {
    qdel_leaves_no_rank(Mpi::OpenMpi, "qo");
}

#[test]
fn qdel_during_a_long_mpich_run_leaves_no_rank_on_either_host() {
    qdel_leaves_no_rank(Mpi::Mpich, "qm");
}

#[test]
fn rank_lines_are_read_strictly() {
    let good = "x\nhello rank 0 of 4 on hosta pid 10\nhello rank 1 of 4 on hosta pid 11\n\
                hello rank 2 of 4 on hostb pid 12\nhello rank 3 of 4 on hostb pid 13\n";
    assert_eq!(four_ranks_on_two_hosts(good).unwrap().len(), 4);
    assert!(four_ranks_on_two_hosts(&good.replace("hostb", "hosta")).is_err(), "all on one host");
    assert!(four_ranks_on_two_hosts(&good.replace("rank 3", "rank 2")).is_err(), "a rank twice");
    assert!(four_ranks_on_two_hosts(&good.replace("of 4", "of 2")).is_err(), "a world of 2");
    assert!(four_ranks_on_two_hosts(&good.replace("hello rank 3 of 4 on hostb pid 13\n", "")).is_err());
}
