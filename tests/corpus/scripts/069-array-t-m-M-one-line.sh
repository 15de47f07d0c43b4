#!/bin/bash
#PBS -d .
#PBS -q pq
#PBS -l walltime=01:00:00
#PBS -l nodes=1:ppn=4
#PBS -A Research_Project-T110748
#PBS -N chromopainter_test
#PBS -e logs/run.err.txt
#PBS -o logs/run.out.txt
#PBS -V
#PBS -m e -M someone@exeter.ac.uk
#PBS -t 1-33
