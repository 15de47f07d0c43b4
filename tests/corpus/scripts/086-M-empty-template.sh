#!/bin/sh -login
#PBS -o
#PBS -j oe
#PBS -l nodes=1:ppn=1,walltime=4:00:00,mem=10gb
#PBS -M
#PBS -m abe
#PBS -r n
#PBS -N
module load YourProgram
