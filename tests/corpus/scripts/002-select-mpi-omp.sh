#!/bin/bash
#PBS -N cesm_case
#PBS -r n
#PBS -j oe
#PBS -o logs/case.out
#PBS -S /bin/bash
#PBS -l select=9:ncpus=128:mpiprocs=128:ompthreads=1:mem=230GB
#PBS -q main
#PBS -A PROJ0001
#PBS -l walltime=04:00:00
#PBS -V
mpiexec ./cesm.exe
