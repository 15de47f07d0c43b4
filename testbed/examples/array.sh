#!/bin/bash
#PBS -N array
#PBS -J 1-4
#PBS -l nodes=1:ppn=1,walltime=00:05:00
# Four subjobs: each gets its own index.
echo "subjob $PBS_ARRAY_INDEX of $PBS_JOBID on $(hostname)"
