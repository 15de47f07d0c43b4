//! The accounting log, job mail and tracejob on a real cluster: a job's Q, S and E records
//! with its nodes, exit status and usage; D for a deleted job; `tracejob` telling a job's
//! life from the logs; mail through a recording sendmail, and the log line when there is no
//! mailer.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

/// Waits for the record of type `kind` of job `id` and returns its message.
fn record(cluster: &Cluster, kind: char, id: &str) -> String {
    let prefix = format!(";{kind};{id};");
    wait_for(LIMIT, &format!("the {kind} record of {id}"), || {
        cluster
            .accounting()
            .into_iter()
            .find_map(|line| line.split_once(&prefix).map(|(_, message)| message.to_string()))
    })
}

fn regex_escape(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { format!("\\{c}") }).collect()
}

/// Filters for what varies between runs: times, hosts, the user, pids and usage.
fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d", "[TIME]");
    let host = nix::unistd::gethostname().unwrap().into_string().unwrap();
    settings.add_filter(&format!(r"@{}\b", regex_escape(host.split('.').next().unwrap())), "@[HOST]");
    let user = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    settings.add_filter(&format!(r"\b{}@", regex_escape(&user)), "[USER]@");
    settings.add_filter(&format!(r"user={}\b", regex_escape(&user)), "user=[USER]");
    settings.add_filter(r"session_id=\d+", "session_id=[PID]");
    settings.add_filter(r"walltime_secs=\d+", "walltime_secs=[SECS]");
    settings.add_filter(r"resources_used\.(cpupercent|cput|mem|vmem|walltime)=\S+", "resources_used.$1=[USED]");
    settings
}

fn seq(id: &str) -> &str {
    id.split('.').next().unwrap()
}

#[test]
fn a_job_life_in_the_accounting_log_and_in_tracejob() {
    let cluster = Cluster::up(Shape { nodes: 2, ppn: 2, gpus: 0 });
    let script = cluster.script("life.sh", "#PBS -N life\n#PBS -l nodes=2:ppn=1,walltime=00:05:00\nsleep 1\nexit 3\n");
    let id = cluster.qsub(&script, &[]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 3);

    let queued = record(&cluster, 'Q', &id);
    assert!(queued.contains(" jobname=life queue=workq ctime="), "{queued}");
    assert!(queued.contains("Resource_List.nodes=2:ppn=1 "), "{queued}");
    let started = record(&cluster, 'S', &id);
    assert!(started.contains(" exec_host=node1/0+node2/0 exec_vnode=(node1:ncpus=1)+(node2:ncpus=1) "), "{started}");
    assert!(started.ends_with("resource_assigned.ncpus=2 "), "{started}");
    let ended = record(&cluster, 'E', &id);
    assert!(ended.contains(" exec_host=node1/0+node2/0 "), "{ended}");
    assert!(ended.contains(" Exit_status=3 resources_used.cpupercent="), "{ended}");
    let walltime = ended.split(" resources_used.walltime=").nth(1).and_then(|rest| rest.split(' ').next()).unwrap();
    assert!(walltime.starts_with("00:00:0") && walltime != "00:00:00", "walltime {walltime} of a 1 s job: {ended}");
    assert!(ended.ends_with(" run_count=1"), "{ended}");

    // The short id, as qstat takes it; server and mom lines only (accounting records are
    // stamped to the second, so their place among lines of the same second varies).
    let output = cluster.run("tracejob", &["-a", seq(&id)]);
    assert!(output.status.success(), "tracejob: {}", String::from_utf8_lossy(&output.stderr));
    let settings = settings();
    let _guard = settings.bind_to_scope();
    insta::assert_snapshot!("tracejob_of_a_job", String::from_utf8(output.stdout).unwrap());

    // With the accounting log: its three records (Q, S, E) are there too.
    let output = cluster.run("tracejob", &[&id]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.matches("  A    user=").count(), 3, "{text}");
    assert!(text.contains("Exit_status=3 resources_used.cpupercent="), "{text}");
}

#[test]
fn a_deleted_job_gets_a_d_record() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("held.sh", "sleep 30\n");
    let id = cluster.qsub(&script, &["-h"]);
    let output = cluster.run("qdel", &[&id]);
    assert!(output.status.success(), "qdel: {}", String::from_utf8_lossy(&output.stderr));
    let user = uzers::get_current_username().unwrap().to_string_lossy().into_owned();
    assert_eq!(record(&cluster, 'D', &id), format!("requestor={user}@testsrv"));
    let trace = String::from_utf8(cluster.run("tracejob", &[&id]).stdout).unwrap();
    assert!(trace.contains(&format!("S    Job to be deleted at request of {user}@testsrv")), "{trace}");
    assert!(trace.contains(&format!("A    requestor={user}@testsrv")), "{trace}");
}

#[test]
fn tracejob_of_an_unknown_job() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let output = cluster.run("tracejob", &["4242"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    insta::assert_snapshot!("tracejob_unknown", String::from_utf8(output.stderr).unwrap());
    let output = cluster.run("tracejob", &["-n", "3", "4242.elsewhere"]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!("tracejob_unknown_three_days", String::from_utf8(output.stderr).unwrap());
}

/// A sendmail that records its arguments and the message, one file per mail.
pub(crate) fn recording_sendmail(dir: &Path) -> PathBuf {
    let path = dir.join("sendmail.sh");
    std::fs::write(&path, "#!/bin/sh\nout=\"$(dirname \"$0\")/mail.$$\"\necho \"argv: $*\" > \"$out.tmp\"\ncat >> \"$out.tmp\"\nmv \"$out.tmp\" \"$out\"\n").unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

pub(crate) fn mails(dir: &Path) -> Vec<String> {
    let mut mails: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry.file_name().to_string_lossy().starts_with("mail.")
                && !entry.file_name().to_string_lossy().ends_with(".tmp")
        })
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .collect();
    // Begin before end.
    mails.sort_by_key(|mail| mail.contains("Execution terminated"));
    mails
}

#[test]
fn begin_and_end_mail_go_to_the_m_recipients() {
    let mailbox = tempfile::tempdir().unwrap();
    let sendmail = recording_sendmail(mailbox.path());
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--sendmail", sendmail.to_str().unwrap()]);
    let script = cluster.script("mailed.sh", "#PBS -N mailed\necho hi\n");
    let id = cluster.qsub(&script, &["-m", "be", "-M", "someone@example.com"]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0);
    let mails = wait_for(LIMIT, "two mails", || Some(mails(mailbox.path())).filter(|mails| mails.len() == 2));
    let settings = settings();
    let _guard = settings.bind_to_scope();
    insta::assert_snapshot!("begin_mail", mails[0]);
    let end = &mails[1];
    assert!(end.starts_with("argv: -f adm -- someone@example.com\nTo: someone@example.com\n"), "{end}");
    assert!(end.contains(&format!("Subject: PBS JOB {id}\n\nPBS Job Id: {id}\nJob Name:   mailed\n")), "{end}");
    assert!(end.contains("\nExecution terminated\nExit_status=0\nresources_used.cpupercent="), "{end}");
}

#[test]
fn without_sendmail_the_server_logs_that_mail_was_not_sent() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("nomail.sh", "echo hi\n");
    let id = cluster.qsub(&script, &["-m", "b"]);
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0);
    let log = cluster.state.path().join("logs/server.log");
    let lines = wait_for(LIMIT, "the mail line", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let lines: Vec<String> =
            text.lines().filter(|line| line.contains("mail could not be sent")).map(str::to_string).collect();
        (!lines.is_empty()).then_some(lines)
    });
    assert_eq!(lines.len(), 1, "one line for the one mail: {lines:?}");
    assert!(lines[0].contains(&format!(";Job;{id};mail could not be sent: no sendmail")), "{}", lines[0]);
}

#[test]
fn an_array_has_q_for_the_parent_s_and_e_per_subjob_and_e_for_the_parent_at_its_end() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    let script = cluster.script("arr.sh", "#!/bin/sh\nexit $PBS_ARRAY_INDEX\n");
    let id = cluster.qsub(&script, &["-J", "0-1"]);
    cluster.wait_finished(&id, LIMIT);
    let parent_end = record(&cluster, 'E', &id);
    let seq = seq(&id).trim_end_matches("[]").to_string();
    let server = id.split_once('.').unwrap().1;
    for index in 0..=1 {
        let sub = format!("{seq}[{index}].{server}");
        record(&cluster, 'S', &sub);
        assert!(record(&cluster, 'E', &sub).contains(&format!(" Exit_status={index} ")), "{sub}");
    }
    // A subjob exited non-zero: the array's status is 1 (OpenPBS chk_array_doneness).
    assert!(parent_end.contains(" Exit_status=1 "), "{parent_end}");
    assert!(record(&cluster, 'Q', &id).contains("jobname=arr.sh "));
    let kinds: Vec<String> = cluster
        .accounting()
        .iter()
        .filter_map(|line| {
            let fields: Vec<&str> = line.splitn(4, ';').collect();
            (fields[2] == id).then(|| fields[1].to_string())
        })
        .collect();
    assert_eq!(kinds, ["Q", "E"], "the parent: Q at submit, E at its end");
}

#[test]
fn suspend_and_resume_write_z_and_r_records() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 1, gpus: 0 });
    let script = cluster.script("long.sh", "sleep 60\n");
    let id = cluster.qsub(&script, &[]);
    wait_for(LIMIT, "the job to run", || (cluster.job_attr(&id, "job_state")? == "R").then_some(()));
    assert!(cluster.run("qsig", &["-s", "suspend", &id]).status.success());
    let suspended = record(&cluster, 'z', &id);
    assert!(suspended.starts_with("resources_used.cpupercent="), "{suspended}");
    assert!(suspended.contains(" resources_used.walltime="), "{suspended}");
    assert!(cluster.run("qsig", &["-s", "resume", &id]).status.success());
    assert_eq!(record(&cluster, 'r', &id), "", "OpenPBS's r record has no message");
    cluster.run("qdel", &[&id]);
    cluster.wait_finished(&id, LIMIT);
}

/// `date +%Y%m%d` for now and one day later: the accounting files a test may write to.
fn accounting_days() -> Vec<String> {
    ["now", "tomorrow"]
        .iter()
        .map(|when| {
            let output = std::process::Command::new("date").args(["-d", when, "+%Y%m%d"]).output().unwrap();
            String::from_utf8(output.stdout).unwrap().trim().to_string()
        })
        .collect()
}

/// Issue 12 item 10: the accounting files cannot be written (a directory stands where the
/// day's file goes, as a full disk would refuse the write), jobs end, and the server is killed
/// right after their ends are committed. After a restart every end has its `E` record (and
/// none is written twice).
#[test]
fn kill_9_right_after_jobs_end_loses_no_end_record_even_after_a_failed_write() {
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 4, gpus: 0 });
    let dir = cluster.state.path().join("server_priv/accounting");
    std::fs::create_dir_all(&dir).unwrap();
    let blockers: Vec<PathBuf> = accounting_days().iter().map(|day| dir.join(day)).collect();
    for blocker in &blockers {
        std::fs::create_dir(blocker).unwrap();
    }
    let script = cluster.script("quick.sh", "true\n");
    let ids: Vec<String> = (0..4).map(|_| cluster.qsub(&script, &[])).collect();
    for id in &ids {
        assert_eq!(cluster.wait_finished(id, LIMIT), 0);
    }
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(cluster.server_pid()), nix::sys::signal::Signal::SIGKILL);
    for blocker in &blockers {
        std::fs::remove_dir(blocker).unwrap();
    }
    cluster.start_server();
    for id in &ids {
        record(&cluster, 'E', id);
        record(&cluster, 'Q', id);
    }
    let lines = cluster.accounting();
    for id in &ids {
        let ends = lines.iter().filter(|line| line.contains(&format!(";E;{id};"))).count();
        assert_eq!(ends, 1, "one E record of {id}: {lines:#?}");
    }
}
