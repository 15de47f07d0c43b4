#!/bin/bash
 
#PBS -l ncpus=24
#PBS -l mem=10GB
#PBS -q normal
#PBS -P 
#PBS -l walltime=00:01:00
python3 main.py
