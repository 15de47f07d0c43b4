#! /bin/bash
#PBS -q gpu
#PBS -N gpu_sample
#PBS -l walltime=00:00:60
#PBS -l select=1:ngpus=2:ncpus=8
cd $PBS_O_WORKDIR
./sample.gpux
