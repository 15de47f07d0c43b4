//! The corpus of real-world job scripts (`tests/corpus/`, patterns and sources in its
//! `PATTERNS.md`): every script is submitted held to a local cluster set up as
//! `expected.toml`'s `[setup]` says, read back with `qstat -f -F json`, and compared field by
//! field with the table. One failure lists every mismatch (script, field, expected, got), not
//! just the first; nothing is skipped per entry.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use tests::{Cluster, Shape};
use toml::{Table, Value};

/// The value a test expects for a field that must show, whatever its value.
const ANY: &str = "*";
/// An environment variable qsub runs with, so `-V` and `-v NAME` can be seen in `Variable_List`.
const MARKER: (&str, &str) = ("CORPUS_MARKER", "corpus-v");
/// A site the size the scripts were written for (up to 20 hosts, 128 cpus and 3 TB a host):
/// a job too big for the test cluster would be refused for that, not for how it was read.
const SITE: Shape = Shape { nodes: 20, ppn: 128, gpus: 4 };
const SITE_MEM: &str = "4tb";

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn table() -> Table {
    let text = std::fs::read_to_string(corpus_dir().join("expected.toml")).expect("expected.toml");
    text.parse::<Table>().unwrap_or_else(|error| panic!("expected.toml does not parse: {error}"))
}

/// One difference between the table and what the cluster did.
struct Mismatch {
    script: String,
    field: String,
    expected: String,
    got: String,
}

/// What a cluster run knows to fill the table's placeholders.
struct Context {
    host: String,
    workdir: String,
    user: String,
    parent: String,
    server: String,
}

impl Context {
    fn expand(&self, value: &str, seq: &str) -> String {
        value
            .replace("{host}", &self.host)
            .replace("{workdir}", &self.workdir)
            .replace("{user}", &self.user)
            .replace("{parent}", &self.parent)
            .replace("{server}", &self.server)
            .replace("{seq}", seq)
    }
}

/// The submit host's canonical name, as OpenPBS's `prepare_path` writes it into output paths
/// (`get_fullhostname` of `gethostname`).
fn full_host_name() -> String {
    for args in [&["-f"][..], &[][..]] {
        if let Ok(output) = std::process::Command::new("hostname").args(args).output() {
            let name = String::from_utf8_lossy(&output.stdout).trim().to_string();
            if output.status.success() && !name.is_empty() {
                return name;
            }
        }
    }
    panic!("hostname gives no name");
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn strings(value: Option<&Value>) -> Vec<String> {
    let items = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    items.iter().filter_map(Value::as_str).map(str::to_string).collect()
}

fn pairs(value: Option<&Value>) -> BTreeMap<String, String> {
    let Some(table) = value.and_then(Value::as_table) else { return BTreeMap::new() };
    table.iter().map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_string())).collect()
}

/// The `[setup]` groups, created (and the submitting user put in them) while a corpus test
/// runs: the server gives a job a `-W group_list` group only when its owner is in it on the
/// server's host, as OpenPBS does (`set_objexid`, `src/server/geteusernam.c`). Counted, so the
/// two flavors' tests running at once remove them only after both.
struct Groups(Vec<String>);

static GROUP_USERS: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl Groups {
    fn create(names: Vec<String>, user: &str, mismatches: &mut Vec<Mismatch>) -> Groups {
        let mut users = GROUP_USERS.lock().unwrap_or_else(|poison| poison.into_inner());
        *users += 1;
        for name in &names {
            let exists = uzers::get_group_by_name(name).is_some();
            let made = exists || std::process::Command::new("groupadd").arg(name).status().is_ok_and(|s| s.success());
            let joined = made
                && std::process::Command::new("usermod").args(["-aG", name, user]).status().is_ok_and(|s| s.success());
            if !joined {
                let field = format!("group {name} with {user} in it (needs root)");
                mismatches.push(Mismatch {
                    script: "[setup]".into(),
                    field,
                    expected: "ok".into(),
                    got: "failed".into(),
                });
            }
        }
        Groups(names)
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        let mut users = GROUP_USERS.lock().unwrap_or_else(|poison| poison.into_inner());
        *users -= 1;
        if *users == 0 {
            for name in &self.0 {
                let _ = std::process::Command::new("groupdel").arg(name).output();
            }
        }
    }
}

/// Runs the `[setup]` qmgr requests and creates its directories; a failing request is a
/// mismatch of its own (the scripts that need it then show their own).
fn set_up(cluster: &Cluster, setup: &Table, mismatches: &mut Vec<Mismatch>) {
    for request in strings(setup.get("qmgr")) {
        let output = cluster.run("qmgr", &["-c", &request]);
        if !output.status.success() {
            let got = format!("exit {:?}: {}", output.status.code(), text(&output.stderr).trim());
            mismatches.push(Mismatch { script: "[setup]".into(), field: request, expected: "ok".into(), got });
        }
    }
    for dir in strings(setup.get("dirs")) {
        std::fs::create_dir_all(cluster.work.path().join(dir)).expect("create a setup directory");
    }
}

/// Submits `script` held (piped to stdin when its args say `@STDIN@`), with the marker set.
fn submit(cluster: &Cluster, name: &str, script: &str, args: &[String]) -> Output {
    let mut command = cluster.command("qsub");
    command.env(MARKER.0, MARKER.1).arg("-h").stdout(Stdio::piped()).stderr(Stdio::piped());
    if args.iter().any(|arg| arg == "@STDIN@") {
        let mut child = command.stdin(Stdio::piped()).spawn().expect("qsub runs");
        child.stdin.take().expect("stdin").write_all(script.as_bytes()).expect("write the script");
        return child.wait_with_output().expect("qsub ends");
    }
    let path = cluster.work.path().join(name);
    std::fs::write(&path, script).expect("write the script");
    command.arg(&path).stdin(Stdio::null()).output().expect("qsub runs")
}

/// A job's `qstat -f -F json` attributes flattened: `Resource_List.mem`, `Variable_List.HOME`.
fn job_fields(cluster: &Cluster, id: &str) -> Result<BTreeMap<String, String>, String> {
    let output = cluster.run("qstat", &["-f", "-F", "json", id]);
    if !output.status.success() {
        return Err(format!("qstat failed: {}", text(&output.stderr).trim()));
    }
    let document: serde_json::Value =
        serde_json::from_slice(&output.stdout).map_err(|error| format!("qstat -F json is not JSON: {error}"))?;
    let job = document["Jobs"][id].as_object().ok_or_else(|| format!("no Jobs.{id} in qstat -F json"))?;
    let mut fields = BTreeMap::new();
    for (name, value) in job {
        match value.as_object() {
            Some(nested) => {
                for (key, inner) in nested {
                    fields.insert(format!("{name}.{key}"), json_text(inner));
                }
            }
            None => {
                fields.insert(name.clone(), json_text(value));
            }
        }
    }
    Ok(fields)
}

fn json_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn sequence_number(id: &str) -> String {
    id.chars().take_while(char::is_ascii_digit).collect()
}

/// Checks one script against its entry; `torque` adds the entry's torque differences.
fn check_entry(cluster: &Cluster, context: &Context, entry: &Table, torque: bool, mismatches: &mut Vec<Mismatch>) {
    let file = entry.get("file").and_then(Value::as_str).expect("every entry names its file").to_string();
    let script = std::fs::read_to_string(corpus_dir().join("scripts").join(&file)).expect("the script exists");
    let script = script.replace("@PARENT@", &context.parent).replace("@USER@", &context.user);
    let output = submit(cluster, &file, &script, &strings(entry.get("args")));
    let mut found = Vec::new();
    match entry.get("refused").and_then(Value::as_table) {
        Some(refused) => check_refusal(&output, refused, &mut found),
        None => check_fields(cluster, context, entry, torque, &output, &mut found),
    }
    mismatches.extend(found.into_iter().map(|(field, expected, got)| Mismatch {
        script: file.clone(),
        field,
        expected,
        got,
    }));
}

/// A mismatch before its script is known: field, expected, got.
type Found = (String, String, String);

fn check_refusal(output: &Output, refused: &Table, found: &mut Vec<Found>) {
    let exit = refused.get("exit").and_then(Value::as_integer).unwrap_or(-1);
    let words = refused.get("stderr").and_then(Value::as_str).unwrap_or_default();
    let stderr = text(&output.stderr).trim().to_string();
    if output.status.success() {
        let got = format!("accepted as {}", text(&output.stdout).trim());
        found.push(("qsub".into(), format!("refused, exit {exit}, stderr with {words:?}"), got));
        return;
    }
    if output.status.code() != Some(exit as i32) {
        found.push(("qsub exit".into(), exit.to_string(), format!("{:?} ({stderr})", output.status.code())));
    }
    if !stderr.contains(words) {
        found.push(("qsub stderr".into(), format!("contains {words:?}"), stderr));
    }
}

fn check_fields(
    cluster: &Cluster,
    context: &Context,
    entry: &Table,
    torque: bool,
    output: &Output,
    found: &mut Vec<Found>,
) {
    if !output.status.success() {
        let got = format!("exit {:?}: {}", output.status.code(), text(&output.stderr).trim());
        found.push(("qsub".into(), "accepted".into(), got));
        return;
    }
    let id = text(&output.stdout).trim().to_string();
    let fields = match job_fields(cluster, &id) {
        Ok(fields) => fields,
        Err(error) => return found.push(("qstat".into(), "the job".into(), error)),
    };
    let seq = sequence_number(&id);
    let mut expect = pairs(entry.get("expect"));
    let mut absent = strings(entry.get("absent"));
    if torque {
        expect.extend(pairs(entry.get("torque")));
        let gone = strings(entry.get("torque_absent"));
        expect.retain(|field, _| !gone.contains(field));
        absent.extend(gone);
    }
    for (field, wanted) in expect {
        let wanted = context.expand(&wanted, &seq);
        match fields.get(&field) {
            None => found.push((field, wanted, "(absent)".into())),
            Some(got) if wanted != ANY && *got != wanted => found.push((field, wanted, got.clone())),
            Some(_) => {}
        }
    }
    for field in absent {
        if let Some(got) = fields.get(&field) {
            found.push((field, "(absent)".into(), got.clone()));
        }
    }
}

/// Brings up a cluster of the flavor, sets it up, submits the entries `select` picks and
/// returns every mismatch.
fn run_corpus(flavor: &str, select: impl Fn(&Table) -> bool) -> (usize, Vec<Mismatch>) {
    let corpus = table();
    let cluster = Cluster::up_with(SITE, &["--mem", SITE_MEM, "--flavor", flavor]);
    let mut mismatches = Vec::new();
    let setup = corpus.get("setup").and_then(Value::as_table).expect("[setup]");
    set_up(&cluster, setup, &mut mismatches);
    let parent = cluster.qsub(&cluster.script("corpus-parent.sh", "true\n"), &["-h"]);
    let user = uzers::get_current_username().expect("a user name").to_string_lossy().into_owned();
    let _groups = Groups::create(strings(setup.get("groups")), &user, &mut mismatches);
    let workdir = cluster.work.path().display().to_string();
    let server = cluster.server_name.clone();
    let context = Context { host: full_host_name(), workdir, user, parent, server };
    let entries = corpus.get("script").and_then(Value::as_array).expect("[[script]] entries");
    let mut checked = 0;
    for entry in entries.iter().filter_map(Value::as_table).filter(|entry| select(entry)) {
        check_entry(&cluster, &context, entry, flavor == "torque", &mut mismatches);
        checked += 1;
    }
    (checked, mismatches)
}

fn report(flavor: &str, checked: usize, mismatches: &[Mismatch]) {
    if mismatches.is_empty() {
        return;
    }
    let scripts: std::collections::BTreeSet<&str> = mismatches.iter().map(|m| m.script.as_str()).collect();
    let mut message = format!(
        "{flavor}: {} mismatches in {} of {checked} scripts (script | field | expected | got):\n",
        mismatches.len(),
        scripts.len()
    );
    for m in mismatches {
        message.push_str(&format!("{} | {} | {} | {}\n", m.script, m.field, m.expected, m.got));
    }
    panic!("{message}");
}

#[test]
fn every_corpus_script_reads_as_the_table_says_openpbs() {
    let (checked, mismatches) = run_corpus("openpbs", |_| true);
    assert!(checked >= 100, "the corpus has {checked} scripts; it must keep at least 100");
    report("openpbs", checked, &mismatches);
}

#[test]
fn corpus_scripts_with_torque_differences_read_as_the_table_says_torque() {
    let has_torque = |entry: &Table| entry.contains_key("torque") || entry.contains_key("torque_absent");
    let (checked, mismatches) = run_corpus("torque", has_torque);
    assert!(checked > 0, "no entry has torque differences");
    report("torque", checked, &mismatches);
}
