#!/bin/bash

#PBS -P na4
#PBS -q gpuvolta
#PBS -l ncpus=24
#PBS -l ngpus=2
#PBS -l mem=32GB
#PBS -l jobfs=16GB
#PBS -l walltime=01:00:00
#PBS -l wd
#PBS -o /tmp/corpus-out/job.out
#PBS -e /tmp/corpus-out/job.err
module load cuda
