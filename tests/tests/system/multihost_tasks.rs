//! Tasks through the moms on two network-namespace hosts (issue 15, TCP + MUNGE between the
//! moms): a two-node job's script asks its mother superior's task socket (a small Python
//! launcher speaking proto::task, standing in for `pbsdsh`) to run a command on the sister; it
//! runs there (it sees the sister's address and `PBS_NODENUM=1`), its output and status come
//! back, and the CPU it burns there is in the job's `resources_used.cput`.
//! Skips (`tests::skip`, a failure under CI) when not root or `ip netns` is missing.

use crate::users::TestUser;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;
use tests::netcluster::NetCluster;

/// A minimal launcher: one request, the answers written as JSON lines to a file.
const LAUNCHER: &str = r#"
import json, os, socket, struct, sys
node, line, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["MINIPBS_TASK_SOCKET"])
request = {"version": 1, "job_id": os.environ["PBS_JOBID"], "cookie": os.environ["PBS_JOBCOOKIE"],
           "node": node, "command": {"Shell": line}, "env": [], "cwd": None, "vnode": 1,
           "stdin": False, "output": True}
body = json.dumps(request).encode()
s.sendall(struct.pack(">I", len(body)) + body)
f = s.makefile("rb")
with open(out, "w") as answers:
    while True:
        head = f.read(4)
        if len(head) < 4:
            break
        message = json.loads(f.read(struct.unpack(">I", head)[0]))
        answers.write(json.dumps(message) + "\n")
        if "Exited" in message or "Refused" in message:
            break
"#;

#[test]
fn a_job_starts_a_task_on_its_sister_through_the_moms() {
    let Some(cluster) = NetCluster::up(&["hosta", "hostb"]) else { return };
    let user = TestUser::create("mht");
    let (launcher, answers) = (cluster.work.join("launch.py"), cluster.work.join("answers"));
    std::fs::write(&launcher, LAUNCHER).unwrap();
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o644)).unwrap();
    // 1.5 s of the task shell's own user CPU (field 14 of its stat, in ticks).
    let task = "ip -o -4 addr show dev eth0; echo nodenum=$PBS_NODENUM; \
                while [ $(cut -d\" \" -f14 /proc/$$/stat) -lt 150 ]; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; done; exit 5";
    let script = cluster.work.join("tasks.sh");
    let text = format!(
        "#PBS -l nodes=2:ppn=1\nmother=$(head -1 \"$PBS_NODEFILE\")\nsister=$(grep -v \"^$mother\\$\" \"$PBS_NODEFILE\" | head -1)\n\
         /usr/bin/python3 {launcher} \"$sister\" '{task}' {answers}\n",
        launcher = launcher.display(),
        answers = answers.display()
    );
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = cluster.command_as("qsub", &user.name, user.uid, user.gid).arg(&script).output().unwrap();
    assert!(output.status.success(), "qsub: {}\n{}", String::from_utf8_lossy(&output.stderr), cluster.logs());
    let id = String::from_utf8(output.stdout).unwrap().trim().to_string();
    let attrs = tests::wait_for(Duration::from_secs(60), "the job to finish", || {
        let attrs = cluster.job_attrs(&id);
        (attrs.get("job_state").map(String::as_str) == Some("F")).then_some(attrs)
    });
    let mother = attrs["exec_host"].split('/').next().unwrap().to_string();
    let sister = if mother == "hosta" { "hostb" } else { "hosta" };
    let answers = std::fs::read_to_string(&answers).unwrap_or_default();
    let messages: Vec<serde_json::Value> = answers.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let stdout: String = messages.iter().filter_map(|m| m.get("Stdout")?.as_str().map(str::to_string)).collect();
    let sister_addr = cluster.host(sister).addr.to_string();
    assert!(stdout.contains(&format!("inet {sister_addr}/")), "ran on {sister}: {answers}\n{}", cluster.logs());
    assert!(stdout.contains("nodenum=1"), "{answers}");
    assert_eq!(messages.last().and_then(|m| m.get("Exited")).map(|e| e["status"].clone()), Some(5.into()), "{answers}");
    let cput = attrs.get("resources_used.cput").cloned().unwrap_or_default();
    let seconds: u64 = cput.split(':').fold(0, |total, part| total * 60 + part.parse::<u64>().unwrap_or(0));
    assert!(seconds >= 1, "the sister's CPU counts in resources_used.cput = {cput:?}\n{}", cluster.logs());
}
