#!/bin/bash

#PBS -q gpuvolta
#PBS -P um09
#PBS -l ncpus=12
#PBS -l ngpus=1
#PBS -l mem=40GB
#PBS -l walltime=00:15:00
#PBS -l storage=scratch/um09
#PBS -l jobfs=5GB
#PBS -v PYTHONPATH=/scratch/um09/venv/lib/python3.9/site-packages

cd /scratch/um09
