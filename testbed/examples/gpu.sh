#!/bin/bash
#PBS -N gpu
#PBS -l nodes=1:ppn=1:gpus=1,walltime=00:05:00
# One (fake) GPU of its own: CUDA programs would see only it.
echo "on $(hostname): CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
cat "$PBS_GPUFILE"
