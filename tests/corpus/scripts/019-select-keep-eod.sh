#!/bin/bash
#PBS -N bve_run
#PBS -A UMIC0093
#PBS -l walltime=12:00:00
#PBS -q regular
#PBS -j n
#PBS -k eod
#PBS -m abe
#PBS -M someone@umich.edu
#PBS -l select=1:ncpus=36:mpiprocs=36
mpirun -np 36 ./driver
