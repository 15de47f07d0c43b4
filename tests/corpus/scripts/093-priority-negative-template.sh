#!/bin/bash
#PBS -l ncpus=1
#PBS -l mem=2gb
#PBS -p -100
#PBS -o out.txt
#PBS -e err.txt
cd $PBS_O_WORKDIR
