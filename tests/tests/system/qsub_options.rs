//! qsub's real-world options (issue 13): OpenPBS `-P`, `-u`, `-c`, `-a`, `-W` attributes and
//! TORQUE's `-F`, `-D`, `-w`, `-n`, `-b`, `-f` through the real commands: stored, shown by
//! `qstat -f`, acted on (`-a` waits, `-F` reaches `$1`), refused as OpenPBS refuses them.

use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

fn me() -> String {
    uzers::get_current_username().unwrap().to_string_lossy().into_owned()
}

fn attr(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs.iter().find(|(given, _)| given == name).map(|(_, value)| value.clone())
}

#[test]
fn options_in_directives_and_on_the_command_line_are_stored_shown_and_acted_on() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let out = cluster.work.path().join("b.out");
    let script = cluster.script(
        "opts.sh",
        &format!(
            "#!/bin/sh\n#PBS -P a00 -c c=10 -o a.out -o {}\n#PBS -W sandbox=private -W run_count=2\n\
             echo \"args=$#:$1:$2 root=$PBS_O_ROOTDIR work=$PBS_O_WORKDIR\"\n",
            out.display()
        ),
    );
    let user = me();
    let args =
        ["-u", &user, "-F", "one two", "-D", "/srv/root", "-w", "/tmp", "-n", "-W", "tolerate_node_failures=all"];
    let id = cluster.qsub(&script, &args);
    let attrs = cluster.job_attrs(&id).unwrap();
    assert_eq!(attr(&attrs, "project").as_deref(), Some("a00"));
    assert_eq!(attr(&attrs, "Checkpoint").as_deref(), Some("c=10"));
    assert_eq!(attr(&attrs, "sandbox").as_deref(), Some("PRIVATE"));
    assert_eq!(attr(&attrs, "User_List").as_deref(), Some(user.as_str()));
    assert_eq!(attr(&attrs, "tolerate_node_failures").as_deref(), Some("all"));
    assert_eq!(attr(&attrs, "job_arguments").as_deref(), Some("one two"));
    assert!(attr(&attrs, "Output_Path").unwrap().ends_with("/b.out"), "the last -o of the line wins");
    assert!(attr(&attrs, "Resource_List.place").unwrap().contains("excl"), "-n is place=excl");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), 0);
    let run_count: u32 = cluster.job_attr(&id, "run_count").unwrap().parse().unwrap();
    assert_eq!(run_count, 3, "counted on from -W run_count=2");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.trim(), "args=2:one:two root=/srv/root work=/tmp");
}

#[test]
fn a_job_with_an_execution_time_waits_in_w_then_runs() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("later.sh", "#!/bin/sh\ntrue\n");
    let start = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64 + 4;
    let date = std::process::Command::new("date").args([&format!("-d@{start}"), "+%m%d%H%M.%S"]).output().unwrap();
    let when = String::from_utf8(date.stdout).unwrap().trim().to_string();
    let id = cluster.qsub(&script, &["-a", &when]);
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("W"));
    assert!(cluster.job_attr(&id, "Execution_Time").is_some());
    wait_for(Duration::from_secs(40), "the job to run", || {
        let attrs = cluster.job_attrs(&id)?;
        attr(&attrs, "stime").map(|stime| stime.to_string())
    });
    let stime = cluster.run("qstat", &["-x", "-f", "-F", "json", &id]);
    let json: serde_json::Value = serde_json::from_slice(&stime.stdout).unwrap();
    let job = json["Jobs"].as_object().unwrap().values().next().unwrap();
    assert!(job["Execution_Time"].is_string(), "{job}");
    assert_eq!(cluster.wait_finished(&id, Duration::from_secs(60)), 0);
}

#[test]
fn refused_as_openpbs_refuses_and_ignored_ones_warn() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("r.sh", "#!/bin/sh\ntrue\n");
    let other = if me() == "nobody" { "root" } else { "nobody" };
    let output = cluster.command("qsub").args(["-u", other]).arg(&script).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stderr), "qsub: Bad UID for job execution\n");
    assert_eq!(output.status.code(), Some(15023 % 256));
    for (args, text) in [
        (&["-a", "2460"][..], "qsub: illegal -a value"),
        (&["-c", "often"], "qsub: illegal -c value"),
        (&["-W", "block=perhaps"], "qsub: illegal -W value"),
        (&["-P", "a b"], "qsub: illegal -P value"),
    ] {
        let output = cluster.command("qsub").args(args).arg(&script).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.starts_with(text), "{args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
    }
    assert_eq!(String::from_utf8_lossy(&cluster.run("qstat", &["-x"]).stdout), "", "nothing was queued");
    let output = cluster.command("qsub").args(["-b", "5", "-f", "-x"]).arg(&script).output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().filter(|line| line.starts_with("qsub: warning: ")).count(), 3, "{stderr}");
}

#[test]
fn qstat_g_and_m_show_memory_in_gigabytes_and_megawords() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("m.sh", "#!/bin/sh\ntrue\n");
    let id = cluster.qsub(&script, &["-h", "-l", "mem=1536mb"]);
    for (flag, memory) in [("-a", " 1536mb "), ("-G", "    2gb "), ("-M", "  192mw ")] {
        let output = cluster.run("qstat", &[flag]);
        assert!(output.status.success(), "{flag}");
        let text = String::from_utf8_lossy(&output.stdout);
        let row = text.lines().find(|line| line.starts_with(id.split('.').next().unwrap())).unwrap_or_default();
        assert!(row.contains(memory), "{flag}: {text}");
    }
}

#[test]
fn block_true_waits_for_the_job_and_exits_with_its_status() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("b.sh", "#!/bin/sh\n#PBS -W block=true\nsleep 1\nexit 3\n");
    let output = cluster.command("qsub").arg(&script).stdin(std::process::Stdio::null()).output().unwrap();
    let id = String::from_utf8_lossy(&output.stdout).trim().to_string();
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(cluster.job_attr(&id, "job_state").as_deref(), Some("F"), "qsub returned once the job was over");
    assert_eq!(cluster.job_attr(&id, "block").as_deref(), Some("True"));
}
