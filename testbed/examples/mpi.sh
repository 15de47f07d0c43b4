#!/bin/bash
#PBS -N mpi
#PBS -l nodes=2:ppn=2,walltime=00:05:00
# Two nodes, two slots each: mpirun (MPICH) reads $PBS_NODEFILE and starts four processes; the
# ones on the other node start through the moms (pbs_tmrsh, set up by the job's environment:
# HYDRA_LAUNCHER_EXEC), not ssh: compute nodes run no sshd.
module load mpi
mpirun hostname
