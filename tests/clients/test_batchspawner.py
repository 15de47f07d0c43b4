"""JupyterHub's batchspawner, unchanged: PBSSpawner (OpenPBS flavor) and TorqueSpawner (torque
flavor) with their own batch script templates (`#PBS -q queue@server`, `-l select=...:mem=` or
`-l nodes=1:ppn= -l mem=`, `-v` of the hub's variables, an empty `#PBS` line), submit command,
query command (`qstat -fx` text, TORQUE's `qstat -x` XML) and its state and exec host regexes,
and its cancel (`qdel`) through `stop()`.

Only what needs a running hub is replaced: the command run inside the job (a sleep instead of
jupyterhub-singleuser) and the environment (the hub's API token and URLs are made up).

Usage: python test_batchspawner.py pbs|torque (inside the cluster `run` starts).
"""

import asyncio
import os
import socket
import sys
from types import SimpleNamespace

from batchspawner import JobStatus, PBSSpawner, TorqueSpawner

from pbs_common import (FINISHED, JOB_END, assert_gone, fill_node, job_id_pattern, release_node,
                        session_of, sh, state, wait_for, wait_for_start, workdir)


def hubless(base):
    class Hubless(base):
        command = "sleep 600"

        def cmd_formatted_for_batch(self):
            return self.command

        def get_env(self):
            env = dict(os.environ)
            env.update(JUPYTERHUB_API_TOKEN="not-a-token", JUPYTERHUB_API_URL="http://hub:8081/hub/api")
            return env

    return Hubless


def spawner(kind, where):
    base = PBSSpawner if kind == "pbs" else TorqueSpawner
    made = hubless(base)(user=SimpleNamespace(name=os.environ.get("USER", "root"), url="/user/x/"))
    made.exec_prefix = ""
    made.req_queue = "workq"
    made.req_host = socket.gethostname().split(".")[0]
    made.req_homedir = where
    made.req_runtime = "00:05:00"
    made.req_nprocs = "1"
    made.req_memory = "64mb"
    made.req_keepvars = "PATH,JUPYTERHUB_API_TOKEN,JUPYTERHUB_API_URL"
    return made


def query(sp):
    return asyncio.run(sp.query_job_status())


async def submit(sp):
    job_id = await sp.submit_batch_script()
    assert job_id_pattern().match(job_id), f"submit gave {job_id!r}"
    return job_id


def pending_running_cancel(kind, where):
    sp = spawner(kind, where)
    started = os.path.join(where, "started")
    sp.command = f"touch {started}; sleep 600"
    blocker = fill_node(where)
    job_id = asyncio.run(submit(sp))
    assert state(job_id) == "Q", state(job_id)
    assert query(sp) == JobStatus.PENDING, sp.job_status
    assert asyncio.run(sp.poll()) is None
    sh("qhold", job_id)
    assert query(sp) == JobStatus.PENDING, f"held job not pending: {sp.job_status}"
    sh("qrls", job_id)
    release_node(blocker)
    wait_for(f"batchspawner to see {job_id} running", lambda: query(sp) == JobStatus.RUNNING)
    assert sp.state_gethost() == "node1", f"exec host read as {sp.state_gethost()!r}"
    sid = session_of(job_id)
    wait_for_start(job_id, started)
    asyncio.run(sp.stop())
    assert_gone(job_id, sid)
    assert query(sp) == JobStatus.NOTFOUND, sp.job_status
    assert asyncio.run(sp.poll()) == 1
    print(f"batchspawner {kind}: {job_id} pending (also held), running on node1, stopped, nothing left")


def finishes_alone(kind, where):
    sp = spawner(kind, where)
    sp.command = "sleep 1"
    job_id = asyncio.run(submit(sp))
    wait_for(f"{job_id} to finish", lambda: state(job_id) == FINISHED, timeout=JOB_END)
    assert query(sp) == JobStatus.NOTFOUND, sp.job_status
    assert asyncio.run(sp.poll()) == 1
    assert_gone(job_id)
    print(f"batchspawner {kind}: {job_id} ended by itself, seen as gone")


def main():
    kind = sys.argv[1]
    where = workdir(f"batchspawner-{kind}")
    os.chdir(where)  # TorqueSpawner's script has no -o/-e: the output goes to the submit directory
    pending_running_cancel(kind, where)
    finishes_alone(kind, where)


if __name__ == "__main__":
    main()
