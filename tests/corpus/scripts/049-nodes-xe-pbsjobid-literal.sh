#!/bin/bash
#PBS -l walltime=00:10:00
#PBS -l nodes=4:ppn=32:xe
#PBS -e $PBS_JOBID.err
#PBS -o $PBS_JOBID.out
#PBS -q debug
#PBS -A jmz
aprun -n 128 ./mmpi
