#!/bin/bash
#MSUB -l nodes=1:ppn=2:gpus=1
#MSUB -q gpu
#PBS -N msub_job
#PBS -l walltime=20:00:00
cd $PBS_O_WORKDIR
