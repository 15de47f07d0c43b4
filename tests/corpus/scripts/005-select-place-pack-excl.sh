#!/bin/bash
#PBS -l select=1:ncpus=16:mem=2gb -l place=pack:excl
#PBS -l walltime=0:30:00
#PBS -q short_cpuQ
#PBS -V
export OMP_NUM_THREADS=16
./bench
