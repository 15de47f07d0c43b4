//! What a job's environment says about starting processes on its nodes (issue 15, gpu-mpi.md
//! 5.5): the local mom's task socket (`MINIPBS_TASK_SOCKET`, for `pbsdsh` and `pbs_tmrsh`), the
//! variables that make an unmodified `mpirun` (OpenMPI 4 and 5) or `mpiexec` (MPICH Hydra)
//! start its remote daemons through `pbs_tmrsh` and read `PBS_NODEFILE`, and PyTorch's
//! `MASTER_ADDR` / `MASTER_PORT`.
//!
//! Owns: those names and values, a pure function of the launch and the node's settings. Must
//! not: pick the port (the mother superior does, `free_port`, at start) or read the mom's own
//! environment.

use proto::mom::JobLaunch;
use std::path::{Path, PathBuf};

/// The node's settings for launchers, from `pbs_mom` flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LauncherEnv {
    /// This mom's task socket.
    pub task_socket: PathBuf,
    /// The rsh agent MPI launchers call (`--tmrsh`).
    pub tmrsh: PathBuf,
    /// `--mpi-env on`: set `OMPI_MCA_*` and `HYDRA_*`.
    pub mpi_env: bool,
}

impl Default for LauncherEnv {
    fn default() -> LauncherEnv {
        LauncherEnv { task_socket: PathBuf::from("task.sock"), tmrsh: PathBuf::from("pbs_tmrsh"), mpi_env: true }
    }
}

/// The launcher variables of a job on this node. `master_port` is the mother superior's pick
/// (`None` on a sister: its tasks get the launcher's through the request).
pub fn launcher_variables(
    launch: &JobLaunch,
    settings: &LauncherEnv,
    nodefile: &Path,
    master_port: Option<u16>,
) -> Vec<(String, String)> {
    let nodefile = nodefile.display().to_string();
    let tmrsh = settings.tmrsh.display().to_string();
    let mut env = vec![("MINIPBS_TASK_SOCKET".to_string(), settings.task_socket.display().to_string())];
    if settings.mpi_env {
        env.extend([
            ("OMPI_MCA_plm_rsh_agent".to_string(), tmrsh.clone()),
            ("OMPI_MCA_orte_default_hostfile".to_string(), nodefile.clone()),
            ("HYDRA_LAUNCHER".to_string(), "rsh".to_string()),
            ("HYDRA_LAUNCHER_EXEC".to_string(), tmrsh),
            ("HYDRA_HOST_FILE".to_string(), nodefile),
        ]);
    }
    if let Some(mother) = launch.hosts.first() {
        env.push(("MASTER_ADDR".to_string(), mother.node.clone()));
    }
    if let Some(port) = master_port {
        env.push(("MASTER_PORT".to_string(), port.to_string()));
    }
    env
}

/// A TCP port free on this host now (the kernel's pick for port 0): the job's `MASTER_PORT`.
/// `None` when no socket can be bound (the job then has no `MASTER_PORT`). A bound socket, not
/// a listener: binding port 0 is what picks the port, so `listen` (and the `SO_REUSEADDR` std's
/// listener sets) would be two more system calls on every job's start for nothing.
pub fn free_port() -> Option<u16> {
    use rustix::net::{AddressFamily, SocketAddrV4, SocketFlags, SocketType};
    // Close-on-exec: another job's shell may be started on another thread meanwhile.
    let socket = rustix::net::socket_with(AddressFamily::INET, SocketType::STREAM, SocketFlags::CLOEXEC, None).ok()?;
    rustix::net::bind(&socket, &SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    let bound = rustix::net::getsockname(&socket).ok()?;
    std::net::SocketAddr::try_from(bound).ok().map(|addr| addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The port picked is a real one, and free: a listener can take it.
    #[test]
    fn free_port_is_a_port_a_listener_can_bind() {
        let port = free_port().expect("a port");
        assert_ne!(port, 0);
        std::net::TcpListener::bind(("0.0.0.0", port)).expect("the port is free");
    }

    #[test]
    fn mpi_variables_can_be_switched_off() {
        let launch = crate::test_support::launch("1.s", vec![]);
        let settings = LauncherEnv { mpi_env: false, ..LauncherEnv::default() };
        let env = launcher_variables(&launch, &settings, Path::new("/aux/1.s"), None);
        assert!(env.iter().all(|(name, _)| !name.starts_with("OMPI_") && !name.starts_with("HYDRA_")), "{env:?}");
        assert!(env.iter().any(|(name, _)| name == "MINIPBS_TASK_SOCKET"));
        assert!(env.iter().all(|(name, _)| name != "MASTER_PORT"), "no port on a sister");
    }

    /// The environment of one 2-node job on each of its nodes (its mother superior picked
    /// port 29500), user variables and paths fixed.
    #[test]
    fn a_two_node_jobs_environment_on_each_node() {
        use crate::exec::env::{job_environment, EnvInput};
        let mut launch = crate::test_support::launch("9.head", Vec::new());
        launch.hosts = vec![
            crate::test_support::gpu_host("n0", &[0], &[], None),
            crate::test_support::gpu_host("n1", &[1], &[], None),
        ];
        launch.num_ppn = 1;
        launch.cookie = "c00kie".into();
        let user = crate::test_support::alice();
        let settings = LauncherEnv {
            task_socket: "/var/spool/minipbs/mom/task.sock".into(),
            tmrsh: "/usr/bin/pbs_tmrsh".into(),
            mpi_env: true,
        };
        let mut text = String::new();
        for (node, port) in [("n0", Some(29500)), ("n1", None)] {
            let input = EnvInput {
                launch: &launch,
                user: &user,
                node,
                nodefile: Path::new("/var/spool/minipbs/mom/aux/9.head"),
                gpufile: None,
                tmpdir: Path::new("/var/tmp/pbs.9.head"),
                term: None,
                gpu_variables: &[],
                defaults: &[],
                launcher: &settings,
                master_port: port,
            };
            text.push_str(&format!("# {node}\n"));
            for (name, value) in job_environment(&input) {
                text.push_str(&format!("{name}={value}\n"));
            }
        }
        insta::assert_snapshot!(text);
    }
}
