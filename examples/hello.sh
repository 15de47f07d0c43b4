#!/bin/bash
#PBS -N hello
#PBS -l nodes=2:ppn=2
#PBS -l walltime=00:01:00
#PBS -j oe
# The example job: prints where it runs and what PBS gave it.
echo "Hello from job $PBS_JOBID ($PBS_JOBNAME) in queue $PBS_QUEUE"
echo "running as $(id -un) on $(hostname), started in $(pwd)"
echo "submitted from $PBS_O_WORKDIR on $PBS_O_HOST"
echo "$PBS_NP slots on $PBS_NUM_NODES nodes; PBS_NODEFILE:"
sed 's/^/    /' "$PBS_NODEFILE"
