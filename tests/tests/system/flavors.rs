//! The two output flavors side by side (pbs-reference sections 0, 6.6, 7.2, 11): the same jobs
//! on an `openpbs` and a `torque` cluster, read the way the clients in the wild read them
//! (Parsl's default-table parsing, the Snakemake pbs-torque profile's `qstat <id>` + `qstat -f
//! -x <id>` grep, the OpenPBS Snakemake plugin's ` = ` lines, Nextflow's `qstat -f -1`).

use std::process::Output;
use std::time::Duration;
use tests::{wait_for, Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Rows of a default `qstat` table split on white space, headers skipped as Parsl does.
fn rows(output: &Output) -> Vec<Vec<String>> {
    text(&output.stdout)
        .lines()
        .map(|line| line.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .filter(|fields| {
            fields.first().is_some_and(|first| !first.to_lowercase().starts_with("job") && !first.starts_with("---"))
        })
        .collect()
}

/// The state column (field 4) of `id`'s row, if the table lists it.
fn state_in(output: &Output, id: &str) -> Option<String> {
    rows(output).into_iter().find(|fields| fields[0] == id).map(|fields| fields[4].clone())
}

/// Submits a job that succeeds and one that overruns its 2 s walltime.
fn submit_pair(cluster: &Cluster) -> (String, String) {
    let ok = cluster.script("ok.sh", "exit 0\n");
    let over = cluster.script("over.sh", "#PBS -l walltime=00:00:02\nsleep 100\n");
    (cluster.qsub(&ok, &[]), cluster.qsub(&over, &[]))
}

/// Nextflow's `pbs` executor polls with `qstat -f -1` and greps `Job Id:` / `job_state =`.
fn nextflow_poll_sees(cluster: &Cluster, id: &str) {
    let output = cluster.run("qstat", &["-f", "-1"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains(&format!("Job Id: {id}\n")), "{stdout}");
    assert!(stdout.lines().any(|line| line.starts_with("    job_state = ")), "{stdout}");
    assert!(!stdout.contains("\n\t"), "-1 does not fold: {stdout}");
}

#[test]
fn torque_keeps_finished_jobs_as_c_with_torque_names_and_xml() {
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &["--flavor", "torque"]);
    let (ok, over) = submit_pair(&cluster);
    nextflow_poll_sees(&cluster, &over);

    // Snakemake pbs-torque: `qstat <id>` until a C shows, then grep the XML.
    wait_for(LIMIT, "the job to show C", || (state_in(&cluster.run("qstat", &[&ok]), &ok)? == "C").then_some(()));
    let listing = cluster.run("qstat", &[]);
    assert_eq!(state_in(&listing, &ok).as_deref(), Some("C"), "C in the plain listing too");
    assert!(text(&listing.stdout).starts_with("Job ID                    Name             User"), "TORQUE header");
    assert_eq!(state_in(&cluster.run("qstat", &["-c"]), &ok), None, "-c hides completed jobs");
    let alternate = text(&cluster.run("qstat", &["-a", "-x"]).stdout);
    assert!(alternate.starts_with("\ntestsrv: \n"), "-a wins over XML: {alternate}");
    assert!(
        alternate.contains("\nJob ID                  Username    Queue    Jobname          SessID"),
        "{alternate}"
    );
    let xml = cluster.run("qstat", &["-f", "-x", &ok]);
    assert!(xml.status.success(), "{}", text(&xml.stderr));
    let xml = text(&xml.stdout);
    assert!(xml.starts_with(&format!("<?xml version=\"1.0\"?>\n<Data><Job><Job_Id>{ok}</Job_Id>")), "{xml}");
    assert!(xml.contains("<exit_status>0</exit_status>"), "{xml}");
    assert!(xml.contains("<job_state>C</job_state>") && xml.contains("<comp_time>"), "{xml}");
    assert!(xml.ends_with("</Job></Data>\n") && xml.lines().count() == 2, "{xml}");
    let full = text(&cluster.run("qstat", &["-f", &ok]).stdout);
    for line in ["    exit_status = 0\n", "    euser = ", "    submit_args = ", "    total_runtime = "] {
        assert!(full.contains(line), "{line:?} in {full}");
    }
    assert!(!full.contains("Exit_status"), "{full}");

    // A walltime overrun is -11 in TORQUE.
    wait_for(LIMIT, "the overrun job to end", || {
        (state_in(&cluster.run("qstat", &[&over]), &over)? == "C").then_some(())
    });
    let xml = text(&cluster.run("qstat", &["-x", &over]).stdout);
    assert!(xml.contains("<exit_status>-11</exit_status>"), "{xml}\n{}", cluster.logs());
    assert!(text(&cluster.run("qstat", &["-f", "-1", &over]).stdout).contains("    exit_status = -11\n"));

    let unknown = cluster.run("qstat", &["99999"]);
    assert_eq!(unknown.status.code(), Some(153));
    assert_eq!(text(&unknown.stderr), "qstat: Unknown Job Id Error 99999.testsrv\n");
    let unknown = cluster.run("qstat", &["-f", "-x", "99999"]);
    assert_eq!((unknown.status.code(), unknown.stdout.len()), (Some(153), 0), "no document for unknown ids");
    let deleted = cluster.run("qdel", &["99999"]);
    assert_eq!(deleted.status.code(), Some(153));
    assert!(text(&deleted.stderr).contains("Unknown Job Id Error 99999.testsrv"), "{}", text(&deleted.stderr));
}

#[test]
fn openpbs_hides_finished_jobs_without_history() {
    let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &["--flavor", "openpbs"]);
    let (ok, over) = submit_pair(&cluster);
    nextflow_poll_sees(&cluster, &over);

    assert_eq!(cluster.wait_finished(&ok, LIMIT), 0);
    assert_eq!(state_in(&cluster.run("qstat", &[]), &ok), None, "gone from the plain listing");
    assert_eq!(state_in(&cluster.run("qstat", &["-x"]), &ok).as_deref(), Some("F"));
    let by_id = cluster.run("qstat", &[&ok]);
    assert_eq!(by_id.status.code(), Some(35));
    assert!(text(&by_id.stderr).contains("Job has finished, use -x or -H"), "{}", text(&by_id.stderr));
    // The OpenPBS Snakemake plugin reads ` = ` lines of `qstat -f -x <id>`.
    let full = text(&cluster.run("qstat", &["-f", "-x", &ok]).stdout);
    assert!(full.starts_with(&format!("Job Id: {ok}\n")), "{full}");
    assert!(full.contains("    Exit_status = 0\n") && full.contains("    job_state = F\n"), "{full}");
    assert!(!full.contains("<exit_status>"), "{full}");

    assert_eq!(cluster.wait_finished(&over, LIMIT), -29, "{}", cluster.logs());

    let unknown = cluster.run("qstat", &["99999"]);
    assert_eq!(unknown.status.code(), Some(153));
    assert_eq!(text(&unknown.stderr), "qstat: Unknown Job Id 99999.testsrv\n");
}

#[test]
fn torque_completed_jobs_leave_plain_listings_after_keep_completed() {
    let cluster =
        Cluster::up_with(Shape { nodes: 1, ppn: 1, gpus: 0 }, &["--flavor", "torque", "--keep-completed", "1"]);
    let script = cluster.script("quick.sh", "exit 3\n");
    let id = cluster.qsub(&script, &[]);
    wait_for(LIMIT, "the job to leave the plain listing", || {
        let xml = text(&cluster.run("qstat", &["-x", &id]).stdout);
        let ended = xml.contains("<job_state>C</job_state>");
        (ended && state_in(&cluster.run("qstat", &[]), &id).is_none()).then_some(())
    });
    let by_id = cluster.run("qstat", &[&id]);
    assert_eq!(by_id.status.code(), Some(153), "TORQUE has purged it: {}", text(&by_id.stderr));
    assert_eq!(text(&by_id.stderr), format!("qstat: Unknown Job Id Error {id}\n"));
    let xml = text(&cluster.run("qstat", &["-x", &id]).stdout);
    assert!(xml.contains("<exit_status>3</exit_status>"), "still in history: {xml}");
}
