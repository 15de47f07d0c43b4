//! The ways of submitting a job and what the job then sees: script from stdin, `qsub -- cmd`,
//! the command line over directives, `-C`, `-v`/`-V` (without overriding what the mom sets),
//! `-o dir/`, `-j oe`, `-d`; and `minipbs down` leaving nothing behind.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;
use tests::{Cluster, Shape};

fn read_output(cluster: &Cluster, name: &str) -> String {
    let path = cluster.work.path().join(name);
    tests::wait_for(Duration::from_secs(20), &format!("{name} to be delivered"), || std::fs::read_to_string(&path).ok())
}

fn seq(id: &str) -> &str {
    id.split('.').next().unwrap()
}

#[test]
fn stdin_and_command_submissions() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let mut child = cluster.command("qsub").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"#PBS -N fromstdin\necho from stdin $PBS_JOBNAME\n").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 0);
    assert_eq!(read_output(&cluster, &format!("fromstdin.o{}", seq(&id))), "from stdin fromstdin\n");

    let output = cluster.run("qsub", &["--", "/bin/echo", "two words", "$HOME"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 0);
    assert_eq!(read_output(&cluster, &format!("STDIN.o{}", seq(&id))), "two words $HOME\n");
}

#[test]
fn command_line_wins_and_prefix_and_variables() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    std::fs::create_dir(cluster.work.path().join("logs")).unwrap();
    let script = cluster.script(
        "vars.sh",
        "#!/bin/sh\n#PBS -N fromdirective\n#MY -N fromprefix\n#PBS -j oe\n#PBS -o logs/\n\
         echo \"name=$PBS_JOBNAME mine=$MINE other=$OTHER id=$PBS_JOBID home=$HOME pwd=$(pwd)\"\n",
    );
    let output = cluster
        .command("qsub")
        .args(["-N", "fromcli", "-v", "MINE=1,OTHER", "-v", "PBS_JOBID=forged,HOME=/forged", "-d", "/tmp"])
        .arg(&script)
        .env("OTHER", "two")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(20)), 0);
    let home = std::env::var("HOME").unwrap();
    let text = read_output(&cluster, &format!("logs/fromcli.o{}", seq(&id)));
    // A root job (the tests' usual identity) takes only allow-listed variables (issue 12, item 9).
    let (mine, other) = if nix::unistd::geteuid().is_root() { ("", "") } else { ("1", "two") };
    assert_eq!(text, format!("name=fromcli mine={mine} other={other} id={id} home={home} pwd=/tmp\n"));
    assert!(!cluster.work.path().join(format!("logs/fromcli.e{}", seq(&id))).exists(), "-j oe: no error file");

    let output = cluster.command("qsub").args(["-C", "#MY"]).arg(&script).output().unwrap();
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.job_attr(&id, "Job_Name").as_deref(), Some("fromprefix"));
    let output = cluster.command("qsub").env("PBS_DPREFIX", "#NONE").arg(&script).output().unwrap();
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.job_attr(&id, "Job_Name").as_deref(), Some("vars.sh"), "no directive applies");
}

#[test]
fn unset_variable_and_bad_options_are_refused() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("v.sh", "true\n");
    let output = cluster
        .command("qsub")
        .args(["-v", "SURELY_NOT_SET_X"])
        .env_remove("SURELY_NOT_SET_X")
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("SURELY_NOT_SET_X"));
    let output = cluster.command("qsub").args(["-j", "xx"]).arg(&script).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let output = cluster.command("qsub").arg(cluster.work.path().join("missing.sh")).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("qsub: script file '"));
    let output = cluster.run("qstat", &["-x"]);
    assert_eq!(output.stdout, b"", "nothing was submitted");
}

#[test]
fn down_leaves_no_process_behind() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    let marker = format!("77{}", std::process::id());
    let script = cluster.script("forever.sh", &format!("sleep {marker} & sleep {marker}\n"));
    let id = cluster.qsub(&script, &[]);
    let sleeps = || {
        let output = std::process::Command::new("pgrep").args(["-f", &format!("sleep {marker}")]).output().unwrap();
        String::from_utf8_lossy(&output.stdout).lines().count()
    };
    // Running for the mom, not only for the server: both sleeps exist.
    tests::wait_for(Duration::from_secs(20), "the job's processes", || (sleeps() == 2).then_some(()));
    let pids: Vec<i32> = std::fs::read_dir(cluster.state.path().join("pids"))
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap().trim().parse().unwrap())
        .collect();
    let munged = usize::from(tests::tcp_transport());
    assert_eq!(pids.len(), 3 + munged, "one server and two moms (and munged over TCP)");
    let output = std::process::Command::new(cluster.bin.join("minipbs"))
        .args(["down", "--state-dir"])
        .arg(cluster.state.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for pid in pids {
        assert!(tests::process_gone(pid), "daemon {pid} still running after down");
    }
    let leftovers = std::process::Command::new("pgrep").args(["-f", &format!("sleep {marker}")]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&leftovers.stdout), "", "job processes left behind");
    // The moms reported the kills before the server stopped: after a restart the job is over,
    // not requeued to run again.
    let output = std::process::Command::new(cluster.bin.join("minipbs"))
        .args(["up", "--nodes", "2", "--ppn", "1", "--server-name", "testsrv", "--state-dir"])
        .arg(cluster.state.path())
        .args(tests::transport_args())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}\n{}", String::from_utf8_lossy(&output.stderr), cluster.logs());
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("F"), "{}", cluster.logs());
    assert_eq!(cluster.job_attr(&id, "Exit_status").as_deref(), Some("271"));
}

#[test]
fn up_refuses_while_daemons_of_an_earlier_run_live() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 1, gpus: 0 });
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL);
    let up = |cluster: &Cluster| {
        std::process::Command::new(cluster.bin.join("minipbs"))
            .args(["up", "--nodes", "2", "--state-dir"])
            .arg(cluster.state.path())
            .output()
            .unwrap()
    };
    let output = up(&cluster);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already running") && stderr.contains("node1") && stderr.contains("node2"), "{stderr}");
    let down = std::process::Command::new(cluster.bin.join("minipbs"))
        .args(["down", "--state-dir"])
        .arg(cluster.state.path())
        .output()
        .unwrap();
    assert!(down.status.success(), "{}", String::from_utf8_lossy(&down.stderr));
    let output = up(&cluster);
    assert!(output.status.success(), "after down, up works: {}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn the_shell_runs_the_script_by_path_so_hashbang_works_and_stdin_is_not_the_script() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let interpreted = cluster.script("cat.sh", "#!/bin/cat\n#PBS -N bycat\nprinted by cat\n");
    let reader = cluster.script("reader.sh", "head -c 20 >/dev/null\necho still here\n");
    let first = cluster.qsub(&interpreted, &[]);
    let second = cluster.qsub(&reader, &[]);
    assert_eq!(cluster.wait_finished(&first, Duration::from_secs(20)), 0);
    assert_eq!(cluster.wait_finished(&second, Duration::from_secs(20)), 0);
    assert_eq!(
        read_output(&cluster, &format!("bycat.o{}", seq(&first))),
        "#!/bin/cat\n#PBS -N bycat\nprinted by cat\n"
    );
    assert_eq!(read_output(&cluster, &format!("reader.sh.o{}", seq(&second))), "still here\n");
}
