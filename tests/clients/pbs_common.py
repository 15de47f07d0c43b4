"""What the client tests share: running the PBS commands of the cluster `run` started, reading a
job's state as qstat shows it, filling the node so a job stays queued, waiting with a deadline,
and checking that nothing of a job is left behind (processes, queued copies, undelivered output).

The runner exports MINIPBS_STATE_DIR (the cluster's state directory), MINIPBS_FLAVOR (openpbs or
torque) and PBS_CONF_FILE; the commands are on PATH.
"""

import json
import os
import re
import subprocess
import tempfile
import time

STATE_DIR = os.environ["MINIPBS_STATE_DIR"]
FLAVOR = os.environ["MINIPBS_FLAVOR"]
# What a job's state is once it has ended: OpenPBS keeps it in history as F, TORQUE shows C.
FINISHED = "F" if FLAVOR == "openpbs" else "C"
NODE_CPUS = int(os.environ.get("MINIPBS_PPN", "2"))
# How long a short job may take to end: its login shell may be slow to start (seen here: pyenv's
# rehash in root's .bashrc waiting 60 s for a lock another process held).
JOB_END = 150.0


def sh(*args, check=True):
    """Runs a command, returns its stdout; raises with its stderr when it fails and check is set."""
    proc = subprocess.run(args, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def wait_for(what, probe, timeout=60.0):
    """Polls probe() until it returns something true, at most timeout seconds; returns that."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


def full_status(job_id):
    """The job's attributes as `qstat -f` shows them (history included), as a dict."""
    if FLAVOR == "openpbs":
        jobs = json.loads(sh("qstat", "-f", "-F", "json", "-x", job_id)).get("Jobs", {})
        return jobs.get(job_id, {})
    attrs = {}
    for line in sh("qstat", "-f", "-1", job_id).splitlines():
        name, sep, value = line.strip().partition(" = ")
        if sep:
            attrs[name] = value
    return attrs


def state(job_id):
    return full_status(job_id).get("job_state")


def workdir(name):
    """A fresh directory for one test's scripts and outputs, inside the cluster's state dir."""
    return tempfile.mkdtemp(prefix=f"{name}.", dir=os.path.join(STATE_DIR, "clients"))


def fill_node(where):
    """Submits a job taking every cpu of the only node and waits until it runs, so the next job
    stays queued. Returns its id; qdel it to let the next one start."""
    spec = f"select=1:ncpus={NODE_CPUS}" if FLAVOR == "openpbs" else f"nodes=1:ppn={NODE_CPUS}"
    started = os.path.join(where, f"blocker.{time.monotonic_ns()}")
    job_id = sh("qsub", "-N", "blocker", "-l", spec, "-o", f"{where}/blocker.out", "-j", "oe",
                "--", "/bin/sh", "-c", f"touch {started}; exec sleep 600").strip()
    wait_for_start(job_id, started)
    return job_id


def wait_for_start(job_id, started):
    """Waits until the job's own command has begun (it touches the file `started`): killing it
    earlier would kill the user's login shell mid-startup (a pyenv rehash in root's .bashrc
    killed there leaves its lock behind)."""
    wait_for(f"{job_id} to start its command", lambda: os.path.exists(started), timeout=JOB_END)
    assert state(job_id) == "R", f"{job_id} runs its command but is {state(job_id)}"


def release_node(blocker):
    sh("qdel", blocker)
    wait_for(f"blocker {blocker} to end", lambda: state(blocker) in ("F", "C"))


def session_of(job_id):
    """The running job's session id (its processes' session on the node)."""
    sid = wait_for(f"session_id of {job_id}", lambda: full_status(job_id).get("session_id"))
    return int(sid)


def processes_in_session(sid):
    out = sh("ps", "-e", "-o", "sid=,pid=,args=")
    return [line.strip() for line in out.splitlines() if line.split() and int(line.split()[0]) == sid]


def assert_gone(job_id, sid=None):
    """The job has ended, stays only in history, left no process and no undelivered output."""
    wait_for(f"{job_id} to finish", lambda: state(job_id) == FINISHED, timeout=JOB_END)
    if sid is not None:
        wait_for(f"the processes of {job_id} (session {sid}) to end",
                 lambda: not processes_in_session(sid), timeout=30)
    active = sh("qselect", "-s", "QRHTWES")
    assert job_id not in active.split(), f"{job_id} still selected as active: {active!r}"
    undelivered = [os.path.join(root, f) for root, _, files in os.walk(STATE_DIR)
                   if "undelivered" in root for f in files]
    assert not undelivered, f"output left undelivered: {undelivered}"
    comment = full_status(job_id).get("comment", "")
    assert "error" not in comment.lower(), f"{job_id} ended with comment {comment!r}"


def job_id_pattern():
    return re.compile(r"^\d+\.[\w.-]+$")
