#!/bin/bash
#PBS -l select=2:ncpus=12:mem=2gb -l place=scatter:excl

# Set max execution time
#PBS -l walltime=1:00:00

#PBS -q short_cpuQ
#PBS -N 24ScatterExcl
#PBS -o 24ScatterExcl.txt
#PBS -e 24ScatterExcl_error.txt
mpiexec -n 24 ./prog
