#!/bin/bash
#PBS -N mpi
#PBS -l nodes=2:ppn=2,walltime=00:05:00
# Two nodes, two slots each: mpirun (MPICH) reads $PBS_NODEFILE and starts four processes.
module load mpi
mpirun hostname
