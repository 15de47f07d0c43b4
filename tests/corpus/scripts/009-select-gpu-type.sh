#!/bin/bash
#PBS -l walltime=08:00:00
#PBS -l select=1:ncpus=8:mem=16gb:ngpus=1:gpu_type=RTX6000
module load miniforge/3
python task2.py
