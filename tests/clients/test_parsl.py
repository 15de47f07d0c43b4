"""parsl's PBSProProvider (OpenPBS flavor) and TorqueProvider (torque flavor), unchanged: their
own qsub script templates (#PBS -S -N -m -l walltime -l select/nodes -o -e), their qstat parsers
(`qstat -x -f -F json` for PBSPro, the default table for TORQUE) and their qdel. A job is seen
PENDING while queued, HELD under qhold, RUNNING, then COMPLETED with its output delivered; a
running and a queued job are cancelled and leave nothing behind.

Usage: python test_parsl.py pbspro|torque (inside the cluster `run` starts).
"""

import os
import sys

from parsl.jobs.states import JobState
from parsl.launchers import SimpleLauncher
from parsl.providers import PBSProProvider, TorqueProvider

from pbs_common import (JOB_END, assert_gone, fill_node, full_status, release_node, session_of, sh, state,
                        wait_for, wait_for_start, workdir)


def provider(kind, where):
    if kind == "pbspro":
        made = PBSProProvider(launcher=SimpleLauncher(), walltime="00:05:00", cpus_per_node=1,
                              select_options="mem=64mb")
    else:
        made = TorqueProvider(launcher=SimpleLauncher(), walltime="00:05:00")
    made.script_dir = where
    return made


def parsl_state(prov, job_id):
    return prov.status([job_id])[0].state


def stdout_file(kind, prov, job_id, where):
    if kind == "pbspro":
        return prov.resources[job_id]["job_stdout_path"]
    name = os.path.basename(sh("qstat", "-f", "-1", job_id).split("Job_Name = ")[1].split()[0])
    return os.path.join(where, f"{name}.submit.stdout")


def run_to_completion(kind, prov, where):
    blocker = fill_node(where)
    gate = os.path.join(where, "go")
    job_id = prov.submit(f"while [ ! -e {gate} ]; do sleep 0.1; done; echo parsl-ran-$JOBNAME", 1)
    assert job_id, "submit returned no job id"
    assert state(job_id) == "Q", f"{job_id} should wait behind the blocker, is {state(job_id)}"
    assert parsl_state(prov, job_id) == JobState.PENDING, parsl_state(prov, job_id)
    sh("qhold", job_id)
    assert parsl_state(prov, job_id) == JobState.HELD, parsl_state(prov, job_id)
    sh("qrls", job_id)
    assert parsl_state(prov, job_id) == JobState.PENDING, parsl_state(prov, job_id)
    release_node(blocker)
    wait_for(f"parsl to see {job_id} RUNNING", lambda: parsl_state(prov, job_id) == JobState.RUNNING)
    sid = session_of(job_id)
    open(gate, "w").close()
    wait_for(f"parsl to see {job_id} COMPLETED", lambda: parsl_state(prov, job_id) == JobState.COMPLETED,
             timeout=JOB_END)
    assert_gone(job_id, sid)
    out = stdout_file(kind, prov, job_id, where)
    text = wait_for(f"output in {out}", lambda: os.path.exists(out) and open(out).read())
    assert "parsl-ran-parsl." in text, f"unexpected job output {text!r}"
    print(f"parsl {kind}: {job_id} pending, held, pending, running, completed; output delivered")


def cancel_running(kind, prov, where):
    started = os.path.join(where, "started")
    job_id = prov.submit(f"touch {started}; sleep 600", 1)
    wait_for(f"parsl to see {job_id} RUNNING", lambda: parsl_state(prov, job_id) == JobState.RUNNING)
    wait_for_start(job_id, started)
    sid = session_of(job_id)
    assert prov.cancel([job_id]) == [True]
    assert_gone(job_id, sid)
    assert parsl_state(prov, job_id) == JobState.COMPLETED
    print(f"parsl {kind}: running {job_id} cancelled, its processes gone")


def cancel_queued(kind, prov, where):
    blocker = fill_node(where)
    job_id = prov.submit("sleep 600", 1)
    assert parsl_state(prov, job_id) == JobState.PENDING
    assert prov.cancel([job_id]) == [True]
    assert_gone(job_id)
    assert "exec_host" not in full_status(job_id), f"{job_id} ran though cancelled while queued"
    release_node(blocker)
    print(f"parsl {kind}: queued {job_id} cancelled before it ran")


def main():
    kind = sys.argv[1]
    where = workdir(f"parsl-{kind}")
    prov = provider(kind, where)
    run_to_completion(kind, prov, where)
    cancel_running(kind, prov, where)
    cancel_queued(kind, prov, where)


if __name__ == "__main__":
    main()
