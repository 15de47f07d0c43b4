#!/bin/bash
#PBS -P ab12
#PBS -ljobfs=100GB
#PBS -lwalltime=1:00:00,ncpus=4,mem=16GB
#PBS -lstorage=scratch/ab12
python run.py
