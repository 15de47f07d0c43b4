"""snakemake 8+ with snakemake-executor-plugin-cluster-generic, unchanged: a three-rule workflow
submitted with qsub (one job per rule, `-l select=1:ncpus={threads}`), followed through
`qstat -f -F json -x` (snakemake/qstat-status) and run to the end; a failing job seen as
failed; then a workflow whose job never ends, interrupted, so snakemake cancels it with qdel
and nothing is left behind.

Usage: python test_snakemake.py (inside the OpenPBS-flavor cluster `run` starts).
"""

import os
import re
import shutil
import signal
import subprocess
import sys

from pbs_common import (JOB_END, assert_gone, full_status, session_of, sh, state, wait_for,
                        wait_for_start, workdir)

HERE = os.path.dirname(os.path.abspath(__file__))
SUBMIT = ("qsub -V -N smk-{rule} -l select=1:ncpus={threads} -l walltime=00:05:00 -j oe "
          "-o {rule}.pbs.log")


def snakemake(where, target, status_every=1, **popen):
    args = [sys.executable, "-m", "snakemake", "--snakefile", os.path.join(where, "Snakefile"),
            "--directory", where, "--executor", "cluster-generic", "--jobs", "2",
            "--cluster-generic-submit-cmd", SUBMIT,
            "--cluster-generic-status-cmd", os.path.join(HERE, "snakemake", "qstat-status"),
            "--cluster-generic-cancel-cmd", "qdel",
            "--seconds-between-status-checks", str(status_every), "--latency-wait", "5", target]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def fresh(name):
    where = workdir(name)
    shutil.copy(os.path.join(HERE, "snakemake", "Snakefile"), where)
    return where


def workflow_runs():
    where = fresh("snakemake-run")
    proc = snakemake(where, "all")
    out, _ = proc.communicate(timeout=4 * JOB_END)
    assert proc.returncode == 0, f"snakemake failed:\n{out}"
    ids = re.findall(r"external jobid '([^']+)'", out)
    assert len(ids) == 3, f"expected 3 PBS jobs, snakemake said:\n{out}"
    for job_id in ids:
        assert_gone(job_id)
    text = open(os.path.join(where, "shout.txt")).read()
    assert re.fullmatch(r"(HELLO FROM \d+\.\S+\n){2}", text), f"shout.txt is {text!r}"
    print(f"snakemake: 3 rules ran as {', '.join(ids)}; outputs made")


def failure_seen():
    where = fresh("snakemake-fail")
    proc = snakemake(where, "broken.txt")
    out, _ = proc.communicate(timeout=2 * JOB_END)
    assert proc.returncode != 0, f"snakemake missed the failed job:\n{out}"
    [job_id] = re.findall(r"external jobid '([^']+)'", out)
    assert_gone(job_id)
    exit_status = full_status(job_id).get("Exit_status")
    assert exit_status not in (None, 0), f"{job_id} ended with Exit_status {exit_status!r}"
    assert "Error in rule broken" in out, out
    print(f"snakemake: {job_id} failed (Exit_status {exit_status}), reported as failed")


def workflow_cancelled():
    where = fresh("snakemake-cancel")
    # Snakemake's status thread takes its active jobs out of the list while a status check
    # runs (snakemake-interface-executor-plugins, executors/remote.py `_wait_for_jobs`): an
    # interrupt during a check finds no job to cancel and snakemake exits leaving it running
    # (seen in CI under load). Checks 10 s apart: the first runs as the workflow starts, the
    # interrupt comes once the job has started, seconds before the next.
    proc = snakemake(where, "never.txt", status_every=10, start_new_session=True)
    job_id = wait_for("the forever job to be submitted",
                      lambda: sh("qselect", "-N", "smk-forever", "-s", "R").strip(), timeout=JOB_END)
    sid = session_of(job_id)
    wait_for_start(job_id, os.path.join(where, "forever.started"))
    os.killpg(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    assert_gone(job_id, sid)
    assert not os.path.exists(os.path.join(where, "never.txt"))
    print(f"snakemake: interrupted, {job_id} cancelled (state {state(job_id)}); exit {proc.returncode}")


def main():
    workflow_runs()
    failure_seen()
    workflow_cancelled()


if __name__ == "__main__":
    main()
