//! What people and programs read, end to end: qstat's default, alternate, full and JSON
//! displays of a real job, snapshot-tested with times, ids, hosts and paths filtered.

use std::time::Duration;
use tests::{Cluster, Shape};

fn filtered(cluster: &Cluster, text: &str) -> String {
    let mut text = text.replace(&cluster.work.path().display().to_string(), "[WORK]");
    text = text.replace(&cluster.state.path().display().to_string(), "[STATE]");
    let user = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    text.replace(&format!("= {user}@"), "= [USER]@").replace(&format!("\"{user}@"), "\"[USER]@")
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    // ctime(3) time stamps, epoch numbers in JSON, PIDs and the environment vary per run.
    settings.add_filter(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d \d{4}", "[TIME]");
    settings.add_filter(r#""timestamp":\t\d+"#, "\"timestamp\":\t[EPOCH]");
    // The start comment's date (`Job run at Thu Nov 26 at 14:05 on ...`).
    settings.add_filter(r"Job run at [A-Z][a-z]{2} [A-Z][a-z]{2} \d\d at \d\d:\d\d", "Job run at [DATE]");
    settings.add_filter(r"session_id = \d+", "session_id = [PID]");
    settings.add_filter(r#""session_id":\t\d+"#, "\"session_id\":\t[PID]");
    let host = nix::unistd::gethostname().unwrap().into_string().unwrap();
    let short_host = host.split('.').next().unwrap().to_string();
    settings.add_filter(&format!(r"\b{}\b", regex_escape(&short_host)), "[HOST]");
    settings.add_filter(r"Variable_List = .*(\n\t.*)*", "Variable_List = [ENV]");
    settings.add_filter(r"(snapjob {4}) {0,5}\d{1,6}", "${1} [PID]");
    settings.add_filter(r#"(?s)"Variable_List":\t\{.*?\n\t\t\t\}"#, "\"Variable_List\":\t[ENV]");
    settings.add_filter(r"resources_used\.(cput|mem|vmem|walltime) = .*", "resources_used.$1 = [USED]");
    settings.add_filter(r#""resources_used":\t\{[^}]*\}"#, "\"resources_used\":\t[USED]");
    settings.add_filter(r"\d\d:\d\d:\d\d [QRF] workq", "[CPUT] [STATE] workq");
    settings
}

#[test]
fn qstat_displays_of_a_finished_and_a_queued_job() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 2, gpus: 0 });
    let script = cluster.script("snap.sh", "#PBS -N snapjob\n#PBS -l nodes=2:ppn=1,walltime=00:10:00\necho done\n");
    let finished = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&finished, Duration::from_secs(30)), 0);
    let held = cluster.qsub(&script, &["-h", "-N", "heldjob", "-l", "mem=1gb"]);
    let settings = settings();
    let _guard = settings.bind_to_scope();
    let run = |args: &[&str]| {
        let output = cluster.run("qstat", args);
        assert!(output.status.success(), "qstat {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        filtered(&cluster, &String::from_utf8(output.stdout).unwrap())
    };
    insta::assert_snapshot!("qstat_default", run(&["-x"]));
    insta::assert_snapshot!("qstat_alternate", run(&["-a", "-x"]));
    insta::assert_snapshot!("qstat_alternate_nodes", run(&["-a", "-n", "-1", "-x", &finished]));
    insta::assert_snapshot!("qstat_full", run(&["-f", "-x", &finished, &held]));
    let json = run(&["-f", "-F", "json", "-x", &finished]);
    serde_json::from_str::<serde_json::Value>(&json).expect("qstat -F json is JSON");
    insta::assert_snapshot!("qstat_json", json);
}

fn regex_escape(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { format!("\\{c}") }).collect()
}
