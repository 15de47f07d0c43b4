#!/bin/bash
#PBS -l nodes=2:ppn=20,walltime=1:00
#PBS -N MPIsample
#PBS -q edu_shared
#PBS -m abe
#PBS -M someone@uic.edu
#PBS -e mpitest.err
#PBS -o mpitest.out
#PBS -d /tmp
mpirun -np $PBS_NP ./a.out
