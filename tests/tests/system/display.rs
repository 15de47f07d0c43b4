//! What `qstat -f` shows of what the user wrote (issue 13, items 1, 2, 5): `Mail_Users`,
//! `Shell_Path_List`, `Resource_List.select`/`place`/`mem` as written, in every format of both
//! flavors; and that the mom runs the job with the shell of `-S` and `OMP_NUM_THREADS` of
//! `ompthreads`.

use crate::users::{as_user, TestUser};
use std::process::Stdio;
use std::time::Duration;
use tests::{Cluster, Shape};

const LIMIT: Duration = Duration::from_secs(30);

/// The must-hold submission of issue 13 (without `-P`, another part's).
const MUST_HOLD: [&str; 9] =
    ["-h", "-M", "a@b.org", "-S", "/bin/bash", "-l", "select=1:ncpus=2:mem=2gb:ompthreads=2", "-l", "place=excl"];

fn stdout(cluster: &Cluster, args: &[&str]) -> String {
    let output = cluster.run("qstat", args);
    assert!(output.status.success(), "qstat {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf8")
}

/// The `qstat -f` lines of what the user asked for.
fn asked_lines(full: &str) -> String {
    let asked = ["Hold_Types", "Mail_", "Resource_List.", "schedselect", "Shell_Path_List"];
    full.lines()
        .filter(|line| asked.iter().any(|name| line.trim_start().starts_with(name)))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The lines of `qstat -F json` from `Mail_Points` to `Shell_Path_List` but the time stamps
/// and `Output_Path` (host and directory vary).
fn json_lines(raw: &str) -> String {
    let from = raw.find("\t\t\t\"Mail_Points\"").expect("Mail_Points in the JSON");
    let to = raw.find("\t\t\t\"Shell_Path_List\"").expect("Shell_Path_List in the JSON");
    let to = to + raw[to..].find('\n').unwrap() + 1;
    raw[from..to]
        .lines()
        .filter(|line| !line.contains("time\"") && !line.contains("Output_Path"))
        .map(|line| format!("{line}\n"))
        .collect()
}

#[test]
fn the_must_hold_job_shows_what_was_written_in_every_format() {
    let mut text = String::new();
    for flavor in ["openpbs", "torque"] {
        let cluster = Cluster::up_with(Shape { nodes: 1, ppn: 2, gpus: 0 }, &["--flavor", flavor]);
        let script = cluster.script("held.sh", "true\n");
        let id = cluster.qsub(&script, &MUST_HOLD);
        let full = stdout(&cluster, &["-f", &id]);
        for line in [
            "    Mail_Users = a@b.org\n",
            "    Shell_Path_List = /bin/bash\n",
            "    Resource_List.select = 1:ncpus=2:mem=2gb:ompthreads=2\n",
            "    Resource_List.place = excl\n",
            "    Resource_List.mem = 2gb\n",
        ] {
            assert!(full.contains(line), "{flavor}: {line:?} not in\n{full}");
        }
        text.push_str(&format!("--- {flavor} qstat -f\n{}", asked_lines(&full)));
        if flavor == "torque" {
            let xml = stdout(&cluster, &["-f", "-x", &id]);
            for element in [
                "<Mail_Users>a@b.org</Mail_Users>",
                "<Shell_Path_List>/bin/bash</Shell_Path_List>",
                "<select>1:ncpus=2:mem=2gb:ompthreads=2</select>",
                "<place>excl</place>",
            ] {
                assert!(xml.contains(element), "{element} not in {xml}");
            }
            continue;
        }
        let raw = stdout(&cluster, &["-f", "-F", "json", &id]);
        let json: serde_json::Value = serde_json::from_str(&raw).expect("qstat -F json is JSON");
        let job = &json["Jobs"][&id];
        assert_eq!((job["Mail_Users"].as_str(), job["Shell_Path_List"].as_str()), (Some("a@b.org"), Some("/bin/bash")));
        text.push_str(&format!("--- {flavor} qstat -f -F json\n{}", json_lines(&raw)));
        let dsv = stdout(&cluster, &["-f", "-F", "dsv", &id]);
        assert!(dsv.starts_with(&format!("Job Id: {id}|Job_Name=held.sh|")) && dsv.lines().count() == 1, "{dsv}");
        for field in ["|Mail_Users=a@b.org|", "|Shell_Path_List=/bin/bash|", "|Resource_List.place=excl|"] {
            assert!(dsv.contains(field), "{field} not in {dsv}");
        }
        let semicolons = stdout(&cluster, &["-f", "-F", "dsv", "-D", ";", &id]);
        assert!(semicolons.contains(";Resource_List.select=1:ncpus=2:mem=2gb:ompthreads=2;"), "{semicolons}");
        let misplaced = cluster.run("qstat", &["-f", "-D", ";", &id]);
        assert_eq!(misplaced.status.code(), Some(2), "-D without -F dsv is a usage error");
        assert!(String::from_utf8_lossy(&misplaced.stderr).starts_with("qstat: -D is only valid with -F dsv\n"));
        // qalter follows the same rule.
        let alter = cluster.run("qalter", &["-M", "c@d.org,e", "-l", "select=1:mem=1GB+1:mem=512mb", &id]);
        assert!(alter.status.success(), "{}", String::from_utf8_lossy(&alter.stderr));
        text.push_str(&format!("--- {flavor} after qalter\n{}", asked_lines(&stdout(&cluster, &["-f", &id]))));
    }
    insta::assert_snapshot!(text);
}

/// Runs `body` as `user` with `extra`; returns the job's stdout once it has ended.
fn run_and_read(cluster: &Cluster, user: &TestUser, name: &str, body: &str, extra: &[&str]) -> String {
    let script = cluster.script(name, body);
    let output = as_user(cluster, user, "qsub").args(extra).arg(&script).stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "qsub {extra:?}: {}", String::from_utf8_lossy(&output.stderr));
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    assert_eq!(cluster.wait_finished(&id, LIMIT), 0, "{name}: {}", cluster.logs());
    let seq = id.split('.').next().unwrap();
    std::fs::read_to_string(cluster.work.path().join(format!("{name}.o{seq}"))).expect("the job's output")
}

/// As a user of its own (root's login files on a test machine may run for a minute): the
/// top shell is the entry of `-S` for the node, with `OMP_NUM_THREADS` and `NCPUS` from
/// `ompthreads` (OpenPBS sets both to the chunk's thread count).
#[test]
fn the_mom_runs_the_job_with_the_shell_of_its_node_and_its_omp_threads() {
    if !tests::root_or_skip("the_mom_runs_the_job_with_the_shell_of_its_node", "to create a user") {
        return;
    }
    // /bin/sh must not be bash for the two shells to differ.
    let sh = std::fs::canonicalize("/bin/sh").unwrap();
    assert!(!sh.ends_with("bash"), "/bin/sh is {}: this test needs a /bin/sh that is not bash", sh.display());
    let user = TestUser::create("shl");
    let cluster = Cluster::up(Shape { nodes: 1, ppn: 2, gpus: 0 });
    // No `#!` line: the shell of Shell_Path_List runs the script itself.
    let body = "echo \"bash=${BASH_VERSION:+yes} omp=$OMP_NUM_THREADS ncpus=$NCPUS\"\n";
    let cases = [
        ("/bin/bash", "bash=yes"),
        ("/bin/sh", "bash="),
        ("/bin/sh@node1,/bin/bash", "bash="),
        ("/bin/sh@node9,/bin/bash", "bash=yes"),
        ("/bin/bash@node1,/bin/sh", "bash=yes"),
    ];
    for (index, (shell, expected)) in cases.into_iter().enumerate() {
        let name = format!("shell{index}.sh");
        let output = run_and_read(&cluster, &user, &name, body, &["-S", shell, "-l", "select=1:ncpus=2:ompthreads=3"]);
        assert_eq!(output.trim(), format!("{expected} omp=3 ncpus=3"), "-S {shell}");
    }
    let output = run_and_read(&cluster, &user, "plain.sh", body, &["-S", "/bin/bash", "-l", "select=1:ncpus=2"]);
    assert_eq!(output.trim(), "bash=yes omp=2 ncpus=2", "without ompthreads: the chunk's ncpus");
}
