#!/bin/bash
#PBS -N hello
#PBS -l nodes=1:ppn=1,walltime=00:05:00
# A first job: where it ran and as whom.
echo "Hello from $(hostname) as $(id -un), job $PBS_JOBID"
