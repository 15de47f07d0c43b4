#!/bin/bash
#PBS -N vasp
#PBS -l nodes=1:ncpus=16
#PBS -j n
#PBS -e ${PBS_JOBNAME}.err
#PBS -o ${PBS_JOBNAME}.out
mpirun -np 16 vasp_std
